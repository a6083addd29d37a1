// Sparse blocks that no tile of a recipe divides are an error on the op
// from flash-select-config, naming the sizes (rather than one from
// flash-lower-to-gpu about a config the user never wrote).
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=h100 -verify-diagnostics
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm90ws" 2>&1 | FileCheck %s --check-prefix=WS
// The sm90ws recipe, asked for by name, says why it cannot:
// WS: error: no kernel config for target 'h100': the sm90ws recipe cannot serve this op: its 128 x 32 tiles do not divide the lists' sparse blocks [BQ, BK] = [32, 32]
// WS: error: no kernel config for target 'h100': the sm90ws recipe cannot serve this op: its 128 x 128 tiles do not divide the lists' sparse blocks [BQ, BK] = [128, 24]

// The forward's four warps own 16 rows each: 32-row query blocks are too
// small for any of its tiles.
func.func @fwd_32x32(%q: tensor<1x2x256x128xbf16>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>) -> tensor<1x2x256x128xbf16> {
  // expected-error @below {{no kernel config for target 'h100': the sm80 recipe cannot walk these lists: its 64 x 32 tiles do not divide the lists' sparse blocks [BQ, BK] = [32, 32] (its smallest tiles are 64 query rows and 16 keys)}}
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>) {sparse_block_size = array<i64: 32, 32>}
      : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> -> tensor<1x2x256x128xbf16>
  return %o : tensor<1x2x256x128xbf16>
}

// -----

// Key blocks of 24 keys: no multiple of 16 divides them.
func.func @fwd_128x24(%q: tensor<1x2x256x64xbf16>, %n: tensor<1x1x2xi32>, %i: tensor<1x1x2x11xi32>) -> tensor<1x2x256x64xbf16> {
  // expected-error @below {{the sm80 recipe cannot walk these lists: its 128 x 16 tiles do not divide the lists' sparse blocks [BQ, BK] = [128, 24]}}
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x2xi32>, tensor<1x1x2x11xi32>) {sparse_block_size = array<i64: 128, 24>}
      : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}

// -----

// The backward's key blocks own 16 keys a warp on at least four warps.
func.func @bwd_64x32(%t: tensor<1x2x256x128xbf16>, %lse: tensor<1x2x256xf32>, %n: tensor<1x1x4xi32>, %i: tensor<1x1x4x8xi32>) -> tensor<1x2x256x128xbf16> {
  // expected-error @below {{the sm80 recipe cannot walk these lists: its 64 x 128 tiles do not divide the lists' sparse blocks [BQ, BK] = [64, 32] (its smallest tiles are 16 query rows and 128 keys)}}
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<1x1x4xi32>, tensor<1x1x4x8xi32>) {sparse_block_size = array<i64: 64, 32>}
      : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>,
        tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256xf32>
      -> tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>
  return %dq : tensor<1x2x256x128xbf16>
}
