// RUN: flashfuse-opt %s --flash-lower-naive | FileCheck %s

// Dropout is Philox4x32-10 keyed by the seed with counter
// (kv_idx, q_idx, h, b): 10 rounds of two 32x32->64 products, then word 0
// compared (unsigned) with p * 2^32; kept probabilities scale by 1/(1-p).

// CHECK-LABEL: func.func @dropout
// CHECK-SAME: %[[SEED:[a-z0-9]+]]: i64
// The probabilities generic: P = E / L, then the dropout factor.
// CHECK: arith.divf
// CHECK: %[[B:.*]] = linalg.index 0 : index
// CHECK: %[[H:.*]] = linalg.index 1 : index
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[LO:.*]] = arith.trunci %[[SEED]] : i64 to i32
// CHECK: %[[SHIFTED:.*]] = arith.shrui %[[SEED]]
// CHECK: %[[HI:.*]] = arith.trunci %[[SHIFTED]] : i64 to i32
// CHECK: %[[C0:.*]] = arith.index_cast %[[J]] : index to i32
// CHECK: %[[C1:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK: %[[C2:.*]] = arith.index_cast %[[H]] : index to i32
// CHECK: %[[C3:.*]] = arith.index_cast %[[B]] : index to i32
// CHECK: arith.constant -766435501 : i32
// CHECK: arith.constant -845247145 : i32
// CHECK-COUNT-20: arith.mului_extended
// 0.25 * 2^32 = 1073741824.
// CHECK: %[[T:.*]] = arith.constant 1073741824 : i32
// CHECK: %[[KEEP:.*]] = arith.cmpi uge, %{{.*}}, %[[T]] : i32
// CHECK: %[[INV:.*]] = arith.constant 1.33333337 : f32
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[Z:.*]] = arith.select %[[KEEP]], %[[INV]], %[[ZERO]] : f32
// CHECK: arith.mulf %{{.*}}, %[[Z]] : f32
func.func @dropout(%q: tensor<1x1x4x16xf32>, %k: tensor<1x1x4x16xf32>, %v: tensor<1x1x4x16xf32>, %seed: i64)
    -> tensor<1x1x4x16xf32> {
  %o = flash.attention %q, %k, %v seed(%seed) {dropout_p = 0.25 : f32}
      : tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32> -> tensor<1x1x4x16xf32>
  return %o : tensor<1x1x4x16xf32>
}
