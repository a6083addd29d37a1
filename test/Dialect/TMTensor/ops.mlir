// The tm_tensor ops as torch-mlir prints them parse, print in the same form,
// and round-trip through the generic form. @exported is torch-mlir's own
// output (torch.sort, torch.topk, torch.cumsum and index_put with
// accumulate, exported with torch_mlir.fx.export_and_import to
// linalg-on-tensors; the surrounding linalg is trimmed).
// RUN: flashfuse-opt %s | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @exported
// CHECK: %{{.*}}:2 = tm_tensor.sort dimension(1) outs(%{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2x8xi64>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: i64, %{{.*}}: i64):
// CHECK-NEXT: arith.cmpf ole
// CHECK-NEXT: tm_tensor.yield %{{.*}} : i1
// CHECK-NEXT: } -> tensor<2x8xf32>, tensor<2x8xi64>
// CHECK: %{{.*}}:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%{{.*}} : tensor<2x8xf32>) outs(%{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2xf32>) {
// CHECK: tm_tensor.yield %{{.*}} : f32
// CHECK-NEXT: } -> tensor<2x8xf32>, tensor<2xf32>
// CHECK: tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%{{.*}}, %{{.*}} : tensor<2x1x8xf32>, tensor<2x1xi64>) outs(%{{.*}} : tensor<2x8xf32>) {
// CHECK: } -> tensor<2x8xf32>
// GENERIC-LABEL: sym_name = "exported"
// GENERIC: "tm_tensor.sort"(%{{.*}}, %{{.*}}) <{dimension = 1 : i64, operandSegmentSizes = array<i32: 0, 2>}>
// GENERIC: "tm_tensor.scan"(%{{.*}}, %{{.*}}, %{{.*}}) <{dimension = 1 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}>
// GENERIC: "tm_tensor.scatter"(%{{.*}}, %{{.*}}, %{{.*}}) <{dimension_map = array<i64: 0>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = false}>
func.func @exported(%arg0: tensor<2x8xf32>, %arg1: tensor<2xi64>, %arg2: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x8xi64>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%0 : tensor<2x8xi64>) {
  ^bb0(%out: i64):
    %12 = linalg.index 1 : index
    %13 = arith.index_cast %12 : index to i64
    linalg.yield %13 : i64
  } -> tensor<2x8xi64>
  %2:2 = tm_tensor.sort dimension(1) outs(%arg0, %1 : tensor<2x8xf32>, tensor<2x8xi64>) {
  ^bb0(%arg3: f32, %arg4: f32, %arg5: i64, %arg6: i64):
    %12 = arith.cmpf ole, %arg3, %arg4 : f32
    tm_tensor.yield %12 : i1
  } -> tensor<2x8xf32>, tensor<2x8xi64>
  %4 = tensor.empty() : tensor<2x8xf32>
  %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %6 = tensor.empty() : tensor<2xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<2xf32>) -> tensor<2xf32>
  %8:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%arg0 : tensor<2x8xf32>) outs(%5, %7 : tensor<2x8xf32>, tensor<2xf32>) {
  ^bb0(%arg3: f32, %arg4: f32):
    %12 = arith.addf %arg3, %arg4 : f32
    tm_tensor.yield %12 : f32
  } -> tensor<2x8xf32>, tensor<2xf32>
  %expanded = tensor.expand_shape %arg1 [[0, 1]] output_shape [2, 1] : tensor<2xi64> into tensor<2x1xi64>
  %expanded_1 = tensor.expand_shape %arg2 [[0], [1, 2]] output_shape [2, 1, 8] : tensor<2x8xf32> into tensor<2x1x8xf32>
  %9 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%expanded_1, %expanded : tensor<2x1x8xf32>, tensor<2x1xi64>) outs(%arg0 : tensor<2x8xf32>) {
  ^bb0(%arg3: f32, %arg4: f32):
    %12 = arith.addf %arg4, %arg3 : f32
    tm_tensor.yield %12 : f32
  } -> tensor<2x8xf32>
  return %2#0, %2#1, %8#0, %9 : tensor<2x8xf32>, tensor<2x8xi64>, tensor<2x8xf32>, tensor<2x8xf32>
}

