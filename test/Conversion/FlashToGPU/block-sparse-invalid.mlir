// flash-lower-to-gpu's refusals of block-sparse ops (KernelSpec.cpp): lists
// whose blocks the config's tiles do not divide and the deterministic
// gradient (its dQ kernel does not walk the lists).
// Each leaves the module as it was.
// RUN: flashfuse-opt %s --flash-lower-to-gpu="chip=sm_90a kernels-only=true" --split-input-file --verify-diagnostics

func.func @query_block_too_small(%q: tensor<1x2x256x64xf16>, %n: tensor<1x2x4xi32>, %i: tensor<1x2x4x4xi32>) -> tensor<1x2x256x64xf16> {
  // expected-error @+1 {{block_sparse(...) needs the sparse block size [64, 64] to be multiples of the config's [block_m, block_n] = [128, 64]}}
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x2x4xi32>, tensor<1x2x4x4xi32>)
      {sparse_block_size = array<i64: 64, 64>, config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 3>}
      : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}

// -----

func.func @key_block_not_tiled(%q: tensor<1x2x256x64xf16>, %n: tensor<1x2x2xi32>, %i: tensor<1x2x2x3xi32>) -> tensor<1x2x256x64xf16> {
  // expected-error @+1 {{block_sparse(...) needs the sparse block size [128, 96] to be multiples of the config's [block_m, block_n] = [64, 64]}}
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x3xi32>)
      {sparse_block_size = array<i64: 128, 96>, config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}

// -----

func.func @gradient_tiles(%t: tensor<1x2x256x64xf16>, %lse: tensor<1x2x256xf32>, %n: tensor<1x2x4xi32>, %i: tensor<1x2x4x4xi32>) -> tensor<1x2x256x64xf16> {
  // expected-error @+1 {{block_sparse(...) needs the sparse block size [64, 64] to be multiples of the config's [block_m, block_n] = [64, 128]}}
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<1x2x4xi32>, tensor<1x2x4x4xi32>)
      {sparse_block_size = array<i64: 64, 64>, config = #flash.config<sm80, block_m = 64, block_n = 128, warps = 8, stages = 2>}
      : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>,
        tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256xf32>
      -> tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>
  return %dq : tensor<1x2x256x64xf16>
}
