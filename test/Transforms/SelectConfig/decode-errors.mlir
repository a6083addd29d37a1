// What the decode recipe cannot serve gets an error naming why.
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --split-input-file -verify-diagnostics

func.func @head_dim(%q: tensor<1x8x1x40xf16>, %k: tensor<1x8x64x40xf16>, %len: tensor<1xi32>) -> tensor<1x8x1x40xf16> {
  // expected-error @+1 {{no kernel config: the decode recipe serves D = Dv, a multiple of 16 from 32 to 256, got D = 40, Dv = 40}}
  %o = flash.attention_kvcache %q, %k, %k, %len
      : tensor<1x8x1x40xf16>, tensor<1x8x64x40xf16>, tensor<1x8x64x40xf16>, tensor<1xi32> -> tensor<1x8x1x40xf16>
  return %o : tensor<1x8x1x40xf16>
}

// -----

func.func @head_dim_16(%q: tensor<1x8x1x16xf16>, %k: tensor<1x8x64x16xf16>, %len: tensor<1xi32>) -> tensor<1x8x1x16xf16> {
  // expected-error @+1 {{no kernel config: the decode recipe serves D = Dv, a multiple of 16 from 32 to 256, got D = 16, Dv = 16}}
  %o = flash.attention_kvcache %q, %k, %k, %len
      : tensor<1x8x1x16xf16>, tensor<1x8x64x16xf16>, tensor<1x8x64x16xf16>, tensor<1xi32> -> tensor<1x8x1x16xf16>
  return %o : tensor<1x8x1x16xf16>
}

// -----

func.func @f32(%q: tensor<1x8x1x64xf32>, %k: tensor<1x8x64x64xf32>, %len: tensor<1xi32>) -> tensor<1x8x1x64xf32> {
  // expected-error @+1 {{no kernel config: the decode recipe needs f16 or bf16 inputs, got 'f32'}}
  %o = flash.attention_kvcache %q, %k, %k, %len
      : tensor<1x8x1x64xf32>, tensor<1x8x64x64xf32>, tensor<1x8x64x64xf32>, tensor<1xi32> -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}

// -----

// An FP8 cache (docs/KVCACHE.md "FP8 cache"): the decode kernel serves D and
// Dv multiples of 32 from 64 to 256 (select-config-decode-fp8.mlir), not
// D = 32.
func.func @fp8_cache_d32(%q: tensor<1x8x1x32xbf16>, %k: tensor<1x8x64x32xf8E4M3FN>, %len: tensor<1xi32>, %d: tensor<f32>) -> tensor<1x8x1x32xbf16> {
  // expected-error @+1 {{no GPU kernel for an f8E4M3FN KV cache at D = 32, Dv = 32: the FP8-cache decode kernel serves D and Dv multiples of 32 from 64 to 256 (the CPU lowerings serve the others; docs/KVCACHE.md)}}
  %o = flash.attention_kvcache %q, %k, %k, %len descale(%d, %d : tensor<f32>, tensor<f32>)
      : tensor<1x8x1x32xbf16>, tensor<1x8x64x32xf8E4M3FN>, tensor<1x8x64x32xf8E4M3FN>, tensor<1xi32> -> tensor<1x8x1x32xbf16>
  return %o : tensor<1x8x1x32xbf16>
}

// -----

func.func @fp8_cache_d80(%q: tensor<1x8x1x80xf16>, %k: tensor<1x8x64x80xf8E4M3FN>, %len: tensor<1xi32>, %d: tensor<f32>) -> tensor<1x8x1x80xf16> {
  // expected-error @+1 {{no GPU kernel for an f8E4M3FN KV cache at D = 80, Dv = 80}}
  %o = flash.attention_kvcache %q, %k, %k, %len descale(%d, %d : tensor<f32>, tensor<f32>)
      : tensor<1x8x1x80xf16>, tensor<1x8x64x80xf8E4M3FN>, tensor<1x8x64x80xf8E4M3FN>, tensor<1xi32> -> tensor<1x8x1x80xf16>
  return %o : tensor<1x8x1x80xf16>
}
