// Hand-written in the form torch-mlir exports eager attention (linalg on
// tensors, explicit softmax).
// Slopes computed from the head index in the bias itself, exp(-(h + 1) / 2),
// times j - i under a causal mask (the slopes argument is unused).
#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#slope = affine_map<(b, h, i, j) -> (h)>
module {

func.func @mod_alibi_slope_formula(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %slopes: tensor<4xf32>) -> tensor<2x4x16x16xf32> {
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
}
