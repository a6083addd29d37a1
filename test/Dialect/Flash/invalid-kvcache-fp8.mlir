// Every FP8-cache message of flash.attention_kvcache's verifier
// (Fp8Verify.cpp, docs/KVCACHE.md "FP8 cache"): e5m2, an FP8 query, mixed
// caches, missing or unneeded descales, the query and new rows' types,
// descale shapes and constant values, and the updated caches' type.
// RUN: flashfuse-opt %s -split-input-file -verify-diagnostics

func.func @e5m2_cache(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xf8E5M2>,
                      %vc: tensor<2x2x256x64xf8E5M2>, %lens: tensor<2xi32>,
                      %d: tensor<f32>) {
  // expected-error @below {{'key_cache' element type f8E5M2 is not supported: an FP8 KV cache is f8E4M3FN (e4m3's third mantissa bit is what attention needs; there are no e5m2 kernels)}}
  %o = flash.attention_kvcache %q, %kc, %vc, %lens descale(%d, %d : tensor<f32>, tensor<f32>)
      : tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E5M2>, tensor<2x2x256x64xf8E5M2>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>
  return
}

// -----

func.func @fp8_query(%q: tensor<2x4x1x64xf8E4M3FN>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                     %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>,
                     %d: tensor<f32>) {
  // expected-error @below {{'query' has FP8 element type f8E4M3FN: flash.attention_kvcache takes an FP8 cache with an f16 or bf16 query (FP8 Q is flash.attention's descale(...) form)}}
  %o = flash.attention_kvcache %q, %kc, %vc, %lens descale(%d, %d : tensor<f32>, tensor<f32>)
      : tensor<2x4x1x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>
  return
}

// -----

func.func @mixed_caches(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                        %vc: tensor<2x2x256x64xbf16>, %lens: tensor<2xi32>,
                        %d: tensor<f32>) {
  // expected-error @below {{'key_cache' ('f8E4M3FN') and 'value_cache' ('bf16') must both be f8E4M3FN or both in the type of 'query'}}
  %o = flash.attention_kvcache %q, %kc, %vc, %lens descale(%d, %d : tensor<f32>, tensor<f32>)
      : tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xbf16>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>
  return
}

// -----

func.func @mixed_caches_value_fp8(%q: tensor<2x4x1x64xf16>, %kc: tensor<2x2x256x64xf16>,
                                  %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>) {
  // expected-error @below {{'key_cache' ('f16') and 'value_cache' ('f8E4M3FN') must both be f8E4M3FN or both in the type of 'query'}}
  %o = flash.attention_kvcache %q, %kc, %vc, %lens
      : tensor<2x4x1x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x64xf8E4M3FN>,
        tensor<2xi32> -> tensor<2x4x1x64xf16>
  return
}

// -----

func.func @no_descale(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                      %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>) {
  // expected-error @below {{an f8E4M3FN cache needs both 'k_descale' and 'v_descale' (the f32 factors that dequantise it), got none}}
  %o = flash.attention_kvcache %q, %kc, %vc, %lens {causal = #flash.causal<bottom_right>}
      : tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>
  return
}

// -----

// The custom form spells both; the generic form can give one.
func.func @one_descale(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                       %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>,
                       %d: tensor<f32>) {
  // expected-error @below {{an f8E4M3FN cache needs both 'k_descale' and 'v_descale' (the f32 factors that dequantise it), got only one}}
  %o = "flash.attention_kvcache"(%q, %kc, %vc, %lens, %d) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>}>
      : (tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>, tensor<2xi32>, tensor<f32>)
      -> tensor<2x4x1x64xbf16>
  return
}

// -----

func.func @descale_without_fp8(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xbf16>,
                               %vc: tensor<2x2x256x64xbf16>, %lens: tensor<2xi32>,
                               %d: tensor<f32>) {
  // expected-error @below {{'descale' operands are only for an f8E4M3FN cache, got 'bf16'}}
  %o = flash.attention_kvcache %q, %kc, %vc, %lens descale(%d, %d : tensor<f32>, tensor<f32>)
      : tensor<2x4x1x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x64xbf16>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>
  return
}

// -----

// O is in the query's type, and FP8 O is not a thing: f16 or bf16 only.
func.func @f32_query(%q: tensor<2x4x1x64xf32>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                     %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>,
                     %d: tensor<f32>) {
  // expected-error @below {{'query' element type 'f32' must be bf16 or f16 with an f8E4M3FN cache (O is in its type)}}
  %o = flash.attention_kvcache %q, %kc, %vc, %lens descale(%d, %d : tensor<f32>, tensor<f32>)
      : tensor<2x4x1x64xf32>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>,
        tensor<2xi32> -> tensor<2x4x1x64xf32>
  return
}

// -----

// New rows come in the query's type and are quantised on append.
func.func @fp8_new_rows(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                        %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>,
                        %kn: tensor<2x2x1x64xf8E4M3FN>, %vn: tensor<2x2x1x64xf8E4M3FN>,
                        %d: tensor<f32>) {
  // expected-error @below {{'key_new' element type 'f8E4M3FN' must be the type of 'query' ('bf16'): new rows are quantised into the f8E4M3FN cache as they are appended}}
  %o, %k2, %v2 = flash.attention_kvcache %q, %kc, %vc, %lens
      new_kv(%kn, %vn : tensor<2x2x1x64xf8E4M3FN>, tensor<2x2x1x64xf8E4M3FN>)
      descale(%d, %d : tensor<f32>, tensor<f32>)
      : tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>
  return
}

