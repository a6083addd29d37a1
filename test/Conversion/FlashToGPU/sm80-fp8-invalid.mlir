// RUN: flashfuse-opt %s --split-input-file --flash-lower-to-gpu=chip=sm_89 -verify-diagnostics

// The mma.sync FP8 forward's limits, for configs given by hand
// (flash-select-config gives only ones it serves).
func.func @fp8_block_n(%q: tensor<1x1x128x128xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x1x128x128xbf16> {
  // expected-error @+1 {{the sm80 FP8 forward needs D = Dv in {64, 128}, block_n = 128, block_m = 16 * warps and stages >= 2; got D = 128, Dv = 128, block_m = 128, block_n = 64, warps = 8, stages = 2}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 8, stages = 2>} : tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN>, tensor<1x1x128x128xf8E4M3FN> -> tensor<1x1x128x128xbf16>
  return %o : tensor<1x1x128x128xbf16>
}

// -----

func.func @fp8_d256(%q: tensor<1x1x128x256xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x1x128x256xbf16> {
  // expected-error @+1 {{the sm80 FP8 forward needs D = Dv in {64, 128}, block_n = 128, block_m = 16 * warps and stages >= 2; got D = 256, Dv = 256, block_m = 128, block_n = 128, warps = 8, stages = 2}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {config = #flash.config<sm80, block_m = 128, block_n = 128, warps = 8, stages = 2>} : tensor<1x1x128x256xf8E4M3FN>, tensor<1x1x128x256xf8E4M3FN>, tensor<1x1x128x256xf8E4M3FN> -> tensor<1x1x128x256xbf16>
  return %o : tensor<1x1x128x256xbf16>
}

// -----

func.func @fp8_blocks(%q: tensor<1x1x256x128xf8E4M3FN>, %d: tensor<1x1x4xf32>) -> tensor<1x1x256x128xbf16> {
  // expected-error @+1 {{per-block descales need descale_block_size [BQ, BK] with BQ a multiple of 16 and BK a multiple of block_n = 128; got [64, 64]}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>) {descale_block_size = array<i64: 64, 64>, config = #flash.config<sm80, block_m = 128, block_n = 128, warps = 8, stages = 2>} : tensor<1x1x256x128xf8E4M3FN>, tensor<1x1x256x128xf8E4M3FN>, tensor<1x1x256x128xf8E4M3FN> -> tensor<1x1x256x128xbf16>
  return %o : tensor<1x1x256x128xbf16>
}
