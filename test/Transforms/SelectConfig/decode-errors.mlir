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
