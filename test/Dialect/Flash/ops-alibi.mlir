// Round-trip of flash.attention / flash.attention_grad with `alibi(...)`:
// the custom form printed and parsed again, the generic form parsed back,
// and the operand segments of the generic form (the slopes last).
// RUN: flashfuse-opt %s | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @per_head
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xbf16>, %[[K:.*]]: tensor<2x2x128x64xbf16>, %[[V:.*]]: tensor<2x2x128x64xbf16>, %[[S:.*]]: tensor<8xf32>)
// CHECK: flash.attention %[[Q]], %[[K]], %[[V]] alibi(%[[S]] : tensor<8xf32>) {causal = #flash.causal<bottom_right>} : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x64xbf16> -> tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>
// GENERIC-LABEL: sym_name = "per_head"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1>
func.func @per_head(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x128x64xbf16>,
                    %v: tensor<2x2x128x64xbf16>, %slopes: tensor<8xf32>)
    -> (tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v alibi(%slopes : tensor<8xf32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x64xbf16>
      -> tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>
  return %o, %lse : tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>
}

// Per batch entry and head ([B, Hq]), over a packed batch of 3 sequences,
// after the varlen operands.
// CHECK-LABEL: func.func @packed_per_sequence
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} varlen(%{{.*}}, %{{.*}} : tensor<4xi32>, tensor<4xi32>) alibi(%{{.*}} : tensor<3x4xf32>) : tensor<1x4x300x64xf16>
// GENERIC-LABEL: sym_name = "packed_per_sequence"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1>
func.func @packed_per_sequence(%q: tensor<1x4x300x64xf16>, %cu: tensor<4xi32>,
                               %slopes: tensor<3x4xf32>) -> tensor<1x4x300x64xf16> {
  %o = flash.attention %q, %q, %q varlen(%cu, %cu : tensor<4xi32>, tensor<4xi32>)
      alibi(%slopes : tensor<3x4xf32>)
      : tensor<1x4x300x64xf16>, tensor<1x4x300x64xf16>, tensor<1x4x300x64xf16>
      -> tensor<1x4x300x64xf16>
  return %o : tensor<1x4x300x64xf16>
}

// The gradient takes the forward's slopes; dynamic shapes.
// CHECK-LABEL: func.func @grad
// CHECK: flash.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} alibi(%{{.*}} : tensor<?x?xf32>) {causal = #flash.causal<top_left>}
// GENERIC-LABEL: sym_name = "grad"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1>
func.func @grad(%do: tensor<?x4x?x64xf16>, %q: tensor<?x4x?x64xf16>,
                %lse: tensor<?x4x?xf32>, %slopes: tensor<?x?xf32>)
    -> (tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %q, %do, %lse
      alibi(%slopes : tensor<?x?xf32>) {causal = #flash.causal<top_left>}
      : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>,
        tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
      -> tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>
  return %dq, %dk, %dv : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>
}
