// flash-raise-attention on ALiBi biases (AlibiBias.cpp): slope[h] times
// a position becomes the op's alibi(...) operand where the op's
// -slope * |i + Sk - Sq - j| gives the same O; otherwise it stays in
// score_mod, with a remark under explain=true saying what differs.
// The fixtures of test/models/cases (also run before and after raising on
// the CPU by Integration/CPU/raise-cases.mlir):
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_alibi_causal.linalg.mlir | FileCheck %s --check-prefix=CAUSAL
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_alibi_symmetric.linalg.mlir | FileCheck %s --check-prefix=SYM
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_alibi_bloom.linalg.mlir | FileCheck %s --check-prefix=BLOOM
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_alibi_bottom_right.linalg.mlir | FileCheck %s --check-prefix=BR
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_alibi_mpt.linalg.mlir | FileCheck %s --check-prefix=MPT
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_alibi_decode.linalg.mlir | FileCheck %s --check-prefix=DECODE
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_alibi_causal.tosa.mlir | FileCheck %s --check-prefix=TOSA
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/cases/mod_alibi_decode_relative.linalg.mlir | FileCheck %s --check-prefix=RELATIVE
// The cases below:
// RUN: flashfuse-opt --flash-raise-attention="explain=true" --split-input-file --verify-diagnostics %s | FileCheck %s

// slope[h] * (j - i) under j <= i: the op's bias on every visible key.
// CAUSAL: flash.attention %arg0, %arg1, %arg2 alibi(%arg3 : tensor<4xf32>) {causal = #flash.causal<top_left>, scale = 2.500000e-01 : f32}
// CAUSAL-NOT: score_mod
// CAUSAL-NOT: mask_mod

// -slope[h] * |i - j| without a mask.
// SYM: flash.attention %arg0, %arg1, %arg2 alibi(%arg3 : tensor<4xf32>) {scale = 2.500000e-01 : f32}
// SYM-NOT: score_mod

// The BLOOM fixture: slope[b * 4 + h] * j, the slopes gathered to [B, H]; the bias
// added before the scale comes out with factor 1.
// BLOOM: %[[G:.*]] = tensor.generate
// BLOOM: ^bb0(%[[B:.*]]: index, %[[H:.*]]: index):
// BLOOM: %[[R:.*]] = arith.muli %[[B]], %{{.*}} : index
// BLOOM: %[[I:.*]] = arith.addi %[[R]], %[[H]] : index
// BLOOM: %[[X:.*]] = tensor.extract %arg3[%[[I]]] : tensor<8xf32>
// BLOOM-NEXT: tensor.yield %[[X]] : f32
// BLOOM: } : tensor<2x4xf32>
// BLOOM: flash.attention %arg0, %arg1, %arg2 alibi(%[[G]] : tensor<2x4xf32>) {causal = #flash.causal<top_left>, scale = 2.500000e-01 : f32}
// BLOOM-NOT: score_mod

// -slope[b, h] * |i + 8 - j| over 8 queries and 16 keys, in integers.
// BR: flash.attention %arg0, %arg1, %arg2 alibi(%arg3 : tensor<2x4xf32>) {scale = 2.500000e-01 : f32} : tensor<2x4x8x16xf32>
// BR-NOT: score_mod

// MPT's -slope * |j + 1 - Sk| keeps its sign under the causal mask: linear
// in j, the slopes as they are.
// MPT: flash.attention %arg0, %arg1, %arg2 alibi(%arg3 : tensor<4xf32>) {causal = #flash.causal<top_left>, scale = 2.500000e-01 : f32}
// MPT-NOT: score_mod

// The TOSA fixture: the positions a constant arange, the slopes a constant
// [1, H, 1, 1] gathered to [H].
// TOSA: %[[G:.*]] = tensor.generate
// TOSA: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x4x1x1xf32>
// TOSA: } : tensor<4xf32>
// TOSA: flash.attention %arg0, %arg1, %arg2 alibi(%[[G]] : tensor<4xf32>) {causal = #flash.causal<top_left>, scale = 2.500000e-01 : f32}
// TOSA-NOT: score_mod

