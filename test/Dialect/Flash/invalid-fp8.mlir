// Every FP8 refusal of the verifiers (Fp8Verify.cpp), each naming its
// reason: e5m2, missing descales, descales without FP8, the output type,
// descale shapes (per block too) and constant values, descale_block_size,
// varlen and dropout with FP8, and the
// op without an FP8 form (attention_grad). flash.attention_kvcache's FP8
// cache rules are in invalid-kvcache-fp8.mlir.
// RUN: flashfuse-opt %s -split-input-file -verify-diagnostics

func.func @e5m2(%q: tensor<1x2x16x32xf8E5M2>, %k: tensor<1x2x16x32xf8E5M2>,
                %v: tensor<1x2x16x32xf8E5M2>, %d: tensor<f32>) {
  // expected-error @below {{'query' element type f8E5M2 is not supported: FP8 attention takes f8E4M3FN}}
  %o = flash.attention %q, %k, %v descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x16x32xf8E5M2>, tensor<1x2x16x32xf8E5M2>, tensor<1x2x16x32xf8E5M2>
      -> tensor<1x2x16x32xbf16>
  return
}

// -----

func.func @no_descale(%q: tensor<1x2x16x32xf8E4M3FN>, %k: tensor<1x2x16x32xf8E4M3FN>,
                      %v: tensor<1x2x16x32xf8E4M3FN>) {
  // expected-error @below {{f8E4M3FN Q, K and V need all three of 'q_descale', 'k_descale' and 'v_descale' (the f32 factors that dequantise them), got none}}
  %o = flash.attention %q, %k, %v
      : tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>
      -> tensor<1x2x16x32xbf16>
  return
}

// -----

// The custom form spells all three; the generic form can give one.
func.func @one_descale(%q: tensor<1x2x16x32xf8E4M3FN>, %k: tensor<1x2x16x32xf8E4M3FN>,
                       %v: tensor<1x2x16x32xf8E4M3FN>, %d: tensor<f32>) {
  // expected-error @below {{got only some}}
  %o = "flash.attention"(%q, %k, %v, %d) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0>}> ({}, {})
      : (tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<f32>)
      -> tensor<1x2x16x32xbf16>
  return
}

// -----

func.func @descale_without_fp8(%q: tensor<1x2x16x32xbf16>, %k: tensor<1x2x16x32xbf16>,
                               %v: tensor<1x2x16x32xbf16>, %d: tensor<f32>) {
  // expected-error @below {{'descale' operands are only for f8E4M3FN Q, K and V, got 'bf16'}}
  %o = flash.attention %q, %k, %v descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x16x32xbf16>, tensor<1x2x16x32xbf16>, tensor<1x2x16x32xbf16>
      -> tensor<1x2x16x32xbf16>
  return
}

// -----

func.func @f32_output(%q: tensor<1x2x16x32xf8E4M3FN>, %k: tensor<1x2x16x32xf8E4M3FN>,
                      %v: tensor<1x2x16x32xf8E4M3FN>, %d: tensor<f32>) {
  // expected-error @below {{'output' element type 'f32' must be bf16 or f16 for f8E4M3FN inputs}}
  %o = flash.attention %q, %k, %v descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>
      -> tensor<1x2x16x32xf32>
  return
}

// -----

func.func @f8_output(%q: tensor<1x2x16x32xf8E4M3FN>, %k: tensor<1x2x16x32xf8E4M3FN>,
                     %v: tensor<1x2x16x32xf8E4M3FN>, %d: tensor<f32>) {
  // expected-error @below {{result #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values}}
  %o = flash.attention %q, %k, %v descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>
      -> tensor<1x2x16x32xf8E4M3FN>
  return
}

// -----

func.func @mixed_fp8(%q: tensor<1x2x16x32xf8E4M3FN>, %k: tensor<1x2x16x32xbf16>,
                     %v: tensor<1x2x16x32xf8E4M3FN>, %d: tensor<f32>) {
  // expected-error @below {{'key' element type 'bf16' must match 'query' element type 'f8E4M3FN'}}
  %o = flash.attention %q, %k, %v descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xbf16>, tensor<1x2x16x32xf8E4M3FN>
      -> tensor<1x2x16x32xbf16>
  return
}

// -----

