// Every verifier message of the varlen (packed batch) form of
// flash.attention, one case each.
// RUN: flashfuse-opt %s -split-input-file -verify-diagnostics

// The custom form cannot give one without the other; the generic form can.
func.func @only_cu_q(%q: tensor<1x2x16x32xf16>, %cu: tensor<3xi32>) {
  // expected-error @below {{'cu_seqlens_q' and 'cu_seqlens_k' must be given together (varlen), got only 'cu_seqlens_q'}}
  %o = "flash.attention"(%q, %q, %q, %cu)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {})
      : (tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<3xi32>) -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @only_cu_k(%q: tensor<1x2x16x32xf16>, %cu: tensor<3xi32>) {
  // expected-error @below {{'cu_seqlens_q' and 'cu_seqlens_k' must be given together (varlen), got only 'cu_seqlens_k'}}
  %o = "flash.attention"(%q, %q, %q, %cu)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {})
      : (tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<3xi32>) -> tensor<1x2x16x32xf16>
  return
}

// -----

// Offsets are i32, as flash-attn's cu_seqlens.
func.func @cu_i64(%q: tensor<1x2x16x32xf16>, %cu: tensor<3xi64>) {
  // expected-error @below {{operand #3 must be ranked tensor of 32-bit signless integer values, but got 'tensor<3xi64>'}}
  %o = flash.attention %q, %q, %q varlen(%cu, %cu : tensor<3xi64>, tensor<3xi64>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @cu_rank2(%q: tensor<1x2x16x32xf16>, %cu: tensor<3x1xi32>, %cuk: tensor<3xi32>) {
  // expected-error @below {{'cu_seqlens_q' must have rank 1 ([B + 1]), got 'tensor<3x1xi32>'}}
  %o = flash.attention %q, %q, %q varlen(%cu, %cuk : tensor<3x1xi32>, tensor<3xi32>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @cu_empty(%q: tensor<1x2x16x32xf16>, %cu: tensor<3xi32>, %cuk: tensor<0xi32>) {
  // expected-error @below {{'cu_seqlens_k' must have B + 1 >= 1 elements, got 0}}
  %o = flash.attention %q, %q, %q varlen(%cu, %cuk : tensor<3xi32>, tensor<0xi32>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @cu_sizes_differ(%q: tensor<1x2x16x32xf16>, %cuq: tensor<3xi32>, %cuk: tensor<4xi32>) {
  // expected-error @below {{'cu_seqlens_k' must have shape [3] ([B + 1], as 'cu_seqlens_q'), got [4]}}
  %o = flash.attention %q, %q, %q varlen(%cuq, %cuk : tensor<3xi32>, tensor<4xi32>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @batch_not_one(%q: tensor<2x2x16x32xf16>, %cu: tensor<3xi32>) {
  // expected-error @below {{varlen packs the batch along S: the batch size B of 'query', 'key' and 'value' must be 1, got 2}}
  %o = flash.attention %q, %q, %q varlen(%cu, %cu : tensor<3xi32>, tensor<3xi32>)
      : tensor<2x2x16x32xf16>, tensor<2x2x16x32xf16>, tensor<2x2x16x32xf16>
      -> tensor<2x2x16x32xf16>
  return
}

// -----

func.func @with_bias(%q: tensor<1x2x16x32xf16>, %b: tensor<1x2x16x16xf16>, %cu: tensor<3xi32>) {
  // expected-error @below {{varlen with a 'bias' operand is not supported yet (its [B, Hq, Sq, Sk] would be per sequence)}}
  %o = flash.attention %q, %q, %q bias(%b : tensor<1x2x16x16xf16>)
      varlen(%cu, %cu : tensor<3xi32>, tensor<3xi32>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @with_mask(%q: tensor<1x2x16x32xf16>, %m: tensor<1x1x16x16xi1>, %cu: tensor<3xi32>) {
  // expected-error @below {{varlen with a 'mask' operand is not supported yet (its [B, Hq, Sq, Sk] would be per sequence)}}
  %o = flash.attention %q, %q, %q mask(%m : tensor<1x1x16x16xi1>)
      varlen(%cu, %cu : tensor<3xi32>, tensor<3xi32>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

// The LSE is in the packed layout [1, Hq, total_q].
func.func @lse_not_packed(%q: tensor<1x2x16x32xf16>, %cu: tensor<3xi32>) {
  // expected-error @below {{'lse' must have shape [1, 2, 16] ([B, Hq, Sq]), got [2, 2, 8]}}
  %o, %lse = flash.attention %q, %q, %q varlen(%cu, %cu : tensor<3xi32>, tensor<3xi32>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>, tensor<2x2x8xf32>
  return
}

// -----

// flash.attention_grad shares the checks; one case each for the rules it
// reaches through them.
func.func @grad_only_cu_k(%t: tensor<1x2x16x32xf16>, %lse: tensor<1x2x16xf32>, %cu: tensor<3xi32>) {
  // expected-error @below {{'cu_seqlens_q' and 'cu_seqlens_k' must be given together (varlen), got only 'cu_seqlens_k'}}
  %dq, %dk, %dv = "flash.attention_grad"(%t, %t, %t, %t, %t, %lse, %cu)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0>}> ({}, {})
      : (tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16xf32>, tensor<3xi32>)
      -> (tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>)
  return
}

// -----

func.func @grad_batch_not_one(%t: tensor<2x2x16x32xf16>, %lse: tensor<2x2x16xf32>, %cu: tensor<3xi32>) {
  // expected-error @below {{varlen packs the batch along S: the batch size B of 'query', 'key' and 'value' must be 1, got 2}}
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      varlen(%cu, %cu : tensor<3xi32>, tensor<3xi32>)
      : tensor<2x2x16x32xf16>, tensor<2x2x16x32xf16>, tensor<2x2x16x32xf16>,
        tensor<2x2x16x32xf16>, tensor<2x2x16x32xf16>, tensor<2x2x16xf32>
      -> tensor<2x2x16x32xf16>, tensor<2x2x16x32xf16>, tensor<2x2x16x32xf16>
  return
}

// -----

func.func @grad_with_bias(%t: tensor<1x2x16x32xf16>, %lse: tensor<1x2x16xf32>, %b: tensor<1x2x16x16xf16>, %cu: tensor<3xi32>) {
  // expected-error @below {{varlen with a 'bias' operand is not supported yet (its [B, Hq, Sq, Sk] would be per sequence)}}
  %dq, %dk, %dv, %db = flash.attention_grad %t, %t, %t, %t, %t, %lse
      bias(%b : tensor<1x2x16x16xf16>) varlen(%cu, %cu : tensor<3xi32>, tensor<3xi32>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>,
        tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16xf32>
      -> tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x16xf16>
  return
}

// -----

func.func @grad_offsets_differ(%t: tensor<1x2x16x32xf16>, %lse: tensor<1x2x16xf32>, %cu_q: tensor<3xi32>, %cu_k: tensor<4xi32>) {
  // expected-error @below {{'cu_seqlens_k' must have shape}}
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      varlen(%cu_q, %cu_k : tensor<3xi32>, tensor<4xi32>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>,
        tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16xf32>
      -> tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
  return
}
