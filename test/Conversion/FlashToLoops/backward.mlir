// RUN: flashfuse-opt %s --flash-lower-to-loops="block-m=16 block-n=32" | FileCheck %s

// FA2 backward: D = rowsum(dO ∘ O) first; then for (b, kv head, key block)
// a loop over the G query heads of the group and the query blocks that see
// the key block (bounds from the band), accumulating dK, dV per key block
// and dQ across key blocks. Sq = 40, Sk = 50: off = 10 (bottom-right),
// window_left 8: key block [k0, k0 + n) is seen by queries
// [max(0, k0 - 10), min(40, k0 + n - 10 + 8)).

// CHECK-LABEL: func.func @grad
// CHECK: %[[DELTA:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg4 :
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (tensor<1x4x40x16xf32>, tensor<1x2x50x16xf32>, tensor<1x2x50x16xf32>, tensor<1x1x40x1xf32>)
// CHECK: scf.for %[[HK:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[C50:.*]] = arith.constant 50 : index
// CHECK: scf.for %[[K0:.*]] = %{{.*}} to %[[C50]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[DK:.*]] = %{{.*}}, %[[DV:.*]] = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK: %[[N:.*]] = arith.minsi
// CHECK: %[[KT:.*]] = tensor.extract_slice %arg2[%[[B]], %[[HK]], %[[K0]], 0] [1, 1, %[[N]], 16]
// CHECK: %[[CM10:.*]] = arith.constant -10 : index
// CHECK: %[[LO:.*]] = arith.addi %[[K0]], %[[CM10]] : index
// CHECK: %[[QSTART:.*]] = arith.maxsi %{{.*}}, %[[LO]] : index
// CHECK: %[[KEND:.*]] = arith.addi %[[K0]], %[[N]] : index
// CHECK: %[[CM2:.*]] = arith.constant -2 : index
// CHECK: %[[HI:.*]] = arith.addi %[[KEND]], %[[CM2]] : index
// CHECK: %[[QEND:.*]] = arith.minsi %{{.*}}, %[[HI]] : index
// The G = 2 query heads of the kv head: h = hk * 2 + g.
// CHECK: %[[GRP:.*]]:4 = scf.for %[[G:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[HKG:.*]] = arith.muli %[[HK]], %{{.*}} : index
// CHECK: %[[H:.*]] = arith.addi %[[HKG]], %[[G]] : index
// CHECK: scf.for %[[Q0:.*]] = %[[QSTART]] to %[[QEND]] step %{{.*}} iter_args(%[[DKT:.*]] = %{{.*}}, %[[DVT:.*]] = %{{.*}}, %[[DQ:.*]] = %{{.*}}, %[[DB:.*]] = %{{.*}})
// CHECK: %[[M:.*]] = arith.minsi
// CHECK: %[[QT:.*]] = tensor.extract_slice %arg1[%[[B]], %[[H]], %[[Q0]], 0] [1, 1, %[[M]], 16]
// CHECK: %[[DOT:.*]] = tensor.extract_slice %arg0[%[[B]], %[[H]], %[[Q0]], 0] [1, 1, %[[M]], 16]
// CHECK: %[[LSET:.*]] = tensor.extract_slice %arg5[%[[B]], %[[H]], %[[Q0]]] [1, 1, %[[M]]]
// CHECK: tensor.extract_slice %[[DELTA]][%[[B]], %[[H]], %[[Q0]]] [1, 1, %[[M]]]
// P recomputed from the LSE.
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[LSET]] : tensor<?x?xf32>, tensor<?xf32>)
// CHECK: math.exp
// dV_blk += Pᵀ dO_blk.
// CHECK: %[[NEWDV:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[DOT]] : tensor<?x?xf32>, tensor<?x16xf32>) outs(%[[DVT]] : tensor<?x16xf32>)
// dBias: dS summed over the broadcast key dim, into rows [q0, q0 + m).
// CHECK: %[[DBS:.*]] = tensor.extract_slice %[[DB]][0, 0, %[[Q0]], 0] [1, 1, %[[M]], 1] [1, 1, 1, 1] : tensor<1x1x40x1xf32> to tensor<?xf32>
// CHECK: %[[DBSUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<?x?xf32>) outs(%[[DBS]] : tensor<?xf32>)
// CHECK: %[[NEWDB:.*]] = tensor.insert_slice %[[DBSUM]] into %[[DB]][0, 0, %[[Q0]], 0]
// dK_blk += dSᵀ Q_blk; dQ[h, rows] += dS K_blk.
// CHECK: %[[NEWDK:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[QT]] : tensor<?x?xf32>, tensor<?x16xf32>) outs(%[[DKT]] : tensor<?x16xf32>)
// CHECK: %[[DQT:.*]] = tensor.extract_slice %[[DQ]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, %[[M]], 16]
// CHECK: %[[NEWDQT:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[KT]] : tensor<?x?xf32>, tensor<?x16xf32>) outs(%[[DQT]] : tensor<?x16xf32>)
// CHECK: %[[NEWDQ:.*]] = tensor.insert_slice %[[NEWDQT]] into %[[DQ]][%[[B]], %[[H]], %[[Q0]], 0]
// CHECK: scf.yield %[[NEWDK]], %[[NEWDV]], %[[NEWDQ]], %[[NEWDB]]
// After the group: dK = scale · dK_blk and dV written at the key block.
// CHECK: arith.constant 2.500000e-01 : f32
// CHECK: tensor.insert_slice %{{.*}} into %[[DK]][%[[B]], %[[HK]], %[[K0]], 0] [1, 1, %[[N]], 16]
// CHECK: tensor.insert_slice %{{.*}} into %[[DV]][%[[B]], %[[HK]], %[[K0]], 0] [1, 1, %[[N]], 16]
func.func @grad(%do: tensor<1x4x40x16xf32>, %q: tensor<1x4x40x16xf32>, %k: tensor<1x2x50x16xf32>, %v: tensor<1x2x50x16xf32>,
                %o: tensor<1x4x40x16xf32>, %lse: tensor<1x4x40xf32>, %bias: tensor<1x1x40x1xf32>)
    -> (tensor<1x4x40x16xf32>, tensor<1x2x50x16xf32>, tensor<1x2x50x16xf32>, tensor<1x1x40x1xf32>) {
  %dq, %dk, %dv, %db = flash.attention_grad %do, %q, %k, %v, %o, %lse bias(%bias : tensor<1x1x40x1xf32>) {causal = #flash.causal<bottom_right>, window_left = 8 : i64}
      : tensor<1x4x40x16xf32>, tensor<1x4x40x16xf32>, tensor<1x2x50x16xf32>, tensor<1x2x50x16xf32>, tensor<1x4x40x16xf32>, tensor<1x4x40xf32>
      -> tensor<1x4x40x16xf32>, tensor<1x2x50x16xf32>, tensor<1x2x50x16xf32>, tensor<1x1x40x1xf32>
  return %dq, %dk, %dv, %db : tensor<1x4x40x16xf32>, tensor<1x2x50x16xf32>, tensor<1x2x50x16xf32>, tensor<1x1x40x1xf32>
}
