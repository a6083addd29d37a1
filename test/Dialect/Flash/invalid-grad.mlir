// flash.attention_grad: (dO, Q, K, V, O, LSE) -> (dQ, dK, dV[, dBias]).
// RUN: flashfuse-opt %s -split-input-file -verify-diagnostics

func.func @grad_output_type(%do: tensor<2x4x64x32xbf16>, %x: tensor<2x4x64x32xf16>,
                            %lse: tensor<2x4x64xf32>) {
  // expected-error @below {{'grad_output' must have the type of 'output' 'tensor<2x4x64x32xf16>', got 'tensor<2x4x64x32xbf16>'}}
  %0:3 = flash.attention_grad %do, %x, %x, %x, %x, %lse
      : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
        tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>
  return
}

// -----

func.func @grad_output_shape(%do: tensor<2x4x32x64xf16>, %x: tensor<2x4x64x32xf16>,
                             %lse: tensor<2x4x64xf32>) {
  // expected-error @below {{'grad_output' must have the type of 'output' 'tensor<2x4x64x32xf16>', got 'tensor<2x4x32x64xf16>'}}
  %0:3 = flash.attention_grad %do, %x, %x, %x, %x, %lse
      : tensor<2x4x32x64xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
        tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>
  return
}

// -----

// O must be the forward output of these Q, K, V: [B, Hq, Sq, Dv].
func.func @output_shape(%x: tensor<2x4x64x32xf16>, %o: tensor<2x4x64x16xf16>,
                        %lse: tensor<2x4x64xf32>) {
  // expected-error @below {{'output' must have shape [2, 4, 64, 32] (logical [B, Hq, Sq, Dv] in the layout of 'query'), got [2, 4, 64, 16]}}
  %0:3 = flash.attention_grad %o, %x, %x, %x, %o, %lse
      : tensor<2x4x64x16xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
        tensor<2x4x64x32xf16>, tensor<2x4x64x16xf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>
  return
}

// -----

func.func @output_element_type(%x: tensor<2x4x64x32xf16>, %o: tensor<2x4x64x32xf32>,
                               %lse: tensor<2x4x64xf32>) {
  // expected-error @below {{'output' element type 'f32' must match 'query' element type 'f16' (only flash.attention writes an f32 O; the gradient takes O in the inputs' type)}}
  %0:3 = flash.attention_grad %o, %x, %x, %x, %o, %lse
      : tensor<2x4x64x32xf32>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
        tensor<2x4x64x32xf16>, tensor<2x4x64x32xf32>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>
  return
}

// -----

func.func @lse_shape(%x: tensor<2x4x64x32xf16>, %lse: tensor<2x64x4xf32>) {
  // expected-error @below {{'lse' must have shape [2, 4, 64] ([B, Hq, Sq]), got [2, 64, 4]}}
  %0:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
        tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x64x4xf32>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>
  return
}

// -----

func.func @lse_element_type(%x: tensor<2x4x64x32xf16>, %lse: tensor<2x4x64xf16>) {
  // expected-error @below {{operand #5 must be ranked tensor of 32-bit float values, but got 'tensor<2x4x64xf16>'}}
  %0:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
        tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64xf16>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>
  return
}

// -----

func.func @grad_query_type(%x: tensor<2x4x64x32xf16>, %lse: tensor<2x4x64xf32>) {
  // expected-error @below {{'grad_query' must have the type of 'query' 'tensor<2x4x64x32xf16>', got 'tensor<2x4x64x32xf32>'}}
  %0:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
        tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xf32>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>
  return
}

// -----

// With GQA, dK and dV have the KV heads of K and V, not the query heads.
func.func @grad_key_gqa(%q: tensor<2x4x64x32xf16>, %kv: tensor<2x1x64x32xf16>,
                        %lse: tensor<2x4x64xf32>) {
  // expected-error @below {{'grad_key' must have the type of 'key' 'tensor<2x1x64x32xf16>', got 'tensor<2x4x64x32xf16>'}}
  %0:3 = flash.attention_grad %q, %q, %kv, %kv, %q, %lse
      : tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x1x64x32xf16>,
        tensor<2x1x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x1x64x32xf16>
  return
}

// -----

func.func @grad_value_layout(%x: tensor<2x4x64x32xf16>, %v: tensor<2x64x4x32xf16>,
                             %lse: tensor<2x4x64xf32>) {
  // expected-error @below {{'grad_value' must have the type of 'value' 'tensor<2x64x4x32xf16>', got 'tensor<2x4x64x32xf16>'}}
  %0:3 = flash.attention_grad %x, %x, %x, %v, %x, %lse {v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
        tensor<2x64x4x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>
  return
}

// -----

func.func @grad_bias_without_bias(%x: tensor<2x4x64x32xf16>, %lse: tensor<2x4x64xf32>) {
  // expected-error @below {{'grad_bias' is requested but there is no 'bias'}}
  %0:4 = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
        tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
         tensor<2x4x64x64xf16>
  return
}

// -----

// dBias is summed over the broadcast dimensions: it has the bias's shape.
func.func @grad_bias_shape(%x: tensor<2x4x64x32xf16>, %lse: tensor<2x4x64xf32>,
                           %b: tensor<1x4x64x64xf16>) {
  // expected-error @below {{'grad_bias' must have the type of 'bias' 'tensor<1x4x64x64xf16>', got 'tensor<2x4x64x64xf16>'}}
  %0:4 = flash.attention_grad %x, %x, %x, %x, %x, %lse bias(%b : tensor<1x4x64x64xf16>)
      : tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
        tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
         tensor<2x4x64x64xf16>
  return
}

// -----

func.func @too_few_results(%x: tensor<2x4x64x32xf16>, %lse: tensor<2x4x64xf32>) {
  // expected-error @below {{'flash.attention_grad' op expected 3 or more results}}
  %0:2 = "flash.attention_grad"(%x, %x, %x, %x, %x, %lse)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {})
      : (tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
         tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64xf32>)
      -> (tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>)
  return
}

// -----

// The variant checks are shared with the forward op.
func.func @shared_variant_checks(%x: tensor<2x4x64x32xf16>, %lse: tensor<2x4x64xf32>) {
  // expected-error @below {{dropout_p > 0 needs a 'seed' operand}}
  %0:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse {dropout_p = 0.2 : f32}
      : tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
        tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>
  return
}

// -----

func.func @shared_shape_checks(%x: tensor<2x4x64x32xf16>, %k: tensor<2x3x64x32xf16>,
                               %lse: tensor<2x4x64xf32>) {
  // expected-error @below {{query heads (4) must be a multiple of key/value heads (3)}}
  %0:3 = flash.attention_grad %x, %x, %k, %k, %x, %lse
      : tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x3x64x32xf16>,
        tensor<2x3x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xf16>, tensor<2x3x64x32xf16>, tensor<2x3x64x32xf16>
  return
}

// -----

func.func @shared_region_checks(%x: tensor<2x4x64x32xf16>, %lse: tensor<2x4x64xf32>) {
  // expected-error @below {{'mask_mod' region must take (index, index, index, index), got (f32, index, index, index, index)}}
  %0:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>,
        tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>
  mask_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = arith.constant true
    flash.yield %t : i1
  }
  return
}
