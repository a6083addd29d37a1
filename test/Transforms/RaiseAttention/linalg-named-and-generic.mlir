// Forms torch-mlir does not emit but other frontends and hand-written IR do:
// linalg.softmax, contractions as linalg.generic (einsum), 2-D linalg.matmul,
// dropout spelled with select, masks the attributes cannot express.
// RUN: flashfuse-opt --flash-raise-attention --split-input-file %s | FileCheck %s

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>

// CHECK-LABEL: func @einsum_softmax
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x16x8xf32>, %[[K:.*]]: tensor<2x4x16x8xf32>, %[[V:.*]]: tensor<2x4x16x8xf32>)
// CHECK: %[[O:.*]] = flash.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f32}
// CHECK-NOT: linalg.softmax
// CHECK: return %[[O]]
func.func @einsum_softmax(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>,
                          %v: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.125 : f32
  %es = tensor.empty() : tensor<2x4x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) outs(%fs : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x16x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<2x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%scaled : tensor<2x4x16x16xf32>)
      outs(%es : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %eo = tensor.empty() : tensor<2x4x16x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) outs(%fo : tensor<2x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// One head with 2-D matmuls: unit batch and head dims are added around the
// op and dropped after it; K is read before its transpose, as [S, D].
// CHECK-LABEL: func @single_head_2d
// CHECK-DAG: %[[Q4:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 16, 8]
// CHECK-DAG: %[[K4:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 16, 8]
// CHECK-DAG: %[[V4:.*]] = tensor.expand_shape %arg2 {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 16, 8]
// CHECK: %[[O:.*]] = flash.attention %[[Q4]], %[[K4]], %[[V4]] {scale = 1.000000e+00 : f32}
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[O]] {{\[\[}}0, 1, 2], [3]] : tensor<1x1x16x8xf32> into tensor<16x8xf32>
// CHECK: return %[[R]]
func.func @single_head_2d(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>,
                          %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x16xf32>
  %kt = linalg.transpose ins(%k : tensor<16x8xf32>) outs(%ekt : tensor<8x16xf32>) permutation = [1, 0]
  %es = tensor.empty() : tensor<16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<16x8xf32>, tensor<8x16xf32>) outs(%fs : tensor<16x16xf32>) -> tensor<16x16xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<16x16xf32>) outs(%es : tensor<16x16xf32>) -> tensor<16x16xf32>
  %eo = tensor.empty() : tensor<16x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<16x8xf32>) -> tensor<16x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%fo : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// -----

#id3 = affine_map<(n, i, j) -> (n, i, j)>

// Dropout as select(keep, 1, 0) * 1 / (1 - p) with p = 0.2; Kᵀ is given
// pre-transposed ([N, D, S]), which k_perm absorbs.
// CHECK-LABEL: func @dropout_select
// CHECK: %[[SEED:.*]] = arith.constant 0 : i64
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} seed(%[[SEED]]) {dropout_p = 2.000000e-01 : f32, k_perm = array<i64: 0, 1, 3, 2>, scale = 1.000000e+00 : f32}
// CHECK-NOT: arith.select
func.func @dropout_select(%q: tensor<4x16x8xf32>, %kt: tensor<4x8x16xf32>,
                          %v: tensor<4x16x8xf32>, %keep: tensor<4x16x16xi1>) -> tensor<4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %inv = arith.constant 1.25 : f32
  %es = tensor.empty() : tensor<4x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x16x8xf32>, tensor<4x8x16xf32>) outs(%fs : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x16x16xf32>) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %d = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %keep : tensor<4x16x16xf32>, tensor<4x16x16xi1>) outs(%es : tensor<4x16x16xf32>) {
  ^bb0(%a: f32, %m: i1, %o: f32):
    %k = arith.select %m, %one, %zero : f32
    %x = arith.mulf %a, %k : f32
    %y = arith.mulf %x, %inv : f32
    linalg.yield %y : f32
  } -> tensor<4x16x16xf32>
  %eo = tensor.empty() : tensor<4x16x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %o = linalg.batch_matmul ins(%d, %v : tensor<4x16x16xf32>, tensor<4x16x8xf32>) outs(%fo : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}

// -----

#id3 = affine_map<(n, i, j) -> (n, i, j)>
#ji = affine_map<(n, i, j) -> (j, i)>

// A boolean mask stored key-major ([Sk, Sq]) is no projection of
// [B, H, Sq, Sk]: it is read in a mask_mod region instead of copied.
// CHECK-LABEL: func @transposed_mask
// CHECK: flash.attention %{{.*}} {k_perm = array<i64: 0, 1, 3, 2>, scale = 1.000000e+00 : f32}
// CHECK-SAME: mask_mod
// CHECK: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: %[[M:.*]] = tensor.extract %arg3[%[[J]], %[[I]]] : tensor<16x16xi1>
// CHECK: flash.yield %[[M]] : i1
func.func @transposed_mask(%q: tensor<4x16x8xf32>, %kt: tensor<4x8x16xf32>,
                           %v: tensor<4x16x8xf32>, %mask: tensor<16x16xi1>) -> tensor<4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<4x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x16x8xf32>, tensor<4x8x16xf32>) outs(%fs : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id3, #ji, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<4x16x16xf32>, tensor<16x16xi1>) outs(%es : tensor<4x16x16xf32>) {
  ^bb0(%a: f32, %m: i1, %o: f32):
    %r = arith.select %m, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<4x16x16xf32>) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %eo = tensor.empty() : tensor<4x16x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x16x16xf32>, tensor<4x16x8xf32>) outs(%fo : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}

// -----

#id3 = affine_map<(n, i, j) -> (n, i, j)>

// A block-diagonal (document) mask from iota: i / 8 == j / 8 is no band,
// so it becomes mask_mod; j < i (strictly below the diagonal) is a band no
// attribute places, so it joins mask_mod too.
// CHECK-LABEL: func @document_mask
// CHECK: flash.attention %{{.*}} {k_perm = array<i64: 0, 1, 3, 2>, scale = 1.000000e+00 : f32}
// CHECK-NOT: causal
// CHECK-SAME: mask_mod
// CHECK: arith.divsi
// CHECK: arith.cmpi eq
// CHECK: arith.cmpi slt
// CHECK: arith.andi
// CHECK: flash.yield %{{.*}} : i1
func.func @document_mask(%q: tensor<4x16x8xf32>, %kt: tensor<4x8x16xf32>,
                         %v: tensor<4x16x8xf32>) -> tensor<4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c8 = arith.constant 8 : index
  %es = tensor.empty() : tensor<4x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x16x8xf32>, tensor<4x8x16xf32>) outs(%fs : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x16x16xf32>) outs(%es : tensor<4x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %di = arith.divsi %i, %c8 : index
    %dj = arith.divsi %j, %c8 : index
    %same = arith.cmpi eq, %di, %dj : index
    %r = arith.select %same, %a, %ninf : f32
    %below = arith.cmpi slt, %j, %i : index
    %r2 = arith.select %below, %r, %ninf : f32
    linalg.yield %r2 : f32
  } -> tensor<4x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<4x16x16xf32>) outs(%es : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %eo = tensor.empty() : tensor<4x16x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x16x16xf32>, tensor<4x16x8xf32>) outs(%fo : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}
