// Hand-written in torch-mlir's linalg-on-tensors form (as
// scripts/export_models.py's eager cases export), a sliding window
// with global tokens: masked_fill(~(((i - j).abs() < 3) | (j < 2) | (i < 2)), -inf)
// from arange.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0) -> (d0)>
#map2 = affine_map<(d0, d1) -> (0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> ()>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
module {
  func.func @eager_window_global(%arg0: tensor<2x4x16x16xf32>, %arg1: tensor<2x4x16x16xf32>, %arg2: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
    %c0_i64 = arith.constant 0 : i64
    %c2_i64 = arith.constant 2 : i64
    %c3_i64 = arith.constant 3 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %true = arith.constant true
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_2 = arith.constant 4.000000e+00 : f32
    %0 = tensor.empty() : tensor<2x4x16x16xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<2x4x16x16xf32>) outs(%0 : tensor<2x4x16x16xf32>) permutation = [0, 1, 3, 2] 
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
    %collapsed_3 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
    %1 = tensor.empty() : tensor<8x16x16xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
    %3 = linalg.batch_matmul ins(%collapsed, %collapsed_3 : tensor<8x16x16xf32>, tensor<8x16x16xf32>) outs(%2 : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
    %expanded = tensor.expand_shape %3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 16] : tensor<8x16x16xf32> into tensor<2x4x16x16xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x4x16x16xf32>) outs(%0 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %23 = arith.divf %in, %cst_2 : f32
      linalg.yield %23 : f32
    } -> tensor<2x4x16x16xf32>
    %5 = tensor.empty() : tensor<16xi64>
    %6 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%5 : tensor<16xi64>) {
    ^bb0(%out: i64):
      %23 = linalg.index 0 : index
      %24 = arith.index_cast %23 : index to i64
      linalg.yield %24 : i64
    } -> tensor<16xi64>
    %expanded_4 = tensor.expand_shape %6 [[0, 1]] output_shape [16, 1] : tensor<16xi64> into tensor<16x1xi64>
    %expanded_5 = tensor.expand_shape %6 [[0, 1]] output_shape [1, 16] : tensor<16xi64> into tensor<1x16xi64>
    %7 = tensor.empty() : tensor<16x16xi1>
    %w0 = tensor.empty() : tensor<16x16xi64>
    %w1 = linalg.generic {indexing_maps = [#map3, #map2, #map4], iterator_types = ["parallel", "parallel"]} ins(%expanded_4, %expanded_5 : tensor<16x1xi64>, tensor<1x16xi64>) outs(%w0 : tensor<16x16xi64>) {
    ^bb0(%in: i64, %in_10: i64, %out: i64):
      %23 = arith.subi %in, %in_10 : i64
      linalg.yield %23 : i64
    } -> tensor<16x16xi64>
    %w2 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%w1 : tensor<16x16xi64>) outs(%w0 : tensor<16x16xi64>) {
    ^bb0(%in: i64, %out: i64):
      %23 = math.absi %in : i64
      linalg.yield %23 : i64
    } -> tensor<16x16xi64>
    %ma = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%w2 : tensor<16x16xi64>) outs(%7 : tensor<16x16xi1>) {
    ^bb0(%in: i64, %out: i1):
      %23 = arith.cmpi slt, %in, %c3_i64 : i64
      linalg.yield %23 : i1
    } -> tensor<16x16xi1>
    %mb = linalg.generic {indexing_maps = [#map2, #map4], iterator_types = ["parallel", "parallel"]} ins(%expanded_5 : tensor<1x16xi64>) outs(%7 : tensor<16x16xi1>) {
    ^bb0(%in: i64, %out: i1):
      %23 = arith.cmpi slt, %in, %c2_i64 : i64
      linalg.yield %23 : i1
    } -> tensor<16x16xi1>
    %mc = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%expanded_4 : tensor<16x1xi64>) outs(%7 : tensor<16x16xi1>) {
    ^bb0(%in: i64, %out: i1):
      %23 = arith.cmpi slt, %in, %c2_i64 : i64
      linalg.yield %23 : i1
    } -> tensor<16x16xi1>
    %md = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%ma, %mb : tensor<16x16xi1>, tensor<16x16xi1>) outs(%7 : tensor<16x16xi1>) {
    ^bb0(%in: i1, %in_10: i1, %out: i1):
      %23 = arith.ori %in, %in_10 : i1
      linalg.yield %23 : i1
    } -> tensor<16x16xi1>
    %8 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%md, %mc : tensor<16x16xi1>, tensor<16x16xi1>) outs(%7 : tensor<16x16xi1>) {
    ^bb0(%in: i1, %in_10: i1, %out: i1):
      %23 = arith.ori %in, %in_10 : i1
      linalg.yield %23 : i1
    } -> tensor<16x16xi1>
    %9 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<16x16xi1>) outs(%7 : tensor<16x16xi1>) {
    ^bb0(%in: i1, %out: i1):
      %23 = arith.xori %in, %true : i1
      linalg.yield %23 : i1
    } -> tensor<16x16xi1>
    %10 = linalg.generic {indexing_maps = [#map5, #map6, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9, %cst_1, %4 : tensor<16x16xi1>, tensor<f32>, tensor<2x4x16x16xf32>) outs(%0 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: i1, %in_10: f32, %in_11: f32, %out: f32):
      %23 = arith.select %in, %in_10, %in_11 : f32
      linalg.yield %23 : f32
    } -> tensor<2x4x16x16xf32>
    %11 = tensor.empty() : tensor<2x4x16xi64>
    %12 = linalg.fill ins(%c0_i64 : i64) outs(%11 : tensor<2x4x16xi64>) -> tensor<2x4x16xi64>
    %13 = tensor.empty() : tensor<2x4x16xf32>
    %14 = linalg.fill ins(%cst_0 : f32) outs(%13 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
    %15:2 = linalg.generic {indexing_maps = [#map, #map7, #map7], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%10 : tensor<2x4x16x16xf32>) outs(%14, %12 : tensor<2x4x16xf32>, tensor<2x4x16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_10: i64):
      %23 = linalg.index 3 : index
      %24 = arith.index_cast %23 : index to i64
      %25 = arith.maximumf %in, %out : f32
      %26 = arith.cmpf ogt, %in, %out : f32
      %27 = arith.select %26, %24, %out_10 : i64
      linalg.yield %25, %27 : f32, i64
    } -> (tensor<2x4x16xf32>, tensor<2x4x16xi64>)
    %expanded_6 = tensor.expand_shape %15#0 [[0], [1], [2, 3]] output_shape [2, 4, 16, 1] : tensor<2x4x16xf32> into tensor<2x4x16x1xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map8, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10, %expanded_6 : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) outs(%0 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %23 = arith.subf %in, %in_10 : f32
      linalg.yield %23 : f32
    } -> tensor<2x4x16x16xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%16 : tensor<2x4x16x16xf32>) outs(%0 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %23 = math.exp %in : f32
      linalg.yield %23 : f32
    } -> tensor<2x4x16x16xf32>
    %18 = tensor.empty() : tensor<2x4x16x1xf32>
    %19 = linalg.fill ins(%cst : f32) outs(%18 : tensor<2x4x16x1xf32>) -> tensor<2x4x16x1xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%17 : tensor<2x4x16x16xf32>) outs(%19 : tensor<2x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %23 = arith.addf %in, %out : f32
      linalg.yield %23 : f32
    } -> tensor<2x4x16x1xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map8, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17, %20 : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) outs(%0 : tensor<2x4x16x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %23 = arith.divf %in, %in_10 : f32
      linalg.yield %23 : f32
    } -> tensor<2x4x16x16xf32>
    %collapsed_7 = tensor.collapse_shape %21 [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
    %collapsed_8 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
    %22 = linalg.batch_matmul ins(%collapsed_7, %collapsed_8 : tensor<8x16x16xf32>, tensor<8x16x16xf32>) outs(%2 : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
    %expanded_9 = tensor.expand_shape %22 [[0, 1], [2], [3]] output_shape [2, 4, 16, 16] : tensor<8x16x16xf32> into tensor<2x4x16x16xf32>
    return %expanded_9 : tensor<2x4x16x16xf32>
  }
}
