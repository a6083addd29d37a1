// Grouped-query attention whose K/V head repeat is not right before the
// matmuls (Falcon's grouped fused QKV): when the operand trace peels V's
// broadcast but not K's, K may still repeat its heads itself, proven
// through elementwise ops that do not vary along the heads; so may both when
// neither could be peeled.
// RUN: flashfuse-opt --flash-raise-attention="explain=true" --split-input-file --verify-diagnostics %s | FileCheck %s

#bcast = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#seq = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#head = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
// K is broadcast over its group, then multiplied by a table that is the
// same for every head (RoPE's cos): its heads stay repeated in pairs, so K
// is read as every second head, V before its broadcast.
// CHECK-LABEL: func @k_repeated_before_rope
// CHECK: %[[K:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 2, 8, 8] [1, 2, 1, 1] : tensor<1x4x8x8xf32> to tensor<1x2x8x8xf32>
// CHECK: flash.attention %{{.*}}, %[[K]], %{{.*}} {scale = 1.000000e+00 : f32} : tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32> -> tensor<1x4x8x8xf32>
func.func @k_repeated_before_rope(%q: tensor<1x4x8x8xf32>, %k: tensor<1x2x8x8xf32>,
    %v: tensor<1x2x8x8xf32>, %cos: tensor<1x1x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<1x2x2x8x8xf32>
  %e4 = tensor.empty() : tensor<1x4x8x8xf32>
  %kb = linalg.generic {indexing_maps = [#bcast, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<1x2x8x8xf32>) outs(%e5 : tensor<1x2x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x8xf32>
  %kc = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x8xf32> into tensor<1x4x8x8xf32>
  %kr = linalg.generic {indexing_maps = [#id4, #seq, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%kc, %cos : tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) outs(%e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<1x4x8x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x4x8x8xf32>) outs(%e4 : tensor<1x4x8x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %e3 = tensor.empty() : tensor<4x8x8xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%f3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x8x8xf32>) outs(%e3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  // V: broadcast over its group, peeled by the operand trace.
  %vb = linalg.generic {indexing_maps = [#bcast, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<1x2x8x8xf32>) outs(%e5 : tensor<1x2x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x8xf32>
  %v3 = tensor.collapse_shape %vb [[0, 1, 2], [3], [4]] : tensor<1x2x2x8x8xf32> into tensor<4x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v3 : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%f3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  return %o4 : tensor<1x4x8x8xf32>
}

// -----

#bcast = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#seq = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#head = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
// K has 4 distinct heads while V repeats 2: not one GQA grouping.
// CHECK-LABEL: func @k_not_repeated
// CHECK-NOT: flash.attention
func.func @k_not_repeated(%q: tensor<1x4x8x8xf32>, %k: tensor<1x2x8x8xf32>,
    %v: tensor<1x2x8x8xf32>, %cos: tensor<1x1x8x8xf32>, %k4: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<1x2x2x8x8xf32>
  %e4 = tensor.empty() : tensor<1x4x8x8xf32>
  %kr = linalg.generic {indexing_maps = [#id4, #seq, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k4, %cos : tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) outs(%e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<1x4x8x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x4x8x8xf32>) outs(%e4 : tensor<1x4x8x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %e3 = tensor.empty() : tensor<4x8x8xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%f3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  // expected-remark @+1 {{operand layout: V's head grouping (2 query heads per kv head) differs from K's (1), and K's heads are not repeated in runs of 2 before the matmul (at 'linalg.batch_matmul')}}
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x8x8xf32>) outs(%e3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  // V: broadcast over its group, peeled by the operand trace.
  %vb = linalg.generic {indexing_maps = [#bcast, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<1x2x8x8xf32>) outs(%e5 : tensor<1x2x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x8xf32>
  %v3 = tensor.collapse_shape %vb [[0, 1, 2], [3], [4]] : tensor<1x2x2x8x8xf32> into tensor<4x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v3 : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%f3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  return %o4 : tensor<1x4x8x8xf32>
}

// -----

#bcast = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#seq = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#head = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
// K is broadcast over its group, but then a per-head value is added: the
// heads of a group differ, and K cannot be read as 2 kv heads.
// CHECK-LABEL: func @k_repeat_broken_per_head
// CHECK-NOT: flash.attention
func.func @k_repeat_broken_per_head(%q: tensor<1x4x8x8xf32>, %k: tensor<1x2x8x8xf32>,
    %v: tensor<1x2x8x8xf32>, %cos: tensor<1x1x8x8xf32>, %hb: tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<1x2x2x8x8xf32>
  %e4 = tensor.empty() : tensor<1x4x8x8xf32>
  %kb = linalg.generic {indexing_maps = [#bcast, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<1x2x8x8xf32>) outs(%e5 : tensor<1x2x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x8xf32>
  %kc = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x8xf32> into tensor<1x4x8x8xf32>
  %kr = linalg.generic {indexing_maps = [#id4, #head, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%kc, %hb : tensor<1x4x8x8xf32>, tensor<1x4x1x1xf32>) outs(%e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %m = arith.addf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<1x4x8x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x4x8x8xf32>) outs(%e4 : tensor<1x4x8x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %e3 = tensor.empty() : tensor<4x8x8xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%f3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  // expected-remark @+1 {{operand layout: V's head grouping (2 query heads per kv head) differs from K's (1), and K's heads are not repeated in runs of 2 before the matmul (at 'linalg.batch_matmul')}}
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x8x8xf32>) outs(%e3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  // V: broadcast over its group, peeled by the operand trace.
  %vb = linalg.generic {indexing_maps = [#bcast, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<1x2x8x8xf32>) outs(%e5 : tensor<1x2x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x8xf32>
  %v3 = tensor.collapse_shape %vb [[0, 1, 2], [3], [4]] : tensor<1x2x2x8x8xf32> into tensor<4x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v3 : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%f3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  return %o4 : tensor<1x4x8x8xf32>
}

// -----

#bcast = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#seq = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// Neither K nor V can be peeled (each goes through an op that is the same
// for every head after its broadcast), but both repeat their heads in
// pairs: both are read as every second head.
// CHECK-LABEL: func @both_repeated_before_ops
// CHECK-DAG: %[[K:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 2, 8, 8] [1, 2, 1, 1] : tensor<1x4x8x8xf32> to tensor<1x2x8x8xf32>
// CHECK-DAG: %[[V:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 2, 8, 8] [1, 2, 1, 1] : tensor<1x4x8x8xf32> to tensor<1x2x8x8xf32>
// CHECK: flash.attention %{{.*}}, %[[K]], %[[V]] {scale = 1.000000e+00 : f32} : tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32> -> tensor<1x4x8x8xf32>
func.func @both_repeated_before_ops(%q: tensor<1x4x8x8xf32>, %k: tensor<1x2x8x8xf32>,
    %v: tensor<1x2x8x8xf32>, %cos: tensor<1x1x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<1x2x2x8x8xf32>
  %e4 = tensor.empty() : tensor<1x4x8x8xf32>
  %kb = linalg.generic {indexing_maps = [#bcast, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<1x2x8x8xf32>) outs(%e5 : tensor<1x2x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x8xf32>
  %kc = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x8xf32> into tensor<1x4x8x8xf32>
  %kr = linalg.generic {indexing_maps = [#id4, #seq, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%kc, %cos : tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) outs(%e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<1x4x8x8xf32>
  %kt = linalg.transpose ins(%kr : tensor<1x4x8x8xf32>) outs(%e4 : tensor<1x4x8x8xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %e3 = tensor.empty() : tensor<4x8x8xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%f3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x8x8xf32>) outs(%e3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %vb = linalg.generic {indexing_maps = [#bcast, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<1x2x8x8xf32>) outs(%e5 : tensor<1x2x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x8xf32>
  %vc = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x8xf32> into tensor<1x4x8x8xf32>
  %vr = linalg.generic {indexing_maps = [#id4, #seq, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%vc, %cos : tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) outs(%e4 : tensor<1x4x8x8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %m = arith.addf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<1x4x8x8xf32>
  %v3 = tensor.collapse_shape %vr [[0, 1], [2], [3]] : tensor<1x4x8x8xf32> into tensor<4x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v3 : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%f3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 4, 8, 8] : tensor<4x8x8xf32> into tensor<1x4x8x8xf32>
  return %o4 : tensor<1x4x8x8xf32>
}
