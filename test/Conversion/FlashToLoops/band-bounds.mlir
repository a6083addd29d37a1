// RUN: flashfuse-opt %s --flash-lower-to-loops="block-m=32 block-n=16" | FileCheck %s

// One scf.forall over (b, h, query block); per query block, one scf.for
// over key blocks whose bounds come from the band, so key tiles wholly
// outside it are never visited. Sq = 100, Sk = 130 (off = 30 bottom-right).

// Bottom-right causal with window_left 40: query rows [q0, q0 + m) see keys
// [max(0, q0 + 30 - 40), min(130, q0 + m + 30)).
// CHECK-LABEL: func.func @causal_window
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[QB:.*]]) in (1, 2, 4) shared_outs(%[[O:.*]] = %{{.*}}, %[[LSE:.*]] = %{{.*}})
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[Q0:.*]] = arith.muli %[[QB]], %[[C32]] : index
// CHECK: %[[C100:.*]] = arith.constant 100 : index
// CHECK: %[[REST:.*]] = arith.subi %[[C100]], %[[Q0]] : index
// CHECK: %[[M:.*]] = arith.minsi %{{.*}}, %[[REST]] : index
// CHECK: tensor.extract_slice %arg0[%[[B]], %[[H]], %[[Q0]], 0] [1, 1, %[[M]], 32] [1, 1, 1, 1] : tensor<1x2x100x32xf32> to tensor<?x32xf32>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C130:.*]] = arith.constant 130 : index
// CHECK: %[[CM10:.*]] = arith.constant -10 : index
// CHECK: %[[LEFT:.*]] = arith.addi %[[Q0]], %[[CM10]] : index
// CHECK: %[[START:.*]] = arith.maxsi %[[C0]], %[[LEFT]] : index
// CHECK: %[[QEND:.*]] = arith.addi %[[Q0]], %[[M]] : index
// CHECK: %[[C30:.*]] = arith.constant 30 : index
// CHECK: %[[RIGHT:.*]] = arith.addi %[[QEND]], %[[C30]] : index
// CHECK: %[[END:.*]] = arith.minsi %[[C130]], %[[RIGHT]] : index
// The running max starts at -inf, the sum and the accumulator at 0.
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[M0:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<?xf32>)
// CHECK: %[[L0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?xf32>)
// CHECK: %[[A0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x32xf32>)
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[LOOP:.*]]:3 = scf.for %[[K0:.*]] = %[[START]] to %[[END]] step %[[C16]] iter_args(%[[RM:.*]] = %[[M0]], %[[RL:.*]] = %[[L0]], %[[ACC:.*]] = %[[A0]]) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x32xf32>)
// The tail key block: n = min(16, end - k0).
// CHECK: %[[LEFTK:.*]] = arith.subi %[[END]], %[[K0]] : index
// CHECK: %[[N:.*]] = arith.minsi %{{.*}}, %[[LEFTK]] : index
// CHECK: tensor.extract_slice %arg1[%[[B]], %{{.*}}, %[[K0]], 0] [1, 1, %[[N]], 32]
// CHECK: tensor.extract_slice %arg2[%[[B]], %{{.*}}, %[[K0]], 0] [1, 1, %[[N]], 32]
// m' = max(m, rowmax S), accumulated into the running max.
// CHECK: %[[NEWMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<?x?xf32>) outs(%[[RM]] : tensor<?xf32>)
// CHECK: arith.maximumf
// alpha = exp(m - safe(m')), then l' = alpha l + rowsum P and acc' = alpha acc + P V.
// CHECK: %[[ALPHA:.*]] = linalg.generic {{.*}} ins(%[[RM]], %[[NEWMAX]] : tensor<?xf32>, tensor<?xf32>)
// CHECK: math.exp
// CHECK: %[[NEWSUM:.*]] = linalg.generic {{.*}} ins(%[[ALPHA]], %[[RL]], %{{.*}} : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
// CHECK: %[[SCALED:.*]] = linalg.generic {{.*}} ins(%[[ACC]], %[[ALPHA]] : tensor<?x32xf32>, tensor<?xf32>)
// CHECK: %[[NEWACC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<?x?xf32>, tensor<?x32xf32>) outs(%[[SCALED]] : tensor<?x32xf32>)
// CHECK: scf.yield %[[NEWMAX]], %[[NEWSUM]], %[[NEWACC]] : tensor<?xf32>, tensor<?xf32>, tensor<?x32xf32>
// Epilogue: O = acc / l (0 for an empty row), LSE (+inf for an empty row).
// CHECK: %[[OT:.*]] = linalg.generic {{.*}} ins(%[[LOOP]]#2, %[[LOOP]]#1 : tensor<?x32xf32>, tensor<?xf32>)
// CHECK: arith.divf
// CHECK: %[[LT:.*]] = linalg.generic {{.*}} ins(%[[LOOP]]#0, %[[LOOP]]#1 : tensor<?xf32>, tensor<?xf32>)
// CHECK: math.log
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %[[OT]] into %[[O]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, %[[M]], 32]
// CHECK: tensor.parallel_insert_slice %[[LT]] into %[[LSE]][%[[B]], %[[H]], %[[Q0]]] [1, 1, %[[M]]]
func.func @causal_window(%q: tensor<1x2x100x32xf32>, %k: tensor<1x2x130x32xf32>, %v: tensor<1x2x130x32xf32>) -> (tensor<1x2x100x32xf32>, tensor<1x2x100xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<bottom_right>, window_left = 40 : i64}
      : tensor<1x2x100x32xf32>, tensor<1x2x130x32xf32>, tensor<1x2x130x32xf32> -> tensor<1x2x100x32xf32>, tensor<1x2x100xf32>
  return %o, %lse : tensor<1x2x100x32xf32>, tensor<1x2x100xf32>
}

// Top-left causal: keys [0, min(Sk, q0 + m)); no lower bound.
// CHECK-LABEL: func.func @causal_top_left
// CHECK: %[[Q0:.*]] = arith.muli
// CHECK: %[[M:.*]] = arith.minsi
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C130:.*]] = arith.constant 130 : index
// CHECK-NOT: arith.maxsi
// CHECK: %[[QEND:.*]] = arith.addi %[[Q0]], %[[M]] : index
// CHECK: %[[END:.*]] = arith.minsi %[[C130]], %[[QEND]] : index
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[END]] step
func.func @causal_top_left(%q: tensor<1x2x100x32xf32>, %k: tensor<1x2x130x32xf32>, %v: tensor<1x2x130x32xf32>) -> tensor<1x2x100x32xf32> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<top_left>}
      : tensor<1x2x100x32xf32>, tensor<1x2x130x32xf32>, tensor<1x2x130x32xf32> -> tensor<1x2x100x32xf32>
  return %o : tensor<1x2x100x32xf32>
}

// No band: every key block, [0, Sk).
// CHECK-LABEL: func.func @full
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C130:.*]] = arith.constant 130 : index
// CHECK-NOT: arith.minsi {{.*}}, %[[C130]]
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C130]] step
func.func @full(%q: tensor<1x2x100x32xf32>, %k: tensor<1x2x130x32xf32>, %v: tensor<1x2x130x32xf32>) -> tensor<1x2x100x32xf32> {
  %o = flash.attention %q, %k, %v
      : tensor<1x2x100x32xf32>, tensor<1x2x130x32xf32>, tensor<1x2x130x32xf32> -> tensor<1x2x100x32xf32>
  return %o : tensor<1x2x100x32xf32>
}
