// The CPU lowerings rewrite a varlen flash.attention into segment ids of the
// packed query rows and the dense op with a per-sequence mask_mod, then
// lower that; nothing of the flash dialect is left. Dynamic shapes are
// refused with the operand named (the segment ids are sized statically).
// RUN: flashfuse-opt %s --split-input-file --flash-lower-naive -verify-diagnostics | FileCheck %s
// RUN: flashfuse-opt %s --split-input-file --flash-lower-to-loops -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @packed
// CHECK: linalg.fill {{.*}} tensor<40xindex>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tensor.insert {{.*}} tensor<40xindex>
// CHECK-NOT: flash.
// CHECK: return
func.func @packed(%q: tensor<1x4x40x32xf32>, %k: tensor<1x2x50x32xf32>,
                  %cu_q: tensor<4xi32>, %cu_k: tensor<4xi32>)
    -> (tensor<1x4x40x32xf32>, tensor<1x4x40xf32>) {
  %o, %lse = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<4xi32>, tensor<4xi32>)
      {causal = #flash.causal<bottom_right>, window_left = 8 : i64}
      : tensor<1x4x40x32xf32>, tensor<1x2x50x32xf32>, tensor<1x2x50x32xf32>
      -> tensor<1x4x40x32xf32>, tensor<1x4x40xf32>
  return %o, %lse : tensor<1x4x40x32xf32>, tensor<1x4x40xf32>
}

// -----

func.func @dynamic_cu(%q: tensor<1x4x40x32xf32>, %cu: tensor<?xi32>) -> tensor<1x4x40x32xf32> {
  // expected-error @below {{needs static shapes: operand #3 has type 'tensor<?xi32>'}}
  %o = flash.attention %q, %q, %q varlen(%cu, %cu : tensor<?xi32>, tensor<?xi32>)
      : tensor<1x4x40x32xf32>, tensor<1x4x40x32xf32>, tensor<1x4x40x32xf32>
      -> tensor<1x4x40x32xf32>
  return %o : tensor<1x4x40x32xf32>
}
