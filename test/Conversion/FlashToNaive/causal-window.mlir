// RUN: flashfuse-opt %s --flash-lower-naive | FileCheck %s

// The band is a predicate on the linalg.index values of the score generic.

// Top-left causal: keep j <= i.
// CHECK-LABEL: func.func @causal_top_left
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[KEEP:.*]] = arith.cmpi sle, %[[J]], %[[I]] : index
// CHECK: arith.select %[[KEEP]], %{{.*}}, %{{.*}} : f32
func.func @causal_top_left(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x12x16xf32>, %v: tensor<1x1x12x16xf32>) -> tensor<1x1x8x16xf32> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<top_left>}
      : tensor<1x1x8x16xf32>, tensor<1x1x12x16xf32>, tensor<1x1x12x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// Bottom-right causal with Sq = 8, Sk = 12: keep j <= i + 4.
// CHECK-LABEL: func.func @causal_bottom_right
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[LIMIT:.*]] = arith.addi %[[I]], %[[C4]] : index
// CHECK: arith.cmpi sle, %[[J]], %[[LIMIT]] : index
func.func @causal_bottom_right(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x12x16xf32>, %v: tensor<1x1x12x16xf32>) -> tensor<1x1x8x16xf32> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<bottom_right>}
      : tensor<1x1x8x16xf32>, tensor<1x1x12x16xf32>, tensor<1x1x12x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// A window (left 3, right 2) without causal: i - 3 <= j <= i + 2, both
// conditions and-ed.
// CHECK-LABEL: func.func @window
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[HI:.*]] = arith.addi %[[I]], %[[C2]] : index
// CHECK: %[[R:.*]] = arith.cmpi sle, %[[J]], %[[HI]] : index
// CHECK: %[[CM3:.*]] = arith.constant -3 : index
// CHECK: %[[LO:.*]] = arith.addi %[[I]], %[[CM3]] : index
// CHECK: %[[L:.*]] = arith.cmpi sge, %[[J]], %[[LO]] : index
// CHECK: arith.andi %[[R]], %[[L]] : i1
func.func @window(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  %o = flash.attention %q, %k, %v {window_left = 3 : i64, window_right = 2 : i64}
      : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// Causal and window_right together: the tighter bound (causal, 0) wins.
// CHECK-LABEL: func.func @causal_and_window_right
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: arith.cmpi sle, %[[J]], %[[I]] : index
// CHECK-NOT: arith.cmpi
// CHECK: linalg.yield
func.func @causal_and_window_right(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<top_left>, window_right = 5 : i64}
      : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}
