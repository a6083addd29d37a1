// RUN: not flashfuse-opt %s --flash-lower-to-loops="block-m=0" 2>&1 | FileCheck %s

// CHECK: flash-lower-to-loops: block-m and block-n must be positive, got 0 and 64
func.func @f(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  %o = flash.attention %q, %k, %v
      : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}
