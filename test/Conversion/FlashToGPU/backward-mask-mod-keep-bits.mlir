// The backward evaluates a mask_mod into keep bits before it issues the
// step's Sᵀ and dPᵀ products (BackwardBuilder::maskModKeepWords), one bit
// per Sᵀ element held by the thread (64 here: two i32 words), and P's
// recomputation reads the bits: the captured ids are loaded while the
// accumulators of those products do not yet hold registers (beside them
// the D = 128 kernels spilled; docs/PERF.md run 445). In a block-sparse
// walk the bits are evaluated where the mask_mod applies (partial blocks)
// and all ones in full blocks.
// RUN: flashfuse-opt %s --split-input-file --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s

// CHECK-LABEL: gpu.func @flash_bwd_sm90_bf16_d64_m128n128w8s2_mod0(
// CHECK: scf.for
// CHECK: memref.load %[[IDS:arg[0-9]+]][%{{.*}}] : memref<?xi32>
// CHECK: arith.shli %{{.*}}, %c0_i32{{.*}} : i32
// CHECK: arith.shli %{{.*}}, %c31_i32{{.*}} : i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: wgmma.mma_async
// CHECK-NOT: memref.load %[[IDS]]
// CHECK: %[[BIT:.*]] = arith.andi %{{.*}}, %c1_i32{{.*}} : i32
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.cmpi ne, %[[BIT]], %{{.*}} : i32
// CHECK: gpu.return
func.func @documents_grad(%do: tensor<1x2x256x64xbf16>, %q: tensor<1x2x256x64xbf16>, %o: tensor<1x2x256x64xbf16>, %lse: tensor<1x2x256xf32>, %ids: tensor<256xi32>) -> tensor<1x2x256x64xbf16> {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %q, %o, %lse {config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 2>} : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256xf32> -> tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<256xi32>
    %dj = tensor.extract %ids[%j] : tensor<256xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    flash.yield %same : i1
  }
  return %dq : tensor<1x2x256x64xbf16>
}

// -----

// Over block-sparse lists: the bits under the step's "mask_mod applies"
// flag, all ones (-1) otherwise.
// CHECK-LABEL: gpu.func @flash_bwd_sm90_bf16_d64_m128n128w8s2_bs128x128f_mod0(
// CHECK: scf.for
// CHECK: %[[WORDS:.*]]:2 = scf.if %{{.*}} -> (i32, i32) {
// CHECK: memref.load %{{.*}} : memref<?xi32>
// CHECK: } else {
// CHECK-NEXT: %[[ONES:.*]] = arith.constant -1 : i32
// CHECK-NEXT: scf.yield %[[ONES]], %[[ONES]] : i32, i32
// CHECK: wgmma.mma_async
// CHECK: arith.andi %[[WORDS]]#0, %c1_i32{{.*}} : i32
// CHECK: gpu.return
func.func @documents_grad_lists(%do: tensor<1x2x256x64xbf16>, %q: tensor<1x2x256x64xbf16>, %o: tensor<1x2x256x64xbf16>, %lse: tensor<1x2x256xf32>, %ids: tensor<256xi32>, %n: tensor<1x1x2xi32>, %i: tensor<1x1x2x2xi32>, %fn: tensor<1x1x2xi32>, %fi: tensor<1x1x2x2xi32>) -> tensor<1x2x256x64xbf16> {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %q, %o, %lse
      block_sparse(%n, %i : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>)
      full_blocks(%fn, %fi : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>)
      {config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 2>} : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256xf32> -> tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %qi: index, %kj: index):
    %di = tensor.extract %ids[%qi] : tensor<256xi32>
    %dj = tensor.extract %ids[%kj] : tensor<256xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    flash.yield %same : i1
  }
  return %dq : tensor<1x2x256x64xbf16>
}
