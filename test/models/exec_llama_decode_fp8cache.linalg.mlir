// Derived from exec_llama_decode.linalg.mlir by scripts/derive_fp8cache_fixture.py:
// an f16 model whose KV cache is f8E4M3FN with per kv head scales, quantised
// as it is written and dequantised before attention.
#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0) -> (d0)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
#map6 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map7 = affine_map<(d0, d1, d2) -> (d2)>
#map8 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
#map9 = affine_map<(d0, d1, d2, d3) -> (d0, d2)>
#map10 = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
#map11 = affine_map<(d0, d1, d2, d3) -> (d2)>
#map12 = affine_map<(d0, d1, d2, d3) -> (d3)>
#map13 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#map14 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map15 = affine_map<(d0, d1, d2, d3) -> ()>
#map16 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#map17 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#fp8_head = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
module {
  func.func @exec_llama_decode_fp8cache(%arg0: tensor<2x1xi64>, %arg1: tensor<1xi64>, %arg2: tensor<2x2x32x8xf8E4M3FN>, %arg3: tensor<2x2x32x8xf8E4M3FN>) -> tensor<2x1x32xf16> {
    %k_scale0 = arith.constant dense<[[[[0.5]], [[2.0]]]]> : tensor<1x2x1x1xf32>
    %v_scale0 = arith.constant dense<[[[[0.25]], [[1.0]]]]> : tensor<1x2x1x1xf32>
    %c2_i64 = arith.constant 2 : i64
    %c0_i64 = arith.constant 0 : i64
    %c64 = arith.constant 64 : index
    %cst = arith.constant 0.000000e+00 : f16
    %cst_0 = arith.constant 0xFC00 : f16
    %true = arith.constant true
    %cst_1 = arith.constant 1.000000e+00 : f16
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<2x4x1x32xf16>
    %cst_3 = arith.constant dense<0.000000e+00> : tensor<f16>
    %cst_4 = arith.constant dense<0xFC00> : tensor<f16>
    %cst_5 = arith.constant dense_resource<torch_tensor_32_torch.float32_2> : tensor<32xf16>
    %cst_6 = arith.constant dense_resource<torch_tensor_32_64_torch.float32> : tensor<32x64xf16>
    %cst_7 = arith.constant dense_resource<torch_tensor_64_32_torch.float32_2> : tensor<64x32xf16>
    %cst_8 = arith.constant dense_resource<torch_tensor_64_32_torch.float32_1> : tensor<64x32xf16>
    %cst_9 = arith.constant dense_resource<torch_tensor_32_torch.float32_1> : tensor<32xf16>
    %cst_10 = arith.constant dense_resource<torch_tensor_32_32_torch.float32_1> : tensor<32x32xf16>
    %cst_11 = arith.constant 0.59460355750136051 : f64
    %cst_12 = arith.constant 0xFFF0000000000000 : f64
    %cst_13 = arith.constant dense_resource<torch_tensor_16_32_torch.float32_1> : tensor<16x32xf16>
    %cst_14 = arith.constant dense_resource<torch_tensor_16_32_torch.float32> : tensor<16x32xf16>
    %cst_15 = arith.constant dense_resource<torch_tensor_32_32_torch.float32> : tensor<32x32xf16>
    %cst_16 = arith.constant dense_resource<torch_tensor_32_torch.float32> : tensor<32xf16>
    %cst_17 = arith.constant 9.9999999999999995E-7 : f64
    %cst_18 = arith.constant dense_resource<torch_tensor_4_torch.float32> : tensor<4xf16>
    %cst_19 = arith.constant dense_resource<torch_tensor_64_32_torch.float32> : tensor<64x32xf16>
    %cst_20 = arith.constant 3.200000e+01 : f16
    %0 = tensor.empty() : tensor<2x1x32xf16>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x1xi64>) outs(%0 : tensor<2x1x32xf16>) {
    ^bb0(%in: i64, %out: f16):
      %121 = arith.index_cast %in : i64 to index
      %122 = linalg.index 2 : index
      %123 = arith.cmpi slt, %121, %c64 : index
      cf.assert %123, "index must be smaller than dim size"
      %124 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %124, "index must be larger or equal to 0"
      %extracted = tensor.extract %cst_19[%121, %122] : tensor<64x32xf16>
      linalg.yield %extracted : f16
    } -> tensor<2x1x32xf16>
    %2 = tensor.empty() : tensor<1xi64>
    %3 = linalg.generic {indexing_maps = [#map2], iterator_types = ["parallel"]} outs(%2 : tensor<1xi64>) {
    ^bb0(%out: i64):
      linalg.yield %c0_i64 : i64
    } -> tensor<1xi64>
    %4 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel"]} ins(%3, %arg1 : tensor<1xi64>, tensor<1xi64>) outs(%2 : tensor<1xi64>) {
    ^bb0(%in: i64, %in_74: i64, %out: i64):
      %121 = arith.addi %in, %in_74 : i64
      linalg.yield %121 : i64
    } -> tensor<1xi64>
    %5 = tensor.empty() : tensor<32xi64>
    %6 = linalg.generic {indexing_maps = [#map2], iterator_types = ["parallel"]} outs(%5 : tensor<32xi64>) {
    ^bb0(%out: i64):
      %121 = linalg.index 0 : index
      %122 = arith.index_cast %121 : index to i64
      linalg.yield %122 : i64
    } -> tensor<32xi64>
    %expanded = tensor.expand_shape %4 [[0, 1, 2, 3]] output_shape [1, 1, 1, 1] : tensor<1xi64> into tensor<1x1x1x1xi64>
    %expanded_21 = tensor.expand_shape %6 [[0, 1, 2, 3]] output_shape [1, 1, 1, 32] : tensor<32xi64> into tensor<1x1x1x32xi64>
    %7 = tensor.empty() : tensor<1x1x1x32xi1>
    %8 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_21, %expanded : tensor<1x1x1x32xi64>, tensor<1x1x1x1xi64>) outs(%7 : tensor<1x1x1x32xi1>) {
    ^bb0(%in: i64, %in_74: i64, %out: i1):
      %121 = arith.cmpi sle, %in, %in_74 : i64
      linalg.yield %121 : i1
    } -> tensor<1x1x1x32xi1>
    %9 = tensor.empty() : tensor<2x1x1x32xi1>
    %collapsed = tensor.collapse_shape %8 [[0, 1], [2], [3]] : tensor<1x1x1x32xi1> into tensor<1x1x32xi1>
    %10 = linalg.generic {indexing_maps = [#map5, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed : tensor<1x1x32xi1>) outs(%9 : tensor<2x1x1x32xi1>) {
    ^bb0(%in: i1, %out: i1):
      linalg.yield %in : i1
    } -> tensor<2x1x1x32xi1>
    %expanded_22 = tensor.expand_shape %4 [[0, 1, 2]] output_shape [1, 1, 1] : tensor<1xi64> into tensor<1x1x1xi64>
    %11 = tensor.empty() : tensor<1x1x1xf16>
    %12 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_22 : tensor<1x1x1xi64>) outs(%11 : tensor<1x1x1xf16>) {
    ^bb0(%in: i64, %out: f16):
      %121 = arith.sitofp %in : i64 to f16
      linalg.yield %121 : f16
    } -> tensor<1x1x1xf16>
    %13 = tensor.empty() : tensor<1x1x4xf16>
    %14 = linalg.generic {indexing_maps = [#map6, #map7, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12, %cst_18 : tensor<1x1x1xf16>, tensor<4xf16>) outs(%13 : tensor<1x1x4xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<1x1x4xf16>
    %concat = tensor.concat dim(2) %14, %14 : (tensor<1x1x4xf16>, tensor<1x1x4xf16>) -> tensor<1x1x8xf16>
    %15 = tensor.empty() : tensor<1x1x8xf16>
    %16 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<1x1x8xf16>) outs(%15 : tensor<1x1x8xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = math.cos %in : f16
      linalg.yield %121 : f16
    } -> tensor<1x1x8xf16>
    %17 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<1x1x8xf16>) outs(%15 : tensor<1x1x8xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = math.sin %in : f16
      linalg.yield %121 : f16
    } -> tensor<1x1x8xf16>
    %18 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1 : tensor<2x1x32xf16>) outs(%0 : tensor<2x1x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = math.fpowi %in, %c2_i64 : f16, i64
      linalg.yield %121 : f16
    } -> tensor<2x1x32xf16>
    %19 = tensor.empty() : tensor<2x1x1xf16>
    %20 = linalg.fill ins(%cst : f16) outs(%19 : tensor<2x1x1xf16>) -> tensor<2x1x1xf16>
    %21 = linalg.generic {indexing_maps = [#map1, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%18 : tensor<2x1x32xf16>) outs(%20 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.addf %in, %out : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x1xf16>
    %22 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%21 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.divf %in, %cst_20 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x1xf16>
    %23 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%22 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.truncf %cst_17 : f64 to f16
      %122 = arith.addf %in, %121 : f16
      linalg.yield %122 : f16
    } -> tensor<2x1x1xf16>
    %24 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%23 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = math.rsqrt %in : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x1xf16>
    %25 = linalg.generic {indexing_maps = [#map1, #map6, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %24 : tensor<2x1x32xf16>, tensor<2x1x1xf16>) outs(%0 : tensor<2x1x32xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x32xf16>
    %26 = linalg.generic {indexing_maps = [#map7, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_16, %25 : tensor<32xf16>, tensor<2x1x32xf16>) outs(%0 : tensor<2x1x32xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x32xf16>
    %27 = tensor.empty() : tensor<32x32xf16>
    %transposed = linalg.transpose ins(%cst_15 : tensor<32x32xf16>) outs(%27 : tensor<32x32xf16>) permutation = [1, 0] 
    %collapsed_23 = tensor.collapse_shape %26 [[0], [1, 2]] : tensor<2x1x32xf16> into tensor<2x32xf16>
    %28 = tensor.empty() : tensor<2x32xf16>
    %29 = linalg.fill ins(%cst : f16) outs(%28 : tensor<2x32xf16>) -> tensor<2x32xf16>
    %30 = linalg.matmul ins(%collapsed_23, %transposed : tensor<2x32xf16>, tensor<32x32xf16>) outs(%29 : tensor<2x32xf16>) -> tensor<2x32xf16>
    %expanded_24 = tensor.expand_shape %30 [[0], [1, 2, 3]] output_shape [2, 1, 4, 8] : tensor<2x32xf16> into tensor<2x1x4x8xf16>
    %31 = tensor.empty() : tensor<2x4x1x8xf16>
    %transposed_25 = linalg.transpose ins(%expanded_24 : tensor<2x1x4x8xf16>) outs(%31 : tensor<2x4x1x8xf16>) permutation = [0, 2, 1, 3] 
    %32 = tensor.empty() : tensor<32x16xf16>
    %transposed_26 = linalg.transpose ins(%cst_14 : tensor<16x32xf16>) outs(%32 : tensor<32x16xf16>) permutation = [1, 0] 
    %33 = tensor.empty() : tensor<2x16xf16>
    %34 = linalg.fill ins(%cst : f16) outs(%33 : tensor<2x16xf16>) -> tensor<2x16xf16>
    %35 = linalg.matmul ins(%collapsed_23, %transposed_26 : tensor<2x32xf16>, tensor<32x16xf16>) outs(%34 : tensor<2x16xf16>) -> tensor<2x16xf16>
    %expanded_27 = tensor.expand_shape %35 [[0], [1, 2, 3]] output_shape [2, 1, 2, 8] : tensor<2x16xf16> into tensor<2x1x2x8xf16>
    %36 = tensor.empty() : tensor<2x2x1x8xf16>
    %transposed_28 = linalg.transpose ins(%expanded_27 : tensor<2x1x2x8xf16>) outs(%36 : tensor<2x2x1x8xf16>) permutation = [0, 2, 1, 3] 
    %transposed_29 = linalg.transpose ins(%cst_13 : tensor<16x32xf16>) outs(%32 : tensor<32x16xf16>) permutation = [1, 0] 
    %37 = linalg.matmul ins(%collapsed_23, %transposed_29 : tensor<2x32xf16>, tensor<32x16xf16>) outs(%34 : tensor<2x16xf16>) -> tensor<2x16xf16>
    %expanded_30 = tensor.expand_shape %37 [[0], [1, 2, 3]] output_shape [2, 1, 2, 8] : tensor<2x16xf16> into tensor<2x1x2x8xf16>
    %transposed_31 = linalg.transpose ins(%expanded_30 : tensor<2x1x2x8xf16>) outs(%36 : tensor<2x2x1x8xf16>) permutation = [0, 2, 1, 3] 
    %expanded_32 = tensor.expand_shape %16 [[0], [1, 2], [3]] output_shape [1, 1, 1, 8] : tensor<1x1x8xf16> into tensor<1x1x1x8xf16>
    %expanded_33 = tensor.expand_shape %17 [[0], [1, 2], [3]] output_shape [1, 1, 1, 8] : tensor<1x1x8xf16> into tensor<1x1x1x8xf16>
    %38 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_25, %expanded_32 : tensor<2x4x1x8xf16>, tensor<1x1x1x8xf16>) outs(%31 : tensor<2x4x1x8xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x4x1x8xf16>
    %extracted_slice = tensor.extract_slice %transposed_25[0, 0, 0, 0] [2, 4, 1, 4] [1, 1, 1, 1] : tensor<2x4x1x8xf16> to tensor<2x4x1x4xf16>
    %extracted_slice_34 = tensor.extract_slice %transposed_25[0, 0, 0, 4] [2, 4, 1, 4] [1, 1, 1, 1] : tensor<2x4x1x8xf16> to tensor<2x4x1x4xf16>
    %39 = tensor.empty() : tensor<2x4x1x4xf16>
    %40 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_34 : tensor<2x4x1x4xf16>) outs(%39 : tensor<2x4x1x4xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.negf %in : f16
      linalg.yield %121 : f16
    } -> tensor<2x4x1x4xf16>
    %concat_35 = tensor.concat dim(3) %40, %extracted_slice : (tensor<2x4x1x4xf16>, tensor<2x4x1x4xf16>) -> tensor<2x4x1x8xf16>
    %41 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_35, %expanded_33 : tensor<2x4x1x8xf16>, tensor<1x1x1x8xf16>) outs(%31 : tensor<2x4x1x8xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x4x1x8xf16>
    %42 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%38, %41 : tensor<2x4x1x8xf16>, tensor<2x4x1x8xf16>) outs(%31 : tensor<2x4x1x8xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.addf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x4x1x8xf16>
    %43 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_28, %expanded_32 : tensor<2x2x1x8xf16>, tensor<1x1x1x8xf16>) outs(%36 : tensor<2x2x1x8xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x2x1x8xf16>
    %extracted_slice_36 = tensor.extract_slice %transposed_28[0, 0, 0, 0] [2, 2, 1, 4] [1, 1, 1, 1] : tensor<2x2x1x8xf16> to tensor<2x2x1x4xf16>
    %extracted_slice_37 = tensor.extract_slice %transposed_28[0, 0, 0, 4] [2, 2, 1, 4] [1, 1, 1, 1] : tensor<2x2x1x8xf16> to tensor<2x2x1x4xf16>
    %44 = tensor.empty() : tensor<2x2x1x4xf16>
    %45 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_37 : tensor<2x2x1x4xf16>) outs(%44 : tensor<2x2x1x4xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.negf %in : f16
      linalg.yield %121 : f16
    } -> tensor<2x2x1x4xf16>
    %concat_38 = tensor.concat dim(3) %45, %extracted_slice_36 : (tensor<2x2x1x4xf16>, tensor<2x2x1x4xf16>) -> tensor<2x2x1x8xf16>
    %46 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_38, %expanded_33 : tensor<2x2x1x8xf16>, tensor<1x1x1x8xf16>) outs(%36 : tensor<2x2x1x8xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x2x1x8xf16>
    %47 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%43, %46 : tensor<2x2x1x8xf16>, tensor<2x2x1x8xf16>) outs(%36 : tensor<2x2x1x8xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.addf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x2x1x8xf16>
    %48 = tensor.empty() : tensor<8xi64>
    %49 = linalg.generic {indexing_maps = [#map2], iterator_types = ["parallel"]} outs(%48 : tensor<8xi64>) {
    ^bb0(%out: i64):
      %121 = linalg.index 0 : index
      %122 = arith.index_cast %121 : index to i64
      linalg.yield %122 : i64
    } -> tensor<8xi64>
    %50 = tensor.empty() : tensor<2xi64>
    %51 = linalg.generic {indexing_maps = [#map2], iterator_types = ["parallel"]} outs(%50 : tensor<2xi64>) {
    ^bb0(%out: i64):
      %121 = linalg.index 0 : index
      %122 = arith.index_cast %121 : index to i64
      linalg.yield %122 : i64
    } -> tensor<2xi64>
    %52 = tensor.empty() : tensor<2x2x1x8xi64>
    %expanded_39 = tensor.expand_shape %51 [[0, 1]] output_shape [2, 1] : tensor<2xi64> into tensor<2x1xi64>
    %53 = linalg.generic {indexing_maps = [#map9, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_39 : tensor<2x1xi64>) outs(%52 : tensor<2x2x1x8xi64>) {
    ^bb0(%in: i64, %out: i64):
      linalg.yield %in : i64
    } -> tensor<2x2x1x8xi64>
    %collapsed_40 = tensor.collapse_shape %53 [[0, 1, 2, 3]] : tensor<2x2x1x8xi64> into tensor<32xi64>
    %54 = linalg.generic {indexing_maps = [#map10, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_39 : tensor<2x1xi64>) outs(%52 : tensor<2x2x1x8xi64>) {
    ^bb0(%in: i64, %out: i64):
      linalg.yield %in : i64
    } -> tensor<2x2x1x8xi64>
    %collapsed_41 = tensor.collapse_shape %54 [[0, 1, 2, 3]] : tensor<2x2x1x8xi64> into tensor<32xi64>
    %55 = linalg.generic {indexing_maps = [#map11, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4 : tensor<1xi64>) outs(%52 : tensor<2x2x1x8xi64>) {
    ^bb0(%in: i64, %out: i64):
      linalg.yield %in : i64
    } -> tensor<2x2x1x8xi64>
    %collapsed_42 = tensor.collapse_shape %55 [[0, 1, 2, 3]] : tensor<2x2x1x8xi64> into tensor<32xi64>
    %56 = linalg.generic {indexing_maps = [#map12, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%49 : tensor<8xi64>) outs(%52 : tensor<2x2x1x8xi64>) {
    ^bb0(%in: i64, %out: i64):
      linalg.yield %in : i64
    } -> tensor<2x2x1x8xi64>
    %collapsed_43 = tensor.collapse_shape %56 [[0, 1, 2, 3]] : tensor<2x2x1x8xi64> into tensor<32xi64>
    %expanded_44 = tensor.expand_shape %collapsed_40 [[0, 1]] output_shape [32, 1] : tensor<32xi64> into tensor<32x1xi64>
    %expanded_45 = tensor.expand_shape %collapsed_41 [[0, 1]] output_shape [32, 1] : tensor<32xi64> into tensor<32x1xi64>
    %expanded_46 = tensor.expand_shape %collapsed_42 [[0, 1]] output_shape [32, 1] : tensor<32xi64> into tensor<32x1xi64>
    %expanded_47 = tensor.expand_shape %collapsed_43 [[0, 1]] output_shape [32, 1] : tensor<32xi64> into tensor<32x1xi64>
    %concat_48 = tensor.concat dim(1) %expanded_44, %expanded_45, %expanded_46, %expanded_47 : (tensor<32x1xi64>, tensor<32x1xi64>, tensor<32x1xi64>, tensor<32x1xi64>) -> tensor<32x4xi64>
    %collapsed_49 = tensor.collapse_shape %47 [[0, 1, 2, 3]] : tensor<2x2x1x8xf16> into tensor<32xf16>
    %expanded_50 = tensor.expand_shape %collapsed_49 [[0, 1, 2, 3, 4]] output_shape [32, 1, 1, 1, 1] : tensor<32xf16> into tensor<32x1x1x1x1xf16>
    %scatter0_c0 = arith.constant 0 : index
    %scatter0_c1 = arith.constant 1 : index
    %scatter0_n = arith.constant 32 : index
    %57 = scf.for %scatter0_i = %scatter0_c0 to %scatter0_n step %scatter0_c1 iter_args(%scatter0_acc = %arg2) -> (tensor<2x2x32x8xf8E4M3FN>) {
      %scatter0_d0 = arith.constant 0 : index
      %scatter0_x0 = tensor.extract %concat_48[%scatter0_i, %scatter0_d0] : tensor<32x4xi64>
      %scatter0_y0 = arith.index_cast %scatter0_x0 : i64 to index
      %scatter0_d1 = arith.constant 1 : index
      %scatter0_x1 = tensor.extract %concat_48[%scatter0_i, %scatter0_d1] : tensor<32x4xi64>
      %scatter0_y1 = arith.index_cast %scatter0_x1 : i64 to index
      %scatter0_d2 = arith.constant 2 : index
      %scatter0_x2 = tensor.extract %concat_48[%scatter0_i, %scatter0_d2] : tensor<32x4xi64>
      %scatter0_y2 = arith.index_cast %scatter0_x2 : i64 to index
      %scatter0_d3 = arith.constant 3 : index
      %scatter0_x3 = tensor.extract %concat_48[%scatter0_i, %scatter0_d3] : tensor<32x4xi64>
      %scatter0_y3 = arith.index_cast %scatter0_x3 : i64 to index
      %scatter0_v = tensor.extract %expanded_50[%scatter0_i, %scatter0_c0, %scatter0_c0, %scatter0_c0, %scatter0_c0] : tensor<32x1x1x1x1xf16>
      %scatter0_s = tensor.extract %k_scale0[%scatter0_c0, %scatter0_y1, %scatter0_c0, %scatter0_c0] : tensor<1x2x1x1xf32>
      %scatter0_st = arith.truncf %scatter0_s : f32 to f16
      %scatter0_q = arith.divf %scatter0_v, %scatter0_st : f16
      %scatter0_v8 = arith.truncf %scatter0_q : f16 to f8E4M3FN
      %scatter0_r = tensor.insert %scatter0_v8 into %scatter0_acc[%scatter0_y0, %scatter0_y1, %scatter0_y2, %scatter0_y3] : tensor<2x2x32x8xf8E4M3FN>
      scf.yield %scatter0_r : tensor<2x2x32x8xf8E4M3FN>
    }
    // The K cache of layer 0 dequantised: one fused generic.
    %kdeq0_e = tensor.empty() : tensor<2x2x32x8xf16>
    %kdeq0 = linalg.generic {indexing_maps = [#map3, #fp8_head, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%57, %k_scale0 : tensor<2x2x32x8xf8E4M3FN>, tensor<1x2x1x1xf32>) outs(%kdeq0_e : tensor<2x2x32x8xf16>) {
    ^bb0(%in: f8E4M3FN, %in_s: f32, %out: f16):
      %fp8_x = arith.extf %in : f8E4M3FN to f16
      %fp8_s = arith.truncf %in_s : f32 to f16
      %fp8_m = arith.mulf %fp8_x, %fp8_s : f16
      linalg.yield %fp8_m : f16
    } -> tensor<2x2x32x8xf16>
    %collapsed_51 = tensor.collapse_shape %transposed_31 [[0, 1, 2, 3]] : tensor<2x2x1x8xf16> into tensor<32xf16>
    %expanded_52 = tensor.expand_shape %collapsed_51 [[0, 1, 2, 3, 4]] output_shape [32, 1, 1, 1, 1] : tensor<32xf16> into tensor<32x1x1x1x1xf16>
    %scatter1_c0 = arith.constant 0 : index
    %scatter1_c1 = arith.constant 1 : index
    %scatter1_n = arith.constant 32 : index
    %58 = scf.for %scatter1_i = %scatter1_c0 to %scatter1_n step %scatter1_c1 iter_args(%scatter1_acc = %arg3) -> (tensor<2x2x32x8xf8E4M3FN>) {
      %scatter1_d0 = arith.constant 0 : index
      %scatter1_x0 = tensor.extract %concat_48[%scatter1_i, %scatter1_d0] : tensor<32x4xi64>
      %scatter1_y0 = arith.index_cast %scatter1_x0 : i64 to index
      %scatter1_d1 = arith.constant 1 : index
      %scatter1_x1 = tensor.extract %concat_48[%scatter1_i, %scatter1_d1] : tensor<32x4xi64>
      %scatter1_y1 = arith.index_cast %scatter1_x1 : i64 to index
      %scatter1_d2 = arith.constant 2 : index
      %scatter1_x2 = tensor.extract %concat_48[%scatter1_i, %scatter1_d2] : tensor<32x4xi64>
      %scatter1_y2 = arith.index_cast %scatter1_x2 : i64 to index
      %scatter1_d3 = arith.constant 3 : index
      %scatter1_x3 = tensor.extract %concat_48[%scatter1_i, %scatter1_d3] : tensor<32x4xi64>
      %scatter1_y3 = arith.index_cast %scatter1_x3 : i64 to index
      %scatter1_v = tensor.extract %expanded_52[%scatter1_i, %scatter1_c0, %scatter1_c0, %scatter1_c0, %scatter1_c0] : tensor<32x1x1x1x1xf16>
      %scatter1_s = tensor.extract %v_scale0[%scatter1_c0, %scatter1_y1, %scatter1_c0, %scatter1_c0] : tensor<1x2x1x1xf32>
      %scatter1_st = arith.truncf %scatter1_s : f32 to f16
      %scatter1_q = arith.divf %scatter1_v, %scatter1_st : f16
      %scatter1_v8 = arith.truncf %scatter1_q : f16 to f8E4M3FN
      %scatter1_r = tensor.insert %scatter1_v8 into %scatter1_acc[%scatter1_y0, %scatter1_y1, %scatter1_y2, %scatter1_y3] : tensor<2x2x32x8xf8E4M3FN>
      scf.yield %scatter1_r : tensor<2x2x32x8xf8E4M3FN>
    }
    // The V cache of layer 0 dequantised: an up-cast, then the mul.
    %vdeq0_e = tensor.empty() : tensor<2x2x32x8xf16>
    %vup0 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%58 : tensor<2x2x32x8xf8E4M3FN>) outs(%vdeq0_e : tensor<2x2x32x8xf16>) {
    ^bb0(%in: f8E4M3FN, %out: f16):
      %fp8_x = arith.extf %in : f8E4M3FN to f16
      linalg.yield %fp8_x : f16
    } -> tensor<2x2x32x8xf16>
    %vdeq0 = linalg.generic {indexing_maps = [#map3, #fp8_head, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%vup0, %v_scale0 : tensor<2x2x32x8xf16>, tensor<1x2x1x1xf32>) outs(%vdeq0_e : tensor<2x2x32x8xf16>) {
    ^bb0(%in: f16, %in_s: f32, %out: f16):
      %fp8_s = arith.truncf %in_s : f32 to f16
      %fp8_m = arith.mulf %in, %fp8_s : f16
      linalg.yield %fp8_m : f16
    } -> tensor<2x2x32x8xf16>
    %59 = tensor.empty() : tensor<2x2x2x32x8xf16>
    %60 = linalg.generic {indexing_maps = [#map13, #map14], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%kdeq0 : tensor<2x2x32x8xf16>) outs(%59 : tensor<2x2x2x32x8xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<2x2x2x32x8xf16>
    %collapsed_53 = tensor.collapse_shape %60 [[0], [1, 2], [3], [4]] : tensor<2x2x2x32x8xf16> into tensor<2x4x32x8xf16>
    %61 = linalg.generic {indexing_maps = [#map13, #map14], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%vdeq0 : tensor<2x2x32x8xf16>) outs(%59 : tensor<2x2x2x32x8xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<2x2x2x32x8xf16>
    %62 = tensor.empty() : tensor<2x1x1x32xf16>
    %63 = linalg.generic {indexing_maps = [#map3, #map15, #map15, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10, %cst_3, %cst_4 : tensor<2x1x1x32xi1>, tensor<f16>, tensor<f16>) outs(%62 : tensor<2x1x1x32xf16>) {
    ^bb0(%in: i1, %in_74: f16, %in_75: f16, %out: f16):
      %121 = arith.select %in, %in_74, %in_75 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x1x32xf16>
    %64 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%42 : tensor<2x4x1x8xf16>) outs(%31 : tensor<2x4x1x8xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.truncf %cst_11 : f64 to f16
      %122 = arith.mulf %in, %121 : f16
      linalg.yield %122 : f16
    } -> tensor<2x4x1x8xf16>
    %65 = tensor.empty() : tensor<2x4x8x32xf16>
    %transposed_54 = linalg.transpose ins(%collapsed_53 : tensor<2x4x32x8xf16>) outs(%65 : tensor<2x4x8x32xf16>) permutation = [0, 1, 3, 2] 
    %66 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_54 : tensor<2x4x8x32xf16>) outs(%65 : tensor<2x4x8x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.truncf %cst_11 : f64 to f16
      %122 = arith.mulf %in, %121 : f16
      linalg.yield %122 : f16
    } -> tensor<2x4x8x32xf16>
    %collapsed_55 = tensor.collapse_shape %64 [[0, 1], [2], [3]] : tensor<2x4x1x8xf16> into tensor<8x1x8xf16>
    %collapsed_56 = tensor.collapse_shape %66 [[0, 1], [2], [3]] : tensor<2x4x8x32xf16> into tensor<8x8x32xf16>
    %67 = tensor.empty() : tensor<8x1x32xf16>
    %68 = linalg.fill ins(%cst : f16) outs(%67 : tensor<8x1x32xf16>) -> tensor<8x1x32xf16>
    %69 = linalg.batch_matmul ins(%collapsed_55, %collapsed_56 : tensor<8x1x8xf16>, tensor<8x8x32xf16>) outs(%68 : tensor<8x1x32xf16>) -> tensor<8x1x32xf16>
    %expanded_57 = tensor.expand_shape %69 [[0, 1], [2], [3]] output_shape [2, 4, 1, 32] : tensor<8x1x32xf16> into tensor<2x4x1x32xf16>
    %70 = tensor.empty() : tensor<2x4x1x32xf16>
    %71 = linalg.generic {indexing_maps = [#map3, #map16, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_57, %63 : tensor<2x4x1x32xf16>, tensor<2x1x1x32xf16>) outs(%70 : tensor<2x4x1x32xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.addf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x4x1x32xf16>
    %72 = tensor.empty() : tensor<2x4x1xi64>
    %73 = linalg.fill ins(%c0_i64 : i64) outs(%72 : tensor<2x4x1xi64>) -> tensor<2x4x1xi64>
    %74 = tensor.empty() : tensor<2x4x1xf16>
    %75 = linalg.fill ins(%cst_0 : f16) outs(%74 : tensor<2x4x1xf16>) -> tensor<2x4x1xf16>
    %76:2 = linalg.generic {indexing_maps = [#map3, #map17, #map17], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%71 : tensor<2x4x1x32xf16>) outs(%75, %73 : tensor<2x4x1xf16>, tensor<2x4x1xi64>) {
    ^bb0(%in: f16, %out: f16, %out_74: i64):
      %121 = linalg.index 3 : index
      %122 = arith.index_cast %121 : index to i64
      %123 = arith.maximumf %in, %out : f16
      %124 = arith.cmpf ogt, %in, %out : f16
      %125 = arith.select %124, %122, %out_74 : i64
      linalg.yield %123, %125 : f16, i64
    } -> (tensor<2x4x1xf16>, tensor<2x4x1xi64>)
    %expanded_58 = tensor.expand_shape %76#0 [[0], [1], [2, 3]] output_shape [2, 4, 1, 1] : tensor<2x4x1xf16> into tensor<2x4x1x1xf16>
    %77 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%71, %expanded_58 : tensor<2x4x1x32xf16>, tensor<2x4x1x1xf16>) outs(%70 : tensor<2x4x1x32xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.subf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x4x1x32xf16>
    %78 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%77 : tensor<2x4x1x32xf16>) outs(%70 : tensor<2x4x1x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = math.exp %in : f16
      linalg.yield %121 : f16
    } -> tensor<2x4x1x32xf16>
    %79 = tensor.empty() : tensor<2x4x1x1xf16>
    %80 = linalg.fill ins(%cst : f16) outs(%79 : tensor<2x4x1x1xf16>) -> tensor<2x4x1x1xf16>
    %81 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%78 : tensor<2x4x1x32xf16>) outs(%80 : tensor<2x4x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.addf %in, %out : f16
      linalg.yield %121 : f16
    } -> tensor<2x4x1x1xf16>
    %82 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%78, %81 : tensor<2x4x1x32xf16>, tensor<2x4x1x1xf16>) outs(%70 : tensor<2x4x1x32xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.divf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x4x1x32xf16>
    %83 = tensor.empty() : tensor<2x4x1x32xi1>
    %84 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%71 : tensor<2x4x1x32xf16>) outs(%83 : tensor<2x4x1x32xi1>) {
    ^bb0(%in: f16, %out: i1):
      %121 = arith.extf %in : f16 to f64
      %122 = arith.cmpf oeq, %121, %cst_12 : f64
      linalg.yield %122 : i1
    } -> tensor<2x4x1x32xi1>
    %85 = tensor.empty() : tensor<2x4x1x1xi1>
    %86 = linalg.fill ins(%true : i1) outs(%85 : tensor<2x4x1x1xi1>) -> tensor<2x4x1x1xi1>
    %87 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%84 : tensor<2x4x1x32xi1>) outs(%86 : tensor<2x4x1x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %121 = arith.andi %in, %out : i1
      linalg.yield %121 : i1
    } -> tensor<2x4x1x1xi1>
    %88 = linalg.generic {indexing_maps = [#map4, #map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%87, %cst_2, %82 : tensor<2x4x1x1xi1>, tensor<2x4x1x32xf16>, tensor<2x4x1x32xf16>) outs(%70 : tensor<2x4x1x32xf16>) {
    ^bb0(%in: i1, %in_74: f16, %in_75: f16, %out: f16):
      %121 = arith.select %in, %in_74, %in_75 : f16
      linalg.yield %121 : f16
    } -> tensor<2x4x1x32xf16>
    %collapsed_59 = tensor.collapse_shape %88 [[0, 1], [2], [3]] : tensor<2x4x1x32xf16> into tensor<8x1x32xf16>
    %collapsed_60 = tensor.collapse_shape %61 [[0, 1, 2], [3], [4]] : tensor<2x2x2x32x8xf16> into tensor<8x32x8xf16>
    %89 = tensor.empty() : tensor<8x1x8xf16>
    %90 = linalg.fill ins(%cst : f16) outs(%89 : tensor<8x1x8xf16>) -> tensor<8x1x8xf16>
    %91 = linalg.batch_matmul ins(%collapsed_59, %collapsed_60 : tensor<8x1x32xf16>, tensor<8x32x8xf16>) outs(%90 : tensor<8x1x8xf16>) -> tensor<8x1x8xf16>
    %expanded_61 = tensor.expand_shape %91 [[0, 1], [2], [3]] output_shape [2, 4, 1, 8] : tensor<8x1x8xf16> into tensor<2x4x1x8xf16>
    %92 = tensor.empty() : tensor<2x1x4x8xf16>
    %transposed_62 = linalg.transpose ins(%expanded_61 : tensor<2x4x1x8xf16>) outs(%92 : tensor<2x1x4x8xf16>) permutation = [0, 2, 1, 3] 
    %transposed_63 = linalg.transpose ins(%cst_10 : tensor<32x32xf16>) outs(%27 : tensor<32x32xf16>) permutation = [1, 0] 
    %collapsed_64 = tensor.collapse_shape %transposed_62 [[0], [1, 2, 3]] : tensor<2x1x4x8xf16> into tensor<2x32xf16>
    %93 = linalg.matmul ins(%collapsed_64, %transposed_63 : tensor<2x32xf16>, tensor<32x32xf16>) outs(%29 : tensor<2x32xf16>) -> tensor<2x32xf16>
    %expanded_65 = tensor.expand_shape %93 [[0], [1, 2]] output_shape [2, 1, 32] : tensor<2x32xf16> into tensor<2x1x32xf16>
    %94 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %expanded_65 : tensor<2x1x32xf16>, tensor<2x1x32xf16>) outs(%0 : tensor<2x1x32xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.addf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x32xf16>
    %95 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%94 : tensor<2x1x32xf16>) outs(%0 : tensor<2x1x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = math.fpowi %in, %c2_i64 : f16, i64
      linalg.yield %121 : f16
    } -> tensor<2x1x32xf16>
    %96 = linalg.generic {indexing_maps = [#map1, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%95 : tensor<2x1x32xf16>) outs(%20 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.addf %in, %out : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x1xf16>
    %97 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%96 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.divf %in, %cst_20 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x1xf16>
    %98 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%97 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.truncf %cst_17 : f64 to f16
      %122 = arith.addf %in, %121 : f16
      linalg.yield %122 : f16
    } -> tensor<2x1x1xf16>
    %99 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%98 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = math.rsqrt %in : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x1xf16>
    %100 = linalg.generic {indexing_maps = [#map1, #map6, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%94, %99 : tensor<2x1x32xf16>, tensor<2x1x1xf16>) outs(%0 : tensor<2x1x32xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x32xf16>
    %101 = linalg.generic {indexing_maps = [#map7, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_9, %100 : tensor<32xf16>, tensor<2x1x32xf16>) outs(%0 : tensor<2x1x32xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x32xf16>
    %102 = tensor.empty() : tensor<32x64xf16>
    %transposed_66 = linalg.transpose ins(%cst_8 : tensor<64x32xf16>) outs(%102 : tensor<32x64xf16>) permutation = [1, 0] 
    %collapsed_67 = tensor.collapse_shape %101 [[0], [1, 2]] : tensor<2x1x32xf16> into tensor<2x32xf16>
    %103 = tensor.empty() : tensor<2x64xf16>
    %104 = linalg.fill ins(%cst : f16) outs(%103 : tensor<2x64xf16>) -> tensor<2x64xf16>
    %105 = linalg.matmul ins(%collapsed_67, %transposed_66 : tensor<2x32xf16>, tensor<32x64xf16>) outs(%104 : tensor<2x64xf16>) -> tensor<2x64xf16>
    %expanded_68 = tensor.expand_shape %105 [[0], [1, 2]] output_shape [2, 1, 64] : tensor<2x64xf16> into tensor<2x1x64xf16>
    %106 = tensor.empty() : tensor<2x1x64xf16>
    %107 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_68 : tensor<2x1x64xf16>) outs(%106 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.negf %in : f16
      %122 = math.exp %121 : f16
      %123 = arith.addf %122, %cst_1 : f16
      %124 = arith.divf %cst_1, %123 : f16
      linalg.yield %124 : f16
    } -> tensor<2x1x64xf16>
    %108 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_68, %107 : tensor<2x1x64xf16>, tensor<2x1x64xf16>) outs(%106 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x64xf16>
    %transposed_69 = linalg.transpose ins(%cst_7 : tensor<64x32xf16>) outs(%102 : tensor<32x64xf16>) permutation = [1, 0] 
    %109 = linalg.matmul ins(%collapsed_67, %transposed_69 : tensor<2x32xf16>, tensor<32x64xf16>) outs(%104 : tensor<2x64xf16>) -> tensor<2x64xf16>
    %expanded_70 = tensor.expand_shape %109 [[0], [1, 2]] output_shape [2, 1, 64] : tensor<2x64xf16> into tensor<2x1x64xf16>
    %110 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%108, %expanded_70 : tensor<2x1x64xf16>, tensor<2x1x64xf16>) outs(%106 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x64xf16>
    %111 = tensor.empty() : tensor<64x32xf16>
    %transposed_71 = linalg.transpose ins(%cst_6 : tensor<32x64xf16>) outs(%111 : tensor<64x32xf16>) permutation = [1, 0] 
    %collapsed_72 = tensor.collapse_shape %110 [[0], [1, 2]] : tensor<2x1x64xf16> into tensor<2x64xf16>
    %112 = linalg.matmul ins(%collapsed_72, %transposed_71 : tensor<2x64xf16>, tensor<64x32xf16>) outs(%29 : tensor<2x32xf16>) -> tensor<2x32xf16>
    %expanded_73 = tensor.expand_shape %112 [[0], [1, 2]] output_shape [2, 1, 32] : tensor<2x32xf16> into tensor<2x1x32xf16>
    %113 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%94, %expanded_73 : tensor<2x1x32xf16>, tensor<2x1x32xf16>) outs(%0 : tensor<2x1x32xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.addf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x32xf16>
    %114 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%113 : tensor<2x1x32xf16>) outs(%0 : tensor<2x1x32xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = math.fpowi %in, %c2_i64 : f16, i64
      linalg.yield %121 : f16
    } -> tensor<2x1x32xf16>
    %115 = linalg.generic {indexing_maps = [#map1, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%114 : tensor<2x1x32xf16>) outs(%20 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.addf %in, %out : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x1xf16>
    %116 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%115 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.divf %in, %cst_20 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x1xf16>
    %117 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%116 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = arith.truncf %cst_17 : f64 to f16
      %122 = arith.addf %in, %121 : f16
      linalg.yield %122 : f16
    } -> tensor<2x1x1xf16>
    %118 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%117 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %121 = math.rsqrt %in : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x1xf16>
    %119 = linalg.generic {indexing_maps = [#map1, #map6, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%113, %118 : tensor<2x1x32xf16>, tensor<2x1x1xf16>) outs(%0 : tensor<2x1x32xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x32xf16>
    %120 = linalg.generic {indexing_maps = [#map7, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_5, %119 : tensor<32xf16>, tensor<2x1x32xf16>) outs(%0 : tensor<2x1x32xf16>) {
    ^bb0(%in: f16, %in_74: f16, %out: f16):
      %121 = arith.mulf %in, %in_74 : f16
      linalg.yield %121 : f16
    } -> tensor<2x1x32xf16>
    return %120 : tensor<2x1x32xf16>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_32_torch.float32_2: "0x02000000003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C",
      torch_tensor_32_64_torch.float32: "0x0200000051A364A126927D2610242C8C95A541199421BAA5DAA406A783279C20AF216A22F49A822141211EA6D59CD21D369E1024A01A26195F1ED49C891BBF1B6A24C224D323B0A5F0A9311F021ED319DBA0BC1B5F9A5222DAA4F12975A8D8A5881D09907BAB57A6DE22F914009B2E1E1A2128913425E027CE9E76A5AB200927E3A6C52333A7A5A109A4D3A5D11B7D1C169D8BA99A23C9A25325F51A2C214F18B521EE239F229C9B8E1F0BA684286DA518A6E91869A125A75C1D622679A199289DA4922039A59F23CB26241C7324DAA74D89D82649146CA20F2B402540268C2050A283226626261F74258299182582A91428B2A60E25C0A2091FF6A3031FBD257CA916A11CA11D29E5A067A4D71E9329A221BBA1F61B839DBA281CA8C1A711260DA8279C5EA52D94761D14971A8DAEA7B8262726CF20D725EC2ADBA4E71D2DAAAD1E9627A823712116A64AA577A86AA59825509D78A01C169C96FD2268AA86A005A69524289DA9A030A450A5B829E52812A8DA20E49CF5A188257B1C382028270E285EA1C2989324FBA66CA5F39E7AA1A91DFDA43928BD9C3827CA9C3B9EC9A57DA346A43BA11228D0A5E11C78A3B025F51C3926D824DA2760A63E2633A5FC22D4A164254AA015297D24CC26DA24B221B6A4BCA332A1981BB3260A221627F09F52A302A517A4FDA4C81FF320219DC71BCE9F37A3BDA595A75E9B4B29AAA3A1A817A85CA197A5F696A5A1DB256A24872316A49D9E83A5F3A16E2950A835A51C9D152348A0479BD49B7EA06B28881903A58FA1BEA5D4A67923379CD8259124E7A428183E24481E9F2444A0091C99A7111F59A84CA40DA6D4A4B49EC3225127322498A8982536A09A2089A0B222951BDEA872A98F257D9E7A154BA897272B297F2734A2B8A1D498211A99A33C28C62974A03A24AE287DA08324EFA55B1415A6F5A0D817C488D1A6701C919ADBA16129BF2431A359116F243B25ED28261C38A86298E22752A2199C481A2E201997392821A5582044203620B32655946623BA26D8A472246995E8A850A2B72A89A6A4217BA8A01F16A842A0E2A08228F0230126B9A8911B131F8F2C1923CE1B04A03CA466936D99ED1DB3A2EE18D99B8520039B4FA8AE259B23451C40A439A502A63C264A9D09A8E529A0A500A03C29CA9E90257120B9A3A00A64A9B39F442077282F28ED21BCA9B89DB6A4259CCD9588258624A3A32828EB2238A5EB2680246B1E73269AA0B3991BA478280AA57E1CE42538283420412442A484AA6A945822611C1E2530271E2426A8581FB49D22996023EA96AAA6F99D949AD7A5479C98A602208326FCA54A215D849313132456A45EA78714629EBE24C725DDA872249B1D7821519D7626149DE59A39984923A622E99E14265BA589229AA837A7C9A5769E91153B27659BD69C2E1B18A5AFA27025249ED926EC1FEDA4582784A9C9249F9B72263114A926EE24791E7FA29DA46526EF1962156D25E71DDC1E3E2051A63724BAA4B3A4A01CC5A6E69E9A1E8E24402489283C2297A3FD2020A694A84BA7CAA7B0A56921E496C124F6A797A4E69014A4E0A2C62979A45C9B03A1992058A8D3958624931F47281F203E225D2894A38321F9A278A3481DC8A009A0B023B7A009A0CD1C67A1260CC920A72236A1AB9BDB15DA2642114409091EBEA88528C52874115924E9A90B28801A439D0C258CA6F8A53F255520B81F331E489F1228EB26B69FA1216823C6A28CA20EA4BC2104A7F2A79C281A1FE194929EE92119A1769E6BA003A5F428FBA620A32C208B9465A04799AAA2A2A882282727D6A6291C3FA82524DA24C61EF1001A274F9D57A33125312292A4F1A8EE213AA433286D1EF62487287F1E7523141CAA247B9D749DC99A451DB59ACA0E382203146727202829202D23DB25B09D8E9CC92684115B2259A9AE9B8FA6A8A7691F5E26F5A75929DE2532A4F6A5BE9CDA276DA3FF250CA57EA052A09D1D8713C716FD9DC509AE1916A44983A3A73D90730F1EA4979448A4E9A2649BE1A3171D8224BDA7789DAE23A7A77124D0910D23ACA801A4E32575231524AA14EE1F7D1E8BA3D11D9BA41719D9A080A8B71DA71BE99D77A93627E51BFFA47F2404A3A49D9226E6A6F4A3BC9983A9E9A205A63725F7A6F026C6A08B9F54212CA48024F427121482245C25BC9D87281328CEA912A8082750A4A1252AA81F1E0D9DAC1EBC16392119A101A9C59EF5A431217EA99CA27C9D4EAA371CA5A87BA5C21F72A0381CF12018A26E2896A6CC239628D89304A709A43E22892712A33DAA339FCB9DCD1CB119349AC2254F99ED1D11213C9D49A5D72724283AA4FB280A1417A2522117A4AD9C79A4DE27D5215225E61CA21B5928162765A029267EA1841D13A26322F223631EEB9A1022D9256E1BD91FB3246EA3EE9C2D1FF021A49435A574A033A0881EE81E0127D7245AA53CA023A1289CAE23C62397206F21229F2A1D5FA595A3D522F51BE422471DA3A4F72429A12026C3A60CA829A877A95E26D99CCD2724994A249B1C90A64D9BC521F3244FA60EA59521079C1EA4319CE59992A58D2854A84824FB254BA4E4A48C9BBF1CAC2800255DA32A9E6CA472209D2AC327A8A426A4F8192F255F1A50290FA06D9C2BA2E6281E96892426AA2D1B19A6509B5A1D502509A41D248328CE9466A5A281820F1224AE0EAEA708A166A2F5A421224B28F819D2A702A4C5A0AFA462A9919C9225D827F0185A9CA49C2FA4E1A4272441284A26A72554137D960B1B692419A673A15B2924244CA008A26FA51C249322CA15F12206227A2487A5CAA792A42628C0A46919E2A6F0A6401EDF29E1255C1C63A1179E5FA2A3A565A1C19D55229AA6F9A418A849A4D81237A22825A723699DFA9AA02381A1D09DCE2065248220D8A18128E606891B6519AB10909C5523FE27D9A3A49C8EA4951EBB25F2957819A3A538A62C28FC1BEB26C9A5AAA0DA9C028DE022B21C621E61289C9401A200269824EAA8C223DF2805A25719290F4A964128729F231902A4DE2116A454269F24D3282321572380A89D17A322D82610AAB42793A948244528929C469B08260E1F1E20DA24FA2495A4E5241693A3243A2293202AA80220F49D95A7D727DC23A3A65D9AC01F9CA4959C3220E69EC6A5EC9E2FA2F924BEA0C9250B243EA8702A3C2297A6D425F99A76A310A22F20672324270F1E201FDB21962582A478A7512283A1491FCCA1CC127018DE9B8AA21C22BD281A9E0B1C1B193E1CCFA341A7C69D0B225D9C969E259F319B6E23F5A135A336199D21192AE926ADA8B11D96249A2359A86725662941A631A2A5A0C3A00028E11F48A28A1D20A71920EC9FD0219425B2955CA47A26C52645999528532AAA26B225D72821A3A59946A2B09FEB26F1287229412739A252A57D9E19AB9DA043A6F328DAA36EA59B9C482475A81CA7899E1C25F29AD0210A9E079D1A157E28962538A7031C06A1B1230E2899A8EF249895CE273DA407A3131DA91F282059A83528B32893A770A6CEA824962513B9A31E2224250727E020ACA06BA4FE1E88245DA7A608F6A15C21A81D66995A22E3248E243BA4A725FCA441216A2763A45614201D61201620872791A4FE2743242DA44C28E3A58C9DBCA8F5900BA33D24A5A5FEA5D2AB5E9906A77F25B69C971A15A5CA1DD7240528081C2DA38A2591242DA622199629C5A1AE9FBF1D0C21AF8F402542A0C90B82ABF7A47DA6CAA649A802217D23CE244B20FB0A0DA896265499E324619DC3A0592172207BA3571B54A686A185A191A974290B9EB32BD39284261B1EE29AB6A1CEAA60A9A6A9E4241021D42633ABDA24C82792A062A01B1FF41F4A22AA18229DFF93CA9B23A4F8A80A9AE9289719351EAAA8AD24859CB425E8264CA6422578204421E9A57B270EA603AABEA2E2A601A33EA0CBA40BA0C4286EA030225428CC9904A7B5228DA983A54D263CA024A9D797511AE3A4BE9B119E9F9713171A1585A7D5209AA17229951FDF295D9A2B21AF26AC262328309D1092562C4FA1CEA5AA27F31ACB21169F0EA226A1E827CF257B1921166F1072A8EAA59A969D1B2FA8D6A2552530220C928422FF1E44A41722AF11E221769635AA251D5325919FE39C3F238B225EA5F2253D9F66A5D71F670F3A224720CF9F019E6E25E124542255257A2A4D25F6283B2211A42C2495250E20552603A325A1BF1B31A71B2055239BA3B1A32125C72562266C25AAA24D1F639957A2B99F9CA376A8C012912981A46824BEA69D24CDA8F0A253A8D916991AB2A4068ACE2554A46220D09D319FB326311E7CA677260821D828A726BB9D9524CE238D1D39A4B42179A3F59AC819BD1C3F9A38A808A0419162282825569DBCA498A412A403A19F1E8F9C6099501886A5949F429F12A0A9A0222766279DA842A60AA57B2047273E1C21A507A2C029712657A135259295F4A57529BDA6471AC9A08A1C739D942765A9A324B6A1C3A62E1E869B5C94999FF314362597A4C92772A48028412854A22AA2841F52A4EA9EFB25FE1B2D29BE1C8E281C1CABA3452437A421A0A91A27275920A222A41772A2011E0BA44823D92047289EA0DD21642160A8522579A0A92A5AA54A25079914A72C287EA8A022A0A2C4A6A7A53FA446242422C9A763204BA463A07A2362A72CA6E82468A7BBA23FA84528FA20CC1F332807A73D255D1A4BA838A2FC254B1D4A9D679F0E28BC18AEA630A64E95DCA0C12669A17C20749847A51316B1A1319BF3A3C8A495267424EDA43C21FC1E580EB18D6326022578A25995AE28F82979232424959D49A0779BA200F12612A8BEA22C1E1E10772441A60F299FA593A17497E29E889E2B23B2A83BA8A799CD1D791AE225492554214EA08121D6A4CD973E21132284A7F9A3DF1DF1A8881799A4A71E2D26D8A9509EF59E9A9EBF2819A4BE1DED1D80238B9C3CA5271EAE151C9F169F44A2B6281921401A3D263825D61D711702244F9F2223C6230CA6B41CF2A5C424D99D7F27EF203AA4AE224C23CF26A222F22619A4841B751F41A0C8A133A67F268E20AD19A028DCA639A15198071D1BA5B3A0A1A43E986A23348E6221BD23B524F0A4072599A052A106A8449DCA1C1FA847A287A5EA1F8B2479A128A5F824D21DEC1E4D273AA70F1C6A2978A611A20D1DADA5A7283B9F7428302B64292EA82722B82797A04AA0EF21EEA34399B5A28FA416A0831EF6A58A264EA5B5A639A5B8A00719052B1A1D9E226E98292427A2BDA2D91E5829B024E9217C25FE814527AC9EDFA2AA23572722A3651C00260FA6DB2847274917428C2CA8C99892AAF3282D25C919512779A3CBA7B2A47123A624502020A3EAA82E1C7FA26B26BEA50F267F9BDDA8479A3424FCA6351F9C197BA06D9874222AA40213DB969123A3A5141FBBA5C228F727E72068A50CA8B823A0258F9FD8A438139E2453A19EA1C8176421968FB51C609A8DA00A23E124292A03205828C39A8423292013A58CA3F5299521EEA07B232E21672533A94EA6599306A086248C1CFF23C925CA984121D020B52717101DA00324C0A0D82691A0ED212F29182180A448A88B183C991828069FF5A0299AD0233FA5C42053A00920EF1DFC203F26AFA3E0A1AE208F22F3255D2530270420F321999DC026B32003A7908F5DA77694D326E22217267A95E5A1D5272EA7449F891A649CC516509F8E26BBA4EC9E8FA2581ED880B827A89AEAA47F21F424D829EF22AE9F7018502908262AA4E7A1842AEB21E91ED01CC31177215429D9A1A0265727C8A210260AA1081B94A6F7A3E6A1D9AABAA55623",
      torch_tensor_64_32_torch.float32_2: "0x02000000F8A9EB2610254BA276182C257CA7F5A7049D179D3B24B820DCA1C6209520B42062200219D796BCA144201CA3F6A60CA4E323B19D359C16187D25C59C38A85AA34C1D6328ADA222A721A530A05D9B9FA12A20C19C5D22542930A0EAA79F1AFC227FA0231E22A50B9C60A4D42169297C84C6A5B11FF019E8A18B215CA057A03499C126AB2615A51122F41FBC9A07A50C256BA8CD9C0924ACA8BEA5019BFF9DB01FA297369DBDA7F98FBEA1A3A338A8279445284125E32840A484298EA2C1201DA97CA56A1ED7168E9A7AA7362116A68DA1041F37A116A544945D987D27329FE71A0CA86B2262A8901C7CA48424E3A4289DAF1E79A58121A01B7CA24CA74098AB9C0CA1A5192CA090A2ED1DD8993BA310A8411E191A4829301515A179202328B61077A14F1432A4F0A51EA083A3531B29A840276AA8C2A5A6A32B264D9D75A137A45008EE12C629BC20F7252D1B20A5549D7D21EF1CEDA9E6A6969C46209C1C9D18D422A3A11E9C0DA124260F23E510B80C2A270B9F8AA674A8DA26759C8827D52868A0EE25D5A11C259F221B210B19F0A9D69FC322062559988F137BA029A21CA28BA6A6A8D32272A9171B5DA5AC2803A9919827A403A119A008256DA24A149B991F0F591C6E9DDE257427B427CAA073A1C927801D29A65D237A26388023900A22FAA4161ED12117A8BD1D7EA59924CF24259E461950285B9DEAA735A50027712083A7C6285720132468A5EC2409245E9C93A78920D2254328A7155BA63C2769A7AEA49723A2A1D91E8AA21527E623F3A1A1262127472722272493A10C61A6E1992CA5C7275EA5FFA0D8A02DA020A5FDA8C321D6A232270B9A9CA67E9AB0A5CD9E2E97AF1DE9296D20CCA5C2A9DDA618A7CF23BFA000248BA4682365205AA32AA1712668A81BA6FC25D8A72A2784A5E22021A7078F91A5EBA4771FA6A538A48428B8A67DA8051B6F0A05A69A90C223139865296DA75EA8939F5C9A3FA59DA64429D996C92A80A2DE19521A462890243829D1A4D210529E109C10A7BE9CE4A8CE995722DA18B22518A4EE180D1C4C22CDA6C324192B71A1441842A961A19FA3DAA526A4801CF98D46280BA67DA9C2A399224CA2239FE59DE3A003A615A5152488A2F028EA28551A4BA829241A21E80D0F9E49AA0629B522F6219C240912AD26F198C8A626A78B171A20972237A3DE24D1A0BBA1B40CBF1B66A26EA89A1ECD2465A55B1C2FA344288D1EB4A3C5A2BA1A4929189BAA98FD22C5249115DC2636A759A57A2914A4C5A584A42E22CCA4B3184B8D1A1D05258A2AB927F7A628A195A5ABA72195AEA84EA1EA23508F3523492397A4ACA44A24F7A5BF9C092781163F232BA21122C2262A9EC4227F216D20730E83A4472598A637A52E1452A464A23F214528CE214E20D7249391CA9D5AA339A929A6CEA54CA357A45F200DA6BC1E1D1C4E26E19D9DA42B251625A12391A4B79C60A2CFA4E62198272C9D922242A2BDA1829F531D9EA942A5B19D13A7C82458ABF91F8924F2A5EBA66817849DAAA62A049021EBA15CA625A237214D922EA62D9F2AA05C2290231BA92E21CA25D8203D222AA85DA748269526019E2824D625F1A06D984E293C9AF2A404AA1521949C312625279621E620C421DCA4A9A8B0984E242EA41BA449A9192407218121DC1441185925EB23832476A423A985A0ED9CA62645A2E22446A408A83129AD241E095E1D7C27CAA24E252328BD2B140ABA210D21ABA252223596D0A04715F9275EA774A42A24D8241516481D582851A9FA251FA03A23A0236C1F36A164A7E59CC922E4A5E91A42A158A38A24BD1E9C9D0BA2E69059286D22471A9399412123223A94B721E02B67156B9D22A5C826C51D53A958A45DA317A500A0E3A868AADF27E3A60324F31DA8A42CA696137124279C079E09A126201E9FA31D189C9C1D7A20A69C5426319D312812A50421B323801B7E24101F4BA06E2548A1C0A05AA280A279182BA8592715A4CF2486226F233DA39E22E3223A28E2A521A6E89A83234EA87B1E77A2721C1DA746A6C7228B22721992A8D3A610A162A01F1EFC23639AF2A61C9BCEA7D0234C266DA2C01BA42646A8B625F5A00AA09EAAC89D91A1D5A7ACA9B1202122C42495A80A20FD231B196C2022A0EB1B9D9DA89EBFA82EA4F521EE9D52A3AF2950295CA4C71AD21AD599EEA37124E01C4817FE205D25EFA07C227DA5F722B62261A72FA8A1203327C729F69A651ED4256422FFA032250D22C4A000A8C1215399CE24361E38A52DA94C1F1DA15A93FB23E61EDF222D27BEA35F241724732648233DA2771C24187998AC277CA98E1D771D8C215A25BA2853A1E29D5B212920619B5F9521A4CCA455203A9E302095A4A8A5FD184C9BFD276B9E519C92A89D23E224301E101FE6A1982744A34B26E922D899722142A041A9F328002697287321CBA5B02430191E216AA4DC18242A119806A615188514C79ED328EDA9151AB21F97A91F234AA1DDA5E8A2F0229A238BA346A50BA6312108A82725BDA2C3A4E02623274F1946A22F20091AAF1DB11EE6A24DA51FA1052740264BA3A8A30FA310A83EA22F2A3A21CB1F5EA1BBA6D42258A3882485237A28A0A8DEA532A75C1DB322A19AFE260227961619A5F624209D02A46725DF248F24629F8424961F3D27CB26CD1A75A1A7A5E89A74A96820AD9BA7A59D9A759818A2E725AF9AE72631A0FCA44A2B47A81D1CCBA5D22443A498A3CA1CB3A3A521541F3928782296A4D1A2D2227AA704A9969F291CB924B620F627E21E4E9C318C1220E61B70A60CA1531D9594221EB619D71A1FA8B0223CA56FA627A9FD2348292A213EA1382AEA240D21B29700A5121E152455A4B9A4EF246616461C9520E928B0261024940E5121E7A43AA91AA5972201A9F9A63EA4F2041529C7991821E624A8A38E9CB7952425C4ABFA9CD098439C19A2732400A68E8DC620CF232723F82658220B1B59A5FDA0C822EB2436A2611D311A0B281F2888A89499F62708184F274CA26725B3A208A4B5286DA3721A6E2429264B28E11D1521AAA08AAA19A4D8AA1EA23D279E25BE9D13227217038D3A255F25250933218CA8C024BE28FEA5AEA47E28DFA38097169D282954256318D622CF206529E5A15E181521CBA2DB254625FB2339A16DA4B8A437A4AB26A7A2DEA15EA98AA0D1A8B9A4EFA5C2272D187A92289AC017C39EAC9FC91F6B9AF11F8025842999A858A702A2FC22A8A71F21E2A7ACA700A1AF9FF82CCF0A16913023F619E31C8CA5DCA97A9F25203A9C2821D0239497362BECA3ECAA3A281C26D5A678A96198A79E10215125662652A66EA110A2B122C9254B96EF26F9A0A72469216C21B3A6862A571940A7A42433A833216997AF1EA5A30F12EC9E8B97B92764A99EA5FBA040A28E9AFB2863A039A56129B02AEAA38DA7A3289621F19CBAA45D21B2A509A1049C78277B27122726A4F527D61C711E4A1A472824262D12332851226EA2A418EAA52C145D253B2A2328B3A0E01EEA9861A1B32532281A24DE1D84234624C516F9173824FE2596A411254029D0A5A6A11EA54DA923A4F223AC9B289105A28D1F19264C9E3FA639A7891A97A3AC26109F3EA83420E6A7EC2159A349289C2775221628629EF72449263398C828A119BE16C6278A28079F8DA52A25580FD8A4C59968A43527BE1D952492A29026EF24712160233029911CBC1EC72479A13CA67CA3D0248726F228742411ABADA0CCA4B022E524C69FD827BF245EA02228ADA5F5A00A21F8A4F09472233724C7A4B1A1F1A4252226A33598ADA6032593A2E71DFB97ED1F8EA8CA248424CA19921B3918A59341A92D25A925D717791EC526F1A54B29CF291E206A9FCC9C6221CF28881C579988A41224199DC226822843A8FC9C542B60A41625CE233DA91CA49014EA2316A8A5A6A524821C2BA250A4EEA4E12AF4252424D8265B9D399E481B81A2C91F87216C9121956F24BEA00FA178A41F939D9E2A24CDA4CE9DCA247C26B3242B996B029B24E3257F28FBA429A437A8B11C2CA6DEA6D122F124732486991093909BB4A1C10E372672A10B23C72392283B1CD82101950BA8E3A948A55719B09E9E9142A001255AA137A7B8A3D5A71BA595285D28DA1DAE1B2DA83A9F3CA68B201FA8F8A62FA32819A2A53F27249F43224326DD9C642551A3F2A443A3CD9C0EA89119B7A6141A9A2435A4D9A819A40E28841865A7D12ADC185AA6DD286AA4B0295627BA297421A6204025989D5C257CA798279126689C32281D9E4BA0DB9E3823A9137D18E29D6D287025971FB917971F0DA5981EC6A5771E85A3E3A0B9A58B1FBE23B99EE89E092818291B0D3D1FDA998122A51D1F283DA51B27A720AD995AA57425EAA49309FF27908BB92007257927EAA1DFA643A6EEA008A6B2A72AA88A9E8CA748265B1E60AA401AA398CF28CA1A9D2607296EA1F8A793240FA59FA114A66224EC26C59D5C239917C7A4F91E0D2097A7159B322782A9D9AA73A8F11D7BA4AEA694A52524C8122DA12E23F897E5A7222789A2B6A24EA42A18972A089ABD21272C0B206A18DE230420EDA2E49CD69EA21E059AECA97CA5C9A0B59A7921B61D45A4939F0EA1F62181A09FA4A82606A0A3A4812811220DA50A21C81DBA1FDE26839CF5A521A574886DA745A1B91FF819E32642A5A5255E1C0423B090B02747240D2426261999F222D79F1C22A2A0C79F1E2315A4E9A525268898969F9D9DE4A42C1A301CDD175AA6D21E0A21D2A41EA53BA16AA2F7A48E1BD2A4DD9D49254C1E9AA516A4AA9E0EA2FF8C0028FB1DA61D122469A53D1E2A265E191C269424B7A3CFA132A692A426264626F7A49C1E10977194D6A09E1474A809A71B24E7A96BA641A7F4158BA107A7FB1646A86AA46426B2A9F921019CCFA7E61FAD2057A573A072A4A017731DAAA533A35DA62D1C3529B29FCDA1DC1AD29E691F76A74B9AC79AD62A7BA428A805A6702481A0BD20DEA0DFA44FA5D218461F1D29711B0DA69224EA93291A768D2F0F549D6EA6BCA39E20E8A16A24491CE7225525E4190F9D2BA65B23019F5E9D769F60A10C2117A66C211C9465A425239CA5A0A1B8A374264128C6A3B01BCFA4609F89A6AE1A758B31A5A62739A4E6275417CEA19821BD1A3E28CBA6A09B209B00984CA7F5A6D3259E26109EA0166013ECA6D2992A24DC1C08979197CD278394452552999A287B9C4521FA23BE1A4CA432261B23D01F33A9BB20FB172B9B23A234252418D0A470A14626E912E81ECD1209A3A5245B25B5A67FA0CD98E1A425A09318CC251E1CB8247E250BA9BC24BBA5AA24ADA298AC882550A2C29DD922F126539DB52262292EA6042188A54B8E2A29371B8220F79C5BA71425D22345A4CC28291F3E26302470A4799DFA1B5027AC0C491F919D70230CA139A748233BA6FB98F825FEA56321D613CE22892985241D9BE22223288A29079EB71DC49B982506A793994FA102201DA77E28FF9FC49E1DA68E14BEA5CBA16EA6DEA5C5A9991AADA1382421254DA81714CD1D7CA1F725C1A032A03C1CC20C75A654A363218EA090925427F31B58A189A2759F2B2305A63924E6A191A42723321FE9A85AA01923A6A8451A1DA3E8234E2225213C1F8B235CAA5AA220279E1A81A349A2691CF595E01F5E225E1C2D27E019E92781A704A5999B581C9AA27AA9D8190AA23AA685A5A4286BA52528399C28A9A30437235524D81DB7A07CA56F9D6823BB2404A9362430145CA35D960E23B7197027329B391ABF24151B468898233EA5101F3F1EF5A592A957290B20A11A46A07E25B025",
      torch_tensor_64_32_torch.float32_1: "0x020000009B8EFE21AE272024552562A1BBA38C267AA2F61F6BA48A24B01CA7A297A67B1D25146FA41A9E5726FF1D3323ED29ECA4A1A5D7A4221234255427AF2553A29CA430AAF1184AA5631928A83C20DB250B2545A44E20F322DFA46FA01395D426EFAAEC258CA7FD2643226321FCA588A0322215934A2730A4242248A8929C27A83C249CA47818070304A9FAA8E2A17723E22719952B268CA30920C71BC02005A6CB1EFB216AA33EA867A165A21E9F21A70D26511E5E1462A20D9C7720918F5CA8F19C3D250627481FE2A190991A1F369E37A5191651A35DA60AA0CC1D98283EA67FA4D01576231D2555A01A242E26B42AB1248124822531A66FA4B3A4D6A97CA90BA9F89ECA1D12964E2AEA2053A47DA57822BEA57F2308260824CC17A4A7F898D7A6AFA21621CE1B0D2B96219DA602A02926E1A468A5A81F54A3BC9699A6A41FE298A3229823111F5DA9CB262CA993162F28F12792A49B24441380A436284620C1A041A48815FFA92AA54C9A4EA7D9190A2858A373A33FA3C2A61F2663A04299EBA45C163B97D49CFDA508A5FF9995248E919124D627CE2649A5ADA61197E90C12A205A727A18997B9A8211BE6210B2A22AA3FA8C3278EA21D26CDA03E27C21E78A6109F0CA8682877A420252B271DA588244BA82A26A725A620F2A70B29EA22B5A95C9D711FDC9F6D967D1E7A957919D82527A521AB4224ADA09CA6F4A72B20BF2090A558A9FF281AA94F9F71A3172739A00126512141A713A89F25BCA581201B1D5921849B642509242893B0A8D423971B8D28C018E6A5F3A09A1C2720229C8D27C29967293BA385A56D24FCA3F8A4C724C81CB52844A5099B111EF5270AA6AFA78C20122A1FA74DA53719D598461E7129ED189022D726E6236FA01020CFA5B99F349C7EA34A25EC9DB012A09F4618622575A7B41C4A9DED9F9122B7A099A8F2A5DBA335198CA49D2206A874A1C5A05A1EAFA6892668A4149F6C1BECA5C3A1481C8327E7A5028F80970926A8243525210467A461296125FCA41E2439188EA9E022B69D6AA432271A22C7A446A57598E9A49322F02829245228B91B5AA5D39F34A559A2721E7D9648A8292594A4961B7AA91B992B21DC1AD225662307A06B26B72046A4B819D9214D241C20DB23E2A475244820179F09184D22B527EF2605A53624E71F6BA3CE9D3D29DD9F549D9F939428101B3A9EB0246E9DAAA6CB24F81A8B117F9FA1198B21421EBDA76FA3B6A2CEA3E2A6AB1B3228AD9D2129FD236124281AFDA38DA13DA1EA15E2A4EAA11698B29A2BA0572534253D2820AAE0247A13E4981C120E9D652312A30F9FC923D8255CA686248AA0F52435A5592842A7C91ADC1E122C619FE320F21557A6FB9EE218F599E5A1B225670D60A51B26459AD1A14B9A3DA47822C2A63D25969F8FA2CDA4DB974D21C4A881223BA86C209A9B5B2685A3CEA5019A3BA4112771A5521EF522CF0B6A12C1A6422297A8DC193BA1E59EB2A0089EC6205D23E4A18E1AFE245AA23E2249A0B521B2A58F1565A8F01E2D22FE277920A6A4F594429A84277FA5E3A471A0CBA1D0240227ED16AF26AFA669A2AB20931FBE2440234CA15DA86DA69FA7FEA52E27A99D902050A4B6A3FB225A9A0D213308D0A05317F816CE9BCD9F4D27E49E6DA33AA65A0C1FA468A4D92451A5EDA457292E9FD1985A217DA1BD1BAFA075A83A203895872830253926F79E10AA83A2E121B72A259F2E9D6FA16CA4FAA68E2532A29818F3149928AF23D821F1135AA802A41F98219914A82D1FE10227232C9F0323AB200925861F8C9E6DA00F204C270B18A89A68A0F5241E15D699832737185D05020DCA1EE0259FA6F824A02297250316311D6C256A29F7A4D01AAE90192378A5939D4919039C042208A46C1BFFA2170EA7A0949674AAE8184EA57AA4E124CBA10724F51E12A9258C0826B0A4291C1326E123E721A1249A2097249DA546A4A0A146A1C4245E219E23C09652246A00D1A50E20FBA0541FD0297524A5A86BA408A5A7266E24A2A88FA50B1B18239A1ECA98F79CD8200523A4263726EC1E9B27AD25E288782A29A32B1C4FA5599E7DA61728C4A34E27CD283C23CDA1E722EC1F1AA73027091AAB9D0125E5A7C32464A5ABA845AAF1259022A09FF9A60F272C20D29D019EBC1E97A5CD9D162782215724F0261199372143A83EA36EAA82A21D18C1286090F6A15527CAA0161280263A243B2265A31E913B20E5A4B4A6BB2281264E2BA9A93A21701E74207AA75F26C0A0B0A0D597E99CE49C489BFD24391CB11C4C207D299AA30A287F1E1512A725A1247AA02F9BC517909EBDA58E8A402142269C28EEA13E2B369E24A069A23F265720DE241C1B491DDA1C9C14B225221F65A7E12AF8A6E81976238D26222125264623309FF7A7812421A7012637236AA1449FA32664A7F421F61C00953A24FEA8CF28DF9D1DA0AA1883A6931D86A897A062A8DB0DC79E5825D22298261BA80C2862A55EA42A1F1021DC2083A3D81DEB216927B9A4F299E79DAA2215202A199E22DA2657A5D11814A44DA2A01FD99D5B1B739A3B2953279B2897282F9652A4271B21AA26A892A1C428C70CBFA2A6277325ADA0EB24592630A3B724AB1C1D2532ACD5944029C8251221999C9D277FA6CAA0E4A076A24B24AE27C52786201225139AC41E122257A41624CA8032A33D2522A335A1931CA8A0A61F3625799EC0A3F61F4B2218288825D19E2E2339A5BF9EF423D624D4257F20CD2329A3CCA160228F9B32A7009F54A280A4C42029A8841E87AA431B3E2936A47BA3842AA19E3F26011CCD9E88A095A5CF1D4720E8A672A20A1C60A5A01CA2A6C9A516A75B95371588959A899425B02755A546259227E29CAA22A82968A71C21CAA5F198E21F64A4668A4F03C62029A56327051EAA2526221DA4F8A39325F9A6272341A1BBA953A7B11F802169A3CE238A26E0A430A58410212615A498A8439967A72A218C2C6514D8218FA1989B16A4FE1DD6A0B9A34F100F1EC721CC9E902538A2EB223F9C0F9F9621D69E29A583A145A2D5A41B1CC89F9C25C3244820A0A092206E201EA969A9711A79204299A0A549A50A2870A8E59A292116A74AA1889BB29B102674978A9F1722522205A48899C8286EA4489B96A66B21F1265CA40594C31F6224DA9C1628F9A028A832243EAB7B2182A0B69CE224C81A11A2F5A81421FCA14B2976A79C25ACA46CA3611B84A260A6D7A91423CF2148A185A2D69EEA23BF244A2116A1CD1C42A7F89E251CE3A8CC25881E6EA52622498FD5A92627E9977526079C651D7721BE2711888CA39A2799A59C1F1DA292256CA16BA5861E969D7C9D3D27182861257A1185969722932A18201429AE1F419F229D7625FB23F58C281EFC2153A82B9C229F1529A9933F9761A09EA4692566A6179CAF2146A6B4257221299FB79F9E9ED0A15E9F199BDDA2F49BEB9868935B8E57A892A1731CD29FDF1DFEA65AA316A7AAA383A2922781A224A1AA22E29858A158A0AAA73024B4A674A4F2213D942B278F9F202459A5679EBEA46C25DA2040A1459B53A159A5DEA6BBA228A4B02AF9A753A2382366A2BCA6119F5F967E24D41B0218892553A4CCA468A892A141A26B24C0A584A968062FA8DEA853A242248CA5AEA0B0941CA17DA415A50F280720FE9A552473AA48A3E8A513A93822A3025D9A6A847AA83A1C2BA19099D720ED25D9A36A1CEA9552A7BB264F1FFBA42D179CA2FBA4A7A051A4D11900A45217541E81272AA3481D339548270F1C9AA4739A9A27A4A7E3A4BC1B7BA54618D328A8A5D3254EA7F7A30819192169A0959EA99C3120331C03A5A2292F155024022AAC194F1A36A9601D4F1D2A9341217E25611F150A6EA69F241AA99C91D3A0999A341F9AA456245F25051E43007AA6A32108979A1E1E1945A49F9F3AA1A12484A4C3A16AA60E261EA12020E9A6E418B521239C05A4A02474A5D2A1219CE89F6426FEA57A1D3E287B21F3251C286A9FF616FF258B256E287F2563A67E281C1ED624EAA41323E1A4A2A08828139B2B9430A839A932A2E9A14E9346253698CEA61E26439DD6A28B277724D72112A434A50D9DD2A3B427249C5428B9A3DA18542417A48129F0994C24429C2AA8B1A0339CE52127228CA5329DBDA2AF21C425A8A8B2A680A28B1FEE18BC1F8B231723B5271486FEA3FF20A01D4BA19E281F24ECA98517E2257C228E23922196A84E233F1D12AA2EA9CC185C26302815295C296625EF1E389DA6A6962756A365A212A872271BA4B02614A615087EA2CDA02F21C19FA79C30203CA0DC96B8A34BA480A62AA0389D7AA38EA5679D5AA049A0AEA5808D9726552407253A19D0A576243CA4802450971FA4CDA1EE9E82286CA9B61DB9258AA633A047A41328B62204AB319837A70A9E61A796A408A6A3254822E8A301A4FD15CB256CA43F220E1F2124E89BE428072161A2E2A52021F420EEA06C27E8A5C322C723D29F472430A8151BB1A5CBA65D21FE9C0A24882749A5251D38267AA2F8A59BA7191C611512A0B9A0561DDE1D0F2541254521E09B20268E214BA0F0A3541E0F1774A4439FE92019096520BFA6931F512046A43621862752246DA4F4A2FC9D1223AF187A289C20179DA39F2A24D512D42049A4F7217DA0AAA8FF8DA3A85A2361A876A8D928782B3F1D352537A68DA654217EA385258D183C17311B2DA715A65EA2E026BE9AA8A3B59B4E26762133217B226A2000279CA044A159A0E60A241D7F2622A12BA65511029DD51A021CB2ABD39EB6A4EDA5E1189A227C20B82187256FA2CBA95D9FC0207D223A268EA44493FC18A1A7F69DE6234E2022A872A8DD2969A9961FDD96DA25CA202FA8DB294B22C626CD8F93A92F2CD69D5D262816DDA19C29B921BF8868A47CA0681508943AA42126D6A67A9CF022C0250920E99A63A6A221872A7C2582A7F594AA22B422AC2185A534171E25C79A4825092257A657A8D826F19ABC249B1FFA20BCA6B52500A1A62204A5A4245DA8EF2400A49523B2A672A47C1E97A8BA9706A6A1142924E82CCCA294A2A0A284A1E0A286ACAB11C91A5C9F0E233E1DF0940827B7A07FA54120321F2F2709A2619815287EA7DB9B9328BF0C18A0EE1BD326D4A10D22B09B511FA01E9F9EFAA74422D9A0321C3C24009A5DA12B26B42893A5398FF3A50F281CA5E9247A20AB24441A6E1D24286498A1A2A4A1291E72A500A602AB7E1CBB23622452278FA52FA37CA4DFA132A06D2712A7372066A7029CE79EA8A2EB955A1C01136D21A528B41B4B252028CF2AE32140A69D251BA408280D1D3A2429A62FA129203C9F509BAF1C5EA5071FF1A3B8A4D9994D15F0918BA6A3A8F11AC823771628A0A32762A05C2332A2EE1218A2C725101810155FA0C81C4A1F6E9E74A547233C97D69F17A8BD23272194268C299AA4210EAF24DC9E7F1879A2A0214D9DB4A9FAA749A8F7A0B9219A1EADA4F226271F562352A7A6209B244DA37FA315264F136B86A6A781A7A027C72545204520D1983F1F1B262227502AB7236D90E5244322B724399C732755A059A0B515829FB92583239BA118260F21C21A9611B711E9134120189994A78F9840A63AA42022D4A3A1A063144AA0BEA40EA5591B2026BA98122863A0072363A1A2A3FEA05C9684A91424A6A5E891AF28D9A78CA025A59BA3971CDE94B0A678240E87D0A5339B22A71E240F2831A597A10E9DB2209B2338A9749C63A37925D71AC6257097F223382959A863A414A120A2DA2653203BA720A23D247B21E59A95A1C4A6FC1DF5AAE426E71E3BA82CA7C91EDF9B",
      torch_tensor_32_torch.float32_1: "0x02000000003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C",
      torch_tensor_32_32_torch.float32_1: "0x02000000F0A08B9F38A3608CC31A7AA78EA5749CA120ED23C19AFD94FE24C19C5BA0CCA48C157CA5CC25DE1BE420C41B9B21E3A215A30E28872C4723B42470A189A6DD1A56811A1AAD25400DC7A40A220D9B31201CA3D7249B29AF2071AAB1250D26522100A13F239612A524DEA9F129A2A4719E57A12EA8541E0AA2E32829225CA59820E7A670282B1EB7A1E79971A6F69DC994939FA69E159F7020A2111FA301271CA6C0177D9F0B2764A6762277217E237EA4ACA29625C22626A48E9B039E87A881231BA97B238A26971D3925709D0D21589D23A737A29AA2D5A406A419A150A9E92505229D276DA6562115A646205B22AC25269E9127D4A0A19E45140820581917A4C4A5A41C5CA55C2488A4A022D02887A9069898A4131C631C2B23262213A4BD263F2835A948A99824E3278716EFA36322B99608A9869BEBA55322BB9662A9989C36239B25669B9AA1DD1E63211A92DBA47CA7CDA63313511C229F3A283C15B9A412A979A63E217CA74996912571A948A6CC16DD26C124318C1C9ADDA48F29572831284320C19D9BA7652963286A2761288A25EC2550A5D2A5071D46A754247BA40127251EB5258CA9022283A4FD20459FF21E85A184A64D20F3246BA0BC1CA129F5A4B79F84A30F283BA155A68F25B32665A9BC26E521532818290126C7A9CCA54DA6369F2786D9A24B9F8917A31E18A1582616906E1D451CA4A2A7A5222555148BA302A0152523207AA36728E1A7142550289D1CFE91F61BEF9BCB24B2268F21A728BE23272325A467A7BE25A6A1A091F1A4C59FF920F1288A21EB1CA8A0B82687A025272AA97A1F23281EA07324D325A21C581AD7A2CFA262205D17F7A53E24421F119B542315A676A9FC15F7221C1F7BA6CE2606242A18A623292883A7C3A1E8A8C41D03912BA9FB1B181EC99CBB1A37247E24FB294E9D252520A59F28529E5B991B29BAA1DC254325CD83D41B2E23B91F83A7E0A16E994828441FCEA27D20FA2404A95A266C997721C6A28B945C25C32AA59481A837A860203C1CFAA1209FE4A1CA29FA2721A4251FDE190D9DF9A0F518C59FE72079A22B251CA87EA4A7981FA1CF290A9CB1A3FDA871A40D9CDC224B24C92419A7609DBF9CA62B52A41E1B761D6125F5A82EA9A0263CA3501806964AA052A3E023881D851DBFA9BE2266A5C42113279CA463A8BB0A9DA169A3DFA53C1C1A1EA125F22402A346287522CDA487A207A89FA40C1F7022F2A03025869C4EA663A2E1246CA1001CA0A5362463209D28D225642644A5D2A53C23432B4823C9249B23E42988268E2639A06DA6E02775A28B25C6A08DA5222660A09AA1C09E52A5B4A27A21A89BC9200A25261F4B9F3E17F5A792247014C6261129359D93A78CA1542246243B24452685A2E1141029721E00A3E0290723959A76A643A9B925A3231409A2A1C197C1A83CA893A2EE96ED9718241B25D82694A9B7A357A32B9DCA22971C68275F2347289C9FE6A93B1DE2A8580FB41D7D1FE2267A1E94252D150322D8A174A12A9A0428DF273BA18528242423A036A5730416A56CA424A46AA601A27AA190174B26FBA1F620801E1AA3AD287DA60321422840232026D71B6AA8B91CBCA088A88E2AAB246D1D6BA53C2220927E8957A477A3281F3CA300218BA5CDA01AA0EF2858A0E7246B259624D4A475214D14ED247E26C119B29EC09E8EA7B220A2248910652A28A433A701A5E929852907A5B61BC31C979C251929A70D1201262A1987A82FA0D8A44F2895276EA68D22D126A38F3924531DA91F84A57024F72B7CA73624A1A6BA9EB22A831E4DA56C21BEA4AAA2AA1C9226C615F099DB1C232B929F30A0B89E9C29879EA12702A6CDA3EF26CA1A8324E41FA21E79A47720DE24C198D79E63A1ABA5082677A42020431EBCA339A3C424C226CCA3999F5B22D59E592B562512A4551D59A8B32783A45A9F2D1CAF9E3D115D1FFB12392541A53023A1A0171FA11EC61310A3DDA24E28221F99A6E52329A105A69E1F7C9F6D22DA26C02946971C9EF29DBB93C42834243C26D6253E2483284825999C70A4D4A295A83EA99F29852450A699285B22F8A7811D5A244A199E273925CBA4A021539D9724172334A990A75A205F1DA0A2B6A045A828A64E27B21F65AAB8A13DA5B89D2F28B42514A4B0A4BB2775A6D59FC5251DA846A64BA5169AADA68024941707284D26E2250CA6D89A0925FE9D7926AC22B2247B990A1C5728E31AF724BA9AE9215DA0BF984D212A183AA2D0946C0F7CA272A126A873A948A584A96429E092DAA0DF240424371D1BA6BEA1B79CECA0121AD3A468261895D61E33294E2093A9271FBFA18A9D32A16726F1228E27A11AF3997625992AC1A5C0A76F160B29ECA31AA6CEA690126E2805238D246D271DA708266B28999F7E017C2A712154217C2061A05EA0698F7D91A8260B941AA61F229E2ABBA14A1A5FA908A1E427E89F5CA552A4A99E29A608939F206522029A80A843A16D9D12A57EA7FCA4C8A0F1298DA4B29D2E295A2B809DA9273820FA9D252470994A2097A427A6E720ADA44E199D99CDA96B2466A9582169A487270CA51825B01DCCA4411B0EA611A458225CA544264A184D24EB96C1122F9E8E19FFA79B286E256DA1C5A3D81AF4A1A7A01FA6E41D0D1FB1A51CA0C9A693A2FC21A59F4529BF1E1A1C44A02826EDA38825762962205FA1C8891EA2C8A41EA18C248729990CF0A021257DA323A4442339A236240827ED24631CBE982FA266A4CB9E58250D1A13A2AFA88FA314292B9292A409A8649638A1BE199C9C2125D2A11F25FC1B21A0F89C9F9C5C1E04251028FEA7F9A6A8A3C7A8012611A1AF9C4096BFA7079C36A4538D191F90A2431F009F779896AA4B1D691CEA1939A494240A9DC0826C1752A4DB9F",
      torch_tensor_16_32_torch.float32_1: "0x02000000BCA0E2A876A96C26D0AA1FA4592AECA79AAA211F661E4599D4212B1F66A41828651F6124B21EADA5D8A317A12421FC2B9E2443A220A4B398669DB52340268C9F721D9DA17E9F7B27BF95579B4E20E3A19E9B9BA5282668274DA4FCA53BA17D26A19186A0D1201DA1B51021A1B82891A7CC27C69D8F2927137818B59B459DEBA6872700200D1FDF158399839F8C1892080126002819A35CA5419C9E28DEA55628EFA9DE9C7826A6A8E7A127251DA53BA05EA64125469B361FA7A4DCA4E1A7B3A09C20A59F821A1B1FED27E11DE4A59BA113A4C0A06D9F0AA3431B8A9F649FD52915289925892242942C27191D8696AC9F1A9D119D63AACD23051CF2A2B7A327240F283A9B7E1C1AA53B1F6C236128841BE914EAA0EC21511C259C92A09724518FF720BC282C21CA0F6620BBA79DA6FC1879293C177696D591269CEC261629A8A4242B479CA489FD98EB252E2478A23324B8230F1E2BA14B8EC09E3B27A324ED1F072445A409A57FA7F4A01E9CC39CD0A448A16626C6A46822D91F4E27EEA4EEA44A244B25221455266129E4A50221C7A3642A8B204A28CF1CF825EDA01A201B9E5F28D30721242B1E182650212DA6CD29712671927C2226A9A91C84A24A25278C242071A3B327BE25BB1FD5A736255DA1D79D2BA88E1CD0265410F31ED59F271CA71CCA2449A02428191841A1F99870A0B0A0B51944220DA4F3A0EF1FA5AA48A3569EC726FB1DC9A1CE21E417059DDBA35C172427709F5D1A1121DF88581B25265616211F1922DA167928819D3122442207286728CF281F9C7FA573A5981F19243DA44C216E9D49A40127A3A95227BA214823582798A468259CA210A9F49F56A29297C5A58EA1E5A6AB907DA8C4A8F3A30E1A252781294CA38CA0A1A8D924752077241FA6989FA194E423B48A5026D21CD49E7D176428A026FCA4702000297C22D62316A8BFA2E0A479251F2221A33E1A53204FA28C2057A6C5216D1EF01F001DDF25A5A036A55FA9558B61A6312570A72B8C640EDAA61A2458A799A1FB9F2819FFA00626379DF7A41EA99A240E298420C3A98EAA019A1F21359EEC1C3B25FBA47B9B521CF223DC27C69E0224CF1A0F253125E822D09E4F20CB1C1629E2A81E9C8CA0579C74A3F225C0A750A2F29E7C21B8224DA14994FD1F761A0C22A520ABA8D8A892A1FE94BFA2D825D9A47A26DE1C79225AA4461ACC2336224F28FA2068A2189AE8A0B21E652444A629A211262423DB2236A2C5A0B722C6A47F27EFAA35A3C01B0BA494A61B26B51C3AA813A52C280C2247A89124AEA7F6A1A3A6B8239128F9A3E7A88A21FA24C728CDA0EC2785A19A9C6425B3A0FCA2C19C56283124D796ED2047A10022129F7523D8A038A31C18289433A405245726839F4F2749A35F28901B3021111C97A615258B886D9747210BA436A25821AF1C95A196A2E422329B",
      torch_tensor_16_32_torch.float32: "0x020000000F2A65A2241EB2299EA21DA073214D9D75A6C8126B109619479AD21C3C21CEA89C27FBA43322878E4018401FA7A090A132240F1AE1A7A2237EA685A2EDA94A21AA0A3DA800A6691CFFA9D81D61A944A47FA80C1D4C9CDFA60A9CB19AB4A7C4A77C9BDFA4C329C5A17A1818A5CF217D229124DA23F025E508A21CEE9C3C2A8B17AFA51824E5A2F323B8214613F1257CA10E27DE9F1B20ECA4DBA51D28709F86230FA07CA4361EF0A68C21CB1F15A266273B253AA4A82447283526C7A0D425D326E421C61B9C1C78A906284AA3C91B1C19D4A2D3A412A71AA692A139A6DF20DC1C56A39F9D359300268A234624E7250DA3E38FBCA5061DE32A2324B020649DEC283A9DAB9CB02742A438137C201E1AB89D51A9A7A39AA61FA432A68C27452A281D9F17D120CDA2642013A863A54DA659226A21CDA45F203D2C5826E8A44CA84EA0C7A2CFA2D323101C4D254F24C9260025259DCC2511A8259A7B21BCA0D8A227A6D218D29AE825D624C7997016311B12A48CA585A28D268F285C2609A143A2B00B2EA4A2A37B9FF625611CB2247F9D84267F19F327BAA500A4358F80A58420AA2420268F25C8A7612318256AAA1A17EE25CC23F9A46A267E244D279D2A8FA1529148A69E24B9A0FD9EC627E622EBA364A29B8DB6157C24C39D881B89281C195987092836A52BA867A7EEA4E01ED29F8021E9A53F9C962B4DA00DA2A19DC529DD8ED4A49E1E9CA142A212A7BA25FEA3F7A0B1A4FAA55312A3A03B9723A6EF246EA27C28A19FB20DDF25639CE822A3991C1E5BA720A65E207AA3A6A1D983AE24F79D5F2839224AA2629F4B249FA1BB9EB6A98F23DD9687A8E2221FA6A222FBA0C5271AA1831F6C280422AA24E41E34206392531A75A68E1F7BA5AF216E1C4D9893148129AD9A1A2066A996222E1FE69E84A86A991E266DA8EAA6AC98D421D4259127392BA2220721B79E4DA9DB9DE79F159B6D07161DBA26F7A704A1A0A263A64999ED9A9621BAA28CA7CA22DC20F0A60B232824E19E2A233899119A8D1D2F9DF895E2A08225B7A59F1F7C286F2911A038A3D020B2A4DD1F6D24D29330A6679DA3A13C216CA19F23AC98CB22B5A3511F3FA2E094B7A4A29EC1272A25C1265F21781B2E255D9ABF9667A33E1DA21C54A00685542188A1B121959669A9A2A63CA0F71D8124171F6FA5F2A0BE22B323E11A53A757AB0F9C159DD224FB202020309EB1A13F993E247C9B0A953120F629ED240E2AB42429A8E325D8A5692825268118C825051E0A1F37A476A42A2625A5F924F2955EA84C23A320682148A3069CD2151A25C4A176263B1C151B08A89F26FBA71AA3B7A05EA83BA51FA813143F1BE1A0941EE62720A4F6A270A505950C241B9BAB19661C422011270B24B19C8E2382A44426F99CDFA948A0241CA028FE2ABC2288A4E9A15924341A201BA0257CA2CDA18522",
      torch_tensor_32_32_torch.float32: "0x02000000DC24DA24D79EE2A3851A789BD3A100A783A74F0E3916FD16849F031A23187D17321C378F6026190E891CF7202AA11F171D20DDA14D26B027DB9F080351A4D32157A20FAB311F3D9DFFA17D15EAA6199D8E21129D2EA09DA678A55C9F012984988E252B201E9827212397BF262420DD230423B5A307A79DA9921DC8253A9ABE291B26F1A4DDA5A3A211229E25EB9C218CD5216726DE847EA024285F294B1EFD25EF278C99F014BE1E7627EFA9A9A47129C229E2A9B22500A49111B4A33320971E8B9D23A5A2A53B226F29EB9B2F25E6A5EDA493A080993B226524F4A46791F89E10A6B5A00714962358A874A3D62557982D2508A2ECA82D1A1AA8E418D3A5CB2047A405A7D3A3BF27D9A963A28BA4E59DE0A23B2416A6A6212FA200A3D01D22A5D716A7A61D2801ABFD25F39EC5271C9EF0A143A4C2A33E23C09DD61F8C1CC120BA1D31250B21F92821256BA5A02940263EA46C247AA94AA8A3A9079C40A453A68428F69BB5973CA0F4A465158B20D1A453A21226E92411A1E49D771EBD90E21D362017A5DD256825F3A0FF200B99AD9E7FA49C27C6A08CA80A2804A6171823A40B9FB0975E270C1E3BA94E260D25969E7AA29C9876A36A29B322822424A425243212DCA6A6A2032403A9AAA2211387A625A5071C9E219E1BA326A3A2269EE322F914AD1E821F969A8112E79D7128B6A574264A9C0FA00625228D452451A2EF29EF207622721FC9A41118859EA223331D3F1E8C20D9A53B284EA47425AE21CDA28F25E0261A29E5204F2391A1C3A2439DAAA0FF9D28270420BD25081D90A589A9402411A56EA110A9FDA1222269A60E9EB0A0011DEFA399A5C5A85FA4DFA723AACD9DA99F80A6A018829F35A16999BBA72523652520A7AB9CE6A8A59E70A5BB21642515A278A600A3AD2969A8D0A511A88F275B0F0C24880DA906DB2740A65EA8DFA2161EA7A60DA4BC275A9ECC1CC51F46A62EA5FFA1A99E9821D9210AA48C2514202AAB699C2CA45CA88C28CFA488256C247025582251A5A9A56122EB28142B72A46F9B61A92DA884A41AA5332416A03D0979A74AA95DA2A6236C26CEA4F41D8D2A412007A9282016A192A010A60923B7A2C8A023247C0F081E39A6BCA08AA449213F9E45A9F8A376A5D31B1FA1B11EB725C024099D21A6019DBAA4C99D2125589CD91A3E2999A5DB19B99F282092A24AA59B26C1A0419F60A5D21C5C1F6A1B7A23B62619A5B595121365A17F190E26A42142A48FA41B2A92A35218DF1D6E1D6AA9249E07A2012175176426DE1C852633A612A5FE294D1A32A1251F369C340C5F103926579A76A18BA4C1988C21939A5B21BE9DDAAA84A005A34429B729F299E421D2A2DE219322051C259DC09CE419B0262928F0A95820871D03209E85CC25DAA4EC98EE1DDA980A1F359F44A4FD27E49BE71E71A9B1A7BD1909A460A1DDA3D6A2ACA336295F1A09A4B910A09D0EA4B81CB71DE89F8CA6F2A42727B628C29A219F1EA61325062160250C215121BDA0AD9A4AA23CA3F425D727EAA3BBA447A535268A1C659CD89E53A301A5302665A753A57925639654994C2678246922811D1823F2A4A420C425CDA4A725F0A4F3A31D21441E3B262FA479A564A1F61D2B202C26CA269023411FA327EF9C9E1CB11CEEA04524F9A0A6161E0D7F15D42571A137A8F5A2809EF2247696E3040DA364A54CA0A62117A4709ACAA71BA76F19D6A3F6A11A2529A43B282CA59C25E9215EA24F1C1725CD2080281324CF89F9A5361FB224A823AE9E618B2DA5D621EA96A124801D0C9D3C25D426C41BFE20AF262224F6246C18A624E3A19E288A9A77A142A75E2361224B9D9223842433A53E97389DE3A4531A511FFBA5C4A2F9233AA1C39B7422011D16A7712609A22B2482A9421FBD9D52A02C23AEA05125D11BA9A272A641A52628FE23689BD525B6A6CE2270A623259CA74B24F02374A211211FA0F2A0449F2BA460A47EA2DFA5FA9C6CA38F23549D7F25AB9B0F1B372054A1AE1B9EA0D3229FA82027BFA3AD15FE1DBBA70D1D0795631E5D2550283BA2E5A32A2654A018A9DD9F5AA06C26F02173A08613CF9D0BA9E51D8B9F6FA2BFA66D18F4A679A57B2560228E26CFA9EA1AA2A3B69BC0191C25C39D3EA828A14AA90A9EC8A6B3A34B274AA15E2339A6C69E5E0CDE283128D8985119881DCD2370272FA64424ABA1D815EEA495A372A40520D0262126CCA57B22AD1CBE295F9A9F1252A5DE96DD1E2427792800A8549B741DE215DF9BEE20391CEA21AD97B99A7E237422F113D01EFAA706A04F1DAC17F3A76D2232251D9F1BA2EAA323A0CBA672A0C2A7A8A4C81C3728E9A0C62259A9A21E68A015A55A20C1A1FCA8701C93269B9CBAA33D9FB820B59E54A1259030A199A3701AAA26EA9962A7D524749DB897531F95261126AC206E1B2024C8210DA2A1202024EE9C45A170A7332504150228CC1927A282A290A1680E8C210926119D369ED6873F26CF9CF41E1CA5CFA2FB9F84A9D11F291214A4EB9E2DA4860A59A8940BDF2500A9F1A22DA66E1CCE21F429649E04A0D028A525679D182838A08E1D201F4529AD235E26BE218A201E25DE9404A50B951128F6A1A727301647A2711EF1A8DEA8C890F30D32A600A0A4A002880FA5859B14A5DAA9029FA0A646A62A9C4F23E2A140A03286989DF19DB125E32556A69795B428058EDDA107228C24C42934245B9EF22583A0822AB2AA472501AA93A5DCA47A27E319DD9970244A277CA78D1DD49DDA26592603998620609F1B9CD71B7020019B5825219BCA2465A26425B81A8F14622431233625082057267A245A2AAC8548235EA1EEA44BA889A7FB9DA8A3C1A4D99C0FA5C0215BA5751D84A6462366974E24F027EB9CD59E0A2853A3AEA1BDA1E027E21C",
      torch_tensor_32_torch.float32: "0x02000000003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C003C",
      torch_tensor_4_torch.float32: "0x02000000003C662E1F211914",
      torch_tensor_64_32_torch.float32: "0x020000009D9F8B24701B9621D327AE09659318292CA0B1202E9C161C53A48E9D8F197FA25C2627A6FE2120220B9F71A5A5A54DA81B241DA5A027F225B8260122F41E11A559205226521EB2A5A2296896CE24E623AC2846A93DA7779EF215FA22D19FF7A4E517701941A8F3131F1B59A489282D29A2A09EA8E01C0E9EE8A3DF9D451F1699FAA70EA4B3A5D3964D1A1526431FDC21DA21C11F44295025B89C0A9CAA2874A5C0A8D126AC9E89A2B19FD1A052A6E320A8212F251328DE15DE247D269124129A64990DA3E1A3A4A7882542267C2515223BA06625AC1399A5D4A60298A69B712165A451A363A21B910723EA1E5AA5AF12FA24688C842440A94C27FA9B56A86125088ABD23A1992B2322210224F4A435948527E0A7789FDD980BA46024DB1A38A6D4A627958AA08D9570184320A7266F1DAE9CDE20C51CA62239A443A49C22F9171AA12F26D99E19A83E272AA6162067288E198295CC18442581A445A2CCA73E1C779E42A6BE1F57242CAA99297EAAFB1C5FA5A2A3CA28D41D611DAF24871CD19C6D2579214AA219221C228A28A9A3212B448EA61FFDA2B1A4E0A5451B812494A79FA47224E4A1AB2587A3D3A36B9F4F23AA1FBB9F0BA351A5E423B39E2EA8B625561D2C1FB11677A6C5202EA0C7A23F8922276B99672111253994AF244A238CA149A51D284214E1A4DC291817CE9E16A03320AE20AC1A5328A11F552156226B24F7232E9B77216C977C25229FC0A8D825E51E1FA489A193A30AA49F250128661C54A8E8A5FA8F9AACEBA785A4AB26B2284FA2C4A4F09CEEA0B2A163A194193D9AA729D09769A1C2A491A53F203521A521699D24225EA6E4212E23A1A2FAA087967A9EF322542238A58099F5995D1CF21F0321871EFBA3262546A45AA0912250A1A30C999EC51A1CA9192585A428A12AAB2325D7203D2483A1E4A0509D9525D224C0976398DB92ADA4E221AE24CDA63A1AB997D21FF9A5B1A3F0A4CE25389CF9202E9A58282D992C21F0A13F1FA51D3BA22316349CDA25C4287D241322DF235A23E6220D22989EEC262EA3689CC6A2011C8F22CF9DCF25A1A6679358220CA8672718A2661882249A2780112B180DA3F225152801236893A3A86A0E482626974FA3631653A1752546A84F23159A98A678A386A33AA695A76B28662499A5DB99C42132A9DD1FF5210DA6141592A763A571A1EB9F5A956FA5711F00A1ED1EF32176A242A5822B82261B9571A37CA611A48C2876219F25FB2631A944A8951D6893369A14A426A4CA22E6A63B241C953918642490A5C625C6A582A1B4A19F9FCA9F4E28549EC0AB731F7AA613259AA0DC22FCA6B12102212F2770289E98EA274198519EA81489A41A212924031D8D1A34A36120CFA3161F9126D4939A24229D33A655263BA19F29ED1582A8AE9CF51D2A27081E13257E9699272CA2E3A4AB183921F8A835A618258AA858272E9D29A408A3549FAF22109DD720B5A481A7442688A48C993DA28029749F6E9D480FB91DC0A81EA3B0A0181E831F88238824C3A82CA3B32555A6E3A5DFA185A32B112221878F02A0D1973DA16E10679F7E1B1792C2A0B52419A886A1FD2BFC1D09A12F19519916A438A6D1A47DA0DA186D2760A32719CD167D1E5CA7F29E5D1B40A343A480A4F825FE26A2A508225A2006AAB0A246A4541852284AA512A68F1D022200A56BA4C5951226CE243B956D1FE8AAD31C4FA647232F2C0624F5109E0E2622009C8B227628F7A7B923E7A2FA19B41A731C209F7791141F3BA4DEA2D0A7CD24C40D749308208598C2A37BA19789DDA1F024B61DE1A760A1989BA21D6B9F9D9C15AADA1DCA1F25A6F8270D20D9A0542594A7A322C423A5243EA48326AB26D49117A476202A9F2D27012BBFA6E9188C9E8AA5E624FD27FB2106298E21B89C74287E9AB5A5C5242B1E0906E69FF7A580261D28C2A6C89C439D7C222D21AC9C0D1FC02601A80529C9996EA5A0A76EA79A24AA20821CF8811AA4BA24D39B7A8C0727B42498A68B2152A4D31DF2A63FACA6A1951E4F19FA2A7324D4A14223D8A4FEA85D22462230A941A225929DA82D29E029A922E59CE3A13329EDA14B2942183128521EAAA6E0276498CB20771C28981729042430248E2464A86A22C2A872AA419BD2A8D891591CCB29FCA05DA25B206698DE20B8A4DE28792472A0B324D826679895225307EDA044A59E23B59F219D21A5D826E220D99F8E1B22257128FE24CAA1FBA38DA5E227D29A502437943BA19B24411DF328DE283EA070242A29A7A53B20D3226CA4440C8CA313A2802545251CA62CA0EC1B8C1DA5A4CE1FDA262DA085254B051428899C9FA301A6A3209D20F69B399CDA27342471A09CA19E24F4A1FBA62A294D08DF9B84171BA824A65A26CEA50D10CAA17283EA1E62243D244F229DA2DDA816A43E2313A516215327C6A47B2433A725A29EA522A5A22600A3540EB8A93EA874A682A32E2598205BA1D4A3C99D2328E80EA4240C28C42746A4B0183C9BB5A44C2101A009A2051C841D3F271F8B2622CDA4861FC0A7191CCB186CA113275A9EC724632586A193A2331A1E1EC19C9425EBA7CE22CEA9D0A333A1369EBDA61D2279A8431CCB148224B5A4E1A7882353A90526B8A23520BC2679929A8DE02081949D2810200C9DFBA11420AD9901A993244BA594203CA6E3A08F94C8A4BC29219D299C9E2496282AA16FA5A19DEB113B97F3269E2070A1859F1A258228A124272135256F9BCE968EA8F2A765259D243BA4CE1D1421E69F409E4BA357A7B48DB02212A4A1A5A622EAA5E5167C1E71A26A24761DA8A659A06BAAAFA42F256C211FA07025BA9CCFA05B278227F2254FA9E4A2D3A7DF21F8214EA74B17BE99C822F82839955A1F9228422842A88C91DD8893A2A4A93A2723A58EA4B4A2FE9EF11830A8B2A9949C2921EC29C01FE71EA825EE265BA6B220F4A0801E8CA45F2455A60C23BFA5D3A423A856AA23A53D20500CF89D60285F9CFB1ED1A780249BA37B2622A2DD240996A823A2A4FD267FA0E6A19A913B29F69B9828999A321EC71D79A4A0A510279B1C799D3F21ACA4BD1C0E2340A1A0A424A460A5DD9BAFA258A58F2459A654A569191EA726A07028E2242F9C0826DC298E9C8BA0EC23E0A1591FC89533A1521FF4A1159D0A92E8A0D5A5780B28A5A897741E75A08028BCA86CA62425D29FFF1E2AA1671EE19DD2A8FE20F1A2009EEFA489A65A9534A46EA2E79FEBA54D1C8727C022B9283C223DA0F79C80248EA66AA3272019A622AB1B2408A434A569180825A893D689EFA3CA247624F9A57FA4B02461191D9F7DA326A6821F79A58BA05FA2482402A56DA00C1C329FDD276FA14CA88B9C6926ADA5F7A1F6209022C498DDA0A926A51ECE222821C69CAF1FEF1D9BA1269C01180124AE935729D022D825A59EBEA0F79883A682A75E2295A52227FE179E26C4A50B24129BE7263D0F19AAC421A81E05AC0D210225571B7DA44420CE250F1BBC200AA3A3A0DE9DD42404A158A52B1CA89AEA203A95BFA7E324ACA4DE1DD6A32CA554282627CE9D0B22439A3E26A9219A199C25882ABF9D799E91A57928499C360EF01D3A22D6A46C2939A4AA2855246D1CBDAA37A4CF24D81EC12436A5BB265826389A33A81B2192241DA49FA56D2137A6A51E0DA0421FAF25D7287527182379976E24691F4E24CA257BA832A11816B7A37024DA240AAA1E27A126CA27E5247B25AFA86A1B2C9F6926992400A8772029A2759C7CA47D9D6224209A1AA49722CD18F29CEE211516BA1C531BA2262D236F1F95278CA2EE1C0A99AA98F8A718190F2643A5239B93A5E7243222162485A08815541D842419A81227F2A51E28859FFCA7C92331A77AA1772AD6299AA296257228100E1928532C141D5824859C7A2509A148A1EC1E7C94E39D5E950629AD933399AEA7C9922C1F7F9675A644206AA113A6A1AA16173728BB2479A2BC94A51A2B2B122676A5182470A33DA5A1980225E92280266427C0A875245BA6FB2B36291D2412A8CCA82E9B3526A725E7A04EA240A189A521A5ED252125BE235A20D5A3070CE2A4F09CFA25079F082097A43BAA09A2DAA2951C2DA4CAA85CA830285AA773A71825CC002E2139A520152A25CB259B29C81B2813C1A311A6DD20649E4096C52767A01AA68D1E36A73DA83DA863A11DA60EA1B0A42826AE0D45A41823C824899DE822DE9824A59BA264A866A4C22711249B2472222225719ADF9D372641210EA81E217B9C4B27E62997287F24A4A23529959EDC24DB9B9C24E9A31D250C1B7C26AFA0359F73A689A959A36526F8A60AA977247D1B02A69C215BA47F29FD1BB723E5A4A32492247F9C62240AA2E918EEA2F01BD01FA4A2731D9F200326639C1E27419B7DA8CE1ADE9AE01C4899CD1F0D25EEA6ADA341A8E99BEF251A1E6C22D61899A0181D6A275825B6202E2AB126F5202520E124AB2527A7889A8AA6AFA169A4EF8AAF2662A14220161D9CA4719975259DA25DA6F92101A6B4A55D9B62A6F70A37A90D9DF21014A246A5B51FE72A2AA8CC22021F0B27159D6CAABD204923B5240BA0AAA33B29552405A0CE2C679F6A95C4189CA883A0549B9B13DDA2EB9D0B281B9E1F15FBA6FE1A709ACD2449A3FE9FAF9C4C27FE1C02A6CD9AFCA3BEA41C921A28F39FB1A6BD2579A213A9171CCE23D49DA0A0369A6A24AF23289D169B8EA29A2024A2EE1BC722071A292A3BA2B921D527C095D725D7268D0051284E99E824C3A23C224D2AED237F27CB1C34A25FA06EA9E4A7131B7429EEA0F523DA9F91A52E28081B1DA229283B214E1D63A5B323B02410A8F9A22324A428F31BC320639FF52504A116A7A4206F11601FC29F16A420A09E9DE8A5791FD92207A89E9EEEA495A15E1002A70BA9451FA625F9A07CA080A244A60BA568A125A4822710A4FB9851A2CAA13226782353A1B12629A6D228FF1A0BA0D59C56148A26A521589F89A3742914A1452507270F24322451290A280823AD202FA76F246625329D34A426A54CA20A286DA6442B209FA9A94F246E24EE1B06A539A75CA35C9CE4A59028B826E9252EA977254AA8EBA4A2A1BA9A2826EF22B39CA326DF26D51914A809A48C1F2BA2DFA74E98C21F04278A980E25EC9595A232A1BAA29B207120EDA88B22E626C52181A1FCA4D91CC12182A39AA6C31FD8A0561F66232B94F0AA6EA66FA12825BF1E3F22BFAA0625EA24F510A5A22B9816A8FCA456218519C118E0A457ABF22577A1A92587254A20E898789ABEA7672A0FA5389C7020DEA81BA92DA8C4A4909D96243713F81AE327DC1BE6229127FA85D99AEC2180A9B71C15A7E0A3789CB625262A9D26A52300266F1CB72A8D1FDF9B4E2846A8E3A43FA4E894DCA37B2581A93526679972A5A8A3249593245A26B9A062A50AA7CB2406084B224B0621252B2682248527C1A1D1A2C8A25E226B9C4BA5919EAA2393264127A9A6B6A694A78A233D25C9A1AB9ACAA4BA2682175F24BD158CA4B4A06711EC2257A63293CF1C10A79018BF2288A2F710D4218DA4BB9EEA1B941D911E2607A2290FA6BBA691A2751E3498B2A343203CA522902A1D02249DA0889C8E1B2EA97F9C8BA0B21B83243620349C451AA3249D1FCFA27DA058177213871D7E9584A4E829A6260D20B328AA1DABA2DF2278A4F7A1D4A1E6A5C5A537965224C4A4A3A89B1B53A48326961B221B622592284822D91E7F22E524C52994256E20B2260D1DEAA2162447222AA459288020989E4128721D981D44A3E79D60164023589984A479A72C2218A275AAE221D499E29CBA21DD1B36A4981C53A6"
    }
  }
#-}
