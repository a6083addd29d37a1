// FP8 flash.attention on the GPU: a target without FP8 tensor cores (a100,
// sm_80) is refused naming that reason. sm_89 (l4) takes the mma.sync e4m3
// forward (the sm80 recipe, Sm80Fp8Forward.cpp): D = Dv in {64, 128},
// 128 x 128 tiles on 8 warps, three stages at D = 64 and two at D = 128 in
// l4's 99 KiB, causal masks, a window and a softcap, per-block descales;
// D = 96 and 256, a bias, and the wgmma recipes are refused by name.
// On sm_90 (h100) the FP8 forward of the sm90ws recipe serves D = Dv in
// {64, 128, 256}: 128 x 128 tiles, four stages at D = 64 (192 query rows
// on three consumer warpgroups without a mask), three at D = 128 and two
// at D = 256, with causal masks, and at D = 64 and 128 a sliding
// window and a softcap (192 rows also under a top-left causal mask at
// D = 64, there on blocks of 160 keys); blocks of 192 keys, two stages, at D = 128 and for D = 64
// under a bottom-right causal mask, where no window and no per-block descales
// of key blocks that 192 does not divide keep 128; other head dims, a
// window at D = 256, a bias, and the sm90 recipe, are refused by name. recipe=sm80 on h100 gives the
// mma.sync kernel (three stages at D = 128 there).
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=a100 -verify-diagnostics
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config=target=l4 2>&1 | FileCheck %s --check-prefix=L4
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config="target=l4 recipe=sm90ws" 2>&1 | FileCheck %s --check-prefix=L4WS
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config=target=h100 2>&1 | FileCheck %s --check-prefix=H100
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm90" 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm80" 2>&1 | FileCheck %s --check-prefix=H100SM80

// L4: no kernel config for target 'l4': the mma.sync FP8 forward serves D = Dv in {64, 128}, got D = 96, Dv = 96
// L4: no kernel config for target 'l4': the mma.sync FP8 forward serves D = Dv in {64, 128}, got D = 256, Dv = 256
// L4: no kernel config for target 'l4': the mma.sync FP8 forward serves D = Dv in {64, 128}, got D = 256, Dv = 256
// L4: no kernel config for target 'l4': the FP8 forward does not serve a bias, mask, score_mod or mask_mod yet
// L4: no kernel config for target 'l4': the mma.sync FP8 forward serves D = Dv in {64, 128}, got D = 256, Dv = 256
// L4-LABEL: func.func @fp8_d64
// L4: config = #flash.config<sm80, block_m = 128, block_n = 128, warps = 8, stages = 3>
// L4-LABEL: func.func @fp8_d128
// L4: config = #flash.config<sm80, block_m = 128, block_n = 128, warps = 8, stages = 2>
// L4-LABEL: func.func @fp8_window_softcap
// L4: config = #flash.config<sm80, block_m = 128, block_n = 128, warps = 8, stages = 2>, softcap = 3.000000e+01 : f32, window_left = 64
// L4-LABEL: func.func @fp8_d128_blocks
// L4: config = #flash.config<sm80, block_m = 128, block_n = 128, warps = 8, stages = 2>
// H100: no kernel config for target 'h100': the FP8 forward serves D = Dv in {64, 128, 256} (Q and K rows of whole 128- or 64-byte swizzle rows), got D = 96, Dv = 96
// H100: no kernel config for target 'h100': the FP8 forward serves a window or softcap at D = 64 and 128 only (at D = 256 its consumer warpgroups spill), got D = 256
// H100: no kernel config for target 'h100': the FP8 forward does not serve a bias, mask, score_mod or mask_mod yet
// H100: no kernel config for target 'h100': the FP8 forward serves per-block descales at D = 256 without a causal mask only (with one its consumer warpgroups spill)
// H100: config = #flash.config<sm90ws, block_m = 192, block_n = 128, warps = 12, stages = 4>
// H100: config = #flash.config<sm90ws, block_m = 128, block_n = 192, warps = 8, stages = 2>
// H100: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 2>
// H100-LABEL: func.func @fp8_window_softcap
// H100: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>, softcap = 3.000000e+01 : f32, window_left = 64
// H100-LABEL: func.func @fp8_d128_blocks
// H100: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
// H100-LABEL: func.func @fp8_d128_blocks_of_384_keys
// H100: config = #flash.config<sm90ws, block_m = 128, block_n = 192, warps = 8, stages = 2>
// H100-LABEL: func.func @fp8_d64_causal
// H100: config = #flash.config<sm90ws, block_m = 192, block_n = 160, warps = 12, stages = 4>
// H100-LABEL: func.func @fp8_d64_causal_br
// H100: config = #flash.config<sm90ws, block_m = 128, block_n = 192, warps = 8, stages = 2>
// SM90: no kernel config for target 'h100': the sm90 recipe has no FP8 kernel; FP8 forwards take the sm90ws recipe (recipe=auto or sm90ws), or the mma.sync one of sm80
// L4WS: no kernel config for target 'l4': the sm90ws recipe needs sm_90 (wgmma), target is sm_89; FP8 there takes the mma.sync kernel (recipe=auto or sm80)
// H100SM80-LABEL: func.func @fp8_d128
// H100SM80: config = #flash.config<sm80, block_m = 128, block_n = 128, warps = 8, stages = 3>
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

// -----

// Per-block descales at D = 128: both kernels serve them (H100, L4 above).
func.func @fp8_d128_blocks(%q: tensor<1x2x256x128xf8E4M3FN>, %d: tensor<1x2x2xf32>) -> tensor<1x2x256x128xbf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>)
      : tensor<1x2x256x128xf8E4M3FN>, tensor<1x2x256x128xf8E4M3FN>, tensor<1x2x256x128xf8E4M3FN>
      -> tensor<1x2x256x128xbf16>
  return %o : tensor<1x2x256x128xbf16>
}

// -----

// Per-block descales over 384 keys: 192-key blocks divide them (H100).
func.func @fp8_d128_blocks_of_384_keys(%q: tensor<1x2x384x128xf8E4M3FN>, %dq: tensor<1x2x3xf32>, %dk: tensor<1x2x1xf32>) -> tensor<1x2x384x128xbf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q descale(%dq, %dk, %dk : tensor<1x2x3xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>)
      {descale_block_size = array<i64: 128, 384>}
      : tensor<1x2x384x128xf8E4M3FN>, tensor<1x2x384x128xf8E4M3FN>, tensor<1x2x384x128xf8E4M3FN>
      -> tensor<1x2x384x128xbf16>
  return %o : tensor<1x2x384x128xbf16>
}

// -----

// D = 64 under a top-left causal mask: 192 query rows on three consumer
// warpgroups, blocks of 160 keys (H100); bottom-right (below) 128 rows, blocks of 192 keys.
func.func @fp8_d64_causal(%q: tensor<1x2x128x64xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x2x128x64xbf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<top_left>}
      : tensor<1x2x128x64xf8E4M3FN>, tensor<1x2x128x64xf8E4M3FN>, tensor<1x2x128x64xf8E4M3FN>
      -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}

// -----

func.func @fp8_d64_causal_br(%q: tensor<1x2x128x64xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x2x128x64xbf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<bottom_right>}
      : tensor<1x2x128x64xf8E4M3FN>, tensor<1x2x128x64xf8E4M3FN>, tensor<1x2x128x64xf8E4M3FN>
      -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}
