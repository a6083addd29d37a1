// RUN: flashfuse-opt %s --flash-lower-naive | FileCheck %s

// Dropout is Philox4x32-10 keyed by the seed, one draw per quad
// {q, q + 8} x {kv, kv + 1}: counter (kv_idx & ~1, q_idx & ~8, h, b), 10
// rounds of two 32x32->64 products, then the element's word (bit 3 of q_idx
// picks the row, bit 0 of kv_idx the column) compared (unsigned) with
// p * 2^32; kept probabilities scale by 1/(1-p).

// CHECK-LABEL: func.func @dropout
// CHECK-SAME: %[[SEED:[a-z0-9]+]]: i64
// The probabilities generic: P = E / L, then the dropout factor.
// CHECK: arith.divf
// CHECK: %[[B:.*]] = linalg.index 0 : index
// CHECK: %[[H:.*]] = linalg.index 1 : index
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[KV:.*]] = arith.index_cast %[[J]] : index to i32
// CHECK: %[[Q:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK: %[[C2:.*]] = arith.index_cast %[[H]] : index to i32
// CHECK: %[[C3:.*]] = arith.index_cast %[[B]] : index to i32
// CHECK: %[[NOT1:.*]] = arith.constant -2 : i32
// CHECK: %[[C0:.*]] = arith.andi %[[KV]], %[[NOT1]] : i32
// CHECK: %[[NOT8:.*]] = arith.constant -9 : i32
// CHECK: %[[C1:.*]] = arith.andi %[[Q]], %[[NOT8]] : i32
// 0.25 * 2^32 = 1073741824.
// CHECK: %[[T:.*]] = arith.constant 1073741824 : i32
// CHECK: %[[LO:.*]] = arith.trunci %[[SEED]] : i64 to i32
// CHECK: %[[SHIFTED:.*]] = arith.shrui %[[SEED]]
// CHECK: %[[HI:.*]] = arith.trunci %[[SHIFTED]] : i64 to i32
// CHECK: %[[M0:.*]] = arith.constant -766435501 : i32
// CHECK: %[[M1:.*]] = arith.constant -845247145 : i32
// CHECK: %{{.*}}, %[[H0:.*]] = arith.mului_extended %[[M0]], %[[C0]] : i32
// CHECK: %{{.*}}, %[[H1:.*]] = arith.mului_extended %[[M1]], %[[C2]] : i32
// CHECK: %[[X:.*]] = arith.xori %[[H1]], %[[C1]] : i32
// CHECK: arith.xori %[[X]], %[[LO]] : i32
// CHECK: %[[Y:.*]] = arith.xori %[[H0]], %[[C3]] : i32
// CHECK: arith.xori %[[Y]], %[[HI]] : i32
// CHECK-COUNT-18: arith.mului_extended
// CHECK: %[[K0:.*]] = arith.cmpi uge, %{{.*}}, %[[T]] : i32
// CHECK: %[[K1:.*]] = arith.cmpi uge, %{{.*}}, %[[T]] : i32
// CHECK: %[[K2:.*]] = arith.cmpi uge, %{{.*}}, %[[T]] : i32
// CHECK: %[[K3:.*]] = arith.cmpi uge, %{{.*}}, %[[T]] : i32
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[KBIT:.*]] = arith.andi %[[KV]], %[[ONE]] : i32
// CHECK: %[[ODD:.*]] = arith.cmpi ne, %[[KBIT]]
// CHECK: %[[EIGHT:.*]] = arith.constant 8 : i32
// CHECK: %[[QBIT:.*]] = arith.andi %[[Q]], %[[EIGHT]] : i32
// CHECK: %[[PLUS8:.*]] = arith.cmpi ne, %[[QBIT]]
// CHECK: %[[ROW0:.*]] = arith.select %[[ODD]], %[[K1]], %[[K0]] : i1
// CHECK: %[[ROW8:.*]] = arith.select %[[ODD]], %[[K3]], %[[K2]] : i1
// CHECK: %[[KEEP:.*]] = arith.select %[[PLUS8]], %[[ROW8]], %[[ROW0]] : i1
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
