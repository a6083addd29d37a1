// The sm90ws forward's config checks (KernelSpec.cpp): tiles that do not
// match its two consumer warpgroups, variants the producer/consumer split
// does not carry yet and a chip without wgmma and TMA (the backward's are
// sm90ws-backward-invalid.mlir).
// RUN: flashfuse-opt %s --flash-lower-to-gpu="chip=sm_90a kernels-only=true" --split-input-file --verify-diagnostics

func.func @four_warps(%q: tensor<1x1x128x128xf16>) -> tensor<1x1x128x128xf16> {
  // expected-error @+1 {{the sm90ws recipe needs warps = 8 (two consumer warpgroups; 12, three, for a D = 64 forward), block_m = 16 * warps, block_n a multiple of 16 up to 256, stages >= 2 and D and Dv <= D multiples of 64 up to 256; got block_m = 64, block_n = 128, warps = 4, stages = 2, D = 128, Dv = 128}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm90ws, block_m = 64, block_n = 128, warps = 4, stages = 2>} : tensor<1x1x128x128xf16>, tensor<1x1x128x128xf16>, tensor<1x1x128x128xf16> -> tensor<1x1x128x128xf16>
  return %o : tensor<1x1x128x128xf16>
}

// -----

// Three consumer warpgroups hold D = 64's O and S in 160 registers; D = 128
// would spill.
func.func @three_consumers_d128(%q: tensor<1x1x192x128xbf16>) -> tensor<1x1x192x128xbf16> {
  // expected-error @+1 {{got block_m = 192, block_n = 128, warps = 12, stages = 4, D = 128, Dv = 128}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm90ws, block_m = 192, block_n = 128, warps = 12, stages = 4>} : tensor<1x1x192x128xbf16>, tensor<1x1x192x128xbf16>, tensor<1x1x192x128xbf16> -> tensor<1x1x192x128xbf16>
  return %o : tensor<1x1x192x128xbf16>
}

// -----

func.func @twelve_warps_128_rows(%q: tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16> {
  // expected-error @+1 {{got block_m = 128, block_n = 128, warps = 12, stages = 4, D = 64, Dv = 64}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 12, stages = 4>} : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16> -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}

// -----

func.func @one_stage(%q: tensor<1x1x128x64xf16>) -> tensor<1x1x128x64xf16> {
  // expected-error @+1 {{got block_m = 128, block_n = 128, warps = 8, stages = 1, D = 64, Dv = 64}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 1>} : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<1x1x128x64xf16>
  return %o : tensor<1x1x128x64xf16>
}

// -----

func.func @bias(%q: tensor<1x2x256x64xbf16>, %b: tensor<1x2x256x256xf32>) -> tensor<1x2x256x64xbf16> {
  // expected-error @+1 {{the sm90ws recipe does not serve a bias operand yet; use the sm90 recipe}}
  %o = flash.attention %q, %q, %q bias(%b : tensor<1x2x256x256xf32>) {config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>} : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}

// -----

// FP8: Vᵀ rows of block_n keys are whole 32-key groups (and so whole
// swizzle rows of 128, 64 or 32 bytes); 48 keys are a multiple of 16, which
// the 16-bit recipe takes, but not of 32.
func.func @fp8_block_n(%q: tensor<1x1x128x128xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x1x128x128xbf16> {
  // expected-error @+1 {{the FP8 forward needs block_n a multiple of 32 (Vᵀ rows of whole 32-key groups and swizzle rows); got block_n = 48}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {config = #flash.config<sm90ws, block_m = 128, block_n = 48, warps = 8, stages = 3>} : tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x1x128x128xbf16>
  return %o : tensor<1x1x128x128xbf16>
}

// -----

// Per-block descales: one q_descale per warp's 16 rows, one k and v
// descale per key tile.
func.func @fp8_descale_blocks(%q: tensor<1x1x128x128xf8E4M3FN>, %d: tensor<1x1x16xf32>) -> tensor<1x1x128x128xbf16> {
  // expected-error @+1 {{per-block descales need descale_block_size [BQ, BK] with BQ a multiple of 16 and BK a multiple of block_n = 128; got [8, 8]}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<1x1x16xf32>, tensor<1x1x16xf32>, tensor<1x1x16xf32>) {descale_block_size = array<i64: 8, 8>, config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>} : tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x1x128x128xbf16>
  return %o : tensor<1x1x128x128xbf16>
}

// -----

// FP8 has no kernel in the 16-bit recipes.
func.func @fp8_sm90(%q: tensor<1x1x128x128xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x1x128x128xbf16> {
  // expected-error @+1 {{the sm90 recipe needs f16 or bf16 operands, got 'f8E4M3FN' (FP8 forwards take the sm90ws recipe, or sm80 on sm_89)}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 3>} : tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x1x128x128xbf16>
  return %o : tensor<1x1x128x128xbf16>
}
