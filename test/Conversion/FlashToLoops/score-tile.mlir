// RUN: flashfuse-opt %s --flash-lower-to-loops="block-m=16 block-n=16" | FileCheck %s

// The score tile runs the same pipeline as the naive lowering at absolute
// positions (q0 + i, k0 + j): bias and mask are read from the whole
// operands with broadcast dims at index 0, the mods are inlined, and
// dropout draws Philox at the absolute (b, h, q, k).

// CHECK-LABEL: func.func @variants
// CHECK-SAME: %[[BIAS:[a-z0-9]+]]: tensor<1x2x1x24xf32>, %[[MASK:[a-z0-9]+]]: tensor<2x1x20x24xi1>, %[[SEED:[a-z0-9]+]]: i64
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[QB:.*]]) in
// CHECK: %[[Q0:.*]] = arith.muli %[[QB]]
// CHECK: scf.for %[[K0:[a-z0-9]+]] =
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[QI:.*]] = arith.addi %[[Q0]], %[[I]] : index
// CHECK: %[[KJ:.*]] = arith.addi %[[K0]], %[[J]] : index
// CHECK: %[[Z:.*]] = arith.constant 0 : index
// CHECK: %[[BV:.*]] = tensor.extract %[[BIAS]][%[[Z]], %[[H]], %[[Z]], %[[KJ]]] : tensor<1x2x1x24xf32>
// CHECK: %[[Z2:.*]] = arith.constant 0 : index
// CHECK: %[[MV:.*]] = tensor.extract %[[MASK]][%[[B]], %[[Z2]], %[[QI]], %[[KJ]]] : tensor<2x1x20x24xi1>
// CHECK: math.tanh
// CHECK: arith.addf %{{.*}}, %[[BV]] : f32
// score_mod (score - 1) and mask_mod (kv_idx != 5) inlined.
// CHECK: arith.subf
// CHECK: %[[C5:.*]] = arith.constant 5 : index
// CHECK: %[[MM:.*]] = arith.cmpi ne, %[[KJ]], %[[C5]] : index
// CHECK: arith.andi %[[MV]], %[[MM]] : i1
// Dropout tile at the absolute position.
// CHECK: %[[DI:.*]] = linalg.index 0 : index
// CHECK: %[[DJ:.*]] = linalg.index 1 : index
// CHECK: %[[DQ:.*]] = arith.addi %[[Q0]], %[[DI]] : index
// CHECK: %[[DK:.*]] = arith.addi %[[K0]], %[[DJ]] : index
// CHECK: %[[DK32:.*]] = arith.index_cast %[[DK]] : index to i32
// CHECK: %[[DQ32:.*]] = arith.index_cast %[[DQ]] : index to i32
// CHECK: arith.index_cast %[[H]] : index to i32
// CHECK: arith.index_cast %[[B]] : index to i32
// CHECK: arith.andi %[[DK32]]
// CHECK: arith.andi %[[DQ32]]
// CHECK: arith.trunci %[[SEED]] : i64 to i32
// CHECK-COUNT-20: arith.mului_extended
// CHECK-COUNT-4: arith.cmpi uge
func.func @variants(%q: tensor<2x2x20x16xf32>, %k: tensor<2x2x24x16xf32>, %v: tensor<2x2x24x16xf32>,
                    %bias: tensor<1x2x1x24xf32>, %mask: tensor<2x1x20x24xi1>, %seed: i64) -> tensor<2x2x20x16xf32> {
  %o = flash.attention %q, %k, %v bias(%bias : tensor<1x2x1x24xf32>) mask(%mask : tensor<2x1x20x24xi1>) seed(%seed)
      {softcap = 30.0 : f32, dropout_p = 0.1 : f32}
      : tensor<2x2x20x16xf32>, tensor<2x2x24x16xf32>, tensor<2x2x24x16xf32> -> tensor<2x2x20x16xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %one = arith.constant 1.0 : f32
        %r = arith.subf %s, %one : f32
        flash.yield %r : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c5 = arith.constant 5 : index
        %keep = arith.cmpi ne, %j, %c5 : index
        flash.yield %keep : i1
      }
  return %o : tensor<2x2x20x16xf32>
}
