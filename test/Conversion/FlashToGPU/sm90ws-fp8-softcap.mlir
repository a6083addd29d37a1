// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s

// The FP8 forward with a sliding window and a softcap (D = 128): the
// softcapped scores reach the exponent already in the log2 domain, and P
// must still be 2^8 times the softmax's p (docs/FP8.md: e4m3's normal
// range), so the exponent adds -m + 8 as the plain scores' FMA does. A
// kernel that subtracted m alone quantised P four octaves lower and wrote
// an LSE ln 256 too high (check_fp8.py caught it on an H100).
// CHECK: gpu.func @flash_fwd_sm90ws_e4m3_bf16_d128_m128n128w8s3_causalbr_window_softcap
// CHECK-SAME: softcap = 1 : i64
// CHECK-SAME: window = 1 : i64
// The softcap: cap * tanh(raw * scale / cap), the raw product times one
// factor, scale times the cap's reciprocal (one division, which LLVM hoists
// with the product), and tanh by tanh.approx (Fragments.cpp): no IEEE
// division and one multiply a score.
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %arg34 : f32
// CHECK-NEXT: %[[FACTOR:.*]] = arith.mulf %{{.*}}, %[[INV]] : f32
// CHECK-NEXT: %[[X0:.*]] = arith.mulf %{{.*}}, %[[FACTOR]] : f32
// CHECK-NEXT: %[[TH:.*]] = llvm.inline_asm {{.*}}"tanh.approx.f32 $0, $1;", "=f,f" %[[X0]] : (f32) -> f32
// CHECK-NEXT: arith.mulf %arg34, %[[TH]] : f32
// CHECK: %[[EIGHT:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT: %[[NEGM:.*]] = arith.addf %{{.*}}, %[[EIGHT]] : f32
// CHECK: %[[X:.*]] = arith.addf %{{.*}}, %[[NEGM]] : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[X]])
// CHECK: nvvm.convert.f32x2.to.f8x2
func.func @fp8_softcap(%q: tensor<1x4x256x128xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x4x256x128xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {causal = #flash.causal<bottom_right>, window_left = 64 : i64, softcap = 30.0 : f32}
      : tensor<1x4x256x128xf8E4M3FN>, tensor<1x4x256x128xf8E4M3FN>, tensor<1x4x256x128xf8E4M3FN>
      -> tensor<1x4x256x128xbf16>
  return %o : tensor<1x4x256x128xbf16>
}
