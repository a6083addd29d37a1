// explain=true: every candidate whose softmax matched but which is not
// rewritten gets a remark naming the failed step and why.
// RUN: flashfuse-opt --flash-raise-attention="explain=true" --split-input-file --verify-diagnostics %s | FileCheck %s

// P is the right operand of the second matmul (Vᵀ·Pᵀ would need P
// transposed): not the op's P·V.
// CHECK-LABEL: func @p_on_the_right
// CHECK-NOT: flash.attention
func.func @p_on_the_right(%q: tensor<16x8xf32>, %kt: tensor<8x16xf32>,
                          %vt: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<16x8xf32>, tensor<8x16xf32>) outs(%fs : tensor<16x16xf32>) -> tensor<16x16xf32>
  // expected-remark @+1 {{flash-raise-attention: found a softmax but not an attention: P·V: the softmax result does not feed the left operand of a second matmul}}
  %p = linalg.softmax dimension(1) ins(%s : tensor<16x16xf32>) outs(%es : tensor<16x16xf32>) -> tensor<16x16xf32>
  %eo = tensor.empty() : tensor<8x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16xf32>) -> tensor<8x16xf32>
  %o = linalg.matmul ins(%vt, %p : tensor<8x16xf32>, tensor<16x16xf32>) outs(%fo : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %o : tensor<8x16xf32>
}

// -----

#id2 = affine_map<(i, j) -> (i, j)>

// Two score matrices summed: which one is Q·Kᵀ is ambiguous.
// CHECK-LABEL: func @two_score_matmuls
// CHECK-NOT: flash.attention
func.func @two_score_matmuls(%q: tensor<16x8xf32>, %kt: tensor<8x16xf32>,
                             %q2: tensor<16x8xf32>, %kt2: tensor<8x16xf32>,
                             %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s1 = linalg.matmul ins(%q, %kt : tensor<16x8xf32>, tensor<8x16xf32>) outs(%fs : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s2 = linalg.matmul ins(%q2, %kt2 : tensor<16x8xf32>, tensor<8x16xf32>) outs(%fs : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s1, %s2 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%es : tensor<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  // expected-remark @+1 {{two matmuls feed the softmax input; which is Q·Kᵀ is ambiguous}}
  %p = linalg.softmax dimension(1) ins(%s : tensor<16x16xf32>) outs(%es : tensor<16x16xf32>) -> tensor<16x16xf32>
  %eo = tensor.empty() : tensor<16x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<16x8xf32>) -> tensor<16x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%fo : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// -----

#id2 = affine_map<(i, j) -> (i, j)>
#ji = affine_map<(i, j) -> (j, i)>

// The score matrix is read transposed before the softmax.
// CHECK-LABEL: func @transposed_scores
// CHECK-NOT: flash.attention
func.func @transposed_scores(%q: tensor<16x8xf32>, %kt: tensor<8x16xf32>,
                             %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<16x8xf32>, tensor<8x16xf32>) outs(%fs : tensor<16x16xf32>) -> tensor<16x16xf32>
  %t = linalg.generic {indexing_maps = [#ji, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%es : tensor<16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<16x16xf32>
  // expected-remark @+1 {{the softmax is not over the key dim of Q·Kᵀ}}
  %p = linalg.softmax dimension(1) ins(%t : tensor<16x16xf32>) outs(%es : tensor<16x16xf32>) -> tensor<16x16xf32>
  %eo = tensor.empty() : tensor<16x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<16x8xf32>) -> tensor<16x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%fo : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// -----

// Only a max reduction, no softmax: not a candidate, so no remark.
// CHECK-LABEL: func @max_only
func.func @max_only(%x: tensor<4x16xf32>) -> tensor<4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.reduce { arith.maximumf } ins(%x : tensor<4x16xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
  return %m : tensor<4xf32>
}
