// RUN: flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s

// Without a causal mask every tile costs the same: the persistent walk
// (PersistentScheduler.cpp) stays the plain round-robin over single query
// blocks, units blockIdx.x, step gridDim.x, with no tail of single blocks
// (sm90ws-forward.mlir checks the causal walk's).
// CHECK-LABEL: func.func @unmasked
// CHECK: ^{{bb[0-9]+}}:
// CHECK-NEXT: nvvm.setmaxregister {{ *}}decrease
// CHECK-DAG: %[[UNIT0:[0-9]+]] = arith.index_castui %block_id_x{{.*}} : index to i32
// CHECK-DAG: %[[STEP:[0-9]+]] = arith.index_castui %grid_dim_x{{.*}} : index to i32
// CHECK-NOT: arith.trunci
// CHECK: scf.for %[[UNIT:.*]] = %[[UNIT0]] to %{{.*}} step %[[STEP]] iter_args(
// CHECK-NEXT: arith.remui %[[UNIT]], %{{.*}} : i32
// CHECK-NOT: arith.trunci
// CHECK: nvgpu.tma.async.load
func.func @unmasked(%q: tensor<2x16x1000x128xbf16>, %k: tensor<2x4x1000x128xbf16>) -> tensor<2x16x1000x128xbf16> {
  %o = flash.attention %q, %k, %k
      : tensor<2x16x1000x128xbf16>, tensor<2x4x1000x128xbf16>, tensor<2x4x1000x128xbf16>
      -> tensor<2x16x1000x128xbf16>
  return %o : tensor<2x16x1000x128xbf16>
}