// topk in torch-mlir's format (its TorchToTMTensor lowering of aten.topk);
// the index input is optional.
// CHECK-LABEL: func.func @topk
// CHECK: %{{.*}}:2 = tm_tensor.topk dimension(1) ins(%{{.*}} : tensor<2x8xf32>) outs(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xi64>) {
// CHECK: tm_tensor.yield %{{.*}} : i1
// CHECK: } -> tensor<2x3xf32>, tensor<2x3xi64>
func.func @topk(%x: tensor<2x8xf32>, %v: tensor<2x3xf32>, %i: tensor<2x3xi64>) -> (tensor<2x3xf32>, tensor<2x3xi64>) {
  %0:2 = tm_tensor.topk dimension(1) ins(%x : tensor<2x8xf32>) outs(%v, %i : tensor<2x3xf32>, tensor<2x3xi64>) {
  ^bb0(%a: f32, %b: f32):
    %c = arith.cmpf ogt, %a, %b : f32
    tm_tensor.yield %c : i1
  } -> tensor<2x3xf32>, tensor<2x3xi64>
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xi64>
}

// attention as torch-mlir emits it for a legal scaled_dot_product_attention:
// with a scale and an i1 mask, and without either (scale 1/sqrt(D)).
// CHECK-LABEL: func.func @attention
// CHECK: tm_tensor.attention {scale = 2.500000e-01 : f64} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x16x16xf32>, tensor<4x16x16xf32>, tensor<4x16x8xf32>, tensor<4x16x16xi1>) outs(%{{.*}} : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
// CHECK: tm_tensor.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4x16x16xf16>, tensor<2x4x32x16xf16>, tensor<2x4x32x16xf16>) outs(%{{.*}} : tensor<2x4x16x16xf16>) -> tensor<2x4x16x16xf16>
// GENERIC-LABEL: sym_name = "attention"
// GENERIC: "tm_tensor.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 4, 1>, scale = 2.500000e-01 : f64}>
func.func @attention(%q: tensor<4x16x16xf32>, %k: tensor<4x16x16xf32>, %v: tensor<4x16x8xf32>, %m: tensor<4x16x16xi1>, %o: tensor<4x16x8xf32>,
                     %q2: tensor<2x4x16x16xf16>, %k2: tensor<2x4x32x16xf16>, %v2: tensor<2x4x32x16xf16>, %o2: tensor<2x4x16x16xf16>) -> (tensor<4x16x8xf32>, tensor<2x4x16x16xf16>) {
  %0 = tm_tensor.attention {scale = 2.500000e-01 : f64} ins(%q, %k, %v, %m : tensor<4x16x16xf32>, tensor<4x16x16xf32>, tensor<4x16x8xf32>, tensor<4x16x16xi1>) outs(%o : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %1 = tm_tensor.attention ins(%q2, %k2, %v2 : tensor<2x4x16x16xf16>, tensor<2x4x32x16xf16>, tensor<2x4x32x16xf16>) outs(%o2 : tensor<2x4x16x16xf16>) -> tensor<2x4x16x16xf16>
  return %0, %1 : tensor<4x16x8xf32>, tensor<2x4x16x16xf16>
}

// On memrefs the ops write their outputs and have no results.
// CHECK-LABEL: func.func @memref
// CHECK: tm_tensor.scan dimension(0) inclusive(false) ins(%{{.*}} : memref<8xi64>) outs(%{{.*}}, %{{.*}} : memref<8xi64>, memref<i64>) {
// CHECK: }
// CHECK-NEXT: return
func.func @memref(%x: memref<8xi64>, %o: memref<8xi64>, %acc: memref<i64>) {
  tm_tensor.scan dimension(0) inclusive(false) ins(%x : memref<8xi64>) outs(%o, %acc : memref<8xi64>, memref<i64>) {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    tm_tensor.yield %s : i64
  }
  return
}
