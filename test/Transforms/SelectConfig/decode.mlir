// flash-select-config gives flash.attention_kvcache the decode recipe: the
// packed G * Sq query rows in 16-row slabs, warps splitting the keys where
// the rows fill fewer slabs than there are warps (block_m 16 or 32), 128-key
// blocks two stages deep where they fit, and the splits of
// runtime/include/flashfuse/decode_splits.h from the static sizes. At most
// 8 packed rows on sm_90 (D = Dv from 80 to 128, 16-bit caches): block_m 8,
// the rows as the products' n (KernelSpec::swapsDecodeOperands).
// RUN: flashfuse-opt %s --flash-select-config=target=h100 | FileCheck %s --check-prefix=H100
// RUN: flashfuse-opt %s --flash-select-config=target=l4 | FileCheck %s --check-prefix=L4

// B = 4, Hkv = 8, G = 4, one token, 64k cache: 32 blocks (one per SM: 133
// KiB each) fill a quarter of the 132 SMs, so floor(132 / 32) = 4 splits
// make one wave. The L4's 99 KiB take 64-key blocks two stages deep; its 58
// SMs hold 32 blocks in one wave already: no split. G = 4 rows are a block
// of 8 on the H100, 16 on the L4 (sm_89).
// H100-LABEL: func.func @gqa_64k
// H100: config = #flash.config<decode, block_m = 8, block_n = 128, warps = 4, stages = 2, splits = 4>
// L4-LABEL: func.func @gqa_64k
// L4: config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 2>
func.func @gqa_64k(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x65536x128xbf16>,
                   %len: tensor<4xi32>) -> tensor<4x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x128xbf16>, tensor<4x8x65536x128xbf16>, tensor<4x8x65536x128xbf16>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>
  return %o : tensor<4x32x1x128xbf16>
}

// B = 16: 128 blocks already fill the 132 SMs, no splits.
// H100-LABEL: func.func @full_grid
// H100: config = #flash.config<decode, block_m = 8, block_n = 128, warps = 4, stages = 2>
func.func @full_grid(%q: tensor<16x32x1x128xf16>, %k: tensor<16x8x8192x128xf16>,
                     %len: tensor<16xi32>) -> tensor<16x32x1x128xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len
      : tensor<16x32x1x128xf16>, tensor<16x8x8192x128xf16>, tensor<16x8x8192x128xf16>, tensor<16xi32>
      -> tensor<16x32x1x128xf16>
  return %o : tensor<16x32x1x128xf16>
}

// 8 x 4 = 32 packed rows: two warps per slab. Paged at D = 128: the
// contiguous cache's 128-key blocks two deep; 128 pages of 16 rows per
// sequence, 16 key blocks, so at most 16 / 4 = 4 splits.
// H100-LABEL: func.func @paged_speculative
// H100: config = #flash.config<decode, block_m = 32, block_n = 128, warps = 4, stages = 2, splits = 4>
func.func @paged_speculative(%q: tensor<2x64x4x128xbf16>, %k: tensor<300x16x8x128xbf16>,
                             %len: tensor<2xi32>, %bt: tensor<2x128xi32>) -> tensor<2x64x4x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<2x128xi32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<2x64x4x128xbf16>, tensor<300x16x8x128xbf16>, tensor<300x16x8x128xbf16>, tensor<2xi32>
      -> tensor<2x64x4x128xbf16>
  return %o : tensor<2x64x4x128xbf16>
}

// More than 32 packed rows: the warps split the rows; D = 64 takes three
// stages; 32 key blocks, 8 splits.
// H100-LABEL: func.func @many_rows
// H100: config = #flash.config<decode, block_m = 64, block_n = 128, warps = 4, stages = 3, splits = 8>
func.func @many_rows(%q: tensor<1x16x8x64xf16>, %k: tensor<1x2x4096x64xf16>,
                     %len: tensor<1xi32>) -> tensor<1x16x8x64xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len
      : tensor<1x16x8x64xf16>, tensor<1x2x4096x64xf16>, tensor<1x2x4096x64xf16>, tensor<1xi32>
      -> tensor<1x16x8x64xf16>
  return %o : tensor<1x16x8x64xf16>
}

