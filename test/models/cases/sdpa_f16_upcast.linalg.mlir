// torch-mlir 20261001's fx.export_and_import (linalg-on-tensors, on the CPU) of
// scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True) with
// f16 q [1, 8, 64, 64], k = v [1, 2, 64, 64]: PyTorch's CPU decomposition
// computes it in f32 on up-cast inputs (locations dropped).
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0) -> (d0)>
#map2 = affine_map<(d0, d1) -> (0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1) -> ()>
#map6 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#map7 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map9 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map10 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
module {
  func.func @sdpa_f16_upcast(%arg0: tensor<1x8x64x64xf16>, %arg1: tensor<1x2x64x64xf16>, %arg2: tensor<1x2x64x64xf16>) -> tensor<1x8x64x64xf16> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x8x64x64xf32>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_3 = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_4 = arith.constant dense<true> : tensor<64x64xi1>
    %cst_5 = arith.constant 0xFFF0000000000000 : f64
    %cst_6 = arith.constant 0.35355339059327379 : f64
    %0 = tensor.empty() : tensor<1x8x64x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x8x64x64xf16>) outs(%0 : tensor<1x8x64x64xf32>) {
    ^bb0(%in: f16, %out: f32):
      %41 = arith.extf %in : f16 to f32
      linalg.yield %41 : f32
    } -> tensor<1x8x64x64xf32>
    %2 = tensor.empty() : tensor<1x2x64x64xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : tensor<1x2x64x64xf16>) outs(%2 : tensor<1x2x64x64xf32>) {
    ^bb0(%in: f16, %out: f32):
      %41 = arith.extf %in : f16 to f32
      linalg.yield %41 : f32
    } -> tensor<1x2x64x64xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1 : tensor<1x8x64x64xf32>) outs(%0 : tensor<1x8x64x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %41 = arith.truncf %cst_6 : f64 to f32
      %42 = arith.mulf %in, %41 : f32
      linalg.yield %42 : f32
    } -> tensor<1x8x64x64xf32>
    %5 = tensor.empty() : tensor<64xi64>
    %6 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%5 : tensor<64xi64>) {
    ^bb0(%out: i64):
      %41 = linalg.index 0 : index
      %42 = arith.index_cast %41 : index to i64
      linalg.yield %42 : i64
    } -> tensor<64xi64>
    %expanded = tensor.expand_shape %6 [[0, 1]] output_shape [1, 64] : tensor<64xi64> into tensor<1x64xi64>
    %expanded_7 = tensor.expand_shape %6 [[0, 1]] output_shape [64, 1] : tensor<64xi64> into tensor<64x1xi64>
    %7 = tensor.empty() : tensor<64x64xi64>
    %8 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel"]} ins(%expanded, %expanded_7 : tensor<1x64xi64>, tensor<64x1xi64>) outs(%7 : tensor<64x64xi64>) {
    ^bb0(%in: i64, %in_15: i64, %out: i64):
      %41 = arith.subi %in, %in_15 : i64
      linalg.yield %41 : i64
    } -> tensor<64x64xi64>
    %9 = tensor.empty() : tensor<64x64xi1>
    %10 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<64x64xi64>) outs(%9 : tensor<64x64xi1>) {
    ^bb0(%in: i64, %out: i1):
      %41 = arith.cmpi sle, %in, %c0_i64 : i64
      linalg.yield %41 : i1
    } -> tensor<64x64xi1>
    %11 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%10, %cst_4 : tensor<64x64xi1>, tensor<64x64xi1>) outs(%9 : tensor<64x64xi1>) {
    ^bb0(%in: i1, %in_15: i1, %out: i1):
      %41 = arith.andi %in, %in_15 : i1
      linalg.yield %41 : i1
    } -> tensor<64x64xi1>
    %12 = tensor.empty() : tensor<64x64xf32>
    %13 = linalg.generic {indexing_maps = [#map4, #map5, #map5, #map4], iterator_types = ["parallel", "parallel"]} ins(%11, %cst_2, %cst_3 : tensor<64x64xi1>, tensor<f32>, tensor<f32>) outs(%12 : tensor<64x64xf32>) {
    ^bb0(%in: i1, %in_15: f32, %in_16: f32, %out: f32):
      %41 = arith.select %in, %in_15, %in_16 : f32
      linalg.yield %41 : f32
    } -> tensor<64x64xf32>
    %14 = tensor.empty() : tensor<1x2x4x64x64xf32>
    %15 = linalg.generic {indexing_maps = [#map6, #map7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%3 : tensor<1x2x64x64xf32>) outs(%14 : tensor<1x2x4x64x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x2x4x64x64xf32>
    %collapsed = tensor.collapse_shape %15 [[0], [1, 2], [3], [4]] : tensor<1x2x4x64x64xf32> into tensor<1x8x64x64xf32>
    %transposed = linalg.transpose ins(%collapsed : tensor<1x8x64x64xf32>) outs(%0 : tensor<1x8x64x64xf32>) permutation = [0, 1, 3, 2] 
    %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<1x8x64x64xf32>) outs(%0 : tensor<1x8x64x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %41 = arith.truncf %cst_6 : f64 to f32
      %42 = arith.mulf %in, %41 : f32
      linalg.yield %42 : f32
    } -> tensor<1x8x64x64xf32>
    %collapsed_8 = tensor.collapse_shape %4 [[0, 1], [2], [3]] : tensor<1x8x64x64xf32> into tensor<8x64x64xf32>
    %collapsed_9 = tensor.collapse_shape %16 [[0, 1], [2], [3]] : tensor<1x8x64x64xf32> into tensor<8x64x64xf32>
    %17 = tensor.empty() : tensor<8x64x64xf32>
    %18 = linalg.fill ins(%cst : f32) outs(%17 : tensor<8x64x64xf32>) -> tensor<8x64x64xf32>
    %19 = linalg.batch_matmul ins(%collapsed_8, %collapsed_9 : tensor<8x64x64xf32>, tensor<8x64x64xf32>) outs(%18 : tensor<8x64x64xf32>) -> tensor<8x64x64xf32>
    %expanded_10 = tensor.expand_shape %19 [[0, 1], [2], [3]] output_shape [1, 8, 64, 64] : tensor<8x64x64xf32> into tensor<1x8x64x64xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map8, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_10, %13 : tensor<1x8x64x64xf32>, tensor<64x64xf32>) outs(%0 : tensor<1x8x64x64xf32>) {
    ^bb0(%in: f32, %in_15: f32, %out: f32):
      %41 = arith.addf %in, %in_15 : f32
      linalg.yield %41 : f32
    } -> tensor<1x8x64x64xf32>
    %21 = tensor.empty() : tensor<1x8x64xi64>
    %22 = linalg.fill ins(%c0_i64 : i64) outs(%21 : tensor<1x8x64xi64>) -> tensor<1x8x64xi64>
    %23 = tensor.empty() : tensor<1x8x64xf32>
    %24 = linalg.fill ins(%cst_0 : f32) outs(%23 : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
    %25:2 = linalg.generic {indexing_maps = [#map, #map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<1x8x64x64xf32>) outs(%24, %22 : tensor<1x8x64xf32>, tensor<1x8x64xi64>) {
    ^bb0(%in: f32, %out: f32, %out_15: i64):
      %41 = linalg.index 3 : index
      %42 = arith.index_cast %41 : index to i64
      %43 = arith.maximumf %in, %out : f32
      %44 = arith.cmpf ogt, %in, %out : f32
      %45 = arith.select %44, %42, %out_15 : i64
      linalg.yield %43, %45 : f32, i64
    } -> (tensor<1x8x64xf32>, tensor<1x8x64xi64>)
    %expanded_11 = tensor.expand_shape %25#0 [[0], [1], [2, 3]] output_shape [1, 8, 64, 1] : tensor<1x8x64xf32> into tensor<1x8x64x1xf32>
    %26 = linalg.generic {indexing_maps = [#map, #map10, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20, %expanded_11 : tensor<1x8x64x64xf32>, tensor<1x8x64x1xf32>) outs(%0 : tensor<1x8x64x64xf32>) {
    ^bb0(%in: f32, %in_15: f32, %out: f32):
      %41 = arith.subf %in, %in_15 : f32
      linalg.yield %41 : f32
    } -> tensor<1x8x64x64xf32>
    %27 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26 : tensor<1x8x64x64xf32>) outs(%0 : tensor<1x8x64x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %41 = math.exp %in : f32
      linalg.yield %41 : f32
    } -> tensor<1x8x64x64xf32>
    %28 = tensor.empty() : tensor<1x8x64x1xf32>
    %29 = linalg.fill ins(%cst : f32) outs(%28 : tensor<1x8x64x1xf32>) -> tensor<1x8x64x1xf32>
    %30 = linalg.generic {indexing_maps = [#map, #map10], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%27 : tensor<1x8x64x64xf32>) outs(%29 : tensor<1x8x64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %41 = arith.addf %in, %out : f32
      linalg.yield %41 : f32
    } -> tensor<1x8x64x1xf32>
    %31 = linalg.generic {indexing_maps = [#map, #map10, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27, %30 : tensor<1x8x64x64xf32>, tensor<1x8x64x1xf32>) outs(%0 : tensor<1x8x64x64xf32>) {
    ^bb0(%in: f32, %in_15: f32, %out: f32):
      %41 = arith.divf %in, %in_15 : f32
      linalg.yield %41 : f32
    } -> tensor<1x8x64x64xf32>
    %32 = tensor.empty() : tensor<1x8x64x64xi1>
    %33 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20 : tensor<1x8x64x64xf32>) outs(%32 : tensor<1x8x64x64xi1>) {
    ^bb0(%in: f32, %out: i1):
      %41 = arith.extf %in : f32 to f64
      %42 = arith.cmpf oeq, %41, %cst_5 : f64
      linalg.yield %42 : i1
    } -> tensor<1x8x64x64xi1>
    %34 = tensor.empty() : tensor<1x8x64x1xi1>
    %35 = linalg.fill ins(%true : i1) outs(%34 : tensor<1x8x64x1xi1>) -> tensor<1x8x64x1xi1>
    %36 = linalg.generic {indexing_maps = [#map, #map10], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%33 : tensor<1x8x64x64xi1>) outs(%35 : tensor<1x8x64x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %41 = arith.andi %in, %out : i1
      linalg.yield %41 : i1
    } -> tensor<1x8x64x1xi1>
    %37 = linalg.generic {indexing_maps = [#map10, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%36, %cst_1, %31 : tensor<1x8x64x1xi1>, tensor<1x8x64x64xf32>, tensor<1x8x64x64xf32>) outs(%0 : tensor<1x8x64x64xf32>) {
    ^bb0(%in: i1, %in_15: f32, %in_16: f32, %out: f32):
      %41 = arith.select %in, %in_15, %in_16 : f32
      linalg.yield %41 : f32
    } -> tensor<1x8x64x64xf32>
    %collapsed_12 = tensor.collapse_shape %37 [[0, 1], [2], [3]] : tensor<1x8x64x64xf32> into tensor<8x64x64xf32>
    %collapsed_13 = tensor.collapse_shape %15 [[0, 1, 2], [3], [4]] : tensor<1x2x4x64x64xf32> into tensor<8x64x64xf32>
    %38 = linalg.batch_matmul ins(%collapsed_12, %collapsed_13 : tensor<8x64x64xf32>, tensor<8x64x64xf32>) outs(%18 : tensor<8x64x64xf32>) -> tensor<8x64x64xf32>
    %expanded_14 = tensor.expand_shape %38 [[0, 1], [2], [3]] output_shape [1, 8, 64, 64] : tensor<8x64x64xf32> into tensor<1x8x64x64xf32>
    %39 = tensor.empty() : tensor<1x8x64x64xf16>
    %40 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_14 : tensor<1x8x64x64xf32>) outs(%39 : tensor<1x8x64x64xf16>) {
    ^bb0(%in: f32, %out: f16):
      %41 = arith.truncf %in : f32 to f16
      linalg.yield %41 : f16
    } -> tensor<1x8x64x64xf16>
    return %40 : tensor<1x8x64x64xf16>
  }
}