// A decode step relative to its cache position: the KV-cache op with the
// slopes too.
// RELATIVE: flash.attention_kvcache %arg0, %arg1, %arg2, %{{.*}} alibi(%arg3 : tensor<4xf32>) {scale = 2.500000e-01 : f32}
// RELATIVE-NOT: score_mod

// A decode step: the KV-cache op with the slopes.
// DECODE: flash.attention_kvcache %arg0, %arg1, %arg2, %{{.*}} alibi(%arg3 : tensor<4xf32>) {scale = 2.500000e-01 : f32}

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#slope = affine_map<(b, h, i, j) -> (h)>

// Linear in j - i without a causal mask: keys past the diagonal would get
// +slope * distance where the op's ALiBi gives -slope * distance; kept.
// CHECK-LABEL: func @linear_not_causal
// CHECK: flash.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f32}
// CHECK-SAME: score_mod
// CHECK-NOT: alibi(

func.func @linear_not_causal(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %slopes: tensor<4xf32>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fs : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #slope, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<2x4x16x16xf32>, tensor<4xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %sl: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %d = arith.subi %j64, %i64 : i64
    %df = arith.sitofp %d : i64 to f32
    %bias = arith.mulf %sl, %df : f32
    %sc = arith.mulf %x, %c : f32
    %y = arith.addf %sc, %bias : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  %er = tensor.empty() : tensor<2x4x16xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%biased : tensor<2x4x16x16xf32>) outs(%fmax : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%biased, %mx : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x4x16x16xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x16x16xf32>) outs(%fsum : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %eo = tensor.empty() : tensor<2x4x16x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  // expected-remark @+1 {{flash-raise-attention: an ALiBi-shaped bias (slope x position) kept in score_mod, not the alibi operand: a bias linear in the key position without a causal mask: ALiBi's -slope * |distance| differs from it past the diagonal}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fo : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  return %out : tensor<2x4x16x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#slope = affine_map<(b, h, i, j) -> (h)>

// |i - j| over fewer queries than keys: measured from the top-left
// diagonal, where the op's ALiBi measures from j = i + Sk - Sq; kept.
// CHECK-LABEL: func @distance_top_left
// CHECK: score_mod
// CHECK-NOT: alibi(

func.func @distance_top_left(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %slopes: tensor<4xf32>) -> tensor<2x4x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x8x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x8x16xf32>, tensor<2x4x16x16xf32>) outs(%fs : tensor<2x4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8x16xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #slope, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<2x4x8x16xf32>, tensor<4xf32>) outs(%es : tensor<2x4x8x16xf32>) {
  ^bb0(%x: f32, %sl: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %d = arith.subi %i64, %j64 : i64
    %df = arith.sitofp %d : i64 to f32
    %ad = math.absf %df : f32
    %bias = arith.mulf %sl, %ad : f32
    %sc = arith.mulf %x, %c : f32
    %y = arith.subf %sc, %bias : f32
    linalg.yield %y : f32
  } -> tensor<2x4x8x16xf32>
  %er = tensor.empty() : tensor<2x4x8xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%biased : tensor<2x4x8x16xf32>) outs(%fmax : tensor<2x4x8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%biased, %mx : tensor<2x4x8x16xf32>, tensor<2x4x8xf32>) outs(%es : tensor<2x4x8x16xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x4x8x16xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x8x16xf32>) outs(%fsum : tensor<2x4x8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x8x16xf32>, tensor<2x4x8xf32>) outs(%es : tensor<2x4x8x16xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8x16xf32>
  %eo = tensor.empty() : tensor<2x4x8x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  // expected-remark @+1 {{flash-raise-attention: an ALiBi-shaped bias (slope x position) kept in score_mod, not the alibi operand: the distance is not measured from the diagonal j = i + Sk - Sq, where flash.attention's ALiBi measures it}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x8x16xf32>, tensor<2x4x16x16xf32>) outs(%fo : tensor<2x4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8x16xf32>
  return %out : tensor<2x4x8x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#slope = affine_map<(b, h, i, j) -> (h)>

// |2i - j| is no distance between a query and a key; kept.
// CHECK-LABEL: func @distance_uneven
// CHECK: score_mod
// CHECK-NOT: alibi(

func.func @distance_uneven(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %slopes: tensor<4xf32>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fs : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #slope, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<2x4x16x16xf32>, tensor<4xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %sl: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %i2 = arith.addi %i64, %i64 : i64
    %d = arith.subi %i2, %j64 : i64
    %df = arith.sitofp %d : i64 to f32
    %ad = math.absf %df : f32
    %bias = arith.mulf %sl, %ad : f32
    %sc = arith.mulf %x, %c : f32
    %y = arith.subf %sc, %bias : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  %er = tensor.empty() : tensor<2x4x16xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%biased : tensor<2x4x16x16xf32>) outs(%fmax : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%biased, %mx : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x4x16x16xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x16x16xf32>) outs(%fsum : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %eo = tensor.empty() : tensor<2x4x16x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  // expected-remark @+1 {{flash-raise-attention: an ALiBi-shaped bias (slope x position) kept in score_mod, not the alibi operand: the distance |a*i + b*j + c| does not weigh i and j alike}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fo : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  return %out : tensor<2x4x16x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#slope = affine_map<(b, h, i, j) -> (h)>

// |j - 8| under a causal mask changes sign among the visible keys
// (rows past 8): neither the op's distance nor linear; kept.
// CHECK-LABEL: func @distance_changes_sign
// CHECK: score_mod
// CHECK-NOT: alibi(

func.func @distance_changes_sign(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %slopes: tensor<4xf32>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fs : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #slope, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<2x4x16x16xf32>, tensor<4xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %sl: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %c8 = arith.constant 8 : i64
    %t = arith.subi %j64, %c8 : i64
    %tf = arith.sitofp %t : i64 to f32
    %ad = math.absf %tf : f32
    %bias = arith.mulf %ad, %sl : f32
    %sc = arith.mulf %x, %c : f32
    %y0 = arith.subf %sc, %bias : f32
    %keep = arith.cmpi sle, %j64, %i64 : i64
    %y = arith.select %keep, %y0, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  %er = tensor.empty() : tensor<2x4x16xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%biased : tensor<2x4x16x16xf32>) outs(%fmax : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%biased, %mx : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x4x16x16xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x16x16xf32>) outs(%fsum : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %eo = tensor.empty() : tensor<2x4x16x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  // expected-remark @+1 {{flash-raise-attention: an ALiBi-shaped bias (slope x position) kept in score_mod, not the alibi operand: the distance |a*i + b*j + c| does not weigh i and j alike}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fo : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  return %out : tensor<2x4x16x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#slope = affine_map<(b, h, i, j) -> (h)>
#pos = affine_map<(b, h, i, j) -> (0)>

// A distance from a position read at run time, |j - pos| (causal): its
// sign over the visible keys is unknown at compile time; kept.
// CHECK-LABEL: func @distance_from_a_read_position
// CHECK: score_mod
// CHECK-NOT: alibi(

func.func @distance_from_a_read_position(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %slopes: tensor<4xf32>, %pos: tensor<1xi64>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fs : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #slope, #pos, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes, %pos : tensor<2x4x16x16xf32>, tensor<4xf32>, tensor<1xi64>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %sl: f32, %p0: i64, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %rel = arith.subi %j64, %p0 : i64
    %rf = arith.sitofp %rel : i64 to f32
    %ad = math.absf %rf : f32
    %bias = arith.mulf %sl, %ad : f32
    %sc = arith.mulf %x, %c : f32
    %y0 = arith.subf %sc, %bias : f32
    %keep = arith.cmpi sle, %j64, %i64 : i64
    %y = arith.select %keep, %y0, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  %er = tensor.empty() : tensor<2x4x16xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%biased : tensor<2x4x16x16xf32>) outs(%fmax : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%biased, %mx : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x4x16x16xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x16x16xf32>) outs(%fsum : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %eo = tensor.empty() : tensor<2x4x16x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  // expected-remark @+1 {{flash-raise-attention: an ALiBi-shaped bias (slope x position) kept in score_mod, not the alibi operand: the distance reads a value of the row known only at run time}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fo : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  return %out : tensor<2x4x16x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#slope = affine_map<(b, h, i, j) -> (b)>

// One slope per sequence: [B, Hq] slopes gathered from it (causal).
// CHECK-LABEL: func @slope_per_batch
// CHECK: %[[G:.*]] = tensor.generate
// CHECK: ^bb0(%[[B:.*]]: index, %{{.*}}: index):
// CHECK: %[[X:.*]] = tensor.extract %arg3[%[[B]]] : tensor<2xf32>
// CHECK: tensor.yield %[[X]] : f32
// CHECK: } : tensor<2x4xf32>
// CHECK: flash.attention %arg0, %arg1, %arg2 alibi(%[[G]] : tensor<2x4xf32>)
// CHECK-NOT: score_mod

func.func @slope_per_batch(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %slopes: tensor<2xf32>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fs : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #slope, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<2x4x16x16xf32>, tensor<2xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %sl: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %d = arith.subi %j64, %i64 : i64
    %df = arith.sitofp %d : i64 to f32
    %bias = arith.mulf %sl, %df : f32
    %sc = arith.mulf %x, %c : f32
    %y0 = arith.addf %sc, %bias : f32
    %keep = arith.cmpi sle, %j64, %i64 : i64
    %y = arith.select %keep, %y0, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  %er = tensor.empty() : tensor<2x4x16xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%biased : tensor<2x4x16x16xf32>) outs(%fmax : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%biased, %mx : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x4x16x16xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x16x16xf32>) outs(%fsum : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %eo = tensor.empty() : tensor<2x4x16x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fo : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  return %out : tensor<2x4x16x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#slope = affine_map<(b, h, i, j) -> (h)>

// Slopes computed in the body from h, exp(-(h + 1) / 2): a tensor.generate
// of the formula (causal).
// CHECK-LABEL: func @slope_formula
// CHECK: %[[G:.*]] = tensor.generate
// CHECK: ^bb0(%[[H:.*]]: index):
// CHECK: arith.index_cast %[[H]]
// CHECK: math.exp
// CHECK: } : tensor<4xf32>
// CHECK: flash.attention %arg0, %arg1, %arg2 alibi(%[[G]] : tensor<4xf32>) {causal = #flash.causal<top_left>
// CHECK-NOT: score_mod

func.func @slope_formula(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %slopes: tensor<4xf32>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fs : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #slope, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<2x4x16x16xf32>, tensor<4xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %sl: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %h = linalg.index 1 : index
    %h64 = arith.index_cast %h : index to i64
    %one = arith.constant 1 : i64
    %h1 = arith.addi %h64, %one : i64
    %hf = arith.sitofp %h1 : i64 to f32
    %mhalf = arith.constant -0.5 : f32
    %e = arith.mulf %hf, %mhalf : f32
    %slope = math.exp %e : f32
    %d = arith.subi %j64, %i64 : i64
    %df = arith.sitofp %d : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %sc = arith.mulf %x, %c : f32
    %y0 = arith.addf %sc, %bias : f32
    %keep = arith.cmpi sle, %j64, %i64 : i64
    %y = arith.select %keep, %y0, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  %er = tensor.empty() : tensor<2x4x16xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%biased : tensor<2x4x16x16xf32>) outs(%fmax : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%biased, %mx : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x4x16x16xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x16x16xf32>) outs(%fsum : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %eo = tensor.empty() : tensor<2x4x16x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fo : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  return %out : tensor<2x4x16x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#slope = affine_map<(b, h, i, j) -> (h)>

// Half-precision slopes, halved: the operand is gathered in f32 and
// scaled (-0.5 * slope * |i - j|, causal).
// CHECK-LABEL: func @slopes_f16_scaled
// CHECK: %[[G:.*]] = tensor.generate
// CHECK: ^bb0(%[[H:.*]]: index):
// CHECK: %[[X:.*]] = tensor.extract %arg3[%[[H]]] : tensor<4xf16>
// CHECK: %[[E:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK: %[[F:.*]] = arith.mulf %[[E]], %{{.*}} : f32
// CHECK: tensor.yield %[[F]] : f32
// CHECK: } : tensor<4xf32>
// CHECK: flash.attention %arg0, %arg1, %arg2 alibi(%[[G]] : tensor<4xf32>) {causal = #flash.causal<top_left>, scale = 2.500000e-01 : f32}
// CHECK-NOT: score_mod

func.func @slopes_f16_scaled(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %slopes: tensor<4xf16>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fs : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #slope, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<2x4x16x16xf32>, tensor<4xf16>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %sl: f16, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %slh = arith.extf %sl : f16 to f32
    %d = arith.subi %i64, %j64 : i64
    %df = arith.sitofp %d : i64 to f32
    %ad = math.absf %df : f32
    %bias = arith.mulf %slh, %ad : f32
    %half = arith.constant 0.5 : f32
    %hb = arith.mulf %bias, %half : f32
    %sc = arith.mulf %x, %c : f32
    %y0 = arith.subf %sc, %hb : f32
    %keep = arith.cmpi sle, %j64, %i64 : i64
    %y = arith.select %keep, %y0, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  %er = tensor.empty() : tensor<2x4x16xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%biased : tensor<2x4x16x16xf32>) outs(%fmax : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%biased, %mx : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x4x16x16xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x16x16xf32>) outs(%fsum : tensor<2x4x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %eo = tensor.empty() : tensor<2x4x16x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%fo : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  return %out : tensor<2x4x16x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#slope = affine_map<(b, h, i, j) -> (h)>
#pos = affine_map<(b, h, i, j) -> (0)>

// Two query rows over a cache without a causal mask: the first row sees
// keys past its diagonal, where slope * j is no ALiBi; a dense op with the
// length mask and the bias in regions.
// CHECK-LABEL: func @decode_two_rows_not_causal
// CHECK-NOT: flash.attention_kvcache
// CHECK: flash.attention {{.*}}score_mod

func.func @decode_two_rows_not_causal(%q: tensor<2x4x2x16xf32>, %k: tensor<2x4x32x16xf32>, %v: tensor<2x4x32x16xf32>, %slopes: tensor<4xf32>, %pos: tensor<1xi64>) -> tensor<2x4x2x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x2x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x2x32xf32>) -> tensor<2x4x2x32xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x2x16xf32>, tensor<2x4x32x16xf32>) outs(%fs : tensor<2x4x2x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x2x32xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #slope, #pos, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes, %pos : tensor<2x4x2x32xf32>, tensor<4xf32>, tensor<1xi64>) outs(%es : tensor<2x4x2x32xf32>) {
  ^bb0(%x: f32, %sl: f32, %p0: i64, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %jf = arith.sitofp %j64 : i64 to f32
    %bias = arith.mulf %sl, %jf : f32
    %sc = arith.mulf %x, %c : f32
    %y0 = arith.addf %sc, %bias : f32
    %keep = arith.cmpi sle, %j64, %p0 : i64
    %y = arith.select %keep, %y0, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x2x32xf32>
  %er = tensor.empty() : tensor<2x4x2xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%biased : tensor<2x4x2x32xf32>) outs(%fmax : tensor<2x4x2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x2xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%biased, %mx : tensor<2x4x2x32xf32>, tensor<2x4x2xf32>) outs(%es : tensor<2x4x2x32xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x4x2x32xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x2x32xf32>) outs(%fsum : tensor<2x4x2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x2xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x2x32xf32>, tensor<2x4x2xf32>) outs(%es : tensor<2x4x2x32xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x4x2x32xf32>
  %eo = tensor.empty() : tensor<2x4x2x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x2x16xf32>) -> tensor<2x4x2x16xf32>
  // expected-remark @+2 {{flash-raise-attention: an ALiBi-shaped bias (slope x position) kept in score_mod, not the alibi operand: a bias linear in the key position without a causal mask: ALiBi's -slope * |distance| differs from it past the diagonal}}
  // expected-remark @+1 {{flash-raise-attention: dense flash.attention, not flash.attention_kvcache: flash.attention_kvcache has no bias or score_mod; the bias is not the op's ALiBi: a bias linear in the key position without a causal mask: ALiBi's -slope * |distance| differs from it past the diagonal}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x2x32xf32>, tensor<2x4x32x16xf32>) outs(%fo : tensor<2x4x2x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x2x16xf32>
  return %out : tensor<2x4x2x16xf32>
}