// D = 256, contiguous, up to 16 packed rows (dynamic heads count as one): on
// sm_90 the 16-row key-split tile, 64 keys three deep; on the L4 64 rows of
// 32 keys, two deep in its shared memory. Dynamic sizes: no static split.
// H100-LABEL: func.func @d256_dynamic
// H100: config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 3>
// L4-LABEL: func.func @d256_dynamic
// L4: config = #flash.config<decode, block_m = 64, block_n = 32, warps = 4, stages = 2>
func.func @d256_dynamic(%q: tensor<?x8x1x256xbf16>, %k: tensor<?x8x?x256xbf16>,
                        %len: tensor<?xi32>) -> tensor<?x8x1x256xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len
      : tensor<?x8x1x256xbf16>, tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>, tensor<?xi32>
      -> tensor<?x8x1x256xbf16>
  return %o : tensor<?x8x1x256xbf16>
}

// With a softcap (Gemma-2's step at D = 256) two stages: three spilled.
// H100-LABEL: func.func @d256_softcap
// H100: config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 2>
// L4-LABEL: func.func @d256_softcap
// L4: config = #flash.config<decode, block_m = 64, block_n = 32, warps = 4, stages = 2>
func.func @d256_softcap(%q: tensor<?x8x1x256xbf16>, %k: tensor<?x4x?x256xbf16>,
                        %len: tensor<?xi32>) -> tensor<?x8x1x256xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {causal = #flash.causal<bottom_right>, softcap = 5.000000e+01 : f32}
      : tensor<?x8x1x256xbf16>, tensor<?x4x?x256xbf16>, tensor<?x4x?x256xbf16>, tensor<?xi32>
      -> tensor<?x8x1x256xbf16>
  return %o : tensor<?x8x1x256xbf16>
}

// Paged D = 256 keeps 64 rows of 32 keys (the 16-row tile's paged variants
// spilled 8-32 bytes), as do more than 16 packed rows (G = 8 at Sq = 4).
// H100-LABEL: func.func @d256_paged
// H100: config = #flash.config<decode, block_m = 64, block_n = 32, warps = 4, stages = 3>
func.func @d256_paged(%q: tensor<?x8x1x256xbf16>, %k: tensor<?x16x4x256xbf16>,
                      %len: tensor<?xi32>, %bt: tensor<?x?xi32>) -> tensor<?x8x1x256xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<?x?xi32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<?x8x1x256xbf16>, tensor<?x16x4x256xbf16>, tensor<?x16x4x256xbf16>, tensor<?xi32>
      -> tensor<?x8x1x256xbf16>
  return %o : tensor<?x8x1x256xbf16>
}

// H100-LABEL: func.func @d256_rows32
// H100: config = #flash.config<decode, block_m = 64, block_n = 32, warps = 4, stages = 3, splits = 8>
func.func @d256_rows32(%q: tensor<4x32x4x256xbf16>, %k: tensor<4x4x4096x256xbf16>,
                       %len: tensor<4xi32>) -> tensor<4x32x4x256xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {causal = #flash.causal<bottom_right>}
      : tensor<4x32x4x256xbf16>, tensor<4x4x4096x256xbf16>, tensor<4x4x4096x256xbf16>, tensor<4xi32>
      -> tensor<4x32x4x256xbf16>
  return %o : tensor<4x32x4x256xbf16>
}

// Head dims that are multiples of 16 but not of the library's set run on
// the forward's padded tiles: Phi-2's D = 80 (128 kv heads x 4 sequences
// already fill the H100, one split), and past 128 columns (D = 160) the
// 16-row key-split tile of D = 256.
// H100-LABEL: func.func @phi_d80
// H100: config = #flash.config<decode, block_m = 8, block_n = 128, warps = 4, stages = 2>
func.func @phi_d80(%q: tensor<4x32x1x80xbf16>, %k: tensor<4x32x2048x80xbf16>, %len: tensor<4xi32>) -> tensor<4x32x1x80xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x80xbf16>, tensor<4x32x2048x80xbf16>, tensor<4x32x2048x80xbf16>, tensor<4xi32> -> tensor<4x32x1x80xbf16>
  return %o : tensor<4x32x1x80xbf16>
}

