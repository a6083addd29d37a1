// The decode and kv_append kernels over a pool of sequences
// (cache_batch_idx): the decode reads sequence b's pool row once, clamps it
// into [0, cache_batch) and places the K and V tiles there; kv_append
// writes a new row only where the index lies in the pool (never clamped
// onto another sequence's row); decode_check gives each sequence a second
// entry, its pool row, reported with code 4 outside [0, cache_batch) and
// with code 5 where an earlier sequence appends to it too. The
// host code passes the indices and Bc (dim 0 of the cache, 6 here, not the
// batch's 2).
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s
// RUN: flashfuse-opt %s --flash-select-config=target=a100 --flash-lower-to-gpu=chip=sm_80 | FileCheck %s

// CHECK-LABEL: func.func @pool
// CHECK: %[[BC:.*]] = arith.index_cast %c6{{.*}} : index to i32
// CHECK: gpu.launch_func @{{.*}}::@flash_kv_append_bf16_d128_{{[^ ]*}}_bidx blocks
// CHECK-SAME: %[[BC]] : i32)
// CHECK: gpu.launch_func @{{.*}}::@flash_decode_bf16_d128_{{[^ ]*}}_bidx blocks
// CHECK-SAME: %[[BC]] : i32)

// CHECK-LABEL: gpu.func @flash_decode_bf16_d128_{{[^(]*}}_bidx(
// CHECK-SAME: %[[IDX:arg[0-9]+]]: memref<?xi32>, %[[NBC:arg[0-9]+]]: i32)
// CHECK: %[[ROW0:.*]] = memref.load %[[IDX]][%block_id_z] : memref<?xi32>
// CHECK: %[[ROW:.*]] = arith.index_cast %[[ROW0]] : i32 to index
// CHECK: %[[LO:.*]] = arith.maxsi %[[ROW]], %c0{{.*}} : index
// CHECK: %[[HI:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK: arith.muli %[[HI]], %{{.*}} : index
// CHECK: arith.muli %[[HI]], %{{.*}} : index
// CHECK-NOT: memref.load %[[IDX]]
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @flash_kv_append_bf16_d128_{{[^(]*}}_bidx(
// CHECK-SAME: %[[AIDX:arg[0-9]+]]: memref<?xi32>, %[[ABC:arg[0-9]+]]: i32)
// CHECK: %[[AT0:.*]] = memref.load %[[AIDX]]
// CHECK: %[[AT:.*]] = arith.index_cast %[[AT0]] : i32 to index
// CHECK-DAG: %[[GE:.*]] = arith.cmpi sge, %[[AT]], %c0{{.*}} : index
// CHECK-DAG: %[[LT:.*]] = arith.cmpi slt, %[[AT]], %{{.*}} : index
// CHECK: %[[OK:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT: scf.if %[[OK]]
// CHECK: arith.muli %[[AT]], %{{.*}} : index
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @flash_decode_check_bf16_d128_{{[^(]*}}_bidx(
// CHECK-SAME: %[[CIDX:arg[0-9]+]]: memref<?xi32>, %[[CBC:arg[0-9]+]]: i32)
// Two entries a sequence: the length, then the pool row.
// CHECK: arith.muli %{{.*}}, %c2{{.*}} : index
// CHECK: scf.for
// CHECK: %[[CROW0:.*]] = memref.load %[[CIDX]]
// The earlier sequences' rows, read only where the step appends (seq_new > 0).
// CHECK: %[[APPENDS:.*]] = arith.cmpi sgt, %{{.*}}, %c0{{.*}} : index
// CHECK: %[[UPTO:.*]] = arith.select %[[APPENDS]]
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[UPTO]]
// CHECK: %[[OTHER:.*]] = memref.load %[[CIDX]]
// CHECK: arith.cmpi eq, %[[OTHER]], %[[CROW0]] : i32
// CHECK: %[[CROW:.*]] = arith.index_cast %[[CROW0]] : i32 to index
// CHECK-DAG: arith.cmpi slt, %[[CROW]], %c0{{.*}} : index
// CHECK-DAG: arith.cmpi sge, %[[CROW]], %{{.*}} : index
// CHECK: scf.if
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : i32
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : i32
// CHECK: arith.select %{{.*}}, %[[C4]], %[[C5]] : i32
// CHECK: scf.for
// CHECK: gpu.return

func.func @pool(%q: tensor<2x32x1x128xbf16>, %k: tensor<6x8x256x128xbf16>, %len: tensor<2xi32>,
                %idx: tensor<2xi32>, %kn: tensor<2x8x1x128xbf16>) -> tensor<2x32x1x128xbf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %k, %len cache_batch_idx(%idx : tensor<2xi32>)
      new_kv(%kn, %kn : tensor<2x8x1x128xbf16>, tensor<2x8x1x128xbf16>)
      {causal = #flash.causal<bottom_right>}
      : tensor<2x32x1x128xbf16>, tensor<6x8x256x128xbf16>, tensor<6x8x256x128xbf16>, tensor<2xi32>
      -> tensor<2x32x1x128xbf16>, tensor<6x8x256x128xbf16>, tensor<6x8x256x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}
