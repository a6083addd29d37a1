// Hand-written from eager_causal_iota.tosa.mlir (torch-mlir's TOSA export):
// ALiBi as slope[h] * (j - i) under the causal mask, the positions a
// constant arange (TOSA has no iota) and the slopes a constant [1, H, 1, 1].
module {
  func.func @mod_alibi_causal_tosa(%arg0: tensor<2x4x16x16xf32>, %arg1: tensor<2x4x16x16xf32>, %arg2: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
    %0 = tosa.const_shape  {values = dense<[8, 16, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %1 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
    %2 = tosa.const_shape  {values = dense<[2, 4, 16, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %3 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %4 = "tosa.const"() <{values = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi64>}> : () -> tensor<16xi64>
    %5 = tosa.const_shape  {values = dense<[16, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %6 = tosa.const_shape  {values = dense<[1, 16]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %7 = tosa.const_shape  {values = dense<[1, 1, 16, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %8 = "tosa.const"() <{values = dense<2.500000e-01> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
    %9 = "tosa.const"() <{values = dense<0xFF800000> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
    %10 = tosa.transpose %arg1 {perms = array<i32: 0, 1, 3, 2>} : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %11 = tosa.reshape %arg0, %0 : (tensor<2x4x16x16xf32>, !tosa.shape<3>) -> tensor<8x16x16xf32>
    %12 = tosa.reshape %10, %0 : (tensor<2x4x16x16xf32>, !tosa.shape<3>) -> tensor<8x16x16xf32>
    %13 = tosa.matmul %11, %12, %1, %1 : (tensor<8x16x16xf32>, tensor<8x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x16x16xf32>
    %14 = tosa.reshape %13, %2 : (tensor<8x16x16xf32>, !tosa.shape<4>) -> tensor<2x4x16x16xf32>
    %15 = tosa.mul %14, %8, %3 : (tensor<2x4x16x16xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<2x4x16x16xf32>
    %16 = tosa.reshape %4, %5 : (tensor<16xi64>, !tosa.shape<2>) -> tensor<16x1xi64>
    %17 = tosa.reshape %4, %6 : (tensor<16xi64>, !tosa.shape<2>) -> tensor<1x16xi64>
    %18 = tosa.greater_equal %16, %17 : (tensor<16x1xi64>, tensor<1x16xi64>) -> tensor<16x16xi1>
    %19 = tosa.logical_not %18 : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %20 = tosa.reshape %19, %7 : (tensor<16x16xi1>, !tosa.shape<4>) -> tensor<1x1x16x16xi1>
    %s1 = "tosa.const"() <{values = dense<[[[[5.000000e-01]], [[2.500000e-01]], [[1.250000e-01]], [[6.250000e-02]]]]> : tensor<1x4x1x1xf32>}> : () -> tensor<1x4x1x1xf32>
    %d = tosa.sub %17, %16 : (tensor<1x16xi64>, tensor<16x1xi64>) -> tensor<16x16xi64>
    %df = tosa.cast %d : (tensor<16x16xi64>) -> tensor<16x16xf32>
    %df4 = tosa.reshape %df, %7 : (tensor<16x16xf32>, !tosa.shape<4>) -> tensor<1x1x16x16xf32>
    %bias = tosa.mul %s1, %df4, %3 : (tensor<1x4x1x1xf32>, tensor<1x1x16x16xf32>, tensor<1xi8>) -> tensor<1x4x16x16xf32>
    %sb = tosa.add %15, %bias : (tensor<2x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %21 = tosa.select %20, %9, %sb : (tensor<1x1x16x16xi1>, tensor<1x1x1x1xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %22 = tosa.reduce_max %21 {axis = 3 : i32} : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x1xf32>
    %23 = tosa.sub %21, %22 : (tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>) -> tensor<2x4x16x16xf32>
    %24 = tosa.exp %23 : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %25 = tosa.reduce_sum %24 {axis = 3 : i32} : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x1xf32>
    %26 = tosa.reciprocal %25 : (tensor<2x4x16x1xf32>) -> tensor<2x4x16x1xf32>
    %27 = tosa.mul %24, %26, %3 : (tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>, tensor<1xi8>) -> tensor<2x4x16x16xf32>
    %28 = tosa.reshape %27, %0 : (tensor<2x4x16x16xf32>, !tosa.shape<3>) -> tensor<8x16x16xf32>
    %29 = tosa.reshape %arg2, %0 : (tensor<2x4x16x16xf32>, !tosa.shape<3>) -> tensor<8x16x16xf32>
    %30 = tosa.matmul %28, %29, %1, %1 : (tensor<8x16x16xf32>, tensor<8x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x16x16xf32>
    %31 = tosa.reshape %30, %2 : (tensor<8x16x16xf32>, !tosa.shape<4>) -> tensor<2x4x16x16xf32>
    return %31 : tensor<2x4x16x16xf32>
  }
}
