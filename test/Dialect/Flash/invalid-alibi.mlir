// Every verifier message of `alibi(...)` on flash.attention and
// flash.attention_grad, one case each.
// RUN: flashfuse-opt %s -split-input-file -verify-diagnostics

func.func @wrong_heads(%q: tensor<2x8x16x32xf16>, %s: tensor<4xf32>) {
  // expected-error @below {{'alibi_slopes' must be [Hq] = [8] or [B, Hq] = [2, 8], got [4]}}
  %o = flash.attention %q, %q, %q alibi(%s : tensor<4xf32>)
      : tensor<2x8x16x32xf16>, tensor<2x8x16x32xf16>, tensor<2x8x16x32xf16>
      -> tensor<2x8x16x32xf16>
  return
}

// -----

func.func @wrong_batch(%q: tensor<2x8x16x32xf16>, %s: tensor<3x8xf32>) {
  // expected-error @below {{'alibi_slopes' must be [Hq] = [8] or [B, Hq] = [2, 8], got [3, 8]}}
  %o = flash.attention %q, %q, %q alibi(%s : tensor<3x8xf32>)
      : tensor<2x8x16x32xf16>, tensor<2x8x16x32xf16>, tensor<2x8x16x32xf16>
      -> tensor<2x8x16x32xf16>
  return
}

// -----

func.func @rank3(%q: tensor<2x8x16x32xf16>, %s: tensor<2x8x1xf32>) {
  // expected-error @below {{'alibi_slopes' must be [Hq] = [8] or [B, Hq] = [2, 8], got [2, 8, 1]}}
  %o = flash.attention %q, %q, %q alibi(%s : tensor<2x8x1xf32>)
      : tensor<2x8x16x32xf16>, tensor<2x8x16x32xf16>, tensor<2x8x16x32xf16>
      -> tensor<2x8x16x32xf16>
  return
}

// -----

// Packed: B is the number of sequences (cu_seqlens' size - 1), not 1.
func.func @packed_batch(%q: tensor<1x4x64x32xf16>, %cu: tensor<4xi32>,
                        %s: tensor<1x4xf32>) {
  // expected-error @below {{'alibi_slopes' must be [Hq] = [4] or [B, Hq] = [3, 4] (B: the packed sequences), got [1, 4]}}
  %o = flash.attention %q, %q, %q varlen(%cu, %cu : tensor<4xi32>, tensor<4xi32>)
      alibi(%s : tensor<1x4xf32>)
      : tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>, tensor<1x4x64x32xf16>
      -> tensor<1x4x64x32xf16>
  return
}

// -----

func.func @slopes_f16(%q: tensor<2x8x16x32xf16>, %s: tensor<8xf16>) {
  // expected-error @below {{must be ranked tensor of 32-bit float values, but got 'tensor<8xf16>'}}
  %o = flash.attention %q, %q, %q alibi(%s : tensor<8xf16>)
      : tensor<2x8x16x32xf16>, tensor<2x8x16x32xf16>, tensor<2x8x16x32xf16>
      -> tensor<2x8x16x32xf16>
  return
}

// -----

func.func @fp8(%q: tensor<1x2x16x32xf8E4M3FN>, %d: tensor<f32>, %s: tensor<2xf32>) {
  // expected-error @below {{'alibi_slopes' with FP8 operands is not supported yet}}
  %o = flash.attention %q, %q, %q alibi(%s : tensor<2xf32>)
      descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x16x32xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>,
        tensor<1x2x16x32xf8E4M3FN> -> tensor<1x2x16x32xbf16>
  return
}

// -----

func.func @grad_wrong_heads(%q: tensor<1x4x16x32xf16>, %lse: tensor<1x4x16xf32>,
                            %s: tensor<2xf32>) {
  // expected-error @below {{'alibi_slopes' must be [Hq] = [4] or [B, Hq] = [1, 4], got [2]}}
  %dq, %dk, %dv = flash.attention_grad %q, %q, %q, %q, %q, %lse
      alibi(%s : tensor<2xf32>)
      : tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>,
        tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16xf32>
      -> tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>, tensor<1x4x16x32xf16>
  return
}
