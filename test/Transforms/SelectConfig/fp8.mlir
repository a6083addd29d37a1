// FP8 flash.attention on the GPU: a target without FP8 tensor cores (a100,
// sm_80) is refused naming that reason; sm_89 (l4) has FP8 tensor cores
// but no kernel here (the mma.sync e4m3 fallback is not built), and says
// so rather than picking a 16-bit recipe that would read e4m3 bytes as f16.
// On sm_90 (h100) the FP8 forward of the sm90ws recipe serves D = Dv in
// {64, 128, 256}: 128 x 128 tiles, four stages at D = 64 (192 query rows
// on three consumer warpgroups without a mask), three at D = 128 and two
// at D = 256, with causal masks, and at D = 64 and 128 a sliding
// window and a softcap; other head dims, a window at D = 256, a bias, and
// an explicit 16-bit recipe, are refused by name.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=a100 -verify-diagnostics
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config=target=l4 2>&1 | FileCheck %s --check-prefix=L4
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config=target=h100 2>&1 | FileCheck %s --check-prefix=H100
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm90" 2>&1 | FileCheck %s --check-prefix=SM90

// L4: no kernel config for target 'l4': FP8 (f8E4M3FN) attention has a wgmma (sm_90) kernel only; the mma.sync e4m3 fallback for sm_89 is not built (lower it with flash-lower-to-loops)
// H100: no kernel config for target 'h100': the FP8 forward serves D = Dv in {64, 128, 256} (Q and K rows of whole 128- or 64-byte swizzle rows), got D = 96, Dv = 96
// H100: no kernel config for target 'h100': the FP8 forward serves a window or softcap at D = 64 and 128 only (at D = 256 its consumer warpgroups spill), got D = 256
// H100: no kernel config for target 'h100': the FP8 forward does not serve a bias, mask, score_mod or mask_mod yet
// H100: no kernel config for target 'h100': the FP8 forward serves per-block descales at D = 256 without a causal mask only (with one its consumer warpgroups spill)
// H100: config = #flash.config<sm90ws, block_m = 192, block_n = 128, warps = 12, stages = 4>
// H100: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
// H100: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 2>
// H100-LABEL: func.func @fp8_window_softcap
// H100: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>, softcap = 3.000000e+01 : f32, window_left = 64
// SM90: no kernel config for target 'h100': the sm90 recipe has no FP8 kernel; FP8 forwards take the sm90ws recipe (recipe=auto or sm90ws)
func.func @fp8_d64(%q: tensor<1x2x128x64xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x2x128x64xbf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x128x64xf8E4M3FN>, tensor<1x2x128x64xf8E4M3FN>, tensor<1x2x128x64xf8E4M3FN>
      -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}

// -----

func.func @fp8_d96(%q: tensor<1x2x128x96xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x2x128x96xbf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x128x96xf8E4M3FN>, tensor<1x2x128x96xf8E4M3FN>, tensor<1x2x128x96xf8E4M3FN>
      -> tensor<1x2x128x96xbf16>
  return %o : tensor<1x2x128x96xbf16>
}

// -----

func.func @fp8_d128(%q: tensor<1x2x128x128xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x2x128x128xbf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x128x128xf8E4M3FN>, tensor<1x2x128x128xf8E4M3FN>, tensor<1x2x128x128xf8E4M3FN>
      -> tensor<1x2x128x128xbf16>
  return %o : tensor<1x2x128x128xbf16>
}

// -----

func.func @fp8_d256(%q: tensor<1x2x128x256xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x2x128x256xf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<bottom_right>}
      : tensor<1x2x128x256xf8E4M3FN>, tensor<1x2x128x256xf8E4M3FN>, tensor<1x2x128x256xf8E4M3FN>
      -> tensor<1x2x128x256xf16>
  return %o : tensor<1x2x128x256xf16>
}

// -----

// A sliding window with a softcap takes the FP8 forward on sm_90 (the score
// pipeline is the sm90ws recipe's).
func.func @fp8_window_softcap(%q: tensor<1x2x128x128xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x2x128x128xbf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<bottom_right>, window_left = 64 : i64, softcap = 30.0 : f32}
      : tensor<1x2x128x128xf8E4M3FN>, tensor<1x2x128x128xf8E4M3FN>, tensor<1x2x128x128xf8E4M3FN>
      -> tensor<1x2x128x128xbf16>
  return %o : tensor<1x2x128x128xbf16>
}

// -----

// At D = 256 a window is refused: the consumers' 240 registers spill.
func.func @fp8_window_d256(%q: tensor<1x2x128x256xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x2x128x256xbf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {window_left = 64 : i64}
      : tensor<1x2x128x256xf8E4M3FN>, tensor<1x2x128x256xf8E4M3FN>, tensor<1x2x128x256xf8E4M3FN>
      -> tensor<1x2x128x256xbf16>
  return %o : tensor<1x2x128x256xbf16>
}

// -----

// A bias is refused (H100 above; diagnostics precede the module).
func.func @fp8_bias(%q: tensor<1x2x128x128xf8E4M3FN>, %d: tensor<f32>, %bias: tensor<1x2x128x128xf32>) -> tensor<1x2x128x128xbf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q bias(%bias : tensor<1x2x128x128xf32>) descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x128x128xf8E4M3FN>, tensor<1x2x128x128xf8E4M3FN>, tensor<1x2x128x128xf8E4M3FN>
      -> tensor<1x2x128x128xbf16>
  return %o : tensor<1x2x128x128xbf16>
}

// -----

// Per-block descales with a causal mask at D = 256 are refused (H100 above).
func.func @fp8_d256_blocks_causal(%q: tensor<1x2x256x256xf8E4M3FN>, %d: tensor<1x2x2xf32>) -> tensor<1x2x256x256xbf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>)
      {causal = #flash.causal<top_left>}
      : tensor<1x2x256x256xf8E4M3FN>, tensor<1x2x256x256xf8E4M3FN>, tensor<1x2x256x256xf8E4M3FN>
      -> tensor<1x2x256x256xbf16>
  return %o : tensor<1x2x256x256xbf16>
}
