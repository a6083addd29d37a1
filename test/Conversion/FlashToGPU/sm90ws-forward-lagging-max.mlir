// RUN: flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s

// The running max's slack (KernelSpec::runningMaxSlackLog2,
// FlashAttention-4's conditional rescaling): a key block whose max passes
// the row's m by no more than the slack keeps m, its alpha is selected as
// exactly 1, and the key loop skips O's rescale when every row of the warp
// kept its m (a vote and a uniform branch). On in the sm90ws forwards where
// it measured faster (docs/PERF.md runs 424-426): causal, FP8 top-left
// only, and Dv = 256; off without a mask at D <= 128, with a window, in
// the FP8 bottom-right kernels and where the consumers issue in turn.

// CHECK-LABEL: gpu.func @flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal(
// CHECK: scf.for
// CHECK: %[[M:[0-9]+]] = arith.maximumf %arg{{[0-9]+}}, %[[LOCAL:[0-9]+]] : f32
// CHECK-NEXT: %[[SLACK:[a-z0-9_]+]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT: %[[BOUND:[0-9]+]] = arith.addf %[[OLD:arg[0-9]+]], %[[SLACK]] : f32
// CHECK-NEXT: %[[GROWS:[0-9]+]] = arith.cmpf ogt, %[[LOCAL]], %[[BOUND]] : f32
// CHECK-NEXT: %[[NEW:[0-9]+]] = arith.select %[[GROWS]], %[[LOCAL]], %[[OLD]] : f32
// CHECK: %[[ALPHA:[0-9]+]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK-NEXT: %[[ONE:[a-z0-9_]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: arith.select %[[GROWS]], %[[ALPHA]], %[[ONE]] : f32
// CHECK: %[[ALL:[0-9]+]] = nvvm.vote.sync {{ *}}all %{{.*}} -> i1
// CHECK-NEXT: scf.if %[[ALL]]
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } else {
// CHECK: arith.mulf
// CHECK-LABEL: gpu.func @flash_fwd_sm90ws_bf16_d128_m128n176w8s2(
// CHECK-NOT: nvvm.vote.sync
// CHECK-NOT: arith.constant 8.000000e+00 : f32
// CHECK-LABEL: gpu.func @flash_fwd_sm90ws_bf16_d256_m128n80w8s2(
// CHECK: arith.constant 8.000000e+00 : f32
// CHECK: nvvm.vote.sync {{ *}}all
// CHECK-LABEL: gpu.func @flash_fwd_sm90ws_f16_d128_m128n128w8s3_window(
// CHECK-NOT: nvvm.vote.sync
// FP8's slack is half a unit: P, scaled by 2^8, stays below e4m3's 448.
// CHECK-LABEL: gpu.func @flash_fwd_sm90ws_e4m3_bf16_d128_m128n192w8s2_causal(
// CHECK: %[[HALF:[a-z0-9_]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: arith.addf %{{[a-z0-9_]+}}, %[[HALF]] : f32
// CHECK: nvvm.vote.sync {{ *}}all
// CHECK-LABEL: gpu.func @flash_fwd_sm90ws_e4m3_bf16_d128_m128n192w8s2_causalbr(
// CHECK-NOT: nvvm.vote.sync
// CHECK-LABEL: gpu.func @flash_fwd_sm90ws_bf16_d64_m192n128w12s4_causal(
// CHECK-NOT: nvvm.vote.sync
// CHECK-LABEL: gpu.func @flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128(
// CHECK-NOT: nvvm.vote.sync
// CHECK: gpu.return

func.func @causal(%q: tensor<2x16x1000x128xbf16>) -> tensor<2x16x1000x128xbf16> {
  %o = flash.attention %q, %q, %q {causal = #flash.causal<top_left>}
      : tensor<2x16x1000x128xbf16>, tensor<2x16x1000x128xbf16>, tensor<2x16x1000x128xbf16>
      -> tensor<2x16x1000x128xbf16>
  return %o : tensor<2x16x1000x128xbf16>
}

func.func @unmasked(%q: tensor<2x16x1000x128xbf16>) -> tensor<2x16x1000x128xbf16> {
  %o = flash.attention %q, %q, %q
      : tensor<2x16x1000x128xbf16>, tensor<2x16x1000x128xbf16>, tensor<2x16x1000x128xbf16>
      -> tensor<2x16x1000x128xbf16>
  return %o : tensor<2x16x1000x128xbf16>
}

func.func @d256(%q: tensor<1x8x1000x256xbf16>) -> tensor<1x8x1000x256xbf16> {
  %o = flash.attention %q, %q, %q
      : tensor<1x8x1000x256xbf16>, tensor<1x8x1000x256xbf16>, tensor<1x8x1000x256xbf16>
      -> tensor<1x8x1000x256xbf16>
  return %o : tensor<1x8x1000x256xbf16>
}

func.func @window(%q: tensor<1x8x1000x128xf16>) -> tensor<1x8x1000x128xf16> {
  %o = flash.attention %q, %q, %q {window_left = 256 : i64, window_right = 0 : i64}
      : tensor<1x8x1000x128xf16>, tensor<1x8x1000x128xf16>, tensor<1x8x1000x128xf16>
      -> tensor<1x8x1000x128xf16>
  return %o : tensor<1x8x1000x128xf16>
}

func.func @fp8_causal(%q: tensor<2x8x1000x128xf8E4M3FN>, %d: tensor<f32>)
    -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      {causal = #flash.causal<top_left>}
      : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN>
      -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}

func.func @fp8_bottom_right(%q: tensor<2x8x1000x128xf8E4M3FN>, %d: tensor<f32>)
    -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN>, tensor<2x8x1000x128xf8E4M3FN>
      -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}

// The D = 64 causal kernel of long sequences: three consumer warpgroups
// issuing in turn (tile forced here; flash-select-config picks it from 4k).
func.func @turns(%q: tensor<1x8x8192x64xbf16>) -> tensor<1x8x8192x64xbf16> {
  %o = flash.attention %q, %q, %q {causal = #flash.causal<top_left>,
      config = #flash.config<sm90ws, block_m = 192, block_n = 128, warps = 12, stages = 4>}
      : tensor<1x8x8192x64xbf16>, tensor<1x8x8192x64xbf16>, tensor<1x8x8192x64xbf16>
      -> tensor<1x8x8192x64xbf16>
  return %o : tensor<1x8x8192x64xbf16>
}

// Block-sparse lists: off (not timed).
func.func @block_sparse(%q: tensor<2x8x1000x128xbf16>, %n: tensor<2x8x8xi32>,
                        %i: tensor<2x8x8x8xi32>) -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>)
      : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>
      -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
