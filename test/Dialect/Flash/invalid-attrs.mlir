// Variant attributes of flash.attention and the #flash.target /
// #flash.config / #flash.causal attributes.
// RUN: flashfuse-opt %s -split-input-file -verify-diagnostics

func.func @perm_short(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'q_perm' must be a permutation of [0, 1, 2, 3], got [0, 2, 1]}}
  %o = flash.attention %x, %x, %x {q_perm = array<i64: 0, 2, 1>}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

// A misspelt variant attribute is an error, not a discardable attribute
// that would silently compile another variant; dialect-prefixed ones pass.
func.func @unknown_attribute(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'flash.attention' op has no attribute 'window' (its attributes: causal, config, descale_block_size, dropout_p, k_perm, q_perm, scale, softcap, sparse_block_size, v_perm, window_left, window_right; dialect-prefixed names pass through)}}
  %o = flash.attention %x, %x, %x {window = array<i64: 64, 0>}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @unknown_attribute_grad(%x: tensor<1x2x16x32xf16>, %lse: tensor<1x2x16xf32>) {
  // expected-error @below {{'flash.attention_grad' op has no attribute 'casual'}}
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse {casual = #flash.causal<top_left>}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16xf32>
      -> tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}

// -----

func.func @prefixed_attribute_passes(%x: tensor<1x2x16x32xf16>) -> tensor<1x2x16x32xf16> {
  %o = flash.attention %x, %x, %x {mytool.origin = "layer 3"}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return %o : tensor<1x2x16x32xf16>
}

// -----

func.func @perm_repeated(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'k_perm' must be a permutation of [0, 1, 2, 3], got [0, 1, 1, 3]}}
  %o = flash.attention %x, %x, %x {k_perm = array<i64: 0, 1, 1, 3>}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @perm_out_of_range(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'v_perm' must be a permutation of [0, 1, 2, 3], got [0, 1, 2, 4]}}
  %o = flash.attention %x, %x, %x {v_perm = array<i64: 0, 1, 2, 4>}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @perm_negative_long(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'q_perm' must be a permutation of [0, 1, 2, 3], got [-1, 0, 1, 2, 3]}}
  %o = flash.attention %x, %x, %x {q_perm = array<i64: -1, 0, 1, 2, 3>}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @perm_wrong_kind(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{invalid properties}}
  %o = "flash.attention"(%x, %x, %x)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, q_perm = 3 : i64}> ({}, {})
      : (tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>) -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @scale_wrong_kind(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{attribute 'scale' failed to satisfy constraint: 32-bit float attribute}}
  %o = flash.attention %x, %x, %x {scale = 1.0 : f64}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @scale_inf(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'scale' must be finite, got inf}}
  %o = flash.attention %x, %x, %x {scale = 0x7F800000 : f32}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @scale_nan(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'scale' must be finite, got nan}}
  %o = flash.attention %x, %x, %x {scale = 0x7FC00000 : f32}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

// The default scale 1/sqrt(D) needs a static D.
func.func @scale_dynamic_d(%x: tensor<1x2x16x?xf16>) {
  // expected-error @below {{'scale' must be given when the head dim D is dynamic}}
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x?xf16>, tensor<1x2x16x?xf16>, tensor<1x2x16x?xf16>
      -> tensor<1x2x16x?xf16>
  return
}

// -----

func.func @softcap_zero(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'softcap' must be positive and finite, got 0}}
  %o = flash.attention %x, %x, %x {softcap = 0.0 : f32}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @softcap_negative(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'softcap' must be positive and finite, got -3}}
  %o = flash.attention %x, %x, %x {softcap = -3.0 : f32}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

