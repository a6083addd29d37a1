// torch-mlir's tm_tensor.attention (aten.scaled_dot_product_attention kept
// legal) becomes flash.attention with its semantics: scale `scale`, or
// 1/sqrt(D) without one; a float mask added (bias), an i1 mask keeping the
// true scores (mask); a mask that is a band of k - q becomes `causal` /
// window attributes. Operands torch-mlir collapsed from [B, H, S, D] are
// read before the collapse. Forms that are not raised get a remark under
// explain=true. The ops are in torch-mlir's textual form.
// RUN: flashfuse-opt --flash-raise-attention="explain=true" --split-input-file --verify-diagnostics %s | FileCheck %s

// [BH, S, D] operands that come from nowhere else: viewed as [1, BH, S, D].
// CHECK-LABEL: func @rank3_default_scale
// CHECK-SAME: (%[[Q:.*]]: tensor<4x16x8xf32>, %[[K:.*]]: tensor<4x32x8xf32>, %[[V:.*]]: tensor<4x32x8xf32>)
// CHECK-DAG: %[[Q4:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2], [3]] output_shape [1, 4, 16, 8]
// CHECK-DAG: %[[K4:.*]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3]] output_shape [1, 4, 32, 8]
// CHECK-DAG: %[[V4:.*]] = tensor.expand_shape %[[V]] {{\[}}[0, 1], [2], [3]] output_shape [1, 4, 32, 8]
// CHECK: %[[O:.*]] = flash.attention %[[Q4]], %[[K4]], %[[V4]] {scale = 0.353553385 : f32} : tensor<1x4x16x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32> -> tensor<1x4x16x8xf32>
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[O]] {{\[}}[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
// CHECK-NOT: tm_tensor
// CHECK-NOT: linalg.fill
// CHECK: return %[[R]]
func.func @rank3_default_scale(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %v: tensor<4x32x8xf32>) -> tensor<4x16x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x16x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %2 = tm_tensor.attention ins(%q, %k, %v : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x8xf32>) outs(%1 : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %2 : tensor<4x16x8xf32>
}

// -----

// As torch-mlir emits it for sdpa(q, k, v, attn_mask=float, scale=0.25):
// every operand collapsed from [2, 2, S, D]; the additive mask is the bias.
// CHECK-LABEL: func @collapsed_float_mask
// CHECK-SAME: (%[[Q:.*]]: tensor<2x2x16x8xf32>, %[[K:.*]]: tensor<2x2x16x8xf32>, %[[V:.*]]: tensor<2x2x16x8xf32>, %[[M:.*]]: tensor<2x2x16x16xf32>)
// CHECK: %[[O:.*]] = flash.attention %[[Q]], %[[K]], %[[V]] bias(%[[M]] : tensor<2x2x16x16xf32>) {scale = 2.500000e-01 : f32} : tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32> -> tensor<2x2x16x8xf32>
// CHECK: return %[[O]]
func.func @collapsed_float_mask(%arg0: tensor<2x2x16x8xf32>, %arg1: tensor<2x2x16x8xf32>, %arg2: tensor<2x2x16x8xf32>, %arg3: tensor<2x2x16x16xf32>) -> tensor<2x2x16x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<2x2x16x8xf32> into tensor<4x16x8xf32>
  %collapsed_0 = tensor.collapse_shape %arg1 [[0, 1], [2], [3]] : tensor<2x2x16x8xf32> into tensor<4x16x8xf32>
  %collapsed_1 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<2x2x16x8xf32> into tensor<4x16x8xf32>
  %collapsed_2 = tensor.collapse_shape %arg3 [[0, 1], [2], [3]] : tensor<2x2x16x16xf32> into tensor<4x16x16xf32>
  %0 = tensor.empty() : tensor<4x16x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %2 = tm_tensor.attention {scale = 2.500000e-01 : f64} ins(%collapsed, %collapsed_0, %collapsed_1, %collapsed_2 : tensor<4x16x8xf32>, tensor<4x16x8xf32>, tensor<4x16x8xf32>, tensor<4x16x16xf32>) outs(%1 : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %expanded = tensor.expand_shape %2 [[0, 1], [2], [3]] output_shape [2, 2, 16, 8] : tensor<4x16x8xf32> into tensor<2x2x16x8xf32>
  return %expanded : tensor<2x2x16x8xf32>
}

// -----

// A boolean mask from data keeps the true scores: the mask operand.
// CHECK-LABEL: func @bool_mask
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<1x4x16x16xi1>) {scale = 0.353553385 : f32}
func.func @bool_mask(%q: tensor<4x16x8xf16>, %k: tensor<4x16x8xf16>, %v: tensor<4x16x8xf16>, %m: tensor<4x16x16xi1>, %o: tensor<4x16x8xf16>) -> tensor<4x16x8xf16> {
  %0 = tm_tensor.attention ins(%q, %k, %v, %m : tensor<4x16x8xf16>, tensor<4x16x8xf16>, tensor<4x16x8xf16>, tensor<4x16x16xi1>) outs(%o : tensor<4x16x8xf16>) -> tensor<4x16x8xf16>
  return %0 : tensor<4x16x8xf16>
}

// -----

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// torch-mlir's own mask for sdpa(..., is_causal=True): 0 where i >= j, -inf
// elsewhere, materialised over [B, H, M, N]. It is a band: `causal`, and no
// bias is read.
// CHECK-LABEL: func @is_causal
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = #flash.causal<top_left>, scale = 0.353553385 : f32} : tensor<1x2x16x8xf32>
// CHECK-NOT: bias
func.func @is_causal(%arg0: tensor<1x2x16x8xf32>, %arg1: tensor<1x2x16x8xf32>, %arg2: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<1x2x16x16xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
  %2 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%1 : tensor<1x2x16x16xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %c = arith.cmpi sge, %i, %j : index
    %s = arith.select %c, %cst, %cst_0 : f32
    linalg.yield %s : f32
  } -> tensor<1x2x16x16xf32>
  %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %collapsed_1 = tensor.collapse_shape %arg1 [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %collapsed_2 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32>
  %collapsed_3 = tensor.collapse_shape %2 [[0, 1], [2], [3]] : tensor<1x2x16x16xf32> into tensor<2x16x16xf32>
  %3 = tensor.empty() : tensor<2x16x8xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %5 = tm_tensor.attention ins(%collapsed, %collapsed_1, %collapsed_2, %collapsed_3 : tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x16xf32>) outs(%4 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %expanded = tensor.expand_shape %5 [[0, 1], [2], [3]] output_shape [1, 2, 16, 8] : tensor<2x16x8xf32> into tensor<1x2x16x8xf32>
  return %expanded : tensor<1x2x16x8xf32>
}

// -----

#bcast = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// sdpa(..., enable_gqa=True): torch-mlir repeats K and V over the query
// heads before the op; the repeat is dropped (GQA, 2 kv heads).
// CHECK-LABEL: func @gqa_repeat
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x16x8xf32>, %[[K:.*]]: tensor<1x2x16x8xf32>, %[[V:.*]]: tensor<1x2x16x8xf32>)
// CHECK: flash.attention %[[Q]], %[[K]], %[[V]] {scale = 0.353553385 : f32} : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x16x8xf32>
func.func @gqa_repeat(%q: tensor<1x4x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x2x2x16x8xf32>
  %kb = linalg.generic {indexing_maps = [#bcast, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x16x8xf32>) outs(%e : tensor<1x2x2x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x16x8xf32>
  %vb = linalg.generic {indexing_maps = [#bcast, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<1x2x16x8xf32>) outs(%e : tensor<1x2x2x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x16x8xf32>
  %k4 = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x2x16x8xf32> into tensor<1x4x16x8xf32>
  %v4 = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x2x16x8xf32> into tensor<1x4x16x8xf32>
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %k3 = tensor.collapse_shape %k4 [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %v3 = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %0 = tensor.empty() : tensor<4x16x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %2 = tm_tensor.attention ins(%q3, %k3, %v3 : tensor<4x16x8xf32>, tensor<4x16x8xf32>, tensor<4x16x8xf32>) outs(%1 : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %r = tensor.expand_shape %2 [[0, 1], [2], [3]] output_shape [1, 4, 16, 8] : tensor<4x16x8xf32> into tensor<1x4x16x8xf32>
  return %r : tensor<1x4x16x8xf32>
}

// -----

// Not raised: three batch dims (rank 5).
// CHECK-LABEL: func @rank5
// CHECK: tm_tensor.attention
// CHECK-NOT: flash.attention
func.func @rank5(%q: tensor<2x2x2x16x8xf32>, %o: tensor<2x2x2x16x8xf32>) -> tensor<2x2x2x16x8xf32> {
  // expected-remark @+1 {{flash-raise-attention: tm_tensor.attention not raised: tm_tensor.attention: rank-5 operands: only one or two batch dims ([BH, S, D] or [B, H, S, D]) are raised}}
  %0 = tm_tensor.attention ins(%q, %q, %q : tensor<2x2x2x16x8xf32>, tensor<2x2x2x16x8xf32>, tensor<2x2x2x16x8xf32>) outs(%o : tensor<2x2x2x16x8xf32>) -> tensor<2x2x2x16x8xf32>
  return %0 : tensor<2x2x2x16x8xf32>
}

// -----

// Not raised: f16 operands with an f32 output (flash.attention's output has
// Q's type).
// CHECK-LABEL: func @mixed_types
// CHECK-NOT: flash.attention
func.func @mixed_types(%q: tensor<4x16x8xf16>, %o: tensor<4x16x8xf32>) -> tensor<4x16x8xf32> {
  // expected-remark @+1 {{tm_tensor.attention not raised: tm_tensor.attention: Q, K, V and the output do not share one element type}}
  %0 = tm_tensor.attention ins(%q, %q, %q : tensor<4x16x8xf16>, tensor<4x16x8xf16>, tensor<4x16x8xf16>) outs(%o : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %0 : tensor<4x16x8xf32>
}

// -----

// Not raised: dynamic shapes.
// CHECK-LABEL: func @dynamic
// CHECK-NOT: flash.attention
func.func @dynamic(%q: tensor<4x?x8xf32>, %o: tensor<4x?x8xf32>) -> tensor<4x?x8xf32> {
  // expected-remark @+1 {{tm_tensor.attention not raised: tm_tensor.attention: dynamic shapes are not supported}}
  %0 = tm_tensor.attention ins(%q, %q, %q : tensor<4x?x8xf32>, tensor<4x?x8xf32>, tensor<4x?x8xf32>) outs(%o : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  return %0 : tensor<4x?x8xf32>
}

// -----

// Not raised: the bufferised form (flash.attention is on tensors).
// CHECK-LABEL: func @memref
// CHECK-NOT: flash.attention
func.func @memref(%q: memref<4x16x8xf32>, %o: memref<4x16x8xf32>) {
  // expected-remark @+1 {{tm_tensor.attention not raised: tm_tensor.attention: the op writes a memref, not a tensor}}
  tm_tensor.attention ins(%q, %q, %q : memref<4x16x8xf32>, memref<4x16x8xf32>, memref<4x16x8xf32>) outs(%o : memref<4x16x8xf32>)
  return
}
