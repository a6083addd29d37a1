// RUN: flashfuse-opt %s --flash-lower-naive | FileCheck %s

// Backward: P = exp(S - LSE) recomputed, dV = Pᵀ dO and dK = dXᵀ Q summed
// over the G query heads of each kv head (heads split [Hkv, G] by a
// reshape, not a copy), softcap's chain rule 1 - tanh², dBias summed over
// the broadcast dimensions of the bias.

// CHECK-DAG: #[[GQA_P:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d2)>
// CHECK-DAG: #[[GQA_Y:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d3)>
// CHECK-DAG: #[[DBIAS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-LABEL: func.func @grad
// CHECK-SAME: %[[DO:[a-z0-9]+]]: tensor<1x4x8x16xf32>, %[[Q:[a-z0-9]+]]: tensor<1x4x8x16xf32>
// P from the LSE: 0 for a row whose LSE is +inf.
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %{{.*}}, %[[INF]] : f32
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.select %[[EMPTY]]
// dV: (P)ᵀ dO reduced over (g, i).
// CHECK: %[[P5:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 8, 8]
// CHECK: %[[DO5:.*]] = tensor.expand_shape %[[DO]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 8, 16]
// CHECK: %[[DV:.*]] = linalg.generic {indexing_maps = [#[[GQA_P]], #[[GQA_Y]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[P5]], %[[DO5]] :
// D = rowsum(dO ∘ O).
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[DO]], %arg4 :
// dS = P (dP - D).
// CHECK: %[[DS:.*]] = linalg.generic
// CHECK: arith.subf
// CHECK: arith.mulf
// Softcap: dX = dS (1 - tanh²(scale · dot / cap)).
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} ins(%[[DS]], %{{.*}} :
// CHECK: math.tanh
// CHECK: %[[SQ:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: arith.subf %{{.*}}, %[[SQ]] : f32
// dK from the head-split dX and Q.
// CHECK: tensor.expand_shape %[[DX]]
// CHECK: tensor.expand_shape %[[Q]]
// dBias: reduce dS over the size-1 dims (B and Sq), put them back.
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[DBIAS]]], iterator_types = ["reduction", "parallel", "reduction", "parallel"]} ins(%[[DS]] : tensor<1x4x8x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: %[[DB4:.*]] = tensor.insert_slice %[[DB]] into %{{.*}}[0, 0, 0, 0] [1, 4, 1, 8] [1, 1, 1, 1] : tensor<4x8xf32> into tensor<1x4x1x8xf32>
// CHECK: return %{{.*}}, %{{.*}}, %[[DV]], %[[DB4]]
func.func @grad(%do: tensor<1x4x8x16xf32>, %q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>,
                %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %bias: tensor<1x4x1x8xf32>)
    -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x1x8xf32>) {
  %dq, %dk, %dv, %db = flash.attention_grad %do, %q, %k, %v, %o, %lse bias(%bias : tensor<1x4x1x8xf32>) {softcap = 20.0 : f32}
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x1x8xf32>
  return %dq, %dk, %dv, %db : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x1x8xf32>
}

// A score_mod of the form score + f(b, h, i, j) has derivative 1 and is
// lowered; the recomputed scores still apply it.
// CHECK-LABEL: func.func @grad_additive_score_mod
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: arith.subi %[[J]], %[[I]] : index
// CHECK-NOT: flash.attention_grad
func.func @grad_additive_score_mod(%do: tensor<1x1x4x8xf32>, %q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>,
                                   %o: tensor<1x1x4x8xf32>, %lse: tensor<1x1x4xf32>)
    -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse
      : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>
      -> tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %r = arith.subf %s, %df : f32
        flash.yield %r : f32
      }
  return %dq, %dk, %dv : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}

// fma(f, g, score) is additive too (flashfuse.alibi's -slope * |i - j| +
// score).
// CHECK-LABEL: func.func @grad_fma_score_mod
// CHECK: math.absf
// CHECK: math.fma
// CHECK-NOT: flash.attention_grad
func.func @grad_fma_score_mod(%do: tensor<1x1x4x8xf32>, %q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>,
                              %o: tensor<1x1x4x8xf32>, %lse: tensor<1x1x4xf32>)
    -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse
      : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>
      -> tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %a = math.absf %df : f32
        %m = arith.constant -0.5 : f32
        %r = math.fma %m, %a, %s : f32
        flash.yield %r : f32
      }
  return %dq, %dk, %dv : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}