// k_descale per head has Hkv columns, not Hq.
func.func @kv_descale_heads(%q: tensor<2x8x16x32xf8E4M3FN>, %k: tensor<2x2x16x32xf8E4M3FN>,
                            %v: tensor<2x2x16x32xf8E4M3FN>, %qd: tensor<2x8xf32>,
                            %kd: tensor<2x8xf32>) {
  // expected-error @below {{'k_descale' must have shape [] (per tensor) or [2, 2] ([B, Hkv], per head) or [2, 2, 1] ([B, Hkv, ceil(S / 128)], per block), got [2, 8]}}
  %o = flash.attention %q, %k, %v descale(%qd, %kd, %kd : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
      : tensor<2x8x16x32xf8E4M3FN>, tensor<2x2x16x32xf8E4M3FN>, tensor<2x2x16x32xf8E4M3FN>
      -> tensor<2x8x16x32xbf16>
  return
}

// -----

// A per-block descale has ceil(S / BQ) blocks: 128 rows in blocks of 64
// are 2, not 3.
func.func @per_block_count(%q: tensor<1x2x128x32xf8E4M3FN>, %k: tensor<1x2x128x32xf8E4M3FN>,
                           %v: tensor<1x2x128x32xf8E4M3FN>, %qd: tensor<1x2x3xf32>,
                           %d: tensor<f32>) {
  // expected-error @below {{'q_descale' must have shape [] (per tensor) or [1, 2] ([B, Hq], per head) or [1, 2, 2] ([B, Hq, ceil(S / 64)], per block), got [1, 2, 3]}}
  %o = flash.attention %q, %k, %v descale(%qd, %d, %d : tensor<1x2x3xf32>, tensor<f32>, tensor<f32>)
      {descale_block_size = array<i64: 64, 128>}
      : tensor<1x2x128x32xf8E4M3FN>, tensor<1x2x128x32xf8E4M3FN>, tensor<1x2x128x32xf8E4M3FN>
      -> tensor<1x2x128x32xbf16>
  return
}

// -----

// K's blocks follow BK (the default 128: 300 keys are 3 blocks).
func.func @per_block_keys(%q: tensor<1x2x128x32xf8E4M3FN>, %k: tensor<1x1x300x32xf8E4M3FN>,
                          %v: tensor<1x1x300x32xf8E4M3FN>, %kd: tensor<1x1x2xf32>,
                          %d: tensor<f32>) {
  // expected-error @below {{'v_descale' must have shape [] (per tensor) or [1, 1] ([B, Hkv], per head) or [1, 1, 3] ([B, Hkv, ceil(S / 128)], per block), got [1, 1, 2]}}
  %o = flash.attention %q, %k, %v descale(%d, %d, %kd : tensor<f32>, tensor<f32>, tensor<1x1x2xf32>)
      : tensor<1x2x128x32xf8E4M3FN>, tensor<1x1x300x32xf8E4M3FN>, tensor<1x1x300x32xf8E4M3FN>
      -> tensor<1x2x128x32xbf16>
  return
}

// -----

func.func @block_size_without_blocks(%q: tensor<1x2x128x32xf8E4M3FN>, %k: tensor<1x2x128x32xf8E4M3FN>,
                                     %v: tensor<1x2x128x32xf8E4M3FN>, %d: tensor<f32>) {
  // expected-error @below {{'descale_block_size' is given but no descale is per block ([B, H, N])}}
  %o = flash.attention %q, %k, %v descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      {descale_block_size = array<i64: 64, 64>}
      : tensor<1x2x128x32xf8E4M3FN>, tensor<1x2x128x32xf8E4M3FN>, tensor<1x2x128x32xf8E4M3FN>
      -> tensor<1x2x128x32xbf16>
  return
}

// -----

func.func @block_size_16bit(%q: tensor<1x2x128x32xbf16>) {
  // expected-error @below {{'descale_block_size' is given but no descale is per block ([B, H, N])}}
  %o = flash.attention %q, %q, %q {descale_block_size = array<i64: 64, 64>}
      : tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16>
      -> tensor<1x2x128x32xbf16>
  return
}

// -----

func.func @block_size_rank(%q: tensor<1x2x128x32xf8E4M3FN>, %qd: tensor<1x2x2xf32>, %d: tensor<f32>) {
  // expected-error @below {{'descale_block_size' must have 2 elements [BQ, BK], got 1}}
  %o = flash.attention %q, %q, %q descale(%qd, %d, %d : tensor<1x2x2xf32>, tensor<f32>, tensor<f32>)
      {descale_block_size = array<i64: 64>}
      : tensor<1x2x128x32xf8E4M3FN>, tensor<1x2x128x32xf8E4M3FN>, tensor<1x2x128x32xf8E4M3FN>
      -> tensor<1x2x128x32xbf16>
  return
}

// -----

func.func @block_size_zero(%q: tensor<1x2x128x32xf8E4M3FN>, %qd: tensor<1x2x2xf32>, %d: tensor<f32>) {
  // expected-error @below {{'descale_block_size' must be positive, got [64, 0]}}
  %o = flash.attention %q, %q, %q descale(%qd, %d, %d : tensor<1x2x2xf32>, tensor<f32>, tensor<f32>)
      {descale_block_size = array<i64: 64, 0>}
      : tensor<1x2x128x32xf8E4M3FN>, tensor<1x2x128x32xf8E4M3FN>, tensor<1x2x128x32xf8E4M3FN>
      -> tensor<1x2x128x32xbf16>
  return
}

// -----

func.func @f16_descale(%q: tensor<1x2x16x32xf8E4M3FN>, %k: tensor<1x2x16x32xf8E4M3FN>,
                       %v: tensor<1x2x16x32xf8E4M3FN>, %d: tensor<f16>) {
  // expected-error @below {{operand #3 must be ranked tensor of 32-bit float values, but got 'tensor<f16>'}}
  %o = flash.attention %q, %k, %v descale(%d, %d, %d : tensor<f16>, tensor<f16>, tensor<f16>)
      : tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>
      -> tensor<1x2x16x32xbf16>
  return
}

// -----

func.func @zero_descale(%q: tensor<1x2x16x32xf8E4M3FN>, %k: tensor<1x2x16x32xf8E4M3FN>,
                        %v: tensor<1x2x16x32xf8E4M3FN>, %d: tensor<f32>) {
  %z = arith.constant dense<[[1.0, 0.0]]> : tensor<1x2xf32>
  // expected-error @below {{'k_descale' must be positive and finite, got 0}}
  %o = flash.attention %q, %k, %v descale(%d, %z, %d : tensor<f32>, tensor<1x2xf32>, tensor<f32>)
      : tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>
      -> tensor<1x2x16x32xbf16>
  return
}

// -----

func.func @negative_descale(%q: tensor<1x2x16x32xf8E4M3FN>, %k: tensor<1x2x16x32xf8E4M3FN>,
                            %v: tensor<1x2x16x32xf8E4M3FN>, %d: tensor<f32>) {
  %n = arith.constant dense<-2.0> : tensor<f32>
  // expected-error @below {{'v_descale' must be positive and finite, got -2}}
  %o = flash.attention %q, %k, %v descale(%d, %d, %n : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>
      -> tensor<1x2x16x32xbf16>
  return
}

// -----

func.func @dropout_fp8(%q: tensor<1x2x16x32xf8E4M3FN>, %k: tensor<1x2x16x32xf8E4M3FN>,
                       %v: tensor<1x2x16x32xf8E4M3FN>, %d: tensor<f32>, %seed: i64) {
  // expected-error @below {{dropout with FP8 operands is not supported (FP8 attention is for inference)}}
  %o = flash.attention %q, %k, %v seed(%seed) descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      {dropout_p = 0.1 : f32}
      : tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>
      -> tensor<1x2x16x32xbf16>
  return
}

// -----

func.func @varlen_fp8(%q: tensor<1x2x16x32xf8E4M3FN>, %k: tensor<1x2x16x32xf8E4M3FN>,
                      %v: tensor<1x2x16x32xf8E4M3FN>, %d: tensor<f32>, %cu: tensor<3xi32>) {
  // expected-error @below {{varlen with FP8 operands is not supported yet (the descales would be per sequence)}}
  %o = flash.attention %q, %k, %v varlen(%cu, %cu : tensor<3xi32>, tensor<3xi32>)
      descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>
      -> tensor<1x2x16x32xbf16>
  return
}

// -----

func.func @grad_fp8(%do: tensor<1x2x16x32xbf16>, %q: tensor<1x2x16x32xf8E4M3FN>,
                    %k: tensor<1x2x16x32xf8E4M3FN>, %v: tensor<1x2x16x32xf8E4M3FN>,
                    %o: tensor<1x2x16x32xbf16>, %lse: tensor<1x2x16xf32>) {
  // expected-error @below {{'query' has FP8 element type 'f8E4M3FN': flash.attention_grad has no FP8 form (FP8 attention is forward-only, for inference)}}
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse
      : tensor<1x2x16x32xbf16>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>,
        tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xbf16>, tensor<1x2x16xf32>
      -> tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>
  return
}
