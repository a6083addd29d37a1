// Everything the sm80 recipe cannot serve is an error on the op, naming why.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=h100 -verify-diagnostics

func.func @f32(%x: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  // expected-error @below {{no kernel config for target 'h100': the sm80 recipe needs f16 or bf16 inputs for its tensor cores, got 'f32' (lower f32 attention with flash-lower-to-loops)}}
  %0 = flash.attention %x, %x, %x
      : tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>
      -> tensor<1x2x64x64xf32>
  return %0 : tensor<1x2x64x64xf32>
}

// -----

// Rows are copied in 16-byte chunks: a head dim must be a multiple of 8.
func.func @head_dim_44(%x: tensor<1x2x64x44xf16>) -> tensor<1x2x64x44xf16> {
  // expected-error @below {{no kernel config for target 'h100': the sm80 recipe serves head dims that are multiples of 8 from 8 to 256, got D = 44}}
  %0 = flash.attention %x, %x, %x
      : tensor<1x2x64x44xf16>, tensor<1x2x64x44xf16>, tensor<1x2x64x44xf16>
      -> tensor<1x2x64x44xf16>
  return %0 : tensor<1x2x64x44xf16>
}

// -----

func.func @head_dim_v_36(%qk: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x36xf16>)
    -> tensor<1x2x64x36xf16> {
  // expected-error @below {{no kernel config for target 'h100': the sm80 recipe serves head dims that are multiples of 8 from 8 to 256, got Dv = 36}}
  %0 = flash.attention %qk, %qk, %v
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x36xf16>
      -> tensor<1x2x64x36xf16>
  return %0 : tensor<1x2x64x36xf16>
}

// -----

func.func @head_dim_512(%x: tensor<1x2x64x512xbf16>) -> tensor<1x2x64x512xbf16> {
  // expected-error @below {{no kernel config for target 'h100': the sm80 recipe serves head dims that are multiples of 8 from 8 to 256, got D = 512}}
  %0 = flash.attention %x, %x, %x
      : tensor<1x2x64x512xbf16>, tensor<1x2x64x512xbf16>, tensor<1x2x64x512xbf16>
      -> tensor<1x2x64x512xbf16>
  return %0 : tensor<1x2x64x512xbf16>
}

// -----

// O is staged through the Q tile: Dv may not exceed D.
func.func @dv_above_d(%qk: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x128xf16>)
    -> tensor<1x2x64x128xf16> {
  // expected-error @below {{no kernel config for target 'h100': the sm80 recipe needs Dv <= D (O is staged through the Q tile), got D = 64, Dv = 128}}
  %0 = flash.attention %qk, %qk, %v
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x128xf16>
      -> tensor<1x2x64x128xf16>
  return %0 : tensor<1x2x64x128xf16>
}

// -----

func.func @dynamic_d(%x: tensor<1x2x64x?xf16>) -> tensor<1x2x64x?xf16> {
  // expected-error @below {{no kernel config for target 'h100': the sm80 recipe compiles the head dim in, but D is dynamic}}
  %0 = flash.attention %x, %x, %x {scale = 0.125 : f32}
      : tensor<1x2x64x?xf16>, tensor<1x2x64x?xf16>, tensor<1x2x64x?xf16>
      -> tensor<1x2x64x?xf16>
  return %0 : tensor<1x2x64x?xf16>
}

// -----

func.func @dynamic_dv(%qk: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x?xf16>)
    -> tensor<1x2x64x?xf16> {
  // expected-error @below {{no kernel config for target 'h100': the sm80 recipe compiles the head dim in, but Dv is dynamic}}
  %0 = flash.attention %qk, %qk, %v
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x?xf16>
      -> tensor<1x2x64x?xf16>
  return %0 : tensor<1x2x64x?xf16>
}

// -----

// The gradient is refused for the same reasons.
func.func @grad_f32(%x: tensor<1x2x64x64xf32>, %lse: tensor<1x2x64xf32>) {
  // expected-error @below {{no kernel config for target 'h100': the sm80 recipe needs f16 or bf16 inputs for its tensor cores, got 'f32'}}
  %0:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>,
        tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64xf32>
      -> tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>
  return
}

// -----

// Every refused op is reported, not only the first.
func.func @several(%a: tensor<1x2x64x84xf16>, %b: tensor<1x2x64x64xf16>,
                   %c: tensor<1x2x64x64xf32>) {
  // expected-error @below {{got D = 84}}
  %0 = flash.attention %a, %a, %a
      : tensor<1x2x64x84xf16>, tensor<1x2x64x84xf16>, tensor<1x2x64x84xf16>
      -> tensor<1x2x64x84xf16>
  %1 = flash.attention %b, %b, %b
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
      -> tensor<1x2x64x64xf16>
  // expected-error @below {{got 'f32'}}
  %2 = flash.attention %c, %c, %c
      : tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>
      -> tensor<1x2x64x64xf32>
  return
}