// H100-LABEL: func.func @d160
// H100: config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 3, splits = 32>
func.func @d160(%q: tensor<1x8x1x160xf16>, %k: tensor<1x2x8192x160xf16>, %len: tensor<1xi32>) -> tensor<1x8x1x160xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len
      : tensor<1x8x1x160xf16>, tensor<1x2x8192x160xf16>, tensor<1x2x8192x160xf16>, tensor<1xi32> -> tensor<1x8x1x160xf16>
  return %o : tensor<1x8x1x160xf16>
}

// B = 64, Hkv = 8, one token, 2k keys: 512 blocks of the 128-key tiles (one
// an SM) are 3.9 waves of the H100's 132 SMs: 64-key blocks two deep
// (decode_splits.h's grids of several waves): at 8 rows a block three
// deep (99 KiB, two an SM), contiguous and paged. B = 32 (256 blocks, under
// two waves) keeps 128 keys, and the L4, where two such blocks do not fit,
// 64 keys two deep at 16 rows.
// H100-LABEL: func.func @waves
// H100: config = #flash.config<decode, block_m = 8, block_n = 64, warps = 4, stages = 3>
// H100: config = #flash.config<decode, block_m = 8, block_n = 64, warps = 4, stages = 3>
// H100: config = #flash.config<decode, block_m = 8, block_n = 128, warps = 4, stages = 2>
// L4-LABEL: func.func @waves
// L4: config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 2>
func.func @waves(%q: tensor<64x32x1x128xbf16>, %k: tensor<64x8x2048x128xbf16>,
                 %kp: tensor<8192x16x8x128xbf16>, %bt: tensor<64x128xi32>,
                 %len: tensor<64xi32>, %q32: tensor<32x32x1x128xbf16>,
                 %k32: tensor<32x8x2048x128xbf16>, %len32: tensor<32xi32>) {
  %o = flash.attention_kvcache %q, %k, %k, %len {causal = #flash.causal<bottom_right>}
      : tensor<64x32x1x128xbf16>, tensor<64x8x2048x128xbf16>, tensor<64x8x2048x128xbf16>, tensor<64xi32>
      -> tensor<64x32x1x128xbf16>
  %p = flash.attention_kvcache %q, %kp, %kp, %len block_table(%bt : tensor<64x128xi32>)
      : tensor<64x32x1x128xbf16>, tensor<8192x16x8x128xbf16>, tensor<8192x16x8x128xbf16>, tensor<64xi32>
      -> tensor<64x32x1x128xbf16>
  %s = flash.attention_kvcache %q32, %k32, %k32, %len32
      : tensor<32x32x1x128xbf16>, tensor<32x8x2048x128xbf16>, tensor<32x8x2048x128xbf16>, tensor<32xi32>
      -> tensor<32x32x1x128xbf16>
  return
}

// 16 rows at 16-row blocks as before: one new token over 16 query heads a
// kv head, or 4 tokens over 4 (speculative decoding).
// H100-LABEL: func.func @sixteen_rows
// H100: config = #flash.config<decode, block_m = 16, block_n = 128, warps = 4, stages = 2, splits = 16>
// H100: config = #flash.config<decode, block_m = 16, block_n = 128, warps = 4, stages = 2, splits = 16>
func.func @sixteen_rows(%q: tensor<1x32x1x128xbf16>, %k: tensor<1x2x8192x128xbf16>,
                        %q4: tensor<1x32x4x128xbf16>, %k8: tensor<1x8x8192x128xbf16>,
                        %len: tensor<1xi32>) {
  %o = flash.attention_kvcache %q, %k, %k, %len
      : tensor<1x32x1x128xbf16>, tensor<1x2x8192x128xbf16>, tensor<1x2x8192x128xbf16>, tensor<1xi32>
      -> tensor<1x32x1x128xbf16>
  %s = flash.attention_kvcache %q4, %k8, %k8, %len
      : tensor<1x32x4x128xbf16>, tensor<1x8x8192x128xbf16>, tensor<1x8x8192x128xbf16>, tensor<1xi32>
      -> tensor<1x32x4x128xbf16>
  return
}
