// RUN: flashfuse-opt %s --flash-lower-naive | FileCheck %s

// score_mod and mask_mod bodies are cloned into the score generic with
// their arguments bound to the score and the linalg.index values.

// CHECK-LABEL: func.func @alibi_and_document
// CHECK-SAME: %[[SLOPE:[a-z0-9]+]]: f32
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: %[[H:.*]] = linalg.index 1 : index
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[SCALED:.*]] = arith.mulf
// score_mod: score + slope * (j - i), slope captured from above.
// CHECK: %[[DIST:.*]] = arith.subi %[[J]], %[[I]] : index
// CHECK: %[[DI:.*]] = arith.index_cast %[[DIST]] : index to i64
// CHECK: %[[DF:.*]] = arith.sitofp %[[DI]] : i64 to f32
// CHECK: %[[B:.*]] = arith.mulf %[[SLOPE]], %[[DF]] : f32
// CHECK: %[[MODDED:.*]] = arith.addf %[[SCALED]], %[[B]] : f32
// mask_mod: same 8-token document.
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[QD:.*]] = arith.divui %[[I]], %[[C8]] : index
// CHECK: %[[KD:.*]] = arith.divui %[[J]], %[[C8]] : index
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[QD]], %[[KD]] : index
// CHECK: arith.select %[[SAME]], %[[MODDED]], %{{.*}} : f32
// CHECK-NOT: flash.yield
func.func @alibi_and_document(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %slope: f32)
    -> tensor<1x2x16x8xf32> {
  %o = flash.attention %q, %k, %v
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %bias = arith.mulf %slope, %df : f32
        %r = arith.addf %s, %bias : f32
        flash.yield %r : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c8 = arith.constant 8 : index
        %qd = arith.divui %i, %c8 : index
        %kd = arith.divui %j, %c8 : index
        %same = arith.cmpi eq, %qd, %kd : index
        flash.yield %same : i1
      }
  return %o : tensor<1x2x16x8xf32>
}