// softcap * tanh(s / softcap) is inf * 0 = NaN at an infinite cap.
func.func @softcap_inf(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'softcap' must be positive and finite, got inf}}
  %o = flash.attention %x, %x, %x {softcap = 0x7F800000 : f32}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @dropout_one(%x: tensor<1x2x16x32xf16>, %seed: i64) {
  // expected-error @below {{'dropout_p' must be in [0, 1), got 1}}
  %o = flash.attention %x, %x, %x seed(%seed) {dropout_p = 1.0 : f32}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @dropout_negative(%x: tensor<1x2x16x32xf16>, %seed: i64) {
  // expected-error @below {{'dropout_p' must be in [0, 1), got -0.5}}
  %o = flash.attention %x, %x, %x seed(%seed) {dropout_p = -0.5 : f32}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @dropout_nan(%x: tensor<1x2x16x32xf16>, %seed: i64) {
  // expected-error @below {{'dropout_p' must be in [0, 1), got nan}}
  %o = flash.attention %x, %x, %x seed(%seed) {dropout_p = 0x7FC00000 : f32}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

// Dropout recomputed in the backward pass needs the seed it was drawn with.
func.func @dropout_without_seed(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{dropout_p > 0 needs a 'seed' operand}}
  %o = flash.attention %x, %x, %x {dropout_p = 0.1 : f32}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @seed_without_dropout(%x: tensor<1x2x16x32xf16>, %seed: i64) {
  // expected-error @below {{'seed' is given but dropout_p is not positive}}
  %o = flash.attention %x, %x, %x seed(%seed)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @seed_with_zero_dropout(%x: tensor<1x2x16x32xf16>, %seed: i64) {
  // expected-error @below {{'seed' is given but dropout_p is not positive}}
  %o = flash.attention %x, %x, %x seed(%seed) {dropout_p = 0.0 : f32}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @window_left_negative(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'window_left' must be non-negative, got -1}}
  %o = flash.attention %x, %x, %x {window_left = -1 : i64}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @window_right_negative(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'window_right' must be non-negative, got -128}}
  %o = flash.attention %x, %x, %x {window_left = 4 : i64, window_right = -128 : i64}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @window_wrong_width(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{attribute 'window_left' failed to satisfy constraint: 64-bit signless integer attribute}}
  %o = flash.attention %x, %x, %x {window_left = 4 : i32}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @causal_wrong_kind(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{attribute 'causal' failed to satisfy constraint: alignment of the causal diagonal}}
  %o = flash.attention %x, %x, %x {causal = true}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

// expected-error @below {{expected ::mlir::flash::CausalAlignment to be one of: top_left, bottom_right}}
// expected-error @below {{failed to parse Flash_CausalAttr parameter 'value'}}
func.func @causal_unknown() attributes {c = #flash.causal<middle>}

// -----

func.func @config_wrong_kind(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{attribute 'config' failed to satisfy constraint: the tiling a kernel recipe is instantiated with}}
  %o = flash.attention %x, %x, %x {config = #flash.causal<top_left>}
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

// expected-error @below {{expected one of [sm80, sm90, decode, sm90ws] for GPU kernel recipe, got: sm70}}
// expected-error @below {{failed to parse Flash_KernelConfigAttr parameter 'recipe'}}
func.func @config_recipe() attributes {c = #flash.config<sm70, block_m = 64, block_n = 64, warps = 4, stages = 2>}

// -----

// expected-error @below {{block_m must be a positive multiple of 16 (or 8 with the decode recipe), got 0}}
func.func @config_block_m_zero() attributes {c = #flash.config<sm80, block_m = 0, block_n = 64, warps = 4, stages = 2>}

// -----

// expected-error @below {{block_m must be a positive multiple of 16 (or 8 with the decode recipe), got 100}}
func.func @config_block_m() attributes {c = #flash.config<sm80, block_m = 100, block_n = 64, warps = 4, stages = 2>}

// -----

// Only decode's rows can be the products' n.
// expected-error @below {{block_m must be a positive multiple of 16 (or 8 with the decode recipe), got 8}}
func.func @config_block_m_8() attributes {c = #flash.config<sm80, block_m = 8, block_n = 64, warps = 4, stages = 2>}

// -----

// expected-error @below {{block_n must be a positive multiple of 16, got -64}}
func.func @config_block_n() attributes {c = #flash.config<sm80, block_m = 64, block_n = -64, warps = 4, stages = 2>}

// -----

// expected-error @below {{warps must be one of 1, 2, 4, 8, 12, 16, got 3}}
func.func @config_warps() attributes {c = #flash.config<sm80, block_m = 64, block_n = 64, warps = 3, stages = 2>}

// -----

// expected-error @below {{stages must be in [1, 8], got 0}}
func.func @config_stages_zero() attributes {c = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 0>}

// -----

// expected-error @below {{stages must be in [1, 8], got 9}}
func.func @config_stages() attributes {c = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 9>}

// -----

// expected-error @below {{target name must not be empty}}
func.func @target_name() attributes {t = #flash.target<name = "", arch = 90, sms = 132, smem_per_block = 232448, regs_per_sm = 65536>}

// -----

// expected-error @below {{target 'p100': arch 60 is below 70 (sm_70, the first GPU with tensor cores)}}
func.func @target_arch() attributes {t = #flash.target<name = "p100", arch = 60, sms = 56, smem_per_block = 49152, regs_per_sm = 65536>}

// -----

// expected-error @below {{target 'x': sms must be positive, got 0}}
func.func @target_sms() attributes {t = #flash.target<name = "x", arch = 80, sms = 0, smem_per_block = 49152, regs_per_sm = 65536>}

// -----

// expected-error @below {{target 'x': smem_per_block must be positive, got -1}}
func.func @target_smem() attributes {t = #flash.target<name = "x", arch = 80, sms = 1, smem_per_block = -1, regs_per_sm = 65536>}

// -----

// expected-error @below {{target 'x': regs_per_sm must be positive, got 0}}
func.func @target_regs() attributes {t = #flash.target<name = "x", arch = 80, sms = 1, smem_per_block = 1024, regs_per_sm = 0>}

// -----

// expected-error @below {{expected 'sms'}}
func.func @target_order() attributes {t = #flash.target<name = "x", arch = 80, smem_per_block = 1024, sms = 1, regs_per_sm = 1>}
