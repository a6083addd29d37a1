// What the decode recipe cannot serve gets an error naming why.
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --split-input-file -verify-diagnostics

func.func @head_dim(%q: tensor<1x8x1x80xf16>, %k: tensor<1x8x64x80xf16>, %len: tensor<1xi32>) -> tensor<1x8x1x80xf16> {
  // expected-error @+1 {{no kernel config: the decode recipe serves D = Dv in {32, 64, 96, 128, 256}, got D = 80, Dv = 80}}
  %o = flash.attention_kvcache %q, %k, %k, %len
      : tensor<1x8x1x80xf16>, tensor<1x8x64x80xf16>, tensor<1x8x64x80xf16>, tensor<1xi32> -> tensor<1x8x1x80xf16>
  return %o : tensor<1x8x1x80xf16>
}

// -----

func.func @f32(%q: tensor<1x8x1x64xf32>, %k: tensor<1x8x64x64xf32>, %len: tensor<1xi32>) -> tensor<1x8x1x64xf32> {
  // expected-error @+1 {{no kernel config: the decode recipe needs f16 or bf16 inputs, got 'f32'}}
  %o = flash.attention_kvcache %q, %k, %k, %len
      : tensor<1x8x1x64xf32>, tensor<1x8x64x64xf32>, tensor<1x8x64x64xf32>, tensor<1xi32> -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}
