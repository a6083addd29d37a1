// Derived from llama_decode.linalg.mlir by scripts/derive_fp8cache_fixture.py:
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
  func.func @llama_decode_fp8cache(%arg0: tensor<2x1xi64>, %arg1: tensor<1xi64>, %arg2: tensor<2x2x64x16xf8E4M3FN>, %arg3: tensor<2x2x64x16xf8E4M3FN>, %arg4: tensor<2x2x64x16xf8E4M3FN>, %arg5: tensor<2x2x64x16xf8E4M3FN>) -> tensor<2x1x64xf16> {
    %k_scale0 = arith.constant dense<[[[[0.5]], [[2.0]]]]> : tensor<1x2x1x1xf32>
    %k_scale1 = arith.constant dense<[[[[2.0]], [[0.5]]]]> : tensor<1x2x1x1xf32>
    %v_scale0 = arith.constant dense<[[[[0.25]], [[1.0]]]]> : tensor<1x2x1x1xf32>
    %v_scale1 = arith.constant dense<[[[[1.0]], [[0.25]]]]> : tensor<1x2x1x1xf32>
    %c2_i64 = arith.constant 2 : i64
    %c0_i64 = arith.constant 0 : i64
    %c64 = arith.constant 64 : index
    %cst = arith.constant 0.000000e+00 : f16
    %cst_0 = arith.constant 0xFC00 : f16
    %true = arith.constant true
    %cst_1 = arith.constant 1.000000e+00 : f16
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<2x4x1x64xf16>
    %cst_3 = arith.constant dense<0.000000e+00> : tensor<f16>
    %cst_4 = arith.constant dense<0xFC00> : tensor<f16>
    %cst_5 = arith.constant dense_resource<torch_tensor_64_torch.float32_4> : tensor<64xf16>
    %cst_6 = arith.constant dense_resource<torch_tensor_64_128_torch.float32_1> : tensor<64x128xf16>
    %cst_7 = arith.constant dense_resource<torch_tensor_128_64_torch.float32_3> : tensor<128x64xf16>
    %cst_8 = arith.constant dense_resource<torch_tensor_128_64_torch.float32_2> : tensor<128x64xf16>
    %cst_9 = arith.constant dense_resource<torch_tensor_64_torch.float32_3> : tensor<64xf16>
    %cst_10 = arith.constant dense_resource<torch_tensor_64_64_torch.float32_4> : tensor<64x64xf16>
    %cst_11 = arith.constant dense_resource<torch_tensor_32_64_torch.float32_3> : tensor<32x64xf16>
    %cst_12 = arith.constant dense_resource<torch_tensor_32_64_torch.float32_2> : tensor<32x64xf16>
    %cst_13 = arith.constant dense_resource<torch_tensor_64_64_torch.float32_3> : tensor<64x64xf16>
    %cst_14 = arith.constant dense_resource<torch_tensor_64_torch.float32_2> : tensor<64xf16>
    %cst_15 = arith.constant dense_resource<torch_tensor_64_128_torch.float32> : tensor<64x128xf16>
    %cst_16 = arith.constant dense_resource<torch_tensor_128_64_torch.float32_1> : tensor<128x64xf16>
    %cst_17 = arith.constant dense_resource<torch_tensor_128_64_torch.float32> : tensor<128x64xf16>
    %cst_18 = arith.constant dense_resource<torch_tensor_64_torch.float32_1> : tensor<64xf16>
    %cst_19 = arith.constant dense_resource<torch_tensor_64_64_torch.float32_2> : tensor<64x64xf16>
    %cst_20 = arith.constant 0xFFF0000000000000 : f64
    %cst_21 = arith.constant dense_resource<torch_tensor_32_64_torch.float32_1> : tensor<32x64xf16>
    %cst_22 = arith.constant dense_resource<torch_tensor_32_64_torch.float32> : tensor<32x64xf16>
    %cst_23 = arith.constant dense_resource<torch_tensor_64_64_torch.float32_1> : tensor<64x64xf16>
    %cst_24 = arith.constant dense_resource<torch_tensor_64_torch.float32> : tensor<64xf16>
    %cst_25 = arith.constant 9.9999999999999995E-7 : f64
    %cst_26 = arith.constant dense_resource<torch_tensor_8_torch.float32> : tensor<8xf16>
    %cst_27 = arith.constant dense_resource<torch_tensor_64_64_torch.float32> : tensor<64x64xf16>
    %cst_28 = arith.constant 6.400000e+01 : f16
    %cst_29 = arith.constant 5.000000e-01 : f16
    %0 = tensor.empty() : tensor<2x1x64xf16>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x1xi64>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: i64, %out: f16):
      %172 = arith.index_cast %in : i64 to index
      %173 = linalg.index 2 : index
      %174 = arith.cmpi slt, %172, %c64 : index
      cf.assert %174, "index must be smaller than dim size"
      %175 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %175, "index must be larger or equal to 0"
      %extracted = tensor.extract %cst_27[%172, %173] : tensor<64x64xf16>
      linalg.yield %extracted : f16
    } -> tensor<2x1x64xf16>
    %2 = tensor.empty() : tensor<1xi64>
    %3 = linalg.generic {indexing_maps = [#map2], iterator_types = ["parallel"]} outs(%2 : tensor<1xi64>) {
    ^bb0(%out: i64):
      linalg.yield %c0_i64 : i64
    } -> tensor<1xi64>
    %4 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel"]} ins(%3, %arg1 : tensor<1xi64>, tensor<1xi64>) outs(%2 : tensor<1xi64>) {
    ^bb0(%in: i64, %in_124: i64, %out: i64):
      %172 = arith.addi %in, %in_124 : i64
      linalg.yield %172 : i64
    } -> tensor<1xi64>
    %5 = tensor.empty() : tensor<64xi64>
    %6 = linalg.generic {indexing_maps = [#map2], iterator_types = ["parallel"]} outs(%5 : tensor<64xi64>) {
    ^bb0(%out: i64):
      %172 = linalg.index 0 : index
      %173 = arith.index_cast %172 : index to i64
      linalg.yield %173 : i64
    } -> tensor<64xi64>
    %expanded = tensor.expand_shape %4 [[0, 1, 2, 3]] output_shape [1, 1, 1, 1] : tensor<1xi64> into tensor<1x1x1x1xi64>
    %expanded_30 = tensor.expand_shape %6 [[0, 1, 2, 3]] output_shape [1, 1, 1, 64] : tensor<64xi64> into tensor<1x1x1x64xi64>
    %7 = tensor.empty() : tensor<1x1x1x64xi1>
    %8 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_30, %expanded : tensor<1x1x1x64xi64>, tensor<1x1x1x1xi64>) outs(%7 : tensor<1x1x1x64xi1>) {
    ^bb0(%in: i64, %in_124: i64, %out: i1):
      %172 = arith.cmpi sle, %in, %in_124 : i64
      linalg.yield %172 : i1
    } -> tensor<1x1x1x64xi1>
    %9 = tensor.empty() : tensor<2x1x1x64xi1>
    %collapsed = tensor.collapse_shape %8 [[0, 1], [2], [3]] : tensor<1x1x1x64xi1> into tensor<1x1x64xi1>
    %10 = linalg.generic {indexing_maps = [#map5, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed : tensor<1x1x64xi1>) outs(%9 : tensor<2x1x1x64xi1>) {
    ^bb0(%in: i1, %out: i1):
      linalg.yield %in : i1
    } -> tensor<2x1x1x64xi1>
    %expanded_31 = tensor.expand_shape %4 [[0, 1, 2]] output_shape [1, 1, 1] : tensor<1xi64> into tensor<1x1x1xi64>
    %11 = tensor.empty() : tensor<1x1x1xf16>
    %12 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_31 : tensor<1x1x1xi64>) outs(%11 : tensor<1x1x1xf16>) {
    ^bb0(%in: i64, %out: f16):
      %172 = arith.sitofp %in : i64 to f16
      linalg.yield %172 : f16
    } -> tensor<1x1x1xf16>
    %13 = tensor.empty() : tensor<1x1x8xf16>
    %14 = linalg.generic {indexing_maps = [#map6, #map7, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12, %cst_26 : tensor<1x1x1xf16>, tensor<8xf16>) outs(%13 : tensor<1x1x8xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<1x1x8xf16>
    %concat = tensor.concat dim(2) %14, %14 : (tensor<1x1x8xf16>, tensor<1x1x8xf16>) -> tensor<1x1x16xf16>
    %15 = tensor.empty() : tensor<1x1x16xf16>
    %16 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<1x1x16xf16>) outs(%15 : tensor<1x1x16xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.cos %in : f16
      linalg.yield %172 : f16
    } -> tensor<1x1x16xf16>
    %17 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<1x1x16xf16>) outs(%15 : tensor<1x1x16xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.sin %in : f16
      linalg.yield %172 : f16
    } -> tensor<1x1x16xf16>
    %18 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1 : tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.fpowi %in, %c2_i64 : f16, i64
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %19 = tensor.empty() : tensor<2x1x1xf16>
    %20 = linalg.fill ins(%cst : f16) outs(%19 : tensor<2x1x1xf16>) -> tensor<2x1x1xf16>
    %21 = linalg.generic {indexing_maps = [#map1, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%18 : tensor<2x1x64xf16>) outs(%20 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.addf %in, %out : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %22 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%21 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.divf %in, %cst_28 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %23 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%22 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.truncf %cst_25 : f64 to f16
      %173 = arith.addf %in, %172 : f16
      linalg.yield %173 : f16
    } -> tensor<2x1x1xf16>
    %24 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%23 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.rsqrt %in : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %25 = linalg.generic {indexing_maps = [#map1, #map6, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %24 : tensor<2x1x64xf16>, tensor<2x1x1xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %26 = linalg.generic {indexing_maps = [#map7, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_24, %25 : tensor<64xf16>, tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %27 = tensor.empty() : tensor<64x64xf16>
    %transposed = linalg.transpose ins(%cst_23 : tensor<64x64xf16>) outs(%27 : tensor<64x64xf16>) permutation = [1, 0] 
    %collapsed_32 = tensor.collapse_shape %26 [[0], [1, 2]] : tensor<2x1x64xf16> into tensor<2x64xf16>
    %28 = tensor.empty() : tensor<2x64xf16>
    %29 = linalg.fill ins(%cst : f16) outs(%28 : tensor<2x64xf16>) -> tensor<2x64xf16>
    %30 = linalg.matmul ins(%collapsed_32, %transposed : tensor<2x64xf16>, tensor<64x64xf16>) outs(%29 : tensor<2x64xf16>) -> tensor<2x64xf16>
    %expanded_33 = tensor.expand_shape %30 [[0], [1, 2, 3]] output_shape [2, 1, 4, 16] : tensor<2x64xf16> into tensor<2x1x4x16xf16>
    %31 = tensor.empty() : tensor<2x4x1x16xf16>
    %transposed_34 = linalg.transpose ins(%expanded_33 : tensor<2x1x4x16xf16>) outs(%31 : tensor<2x4x1x16xf16>) permutation = [0, 2, 1, 3] 
    %32 = tensor.empty() : tensor<64x32xf16>
    %transposed_35 = linalg.transpose ins(%cst_22 : tensor<32x64xf16>) outs(%32 : tensor<64x32xf16>) permutation = [1, 0] 
    %33 = tensor.empty() : tensor<2x32xf16>
    %34 = linalg.fill ins(%cst : f16) outs(%33 : tensor<2x32xf16>) -> tensor<2x32xf16>
    %35 = linalg.matmul ins(%collapsed_32, %transposed_35 : tensor<2x64xf16>, tensor<64x32xf16>) outs(%34 : tensor<2x32xf16>) -> tensor<2x32xf16>
    %expanded_36 = tensor.expand_shape %35 [[0], [1, 2, 3]] output_shape [2, 1, 2, 16] : tensor<2x32xf16> into tensor<2x1x2x16xf16>
    %36 = tensor.empty() : tensor<2x2x1x16xf16>
    %transposed_37 = linalg.transpose ins(%expanded_36 : tensor<2x1x2x16xf16>) outs(%36 : tensor<2x2x1x16xf16>) permutation = [0, 2, 1, 3] 
    %transposed_38 = linalg.transpose ins(%cst_21 : tensor<32x64xf16>) outs(%32 : tensor<64x32xf16>) permutation = [1, 0] 
    %37 = linalg.matmul ins(%collapsed_32, %transposed_38 : tensor<2x64xf16>, tensor<64x32xf16>) outs(%34 : tensor<2x32xf16>) -> tensor<2x32xf16>
    %expanded_39 = tensor.expand_shape %37 [[0], [1, 2, 3]] output_shape [2, 1, 2, 16] : tensor<2x32xf16> into tensor<2x1x2x16xf16>
    %transposed_40 = linalg.transpose ins(%expanded_39 : tensor<2x1x2x16xf16>) outs(%36 : tensor<2x2x1x16xf16>) permutation = [0, 2, 1, 3] 
    %expanded_41 = tensor.expand_shape %16 [[0], [1, 2], [3]] output_shape [1, 1, 1, 16] : tensor<1x1x16xf16> into tensor<1x1x1x16xf16>
    %expanded_42 = tensor.expand_shape %17 [[0], [1, 2], [3]] output_shape [1, 1, 1, 16] : tensor<1x1x16xf16> into tensor<1x1x1x16xf16>
    %38 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_34, %expanded_41 : tensor<2x4x1x16xf16>, tensor<1x1x1x16xf16>) outs(%31 : tensor<2x4x1x16xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x16xf16>
    %extracted_slice = tensor.extract_slice %transposed_34[0, 0, 0, 0] [2, 4, 1, 8] [1, 1, 1, 1] : tensor<2x4x1x16xf16> to tensor<2x4x1x8xf16>
    %extracted_slice_43 = tensor.extract_slice %transposed_34[0, 0, 0, 8] [2, 4, 1, 8] [1, 1, 1, 1] : tensor<2x4x1x16xf16> to tensor<2x4x1x8xf16>
    %39 = tensor.empty() : tensor<2x4x1x8xf16>
    %40 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_43 : tensor<2x4x1x8xf16>) outs(%39 : tensor<2x4x1x8xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.negf %in : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x8xf16>
    %concat_44 = tensor.concat dim(3) %40, %extracted_slice : (tensor<2x4x1x8xf16>, tensor<2x4x1x8xf16>) -> tensor<2x4x1x16xf16>
    %41 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_44, %expanded_42 : tensor<2x4x1x16xf16>, tensor<1x1x1x16xf16>) outs(%31 : tensor<2x4x1x16xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x16xf16>
    %42 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%38, %41 : tensor<2x4x1x16xf16>, tensor<2x4x1x16xf16>) outs(%31 : tensor<2x4x1x16xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.addf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x16xf16>
    %43 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_37, %expanded_41 : tensor<2x2x1x16xf16>, tensor<1x1x1x16xf16>) outs(%36 : tensor<2x2x1x16xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x2x1x16xf16>
    %extracted_slice_45 = tensor.extract_slice %transposed_37[0, 0, 0, 0] [2, 2, 1, 8] [1, 1, 1, 1] : tensor<2x2x1x16xf16> to tensor<2x2x1x8xf16>
    %extracted_slice_46 = tensor.extract_slice %transposed_37[0, 0, 0, 8] [2, 2, 1, 8] [1, 1, 1, 1] : tensor<2x2x1x16xf16> to tensor<2x2x1x8xf16>
    %44 = tensor.empty() : tensor<2x2x1x8xf16>
    %45 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_46 : tensor<2x2x1x8xf16>) outs(%44 : tensor<2x2x1x8xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.negf %in : f16
      linalg.yield %172 : f16
    } -> tensor<2x2x1x8xf16>
    %concat_47 = tensor.concat dim(3) %45, %extracted_slice_45 : (tensor<2x2x1x8xf16>, tensor<2x2x1x8xf16>) -> tensor<2x2x1x16xf16>
    %46 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_47, %expanded_42 : tensor<2x2x1x16xf16>, tensor<1x1x1x16xf16>) outs(%36 : tensor<2x2x1x16xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x2x1x16xf16>
    %47 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%43, %46 : tensor<2x2x1x16xf16>, tensor<2x2x1x16xf16>) outs(%36 : tensor<2x2x1x16xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.addf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x2x1x16xf16>
    %48 = tensor.empty() : tensor<16xi64>
    %49 = linalg.generic {indexing_maps = [#map2], iterator_types = ["parallel"]} outs(%48 : tensor<16xi64>) {
    ^bb0(%out: i64):
      %172 = linalg.index 0 : index
      %173 = arith.index_cast %172 : index to i64
      linalg.yield %173 : i64
    } -> tensor<16xi64>
    %50 = tensor.empty() : tensor<2xi64>
    %51 = linalg.generic {indexing_maps = [#map2], iterator_types = ["parallel"]} outs(%50 : tensor<2xi64>) {
    ^bb0(%out: i64):
      %172 = linalg.index 0 : index
      %173 = arith.index_cast %172 : index to i64
      linalg.yield %173 : i64
    } -> tensor<2xi64>
    %52 = tensor.empty() : tensor<2x2x1x16xi64>
    %expanded_48 = tensor.expand_shape %51 [[0, 1]] output_shape [2, 1] : tensor<2xi64> into tensor<2x1xi64>
    %53 = linalg.generic {indexing_maps = [#map9, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_48 : tensor<2x1xi64>) outs(%52 : tensor<2x2x1x16xi64>) {
    ^bb0(%in: i64, %out: i64):
      linalg.yield %in : i64
    } -> tensor<2x2x1x16xi64>
    %collapsed_49 = tensor.collapse_shape %53 [[0, 1, 2, 3]] : tensor<2x2x1x16xi64> into tensor<64xi64>
    %54 = linalg.generic {indexing_maps = [#map10, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_48 : tensor<2x1xi64>) outs(%52 : tensor<2x2x1x16xi64>) {
    ^bb0(%in: i64, %out: i64):
      linalg.yield %in : i64
    } -> tensor<2x2x1x16xi64>
    %collapsed_50 = tensor.collapse_shape %54 [[0, 1, 2, 3]] : tensor<2x2x1x16xi64> into tensor<64xi64>
    %55 = linalg.generic {indexing_maps = [#map11, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4 : tensor<1xi64>) outs(%52 : tensor<2x2x1x16xi64>) {
    ^bb0(%in: i64, %out: i64):
      linalg.yield %in : i64
    } -> tensor<2x2x1x16xi64>
    %collapsed_51 = tensor.collapse_shape %55 [[0, 1, 2, 3]] : tensor<2x2x1x16xi64> into tensor<64xi64>
    %56 = linalg.generic {indexing_maps = [#map12, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%49 : tensor<16xi64>) outs(%52 : tensor<2x2x1x16xi64>) {
    ^bb0(%in: i64, %out: i64):
      linalg.yield %in : i64
    } -> tensor<2x2x1x16xi64>
    %collapsed_52 = tensor.collapse_shape %56 [[0, 1, 2, 3]] : tensor<2x2x1x16xi64> into tensor<64xi64>
    %expanded_53 = tensor.expand_shape %collapsed_49 [[0, 1]] output_shape [64, 1] : tensor<64xi64> into tensor<64x1xi64>
    %expanded_54 = tensor.expand_shape %collapsed_50 [[0, 1]] output_shape [64, 1] : tensor<64xi64> into tensor<64x1xi64>
    %expanded_55 = tensor.expand_shape %collapsed_51 [[0, 1]] output_shape [64, 1] : tensor<64xi64> into tensor<64x1xi64>
    %expanded_56 = tensor.expand_shape %collapsed_52 [[0, 1]] output_shape [64, 1] : tensor<64xi64> into tensor<64x1xi64>
    %concat_57 = tensor.concat dim(1) %expanded_53, %expanded_54, %expanded_55, %expanded_56 : (tensor<64x1xi64>, tensor<64x1xi64>, tensor<64x1xi64>, tensor<64x1xi64>) -> tensor<64x4xi64>
    %collapsed_58 = tensor.collapse_shape %47 [[0, 1, 2, 3]] : tensor<2x2x1x16xf16> into tensor<64xf16>
    %expanded_59 = tensor.expand_shape %collapsed_58 [[0, 1, 2, 3, 4]] output_shape [64, 1, 1, 1, 1] : tensor<64xf16> into tensor<64x1x1x1x1xf16>
    %scatter0_c0 = arith.constant 0 : index
    %scatter0_c1 = arith.constant 1 : index
    %scatter0_n = arith.constant 64 : index
    %57 = scf.for %scatter0_i = %scatter0_c0 to %scatter0_n step %scatter0_c1 iter_args(%scatter0_acc = %arg2) -> (tensor<2x2x64x16xf8E4M3FN>) {
      %scatter0_d0 = arith.constant 0 : index
      %scatter0_x0 = tensor.extract %concat_57[%scatter0_i, %scatter0_d0] : tensor<64x4xi64>
      %scatter0_y0 = arith.index_cast %scatter0_x0 : i64 to index
      %scatter0_d1 = arith.constant 1 : index
      %scatter0_x1 = tensor.extract %concat_57[%scatter0_i, %scatter0_d1] : tensor<64x4xi64>
      %scatter0_y1 = arith.index_cast %scatter0_x1 : i64 to index
      %scatter0_d2 = arith.constant 2 : index
      %scatter0_x2 = tensor.extract %concat_57[%scatter0_i, %scatter0_d2] : tensor<64x4xi64>
      %scatter0_y2 = arith.index_cast %scatter0_x2 : i64 to index
      %scatter0_d3 = arith.constant 3 : index
      %scatter0_x3 = tensor.extract %concat_57[%scatter0_i, %scatter0_d3] : tensor<64x4xi64>
      %scatter0_y3 = arith.index_cast %scatter0_x3 : i64 to index
      %scatter0_v = tensor.extract %expanded_59[%scatter0_i, %scatter0_c0, %scatter0_c0, %scatter0_c0, %scatter0_c0] : tensor<64x1x1x1x1xf16>
      %scatter0_s = tensor.extract %k_scale0[%scatter0_c0, %scatter0_y1, %scatter0_c0, %scatter0_c0] : tensor<1x2x1x1xf32>
      %scatter0_st = arith.truncf %scatter0_s : f32 to f16
      %scatter0_q = arith.divf %scatter0_v, %scatter0_st : f16
      %scatter0_v8 = arith.truncf %scatter0_q : f16 to f8E4M3FN
      %scatter0_r = tensor.insert %scatter0_v8 into %scatter0_acc[%scatter0_y0, %scatter0_y1, %scatter0_y2, %scatter0_y3] : tensor<2x2x64x16xf8E4M3FN>
      scf.yield %scatter0_r : tensor<2x2x64x16xf8E4M3FN>
    }
    // The K cache of layer 0 dequantised: one fused generic.
    %kdeq0_e = tensor.empty() : tensor<2x2x64x16xf16>
    %kdeq0 = linalg.generic {indexing_maps = [#map3, #fp8_head, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%57, %k_scale0 : tensor<2x2x64x16xf8E4M3FN>, tensor<1x2x1x1xf32>) outs(%kdeq0_e : tensor<2x2x64x16xf16>) {
    ^bb0(%in: f8E4M3FN, %in_s: f32, %out: f16):
      %fp8_x = arith.extf %in : f8E4M3FN to f16
      %fp8_s = arith.truncf %in_s : f32 to f16
      %fp8_m = arith.mulf %fp8_x, %fp8_s : f16
      linalg.yield %fp8_m : f16
    } -> tensor<2x2x64x16xf16>
    %collapsed_60 = tensor.collapse_shape %transposed_40 [[0, 1, 2, 3]] : tensor<2x2x1x16xf16> into tensor<64xf16>
    %expanded_61 = tensor.expand_shape %collapsed_60 [[0, 1, 2, 3, 4]] output_shape [64, 1, 1, 1, 1] : tensor<64xf16> into tensor<64x1x1x1x1xf16>
    %scatter1_c0 = arith.constant 0 : index
    %scatter1_c1 = arith.constant 1 : index
    %scatter1_n = arith.constant 64 : index
    %58 = scf.for %scatter1_i = %scatter1_c0 to %scatter1_n step %scatter1_c1 iter_args(%scatter1_acc = %arg3) -> (tensor<2x2x64x16xf8E4M3FN>) {
      %scatter1_d0 = arith.constant 0 : index
      %scatter1_x0 = tensor.extract %concat_57[%scatter1_i, %scatter1_d0] : tensor<64x4xi64>
      %scatter1_y0 = arith.index_cast %scatter1_x0 : i64 to index
      %scatter1_d1 = arith.constant 1 : index
      %scatter1_x1 = tensor.extract %concat_57[%scatter1_i, %scatter1_d1] : tensor<64x4xi64>
      %scatter1_y1 = arith.index_cast %scatter1_x1 : i64 to index
      %scatter1_d2 = arith.constant 2 : index
      %scatter1_x2 = tensor.extract %concat_57[%scatter1_i, %scatter1_d2] : tensor<64x4xi64>
      %scatter1_y2 = arith.index_cast %scatter1_x2 : i64 to index
      %scatter1_d3 = arith.constant 3 : index
      %scatter1_x3 = tensor.extract %concat_57[%scatter1_i, %scatter1_d3] : tensor<64x4xi64>
      %scatter1_y3 = arith.index_cast %scatter1_x3 : i64 to index
      %scatter1_v = tensor.extract %expanded_61[%scatter1_i, %scatter1_c0, %scatter1_c0, %scatter1_c0, %scatter1_c0] : tensor<64x1x1x1x1xf16>
      %scatter1_s = tensor.extract %v_scale0[%scatter1_c0, %scatter1_y1, %scatter1_c0, %scatter1_c0] : tensor<1x2x1x1xf32>
      %scatter1_st = arith.truncf %scatter1_s : f32 to f16
      %scatter1_q = arith.divf %scatter1_v, %scatter1_st : f16
      %scatter1_v8 = arith.truncf %scatter1_q : f16 to f8E4M3FN
      %scatter1_r = tensor.insert %scatter1_v8 into %scatter1_acc[%scatter1_y0, %scatter1_y1, %scatter1_y2, %scatter1_y3] : tensor<2x2x64x16xf8E4M3FN>
      scf.yield %scatter1_r : tensor<2x2x64x16xf8E4M3FN>
    }
    // The V cache of layer 0 dequantised: an up-cast, then the mul.
    %vdeq0_e = tensor.empty() : tensor<2x2x64x16xf16>
    %vup0 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%58 : tensor<2x2x64x16xf8E4M3FN>) outs(%vdeq0_e : tensor<2x2x64x16xf16>) {
    ^bb0(%in: f8E4M3FN, %out: f16):
      %fp8_x = arith.extf %in : f8E4M3FN to f16
      linalg.yield %fp8_x : f16
    } -> tensor<2x2x64x16xf16>
    %vdeq0 = linalg.generic {indexing_maps = [#map3, #fp8_head, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%vup0, %v_scale0 : tensor<2x2x64x16xf16>, tensor<1x2x1x1xf32>) outs(%vdeq0_e : tensor<2x2x64x16xf16>) {
    ^bb0(%in: f16, %in_s: f32, %out: f16):
      %fp8_s = arith.truncf %in_s : f32 to f16
      %fp8_m = arith.mulf %in, %fp8_s : f16
      linalg.yield %fp8_m : f16
    } -> tensor<2x2x64x16xf16>
    %59 = tensor.empty() : tensor<2x2x2x64x16xf16>
    %60 = linalg.generic {indexing_maps = [#map13, #map14], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%kdeq0 : tensor<2x2x64x16xf16>) outs(%59 : tensor<2x2x2x64x16xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<2x2x2x64x16xf16>
    %collapsed_62 = tensor.collapse_shape %60 [[0], [1, 2], [3], [4]] : tensor<2x2x2x64x16xf16> into tensor<2x4x64x16xf16>
    %61 = linalg.generic {indexing_maps = [#map13, #map14], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%vdeq0 : tensor<2x2x64x16xf16>) outs(%59 : tensor<2x2x2x64x16xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<2x2x2x64x16xf16>
    %62 = tensor.empty() : tensor<2x1x1x64xf16>
    %63 = linalg.generic {indexing_maps = [#map3, #map15, #map15, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10, %cst_3, %cst_4 : tensor<2x1x1x64xi1>, tensor<f16>, tensor<f16>) outs(%62 : tensor<2x1x1x64xf16>) {
    ^bb0(%in: i1, %in_124: f16, %in_125: f16, %out: f16):
      %172 = arith.select %in, %in_124, %in_125 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1x64xf16>
    %64 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%42 : tensor<2x4x1x16xf16>) outs(%31 : tensor<2x4x1x16xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.mulf %in, %cst_29 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x16xf16>
    %65 = tensor.empty() : tensor<2x4x16x64xf16>
    %transposed_63 = linalg.transpose ins(%collapsed_62 : tensor<2x4x64x16xf16>) outs(%65 : tensor<2x4x16x64xf16>) permutation = [0, 1, 3, 2] 
    %66 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_63 : tensor<2x4x16x64xf16>) outs(%65 : tensor<2x4x16x64xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.mulf %in, %cst_29 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x16x64xf16>
    %collapsed_64 = tensor.collapse_shape %64 [[0, 1], [2], [3]] : tensor<2x4x1x16xf16> into tensor<8x1x16xf16>
    %collapsed_65 = tensor.collapse_shape %66 [[0, 1], [2], [3]] : tensor<2x4x16x64xf16> into tensor<8x16x64xf16>
    %67 = tensor.empty() : tensor<8x1x64xf16>
    %68 = linalg.fill ins(%cst : f16) outs(%67 : tensor<8x1x64xf16>) -> tensor<8x1x64xf16>
    %69 = linalg.batch_matmul ins(%collapsed_64, %collapsed_65 : tensor<8x1x16xf16>, tensor<8x16x64xf16>) outs(%68 : tensor<8x1x64xf16>) -> tensor<8x1x64xf16>
    %expanded_66 = tensor.expand_shape %69 [[0, 1], [2], [3]] output_shape [2, 4, 1, 64] : tensor<8x1x64xf16> into tensor<2x4x1x64xf16>
    %70 = tensor.empty() : tensor<2x4x1x64xf16>
    %71 = linalg.generic {indexing_maps = [#map3, #map16, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_66, %63 : tensor<2x4x1x64xf16>, tensor<2x1x1x64xf16>) outs(%70 : tensor<2x4x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.addf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x64xf16>
    %72 = tensor.empty() : tensor<2x4x1xi64>
    %73 = linalg.fill ins(%c0_i64 : i64) outs(%72 : tensor<2x4x1xi64>) -> tensor<2x4x1xi64>
    %74 = tensor.empty() : tensor<2x4x1xf16>
    %75 = linalg.fill ins(%cst_0 : f16) outs(%74 : tensor<2x4x1xf16>) -> tensor<2x4x1xf16>
    %76:2 = linalg.generic {indexing_maps = [#map3, #map17, #map17], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%71 : tensor<2x4x1x64xf16>) outs(%75, %73 : tensor<2x4x1xf16>, tensor<2x4x1xi64>) {
    ^bb0(%in: f16, %out: f16, %out_124: i64):
      %172 = linalg.index 3 : index
      %173 = arith.index_cast %172 : index to i64
      %174 = arith.maximumf %in, %out : f16
      %175 = arith.cmpf ogt, %in, %out : f16
      %176 = arith.select %175, %173, %out_124 : i64
      linalg.yield %174, %176 : f16, i64
    } -> (tensor<2x4x1xf16>, tensor<2x4x1xi64>)
    %expanded_67 = tensor.expand_shape %76#0 [[0], [1], [2, 3]] output_shape [2, 4, 1, 1] : tensor<2x4x1xf16> into tensor<2x4x1x1xf16>
    %77 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%71, %expanded_67 : tensor<2x4x1x64xf16>, tensor<2x4x1x1xf16>) outs(%70 : tensor<2x4x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.subf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x64xf16>
    %78 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%77 : tensor<2x4x1x64xf16>) outs(%70 : tensor<2x4x1x64xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.exp %in : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x64xf16>
    %79 = tensor.empty() : tensor<2x4x1x1xf16>
    %80 = linalg.fill ins(%cst : f16) outs(%79 : tensor<2x4x1x1xf16>) -> tensor<2x4x1x1xf16>
    %81 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%78 : tensor<2x4x1x64xf16>) outs(%80 : tensor<2x4x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.addf %in, %out : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x1xf16>
    %82 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%78, %81 : tensor<2x4x1x64xf16>, tensor<2x4x1x1xf16>) outs(%70 : tensor<2x4x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.divf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x64xf16>
    %83 = tensor.empty() : tensor<2x4x1x64xi1>
    %84 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%71 : tensor<2x4x1x64xf16>) outs(%83 : tensor<2x4x1x64xi1>) {
    ^bb0(%in: f16, %out: i1):
      %172 = arith.extf %in : f16 to f64
      %173 = arith.cmpf oeq, %172, %cst_20 : f64
      linalg.yield %173 : i1
    } -> tensor<2x4x1x64xi1>
    %85 = tensor.empty() : tensor<2x4x1x1xi1>
    %86 = linalg.fill ins(%true : i1) outs(%85 : tensor<2x4x1x1xi1>) -> tensor<2x4x1x1xi1>
    %87 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%84 : tensor<2x4x1x64xi1>) outs(%86 : tensor<2x4x1x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %172 = arith.andi %in, %out : i1
      linalg.yield %172 : i1
    } -> tensor<2x4x1x1xi1>
    %88 = linalg.generic {indexing_maps = [#map4, #map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%87, %cst_2, %82 : tensor<2x4x1x1xi1>, tensor<2x4x1x64xf16>, tensor<2x4x1x64xf16>) outs(%70 : tensor<2x4x1x64xf16>) {
    ^bb0(%in: i1, %in_124: f16, %in_125: f16, %out: f16):
      %172 = arith.select %in, %in_124, %in_125 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x64xf16>
    %collapsed_68 = tensor.collapse_shape %88 [[0, 1], [2], [3]] : tensor<2x4x1x64xf16> into tensor<8x1x64xf16>
    %collapsed_69 = tensor.collapse_shape %61 [[0, 1, 2], [3], [4]] : tensor<2x2x2x64x16xf16> into tensor<8x64x16xf16>
    %89 = tensor.empty() : tensor<8x1x16xf16>
    %90 = linalg.fill ins(%cst : f16) outs(%89 : tensor<8x1x16xf16>) -> tensor<8x1x16xf16>
    %91 = linalg.batch_matmul ins(%collapsed_68, %collapsed_69 : tensor<8x1x64xf16>, tensor<8x64x16xf16>) outs(%90 : tensor<8x1x16xf16>) -> tensor<8x1x16xf16>
    %expanded_70 = tensor.expand_shape %91 [[0, 1], [2], [3]] output_shape [2, 4, 1, 16] : tensor<8x1x16xf16> into tensor<2x4x1x16xf16>
    %92 = tensor.empty() : tensor<2x1x4x16xf16>
    %transposed_71 = linalg.transpose ins(%expanded_70 : tensor<2x4x1x16xf16>) outs(%92 : tensor<2x1x4x16xf16>) permutation = [0, 2, 1, 3] 
    %transposed_72 = linalg.transpose ins(%cst_19 : tensor<64x64xf16>) outs(%27 : tensor<64x64xf16>) permutation = [1, 0] 
    %collapsed_73 = tensor.collapse_shape %transposed_71 [[0], [1, 2, 3]] : tensor<2x1x4x16xf16> into tensor<2x64xf16>
    %93 = linalg.matmul ins(%collapsed_73, %transposed_72 : tensor<2x64xf16>, tensor<64x64xf16>) outs(%29 : tensor<2x64xf16>) -> tensor<2x64xf16>
    %expanded_74 = tensor.expand_shape %93 [[0], [1, 2]] output_shape [2, 1, 64] : tensor<2x64xf16> into tensor<2x1x64xf16>
    %94 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %expanded_74 : tensor<2x1x64xf16>, tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.addf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %95 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%94 : tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.fpowi %in, %c2_i64 : f16, i64
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %96 = linalg.generic {indexing_maps = [#map1, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%95 : tensor<2x1x64xf16>) outs(%20 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.addf %in, %out : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %97 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%96 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.divf %in, %cst_28 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %98 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%97 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.truncf %cst_25 : f64 to f16
      %173 = arith.addf %in, %172 : f16
      linalg.yield %173 : f16
    } -> tensor<2x1x1xf16>
    %99 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%98 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.rsqrt %in : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %100 = linalg.generic {indexing_maps = [#map1, #map6, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%94, %99 : tensor<2x1x64xf16>, tensor<2x1x1xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %101 = linalg.generic {indexing_maps = [#map7, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_18, %100 : tensor<64xf16>, tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %102 = tensor.empty() : tensor<64x128xf16>
    %transposed_75 = linalg.transpose ins(%cst_17 : tensor<128x64xf16>) outs(%102 : tensor<64x128xf16>) permutation = [1, 0] 
    %collapsed_76 = tensor.collapse_shape %101 [[0], [1, 2]] : tensor<2x1x64xf16> into tensor<2x64xf16>
    %103 = tensor.empty() : tensor<2x128xf16>
    %104 = linalg.fill ins(%cst : f16) outs(%103 : tensor<2x128xf16>) -> tensor<2x128xf16>
    %105 = linalg.matmul ins(%collapsed_76, %transposed_75 : tensor<2x64xf16>, tensor<64x128xf16>) outs(%104 : tensor<2x128xf16>) -> tensor<2x128xf16>
    %expanded_77 = tensor.expand_shape %105 [[0], [1, 2]] output_shape [2, 1, 128] : tensor<2x128xf16> into tensor<2x1x128xf16>
    %106 = tensor.empty() : tensor<2x1x128xf16>
    %107 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_77 : tensor<2x1x128xf16>) outs(%106 : tensor<2x1x128xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.negf %in : f16
      %173 = math.exp %172 : f16
      %174 = arith.addf %173, %cst_1 : f16
      %175 = arith.divf %cst_1, %174 : f16
      linalg.yield %175 : f16
    } -> tensor<2x1x128xf16>
    %108 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_77, %107 : tensor<2x1x128xf16>, tensor<2x1x128xf16>) outs(%106 : tensor<2x1x128xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x128xf16>
    %transposed_78 = linalg.transpose ins(%cst_16 : tensor<128x64xf16>) outs(%102 : tensor<64x128xf16>) permutation = [1, 0] 
    %109 = linalg.matmul ins(%collapsed_76, %transposed_78 : tensor<2x64xf16>, tensor<64x128xf16>) outs(%104 : tensor<2x128xf16>) -> tensor<2x128xf16>
    %expanded_79 = tensor.expand_shape %109 [[0], [1, 2]] output_shape [2, 1, 128] : tensor<2x128xf16> into tensor<2x1x128xf16>
    %110 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%108, %expanded_79 : tensor<2x1x128xf16>, tensor<2x1x128xf16>) outs(%106 : tensor<2x1x128xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x128xf16>
    %111 = tensor.empty() : tensor<128x64xf16>
    %transposed_80 = linalg.transpose ins(%cst_15 : tensor<64x128xf16>) outs(%111 : tensor<128x64xf16>) permutation = [1, 0] 
    %collapsed_81 = tensor.collapse_shape %110 [[0], [1, 2]] : tensor<2x1x128xf16> into tensor<2x128xf16>
    %112 = linalg.matmul ins(%collapsed_81, %transposed_80 : tensor<2x128xf16>, tensor<128x64xf16>) outs(%29 : tensor<2x64xf16>) -> tensor<2x64xf16>
    %expanded_82 = tensor.expand_shape %112 [[0], [1, 2]] output_shape [2, 1, 64] : tensor<2x64xf16> into tensor<2x1x64xf16>
    %113 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%94, %expanded_82 : tensor<2x1x64xf16>, tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.addf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %114 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%113 : tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.fpowi %in, %c2_i64 : f16, i64
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %115 = linalg.generic {indexing_maps = [#map1, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%114 : tensor<2x1x64xf16>) outs(%20 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.addf %in, %out : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %116 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%115 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.divf %in, %cst_28 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %117 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%116 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.truncf %cst_25 : f64 to f16
      %173 = arith.addf %in, %172 : f16
      linalg.yield %173 : f16
    } -> tensor<2x1x1xf16>
    %118 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%117 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.rsqrt %in : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %119 = linalg.generic {indexing_maps = [#map1, #map6, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%113, %118 : tensor<2x1x64xf16>, tensor<2x1x1xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %120 = linalg.generic {indexing_maps = [#map7, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_14, %119 : tensor<64xf16>, tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %transposed_83 = linalg.transpose ins(%cst_13 : tensor<64x64xf16>) outs(%27 : tensor<64x64xf16>) permutation = [1, 0] 
    %collapsed_84 = tensor.collapse_shape %120 [[0], [1, 2]] : tensor<2x1x64xf16> into tensor<2x64xf16>
    %121 = linalg.matmul ins(%collapsed_84, %transposed_83 : tensor<2x64xf16>, tensor<64x64xf16>) outs(%29 : tensor<2x64xf16>) -> tensor<2x64xf16>
    %expanded_85 = tensor.expand_shape %121 [[0], [1, 2, 3]] output_shape [2, 1, 4, 16] : tensor<2x64xf16> into tensor<2x1x4x16xf16>
    %transposed_86 = linalg.transpose ins(%expanded_85 : tensor<2x1x4x16xf16>) outs(%31 : tensor<2x4x1x16xf16>) permutation = [0, 2, 1, 3] 
    %transposed_87 = linalg.transpose ins(%cst_12 : tensor<32x64xf16>) outs(%32 : tensor<64x32xf16>) permutation = [1, 0] 
    %122 = linalg.matmul ins(%collapsed_84, %transposed_87 : tensor<2x64xf16>, tensor<64x32xf16>) outs(%34 : tensor<2x32xf16>) -> tensor<2x32xf16>
    %expanded_88 = tensor.expand_shape %122 [[0], [1, 2, 3]] output_shape [2, 1, 2, 16] : tensor<2x32xf16> into tensor<2x1x2x16xf16>
    %transposed_89 = linalg.transpose ins(%expanded_88 : tensor<2x1x2x16xf16>) outs(%36 : tensor<2x2x1x16xf16>) permutation = [0, 2, 1, 3] 
    %transposed_90 = linalg.transpose ins(%cst_11 : tensor<32x64xf16>) outs(%32 : tensor<64x32xf16>) permutation = [1, 0] 
    %123 = linalg.matmul ins(%collapsed_84, %transposed_90 : tensor<2x64xf16>, tensor<64x32xf16>) outs(%34 : tensor<2x32xf16>) -> tensor<2x32xf16>
    %expanded_91 = tensor.expand_shape %123 [[0], [1, 2, 3]] output_shape [2, 1, 2, 16] : tensor<2x32xf16> into tensor<2x1x2x16xf16>
    %transposed_92 = linalg.transpose ins(%expanded_91 : tensor<2x1x2x16xf16>) outs(%36 : tensor<2x2x1x16xf16>) permutation = [0, 2, 1, 3] 
    %124 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_86, %expanded_41 : tensor<2x4x1x16xf16>, tensor<1x1x1x16xf16>) outs(%31 : tensor<2x4x1x16xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x16xf16>
    %extracted_slice_93 = tensor.extract_slice %transposed_86[0, 0, 0, 0] [2, 4, 1, 8] [1, 1, 1, 1] : tensor<2x4x1x16xf16> to tensor<2x4x1x8xf16>
    %extracted_slice_94 = tensor.extract_slice %transposed_86[0, 0, 0, 8] [2, 4, 1, 8] [1, 1, 1, 1] : tensor<2x4x1x16xf16> to tensor<2x4x1x8xf16>
    %125 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_94 : tensor<2x4x1x8xf16>) outs(%39 : tensor<2x4x1x8xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.negf %in : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x8xf16>
    %concat_95 = tensor.concat dim(3) %125, %extracted_slice_93 : (tensor<2x4x1x8xf16>, tensor<2x4x1x8xf16>) -> tensor<2x4x1x16xf16>
    %126 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_95, %expanded_42 : tensor<2x4x1x16xf16>, tensor<1x1x1x16xf16>) outs(%31 : tensor<2x4x1x16xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x16xf16>
    %127 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%124, %126 : tensor<2x4x1x16xf16>, tensor<2x4x1x16xf16>) outs(%31 : tensor<2x4x1x16xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.addf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x16xf16>
    %128 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_89, %expanded_41 : tensor<2x2x1x16xf16>, tensor<1x1x1x16xf16>) outs(%36 : tensor<2x2x1x16xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x2x1x16xf16>
    %extracted_slice_96 = tensor.extract_slice %transposed_89[0, 0, 0, 0] [2, 2, 1, 8] [1, 1, 1, 1] : tensor<2x2x1x16xf16> to tensor<2x2x1x8xf16>
    %extracted_slice_97 = tensor.extract_slice %transposed_89[0, 0, 0, 8] [2, 2, 1, 8] [1, 1, 1, 1] : tensor<2x2x1x16xf16> to tensor<2x2x1x8xf16>
    %129 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_97 : tensor<2x2x1x8xf16>) outs(%44 : tensor<2x2x1x8xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.negf %in : f16
      linalg.yield %172 : f16
    } -> tensor<2x2x1x8xf16>
    %concat_98 = tensor.concat dim(3) %129, %extracted_slice_96 : (tensor<2x2x1x8xf16>, tensor<2x2x1x8xf16>) -> tensor<2x2x1x16xf16>
    %130 = linalg.generic {indexing_maps = [#map3, #map8, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_98, %expanded_42 : tensor<2x2x1x16xf16>, tensor<1x1x1x16xf16>) outs(%36 : tensor<2x2x1x16xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x2x1x16xf16>
    %131 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%128, %130 : tensor<2x2x1x16xf16>, tensor<2x2x1x16xf16>) outs(%36 : tensor<2x2x1x16xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.addf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x2x1x16xf16>
    %collapsed_99 = tensor.collapse_shape %131 [[0, 1, 2, 3]] : tensor<2x2x1x16xf16> into tensor<64xf16>
    %expanded_100 = tensor.expand_shape %collapsed_99 [[0, 1, 2, 3, 4]] output_shape [64, 1, 1, 1, 1] : tensor<64xf16> into tensor<64x1x1x1x1xf16>
    %scatter2_c0 = arith.constant 0 : index
    %scatter2_c1 = arith.constant 1 : index
    %scatter2_n = arith.constant 64 : index
    %132 = scf.for %scatter2_i = %scatter2_c0 to %scatter2_n step %scatter2_c1 iter_args(%scatter2_acc = %arg4) -> (tensor<2x2x64x16xf8E4M3FN>) {
      %scatter2_d0 = arith.constant 0 : index
      %scatter2_x0 = tensor.extract %concat_57[%scatter2_i, %scatter2_d0] : tensor<64x4xi64>
      %scatter2_y0 = arith.index_cast %scatter2_x0 : i64 to index
      %scatter2_d1 = arith.constant 1 : index
      %scatter2_x1 = tensor.extract %concat_57[%scatter2_i, %scatter2_d1] : tensor<64x4xi64>
      %scatter2_y1 = arith.index_cast %scatter2_x1 : i64 to index
      %scatter2_d2 = arith.constant 2 : index
      %scatter2_x2 = tensor.extract %concat_57[%scatter2_i, %scatter2_d2] : tensor<64x4xi64>
      %scatter2_y2 = arith.index_cast %scatter2_x2 : i64 to index
      %scatter2_d3 = arith.constant 3 : index
      %scatter2_x3 = tensor.extract %concat_57[%scatter2_i, %scatter2_d3] : tensor<64x4xi64>
      %scatter2_y3 = arith.index_cast %scatter2_x3 : i64 to index
      %scatter2_v = tensor.extract %expanded_100[%scatter2_i, %scatter2_c0, %scatter2_c0, %scatter2_c0, %scatter2_c0] : tensor<64x1x1x1x1xf16>
      %scatter2_s = tensor.extract %k_scale1[%scatter2_c0, %scatter2_y1, %scatter2_c0, %scatter2_c0] : tensor<1x2x1x1xf32>
      %scatter2_st = arith.truncf %scatter2_s : f32 to f16
      %scatter2_q = arith.divf %scatter2_v, %scatter2_st : f16
      %scatter2_v8 = arith.truncf %scatter2_q : f16 to f8E4M3FN
      %scatter2_r = tensor.insert %scatter2_v8 into %scatter2_acc[%scatter2_y0, %scatter2_y1, %scatter2_y2, %scatter2_y3] : tensor<2x2x64x16xf8E4M3FN>
      scf.yield %scatter2_r : tensor<2x2x64x16xf8E4M3FN>
    }
    // The K cache of layer 1 dequantised: one fused generic.
    %kdeq1_e = tensor.empty() : tensor<2x2x64x16xf16>
    %kdeq1 = linalg.generic {indexing_maps = [#map3, #fp8_head, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%132, %k_scale1 : tensor<2x2x64x16xf8E4M3FN>, tensor<1x2x1x1xf32>) outs(%kdeq1_e : tensor<2x2x64x16xf16>) {
    ^bb0(%in: f8E4M3FN, %in_s: f32, %out: f16):
      %fp8_x = arith.extf %in : f8E4M3FN to f16
      %fp8_s = arith.truncf %in_s : f32 to f16
      %fp8_m = arith.mulf %fp8_x, %fp8_s : f16
      linalg.yield %fp8_m : f16
    } -> tensor<2x2x64x16xf16>
    %collapsed_101 = tensor.collapse_shape %transposed_92 [[0, 1, 2, 3]] : tensor<2x2x1x16xf16> into tensor<64xf16>
    %expanded_102 = tensor.expand_shape %collapsed_101 [[0, 1, 2, 3, 4]] output_shape [64, 1, 1, 1, 1] : tensor<64xf16> into tensor<64x1x1x1x1xf16>
    %scatter3_c0 = arith.constant 0 : index
    %scatter3_c1 = arith.constant 1 : index
    %scatter3_n = arith.constant 64 : index
    %133 = scf.for %scatter3_i = %scatter3_c0 to %scatter3_n step %scatter3_c1 iter_args(%scatter3_acc = %arg5) -> (tensor<2x2x64x16xf8E4M3FN>) {
      %scatter3_d0 = arith.constant 0 : index
      %scatter3_x0 = tensor.extract %concat_57[%scatter3_i, %scatter3_d0] : tensor<64x4xi64>
      %scatter3_y0 = arith.index_cast %scatter3_x0 : i64 to index
      %scatter3_d1 = arith.constant 1 : index
      %scatter3_x1 = tensor.extract %concat_57[%scatter3_i, %scatter3_d1] : tensor<64x4xi64>
      %scatter3_y1 = arith.index_cast %scatter3_x1 : i64 to index
      %scatter3_d2 = arith.constant 2 : index
      %scatter3_x2 = tensor.extract %concat_57[%scatter3_i, %scatter3_d2] : tensor<64x4xi64>
      %scatter3_y2 = arith.index_cast %scatter3_x2 : i64 to index
      %scatter3_d3 = arith.constant 3 : index
      %scatter3_x3 = tensor.extract %concat_57[%scatter3_i, %scatter3_d3] : tensor<64x4xi64>
      %scatter3_y3 = arith.index_cast %scatter3_x3 : i64 to index
      %scatter3_v = tensor.extract %expanded_102[%scatter3_i, %scatter3_c0, %scatter3_c0, %scatter3_c0, %scatter3_c0] : tensor<64x1x1x1x1xf16>
      %scatter3_s = tensor.extract %v_scale1[%scatter3_c0, %scatter3_y1, %scatter3_c0, %scatter3_c0] : tensor<1x2x1x1xf32>
      %scatter3_st = arith.truncf %scatter3_s : f32 to f16
      %scatter3_q = arith.divf %scatter3_v, %scatter3_st : f16
      %scatter3_v8 = arith.truncf %scatter3_q : f16 to f8E4M3FN
      %scatter3_r = tensor.insert %scatter3_v8 into %scatter3_acc[%scatter3_y0, %scatter3_y1, %scatter3_y2, %scatter3_y3] : tensor<2x2x64x16xf8E4M3FN>
      scf.yield %scatter3_r : tensor<2x2x64x16xf8E4M3FN>
    }
    // The V cache of layer 1 dequantised: an up-cast, then the mul.
    %vdeq1_e = tensor.empty() : tensor<2x2x64x16xf16>
    %vup1 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%133 : tensor<2x2x64x16xf8E4M3FN>) outs(%vdeq1_e : tensor<2x2x64x16xf16>) {
    ^bb0(%in: f8E4M3FN, %out: f16):
      %fp8_x = arith.extf %in : f8E4M3FN to f16
      linalg.yield %fp8_x : f16
    } -> tensor<2x2x64x16xf16>
    %vdeq1 = linalg.generic {indexing_maps = [#map3, #fp8_head, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%vup1, %v_scale1 : tensor<2x2x64x16xf16>, tensor<1x2x1x1xf32>) outs(%vdeq1_e : tensor<2x2x64x16xf16>) {
    ^bb0(%in: f16, %in_s: f32, %out: f16):
      %fp8_s = arith.truncf %in_s : f32 to f16
      %fp8_m = arith.mulf %in, %fp8_s : f16
      linalg.yield %fp8_m : f16
    } -> tensor<2x2x64x16xf16>
    %134 = linalg.generic {indexing_maps = [#map13, #map14], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%kdeq1 : tensor<2x2x64x16xf16>) outs(%59 : tensor<2x2x2x64x16xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<2x2x2x64x16xf16>
    %collapsed_103 = tensor.collapse_shape %134 [[0], [1, 2], [3], [4]] : tensor<2x2x2x64x16xf16> into tensor<2x4x64x16xf16>
    %135 = linalg.generic {indexing_maps = [#map13, #map14], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%vdeq1 : tensor<2x2x64x16xf16>) outs(%59 : tensor<2x2x2x64x16xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<2x2x2x64x16xf16>
    %136 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%127 : tensor<2x4x1x16xf16>) outs(%31 : tensor<2x4x1x16xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.mulf %in, %cst_29 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x16xf16>
    %transposed_104 = linalg.transpose ins(%collapsed_103 : tensor<2x4x64x16xf16>) outs(%65 : tensor<2x4x16x64xf16>) permutation = [0, 1, 3, 2] 
    %137 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_104 : tensor<2x4x16x64xf16>) outs(%65 : tensor<2x4x16x64xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.mulf %in, %cst_29 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x16x64xf16>
    %collapsed_105 = tensor.collapse_shape %136 [[0, 1], [2], [3]] : tensor<2x4x1x16xf16> into tensor<8x1x16xf16>
    %collapsed_106 = tensor.collapse_shape %137 [[0, 1], [2], [3]] : tensor<2x4x16x64xf16> into tensor<8x16x64xf16>
    %138 = linalg.batch_matmul ins(%collapsed_105, %collapsed_106 : tensor<8x1x16xf16>, tensor<8x16x64xf16>) outs(%68 : tensor<8x1x64xf16>) -> tensor<8x1x64xf16>
    %expanded_107 = tensor.expand_shape %138 [[0, 1], [2], [3]] output_shape [2, 4, 1, 64] : tensor<8x1x64xf16> into tensor<2x4x1x64xf16>
    %139 = linalg.generic {indexing_maps = [#map3, #map16, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_107, %63 : tensor<2x4x1x64xf16>, tensor<2x1x1x64xf16>) outs(%70 : tensor<2x4x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.addf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x64xf16>
    %140:2 = linalg.generic {indexing_maps = [#map3, #map17, #map17], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%139 : tensor<2x4x1x64xf16>) outs(%75, %73 : tensor<2x4x1xf16>, tensor<2x4x1xi64>) {
    ^bb0(%in: f16, %out: f16, %out_124: i64):
      %172 = linalg.index 3 : index
      %173 = arith.index_cast %172 : index to i64
      %174 = arith.maximumf %in, %out : f16
      %175 = arith.cmpf ogt, %in, %out : f16
      %176 = arith.select %175, %173, %out_124 : i64
      linalg.yield %174, %176 : f16, i64
    } -> (tensor<2x4x1xf16>, tensor<2x4x1xi64>)
    %expanded_108 = tensor.expand_shape %140#0 [[0], [1], [2, 3]] output_shape [2, 4, 1, 1] : tensor<2x4x1xf16> into tensor<2x4x1x1xf16>
    %141 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%139, %expanded_108 : tensor<2x4x1x64xf16>, tensor<2x4x1x1xf16>) outs(%70 : tensor<2x4x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.subf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x64xf16>
    %142 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%141 : tensor<2x4x1x64xf16>) outs(%70 : tensor<2x4x1x64xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.exp %in : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x64xf16>
    %143 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%142 : tensor<2x4x1x64xf16>) outs(%80 : tensor<2x4x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.addf %in, %out : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x1xf16>
    %144 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%142, %143 : tensor<2x4x1x64xf16>, tensor<2x4x1x1xf16>) outs(%70 : tensor<2x4x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.divf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x64xf16>
    %145 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%139 : tensor<2x4x1x64xf16>) outs(%83 : tensor<2x4x1x64xi1>) {
    ^bb0(%in: f16, %out: i1):
      %172 = arith.extf %in : f16 to f64
      %173 = arith.cmpf oeq, %172, %cst_20 : f64
      linalg.yield %173 : i1
    } -> tensor<2x4x1x64xi1>
    %146 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%145 : tensor<2x4x1x64xi1>) outs(%86 : tensor<2x4x1x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %172 = arith.andi %in, %out : i1
      linalg.yield %172 : i1
    } -> tensor<2x4x1x1xi1>
    %147 = linalg.generic {indexing_maps = [#map4, #map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%146, %cst_2, %144 : tensor<2x4x1x1xi1>, tensor<2x4x1x64xf16>, tensor<2x4x1x64xf16>) outs(%70 : tensor<2x4x1x64xf16>) {
    ^bb0(%in: i1, %in_124: f16, %in_125: f16, %out: f16):
      %172 = arith.select %in, %in_124, %in_125 : f16
      linalg.yield %172 : f16
    } -> tensor<2x4x1x64xf16>
    %collapsed_109 = tensor.collapse_shape %147 [[0, 1], [2], [3]] : tensor<2x4x1x64xf16> into tensor<8x1x64xf16>
    %collapsed_110 = tensor.collapse_shape %135 [[0, 1, 2], [3], [4]] : tensor<2x2x2x64x16xf16> into tensor<8x64x16xf16>
    %148 = linalg.batch_matmul ins(%collapsed_109, %collapsed_110 : tensor<8x1x64xf16>, tensor<8x64x16xf16>) outs(%90 : tensor<8x1x16xf16>) -> tensor<8x1x16xf16>
    %expanded_111 = tensor.expand_shape %148 [[0, 1], [2], [3]] output_shape [2, 4, 1, 16] : tensor<8x1x16xf16> into tensor<2x4x1x16xf16>
    %transposed_112 = linalg.transpose ins(%expanded_111 : tensor<2x4x1x16xf16>) outs(%92 : tensor<2x1x4x16xf16>) permutation = [0, 2, 1, 3] 
    %transposed_113 = linalg.transpose ins(%cst_10 : tensor<64x64xf16>) outs(%27 : tensor<64x64xf16>) permutation = [1, 0] 
    %collapsed_114 = tensor.collapse_shape %transposed_112 [[0], [1, 2, 3]] : tensor<2x1x4x16xf16> into tensor<2x64xf16>
    %149 = linalg.matmul ins(%collapsed_114, %transposed_113 : tensor<2x64xf16>, tensor<64x64xf16>) outs(%29 : tensor<2x64xf16>) -> tensor<2x64xf16>
    %expanded_115 = tensor.expand_shape %149 [[0], [1, 2]] output_shape [2, 1, 64] : tensor<2x64xf16> into tensor<2x1x64xf16>
    %150 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%113, %expanded_115 : tensor<2x1x64xf16>, tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.addf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %151 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%150 : tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.fpowi %in, %c2_i64 : f16, i64
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %152 = linalg.generic {indexing_maps = [#map1, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%151 : tensor<2x1x64xf16>) outs(%20 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.addf %in, %out : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %153 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%152 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.divf %in, %cst_28 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %154 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%153 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.truncf %cst_25 : f64 to f16
      %173 = arith.addf %in, %172 : f16
      linalg.yield %173 : f16
    } -> tensor<2x1x1xf16>
    %155 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%154 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.rsqrt %in : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %156 = linalg.generic {indexing_maps = [#map1, #map6, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%150, %155 : tensor<2x1x64xf16>, tensor<2x1x1xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %157 = linalg.generic {indexing_maps = [#map7, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_9, %156 : tensor<64xf16>, tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %transposed_116 = linalg.transpose ins(%cst_8 : tensor<128x64xf16>) outs(%102 : tensor<64x128xf16>) permutation = [1, 0] 
    %collapsed_117 = tensor.collapse_shape %157 [[0], [1, 2]] : tensor<2x1x64xf16> into tensor<2x64xf16>
    %158 = linalg.matmul ins(%collapsed_117, %transposed_116 : tensor<2x64xf16>, tensor<64x128xf16>) outs(%104 : tensor<2x128xf16>) -> tensor<2x128xf16>
    %expanded_118 = tensor.expand_shape %158 [[0], [1, 2]] output_shape [2, 1, 128] : tensor<2x128xf16> into tensor<2x1x128xf16>
    %159 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_118 : tensor<2x1x128xf16>) outs(%106 : tensor<2x1x128xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.negf %in : f16
      %173 = math.exp %172 : f16
      %174 = arith.addf %173, %cst_1 : f16
      %175 = arith.divf %cst_1, %174 : f16
      linalg.yield %175 : f16
    } -> tensor<2x1x128xf16>
    %160 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_118, %159 : tensor<2x1x128xf16>, tensor<2x1x128xf16>) outs(%106 : tensor<2x1x128xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x128xf16>
    %transposed_119 = linalg.transpose ins(%cst_7 : tensor<128x64xf16>) outs(%102 : tensor<64x128xf16>) permutation = [1, 0] 
    %161 = linalg.matmul ins(%collapsed_117, %transposed_119 : tensor<2x64xf16>, tensor<64x128xf16>) outs(%104 : tensor<2x128xf16>) -> tensor<2x128xf16>
    %expanded_120 = tensor.expand_shape %161 [[0], [1, 2]] output_shape [2, 1, 128] : tensor<2x128xf16> into tensor<2x1x128xf16>
    %162 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%160, %expanded_120 : tensor<2x1x128xf16>, tensor<2x1x128xf16>) outs(%106 : tensor<2x1x128xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x128xf16>
    %transposed_121 = linalg.transpose ins(%cst_6 : tensor<64x128xf16>) outs(%111 : tensor<128x64xf16>) permutation = [1, 0] 
    %collapsed_122 = tensor.collapse_shape %162 [[0], [1, 2]] : tensor<2x1x128xf16> into tensor<2x128xf16>
    %163 = linalg.matmul ins(%collapsed_122, %transposed_121 : tensor<2x128xf16>, tensor<128x64xf16>) outs(%29 : tensor<2x64xf16>) -> tensor<2x64xf16>
    %expanded_123 = tensor.expand_shape %163 [[0], [1, 2]] output_shape [2, 1, 64] : tensor<2x64xf16> into tensor<2x1x64xf16>
    %164 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%150, %expanded_123 : tensor<2x1x64xf16>, tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.addf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %165 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%164 : tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.fpowi %in, %c2_i64 : f16, i64
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %166 = linalg.generic {indexing_maps = [#map1, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%165 : tensor<2x1x64xf16>) outs(%20 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.addf %in, %out : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %167 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%166 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.divf %in, %cst_28 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %168 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%167 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = arith.truncf %cst_25 : f64 to f16
      %173 = arith.addf %in, %172 : f16
      linalg.yield %173 : f16
    } -> tensor<2x1x1xf16>
    %169 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%168 : tensor<2x1x1xf16>) outs(%19 : tensor<2x1x1xf16>) {
    ^bb0(%in: f16, %out: f16):
      %172 = math.rsqrt %in : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x1xf16>
    %170 = linalg.generic {indexing_maps = [#map1, #map6, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%164, %169 : tensor<2x1x64xf16>, tensor<2x1x1xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    %171 = linalg.generic {indexing_maps = [#map7, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_5, %170 : tensor<64xf16>, tensor<2x1x64xf16>) outs(%0 : tensor<2x1x64xf16>) {
    ^bb0(%in: f16, %in_124: f16, %out: f16):
      %172 = arith.mulf %in, %in_124 : f16
      linalg.yield %172 : f16
    } -> tensor<2x1x64xf16>
    return %171 : tensor<2x1x64xf16>
  }
}

