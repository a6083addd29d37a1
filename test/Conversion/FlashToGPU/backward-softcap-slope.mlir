// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s

// The softcap backward (BackwardBuilder::walkQueryBlocks) carries softcap's
// slope 1 - tanh^2 from P's recomputation to dS in f16, beside P's f32
// fragments in the masked / unmasked branch's results, and folds it into P
// once dV's product is issued: the slope is not held across the dP product
// (docs/PERF.md run 333: the sm90 D = 128 packed causal kernel spilled 84
// bytes with an f32 tanh held to dS). The exponent takes tanh times
// cap * log2(e), tanh's argument the raw product times scale / cap.
// CHECK-LABEL: gpu.func @flash_bwd_sm90_bf16_d128_m64n128w8s2_softcap(
// CHECK: scf.if %{{.*}} -> (vector<2x2xf32>, {{.*}}, vector<2x2xf16>,
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %arg37 : f32
// CHECK-NEXT: %[[FACTOR:.*]] = arith.mulf %arg34, %[[INV]] : f32
// CHECK-NEXT: %[[X:.*]] = arith.mulf %{{.*}}, %[[FACTOR]] : f32
// CHECK-NEXT: %[[TH:.*]] = llvm.inline_asm {{.*}}"tanh.approx.f32 $0, $1;", "=f,f" %[[X]] : (f32) -> f32
// CHECK-NEXT: arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[CAPLOG2E:.*]] = arith.mulf %arg37, %{{.*}} : f32
// CHECK-NEXT: %[[E:.*]] = llvm.intr.fma(%[[TH]], %[[CAPLOG2E]], %{{.*}})
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[E]])
// CHECK: %[[SQ:.*]] = arith.mulf %[[TH]], %[[TH]] : f32
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[SLOPE:.*]] = arith.subf %{{.*}}, %[[SQ]] : f32
// CHECK-NEXT: arith.truncf %[[SLOPE]] : f32 to f16
// dV's product is committed, then P times the slope, then the dP product.
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: %[[P:.*]] = vector.extract %{{.*}}[0, 0] : f32 from vector<2x2xf32>
// CHECK-NEXT: %[[S:.*]] = vector.extract %{{.*}}[0, 0] : f16 from vector<2x2xf16>
// CHECK-NEXT: %[[S32:.*]] = arith.extf %[[S]] : f16 to f32
// CHECK-NEXT: arith.mulf %[[P]], %[[S32]] : f32
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: f16 to f32
// CHECK: gpu.return
func.func @grad_softcap(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {softcap = 30.0 : f32} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
}