// -----

func.func @f16_value_new(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                         %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>,
                         %kn: tensor<2x2x1x64xbf16>, %vn: tensor<2x2x1x64xf16>,
                         %d: tensor<f32>) {
  // expected-error @below {{'value_new' element type 'f16' must be the type of 'query' ('bf16'): new rows are quantised into the f8E4M3FN cache as they are appended}}
  %o, %k2, %v2 = flash.attention_kvcache %q, %kc, %vc, %lens
      new_kv(%kn, %vn : tensor<2x2x1x64xbf16>, tensor<2x2x1x64xf16>)
      descale(%d, %d : tensor<f32>, tensor<f32>)
      : tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>
  return
}

// -----

// Per head is per kv head ([B, Hkv]), as flash.attention's k_descale.
func.func @k_descale_query_heads(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                                 %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>,
                                 %kd: tensor<2x4xf32>, %vd: tensor<2x2xf32>) {
  // expected-error @below {{'k_descale' must have shape [] (per tensor) or [2, 2] ([B, Hkv], per head), got [2, 4]}}
  %o = flash.attention_kvcache %q, %kc, %vc, %lens descale(%kd, %vd : tensor<2x4xf32>, tensor<2x2xf32>)
      : tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>
  return
}

// -----

func.func @v_descale_rank1(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                           %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>,
                           %kd: tensor<f32>, %vd: tensor<2xf32>) {
  // expected-error @below {{'v_descale' must have shape [] (per tensor) or [2, 2] ([B, Hkv], per head), got [2]}}
  %o = flash.attention_kvcache %q, %kc, %vc, %lens descale(%kd, %vd : tensor<f32>, tensor<2xf32>)
      : tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>
  return
}

// -----

// Paged: Hkv is dim 2 of the pages, B that of the table and the lengths.
func.func @paged_descale_shape(%q: tensor<3x8x1x64xf16>, %kp: tensor<16x32x2x64xf8E4M3FN>,
                               %vp: tensor<16x32x2x64xf8E4M3FN>, %lens: tensor<3xi32>,
                               %bt: tensor<3x4xi32>, %kd: tensor<3x2xf32>, %vd: tensor<2x3xf32>) {
  // expected-error @below {{'v_descale' must have shape [] (per tensor) or [3, 2] ([B, Hkv], per head), got [2, 3]}}
  %o = flash.attention_kvcache %q, %kp, %vp, %lens block_table(%bt : tensor<3x4xi32>)
      descale(%kd, %vd : tensor<3x2xf32>, tensor<2x3xf32>)
      : tensor<3x8x1x64xf16>, tensor<16x32x2x64xf8E4M3FN>, tensor<16x32x2x64xf8E4M3FN>,
        tensor<3xi32> -> tensor<3x8x1x64xf16>
  return
}

// -----

func.func @zero_k_descale(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                          %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>,
                          %vd: tensor<f32>) {
  %kd = arith.constant dense<0.0> : tensor<f32>
  // expected-error @below {{'k_descale' must be positive and finite, got 0}}
  %o = flash.attention_kvcache %q, %kc, %vc, %lens descale(%kd, %vd : tensor<f32>, tensor<f32>)
      : tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>
  return
}

// -----

func.func @negative_v_descale(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                              %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>,
                              %kd: tensor<2x2xf32>) {
  %vd = arith.constant dense<[[1.0, 0.5], [-0.25, 2.0]]> : tensor<2x2xf32>
  // expected-error @below {{'v_descale' must be positive and finite, got -0.25}}
  %o = flash.attention_kvcache %q, %kc, %vc, %lens descale(%kd, %vd : tensor<2x2xf32>, tensor<2x2xf32>)
      : tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>
  return
}

// -----

func.func @inf_k_descale(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                         %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>,
                         %vd: tensor<f32>) {
  %kd = arith.constant dense<0x7F800000> : tensor<f32>
  // expected-error @below {{'k_descale' must be positive and finite, got inf}}
  %o = flash.attention_kvcache %q, %kc, %vc, %lens descale(%kd, %vd : tensor<f32>, tensor<f32>)
      : tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>
  return
}

// -----

// The updated caches keep the caches' FP8 type.
func.func @bf16_cache_out(%q: tensor<2x4x1x64xbf16>, %kc: tensor<2x2x256x64xf8E4M3FN>,
                          %vc: tensor<2x2x256x64xf8E4M3FN>, %lens: tensor<2xi32>,
                          %kn: tensor<2x2x1x64xbf16>, %vn: tensor<2x2x1x64xbf16>,
                          %d: tensor<f32>) {
  // expected-error @below {{'key_cache_out' must have the type of 'key_cache' 'tensor<2x2x256x64xf8E4M3FN>', got 'tensor<2x2x256x64xbf16>'}}
  %o, %k2, %v2 = flash.attention_kvcache %q, %kc, %vc, %lens
      new_kv(%kn, %vn : tensor<2x2x1x64xbf16>, tensor<2x2x1x64xbf16>)
      descale(%d, %d : tensor<f32>, tensor<f32>)
      : tensor<2x4x1x64xbf16>, tensor<2x2x256x64xf8E4M3FN>, tensor<2x2x256x64xf8E4M3FN>,
        tensor<2xi32> -> tensor<2x4x1x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x64xf8E4M3FN>
  return
}
