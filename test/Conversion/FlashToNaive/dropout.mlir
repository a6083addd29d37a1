// RUN: flashfuse-opt %s --flash-lower-naive | FileCheck %s

// Dropout is Philox4x32-10 keyed by the seed, one draw per octet
// {q, q + 8} x {kv, kv + 1, kv + 8, kv + 9}: counter (kv_idx & ~9,
// q_idx & ~8, h, b), 10 rounds of two 32x32->64 products, then the
// element's 16 bits (bit 3 of kv_idx picks the half of the word that bit 3
// of q_idx and bit 0 of kv_idx pick) compared (unsigned) with p * 2^16,
// both in the high half; kept probabilities scale by 1/(1-p).

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
// CHECK: %[[NOT9:.*]] = arith.constant -10 : i32
// CHECK: %[[C0:.*]] = arith.andi %[[KV]], %[[NOT9]] : i32
// CHECK: %[[NOT8:.*]] = arith.constant -9 : i32
// CHECK: %[[C1:.*]] = arith.andi %[[Q]], %[[NOT8]] : i32
// 0.25 * 2^16 = 16384.
// CHECK: %[[T:.*]] = arith.constant 16384 : i32
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
// CHECK-COUNT-16: arith.mului_extended
// CHECK: %[[L3:.*]], %{{.*}} = arith.mului_extended
// CHECK: %[[L1:.*]], %{{.*}} = arith.mului_extended
// CHECK: %[[X0:.*]] = arith.xori
// CHECK: %[[R0:.*]] = arith.xori %[[X0]]
// CHECK: %[[X2:.*]] = arith.xori
// CHECK: %[[R2:.*]] = arith.xori %[[X2]]
// CHECK: %[[SIXTEEN:.*]] = arith.constant 16 : i32
// CHECK: %[[TH:.*]] = arith.shli %[[T]], %[[SIXTEEN]] : i32
// Words r0..r3 = (R0, L1, R2, L3): each one's low half (shifted up by 16),
// then its high half.
// CHECK: %[[S0:.*]] = arith.shli %[[R0]], %{{.*}} : i32
// CHECK: %[[K0:.*]] = arith.cmpi uge, %[[S0]], %[[TH]] : i32
// CHECK: %[[K4:.*]] = arith.cmpi uge, %[[R0]], %[[TH]] : i32
// CHECK: %[[S1:.*]] = arith.shli %[[L1]], %{{.*}} : i32
// CHECK: %[[K1:.*]] = arith.cmpi uge, %[[S1]], %[[TH]] : i32
// CHECK: %[[K5:.*]] = arith.cmpi uge, %[[L1]], %[[TH]] : i32
// CHECK: %[[S2:.*]] = arith.shli %[[R2]], %{{.*}} : i32
// CHECK: %[[K2:.*]] = arith.cmpi uge, %[[S2]], %[[TH]] : i32
// CHECK: %[[K6:.*]] = arith.cmpi uge, %[[R2]], %[[TH]] : i32
// CHECK: %[[S3:.*]] = arith.shli %[[L3]], %{{.*}} : i32
// CHECK: %[[K3:.*]] = arith.cmpi uge, %[[S3]], %[[TH]] : i32
// CHECK: %[[K7:.*]] = arith.cmpi uge, %[[L3]], %[[TH]] : i32
// CHECK: %[[KBIT:.*]] = arith.andi %[[KV]], %{{.*}} : i32
// CHECK: %[[ODD:.*]] = arith.cmpi ne, %[[KBIT]]
// CHECK: %[[QBIT:.*]] = arith.andi %[[Q]], %{{.*}} : i32
// CHECK: %[[ROW8:.*]] = arith.cmpi ne, %[[QBIT]]
// CHECK: %[[HBIT:.*]] = arith.andi %[[KV]], %{{.*}} : i32
// CHECK: %[[KEY8:.*]] = arith.cmpi ne, %[[HBIT]]
// CHECK: %[[E0:.*]] = arith.select %[[ODD]], %[[K1]], %[[K0]] : i1
// CHECK: %[[E1:.*]] = arith.select %[[ODD]], %[[K3]], %[[K2]] : i1
// CHECK: %[[E2:.*]] = arith.select %[[ODD]], %[[K5]], %[[K4]] : i1
// CHECK: %[[E3:.*]] = arith.select %[[ODD]], %[[K7]], %[[K6]] : i1
// CHECK: %[[LOW:.*]] = arith.select %[[ROW8]], %[[E1]], %[[E0]] : i1
// CHECK: %[[HIGH:.*]] = arith.select %[[ROW8]], %[[E3]], %[[E2]] : i1
// CHECK: %[[KEEP:.*]] = arith.select %[[KEY8]], %[[HIGH]], %[[LOW]] : i1
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
