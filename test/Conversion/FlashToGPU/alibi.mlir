// flash.attention / flash.attention_grad's `alibi(...)` on the GPU
// recipes: the kernels take the slopes as `alibi_slopes` (manifest alibi 1
// or 2), read the tile's slope once before the key loop, and add the bias
// natively in the log2 domain: a score's distance is the row's end (one
// conversion a row) minus a column constant, then |.| * -slope log2(e)
// and one fused multiply-add with the scaled product; no conversion a
// score. The backward's kernels recompute P the same way; its preprocess
// and postprocess read no scores and stay the plain ones.
// RUN: flashfuse-opt %s --flash-select-config="target=h100 recipe=auto-tma" --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s --check-prefixes=CHECK,WS
// RUN: flashfuse-opt %s --flash-select-config=target=a100 --flash-lower-to-gpu=chip=sm_80 | FileCheck %s --check-prefixes=CHECK,SM80

// WS-LABEL: gpu.func @flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causalbr_alibi(
// SM80-LABEL: gpu.func @flash_fwd_sm80_bf16_d128_{{.*}}_causalbr_alibi(
// CHECK-SAME: %arg4: memref<?xf32>, %[[SL:arg5]]: memref<?xf32>
// CHECK-SAME: alibi = 1 : i64
// CHECK-SAME: "memref:lse", "memref:alibi_slopes", "i32:batch"
// CHECK: %[[SLOPE:.*]] = memref.load %[[SL]][%{{.*}}] : memref<?xf32>
// CHECK-NEXT: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[SL2:.*]] = arith.mulf %[[SLOPE]], %[[LOG2E]] : f32
// CHECK: scf.for
// CHECK-NOT: memref.load %[[SL]]
// CHECK: %[[ROWF:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK-NOT: arith.sitofp
// CHECK: %[[D:.*]] = arith.subf %[[ROWF]], %cst{{.*}} : f32
// CHECK-NEXT: %[[DIST:.*]] = math.absf %[[D]] : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[SL2]] : f32
// CHECK-NEXT: %[[BIAS:.*]] = arith.mulf %[[DIST]], %[[NEG]] : f32
// CHECK-NEXT: llvm.intr.fma(%{{.*}}, %{{.*}}, %[[BIAS]]) : (f32, f32, f32) -> f32
// CHECK-NOT: arith.sitofp
// CHECK: arith.subf %[[ROWF]], %cst{{.*}} : f32
// CHECK-NEXT: math.absf
func.func @forward(%q: tensor<2x8x1024x128xbf16>, %k: tensor<2x2x1024x128xbf16>,
                   %s: tensor<8xf32>) -> tensor<2x8x1024x128xbf16> {
  %o = flash.attention %q, %k, %k alibi(%s : tensor<8xf32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<2x8x1024x128xbf16>, tensor<2x2x1024x128xbf16>, tensor<2x2x1024x128xbf16>
      -> tensor<2x8x1024x128xbf16>
  return %o : tensor<2x8x1024x128xbf16>
}

// [B, Hq] slopes, read once a tile in the backward's main kernel too.
// CHECK-LABEL: gpu.func @flash_bwd_pre_sm{{[0-9]+}}_f16_d64_{{[^_]*}}(
// CHECK-NOT: alibi
// WS-LABEL: gpu.func @flash_bwd_sm90ws_f16_d64_{{.*}}_alibib(
// SM80-LABEL: gpu.func @flash_bwd_sm80_f16_d64_{{.*}}_alibib(
// CHECK-SAME: %[[SLB:arg[0-9]+]]: memref<?xf32>, %arg{{[0-9]+}}: i32
// CHECK-SAME: alibi = 2 : i64
// CHECK-SAME: "memref:alibi_slopes"
// CHECK: memref.load %[[SLB]][%[[AT:.*]]] : memref<?xf32>
// CHECK: scf.for
// CHECK: math.absf
// CHECK-NEXT: arith.negf
// CHECK-NEXT: llvm.intr.fma
// CHECK-NEXT: llvm.intr.fma
// CHECK-LABEL: gpu.func @flash_bwd_post_sm{{[0-9]+}}_f16_d64_{{[^_]*}}(
// CHECK-NOT: alibi
func.func @backward(%do: tensor<1x4x256x64xf16>, %q: tensor<1x4x256x64xf16>,
                    %lse: tensor<1x4x256xf32>, %s: tensor<1x4xf32>)
    -> (tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %q, %do, %lse
      alibi(%s : tensor<1x4xf32>)
      : tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>,
        tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>
  return %dq, %dk, %dv : tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>
}

// With a softcap the backward recomputes P through the general score
// pipeline (tanh, then the bias): the softcap-only shortcut, which adds no
// bias, must not take it.
// WS-LABEL: gpu.func @flash_bwd_sm90ws_bf16_d128_{{.*}}_causal_softcap_alibi(
// SM80-LABEL: gpu.func @flash_bwd_sm80_bf16_d128_{{.*}}_causal_softcap_alibi(
// CHECK-SAME: %[[SLC:arg[0-9]+]]: memref<?xf32>, %arg{{[0-9]+}}: i32
// CHECK: %[[SLOPE:.*]] = memref.load %[[SLC]][%{{.*}}] : memref<?xf32>
// CHECK: scf.for
// CHECK: tanh.approx.f32
// CHECK-NEXT: %[[CAPPED:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[DIST:.*]] = arith.maxsi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[DIST]] : i32 to f32
// CHECK-NEXT: %[[BIAS:.*]] = arith.mulf %[[SLOPE]], %[[DF]] : f32
// CHECK-NEXT: %[[SC:.*]] = arith.subf %[[CAPPED]], %[[BIAS]] : f32
// CHECK: llvm.intr.fma(%[[SC]], %{{.*}}, %{{.*}}) : (f32, f32, f32) -> f32
// CHECK-NEXT: ex2.approx
func.func @softcap_backward(%do: tensor<1x4x256x128xbf16>, %lse: tensor<1x4x256xf32>,
                            %s: tensor<4xf32>)
    -> (tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %do, %do, %do, %do, %lse
      alibi(%s : tensor<4xf32>) {causal = #flash.causal<top_left>, softcap = 30.0 : f32}
      : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>,
        tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>
  return %dq, %dk, %dv : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>
}
