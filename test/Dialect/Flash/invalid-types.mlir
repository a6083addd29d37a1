// Element types: the ODS constraints (f16/bf16/f32 data, FP8 Q/K/V, i1 masks, f32 LSE,
// i64 seed) and the verifier's rules tying the operands together.
// RUN: flashfuse-opt %s -split-input-file -verify-diagnostics

func.func @f64_query(%q: tensor<1x2x16x32xf64>, %k: tensor<1x2x16x32xf64>,
                     %v: tensor<1x2x16x32xf64>) {
  // expected-error @below {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or f8E4M3FN type or f8E5M2 type values, but got 'tensor<1x2x16x32xf64>'}}
  %o = flash.attention %q, %k, %v
      : tensor<1x2x16x32xf64>, tensor<1x2x16x32xf64>, tensor<1x2x16x32xf64>
      -> tensor<1x2x16x32xf64>
  return
}

// -----

// The custom form only spells tensors; the generic form reaches the ODS
// type constraints with anything.
func.func @unranked_key(%q: tensor<1x2x16x32xf16>, %k: tensor<*xf16>,
                        %v: tensor<1x2x16x32xf16>) {
  // expected-error @below {{operand #1 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or f8E4M3FN type or f8E5M2 type values, but got 'tensor<*xf16>'}}
  %o = "flash.attention"(%q, %k, %v) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {})
      : (tensor<1x2x16x32xf16>, tensor<*xf16>, tensor<1x2x16x32xf16>) -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @memref_value(%q: tensor<1x2x16x32xf16>, %k: tensor<1x2x16x32xf16>,
                        %v: memref<1x2x16x32xf16>) {
  // expected-error @below {{operand #2 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or f8E4M3FN type or f8E5M2 type values, but got 'memref<1x2x16x32xf16>'}}
  %o = "flash.attention"(%q, %k, %v) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {})
      : (tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, memref<1x2x16x32xf16>) -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @integer_bias(%q: tensor<1x2x16x32xf16>, %k: tensor<1x2x16x32xf16>,
                        %v: tensor<1x2x16x32xf16>, %b: tensor<1x1x16x16xi32>) {
  // expected-error @below {{operand #3 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x1x16x16xi32>'}}
  %o = flash.attention %q, %k, %v bias(%b : tensor<1x1x16x16xi32>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @float_mask(%q: tensor<1x2x16x32xf16>, %k: tensor<1x2x16x32xf16>,
                      %v: tensor<1x2x16x32xf16>, %m: tensor<1x1x16x16xf16>) {
  // ODS numbers the operands actually present: the mask is #3 without a bias.
  // expected-error @below {{operand #3 must be ranked tensor of 1-bit signless integer values, but got 'tensor<1x1x16x16xf16>'}}
  %o = flash.attention %q, %k, %v mask(%m : tensor<1x1x16x16xf16>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

// The custom form types the seed as i64 implicitly; a wrong one comes
// through the generic form.
func.func @i32_seed(%q: tensor<1x2x16x32xf16>, %k: tensor<1x2x16x32xf16>,
                    %v: tensor<1x2x16x32xf16>, %s: i32) {
  // expected-error @below {{operand #3 must be 64-bit signless integer, but got 'i32'}}
  %o = "flash.attention"(%q, %k, %v, %s)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, dropout_p = 0.1 : f32}> ({}, {})
      : (tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, i32) -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @f16_lse(%q: tensor<1x2x16x32xf16>, %k: tensor<1x2x16x32xf16>,
                   %v: tensor<1x2x16x32xf16>) {
  // expected-error @below {{result #1 must be ranked tensor of 32-bit float values, but got 'tensor<1x2x16xf16>'}}
  %o, %lse = flash.attention %q, %k, %v
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>, tensor<1x2x16xf16>
  return
}

// -----

func.func @key_element_type(%q: tensor<1x2x16x32xf16>, %k: tensor<1x2x16x32xbf16>,
                            %v: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'key' element type 'bf16' must match 'query' element type 'f16'}}
  %o = flash.attention %q, %k, %v
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xbf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @value_element_type(%q: tensor<1x2x16x32xbf16>, %k: tensor<1x2x16x32xbf16>,
                              %v: tensor<1x2x16x32xf32>) {
  // expected-error @below {{'value' element type 'f32' must match 'query' element type 'bf16'}}
  %o = flash.attention %q, %k, %v
      : tensor<1x2x16x32xbf16>, tensor<1x2x16x32xbf16>, tensor<1x2x16x32xf32>
      -> tensor<1x2x16x32xbf16>
  return
}

// -----

// O is Q's type or f32 (ops.mlir); no other 16-bit type.
func.func @output_element_type(%q: tensor<1x2x16x32xbf16>, %k: tensor<1x2x16x32xbf16>,
                               %v: tensor<1x2x16x32xbf16>) {
  // expected-error @below {{'output' element type 'f16' must match 'query' element type 'bf16' or be f32 (over f16 or bf16 inputs)}}
  %o = flash.attention %q, %k, %v
      : tensor<1x2x16x32xbf16>, tensor<1x2x16x32xbf16>, tensor<1x2x16x32xbf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

// f32 inputs keep an f32 O: a narrower one would be a rounding the caller
// must spell out.
func.func @narrow_output_of_f32(%q: tensor<1x2x16x32xf32>, %k: tensor<1x2x16x32xf32>,
                                %v: tensor<1x2x16x32xf32>) {
  // expected-error @below {{'output' element type 'bf16' must match 'query' element type 'f32' or be f32 (over f16 or bf16 inputs)}}
  %o = flash.attention %q, %k, %v
      : tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>
      -> tensor<1x2x16x32xbf16>
  return
}

// -----

// A bias is f32 or the query's type; bf16 next to f16 needs an explicit cast.
func.func @bias_element_type(%q: tensor<1x2x16x32xf16>, %k: tensor<1x2x16x32xf16>,
                             %v: tensor<1x2x16x32xf16>, %b: tensor<1x1x16x16xbf16>) {
  // expected-error @below {{'bias' element type 'bf16' must be f32 or the 'query' element type 'f16'}}
  %o = flash.attention %q, %k, %v bias(%b : tensor<1x1x16x16xbf16>)
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  return
}

// -----

// The operand segments of the generic form must add up.
func.func @segments(%q: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'flash.attention' op operand count (3) does not match with the total size (4) specified in attribute 'operandSegmentSizes'}}
  %o = "flash.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {})
      : (tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>) -> tensor<1x2x16x32xf16>
  return
}

// -----

func.func @too_many_results(%q: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'flash.attention' op result group starting at #1 requires 0 or 1 element, but found 2}}
  %o:3 = flash.attention %q, %q, %q
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>, tensor<1x2x16xf32>, tensor<1x2x16xf32>
  return
}

// -----

func.func @no_regions(%q: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'flash.attention' op expected 2 regions}}
  %o = "flash.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}>
      : (tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>) -> tensor<1x2x16x32xf16>
  return
}
