// Hand-written in the form torch-mlir exports eager attention (linalg on
// tensors, explicit softmax).
// A decode step whose ALiBi is relative to the cache position read from a
// tensor, slope[h] * (j - pos): the position a run-time value of the row,
// which the softmax cancels; flash.attention_kvcache with the slopes.
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
module {

func.func @mod_alibi_decode_relative(%q: tensor<2x4x1x16xf32>, %k: tensor<2x4x32x16xf32>, %v: tensor<2x4x32x16xf32>, %slopes: tensor<4xf32>, %pos: tensor<1xi64>) -> tensor<2x4x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x1x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x1x32xf32>) -> tensor<2x4x1x32xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x1x16xf32>, tensor<2x4x32x16xf32>) outs(%fs : tensor<2x4x1x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x32xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #slope, #pos, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes, %pos : tensor<2x4x1x32xf32>, tensor<4xf32>, tensor<1xi64>) outs(%es : tensor<2x4x1x32xf32>) {
  ^bb0(%x: f32, %sl: f32, %p0: i64, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %rel = arith.subi %j64, %p0 : i64
    %rf = arith.sitofp %rel : i64 to f32
    %bias = arith.mulf %sl, %rf : f32
    %sc = arith.mulf %x, %c : f32
    %y0 = arith.addf %sc, %bias : f32
    %keep = arith.cmpi sle, %j64, %p0 : i64
    %y = arith.select %keep, %y0, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x1x32xf32>
  %er = tensor.empty() : tensor<2x4x1xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%biased : tensor<2x4x1x32xf32>) outs(%fmax : tensor<2x4x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%biased, %mx : tensor<2x4x1x32xf32>, tensor<2x4x1xf32>) outs(%es : tensor<2x4x1x32xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x4x1x32xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x1x32xf32>) outs(%fsum : tensor<2x4x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x1x32xf32>, tensor<2x4x1xf32>) outs(%es : tensor<2x4x1x32xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x32xf32>
  %eo = tensor.empty() : tensor<2x4x1x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x1x16xf32>) -> tensor<2x4x1x16xf32>
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x1x32xf32>, tensor<2x4x32x16xf32>) outs(%fo : tensor<2x4x1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x16xf32>
  return %out : tensor<2x4x1x16xf32>
}
}
