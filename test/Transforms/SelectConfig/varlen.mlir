// A varlen (packed) flash.attention gets the dense op's config: the varlen
// tile scheduler places blocks in sequences, the tiles are the same. So
// does its gradient (the backward kernels under the same scheduler).
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=h100 -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @varlen
// CHECK: flash.attention {{.*}} varlen(%{{.*}}, %{{.*}} : tensor<4xi32>, tensor<4xi32>)
// CHECK-SAME: config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 3>
// CHECK-LABEL: func.func @dense
// CHECK: config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 3>
func.func @varlen(%q: tensor<1x8x300x64xf16>, %k: tensor<1x2x500x64xf16>,
                  %cu_q: tensor<4xi32>, %cu_k: tensor<4xi32>) -> tensor<1x8x300x64xf16> {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<4xi32>, tensor<4xi32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>
      -> tensor<1x8x300x64xf16>
  return %o : tensor<1x8x300x64xf16>
}
func.func @dense(%q: tensor<1x8x300x64xf16>, %k: tensor<1x2x500x64xf16>) -> tensor<1x8x300x64xf16> {
  %o = flash.attention %q, %k, %k {causal = #flash.causal<bottom_right>}
      : tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>
      -> tensor<1x8x300x64xf16>
  return %o : tensor<1x8x300x64xf16>
}

// -----

// A config already on the op (set by hand or by a tuner) is kept.
// CHECK-LABEL: func.func @varlen_with_config
// CHECK: config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>
func.func @varlen_with_config(%q: tensor<1x8x300x64xf16>, %cu: tensor<4xi32>) -> tensor<1x8x300x64xf16> {
  %o = flash.attention %q, %q, %q varlen(%cu, %cu : tensor<4xi32>, tensor<4xi32>)
      {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>
      -> tensor<1x8x300x64xf16>
  return %o : tensor<1x8x300x64xf16>
}

// -----

// CHECK-LABEL: func.func @varlen_grad
// CHECK: flash.attention_grad {{.*}} varlen(%{{.*}}, %{{.*}} : tensor<4xi32>, tensor<4xi32>)
// CHECK-SAME: config = #[[CFG:flash.config<sm90, [^>]*>]]
// CHECK-LABEL: func.func @dense_grad
// CHECK: config = #[[CFG]]
func.func @varlen_grad(%t: tensor<1x8x300x64xf16>, %lse: tensor<1x8x300xf32>, %cu: tensor<4xi32>)
    -> tensor<1x8x300x64xf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      varlen(%cu, %cu : tensor<4xi32>, tensor<4xi32>)
      : tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>,
        tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
      -> tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>
  return %dq : tensor<1x8x300x64xf16>
}
func.func @dense_grad(%t: tensor<1x8x300x64xf16>, %lse: tensor<1x8x300xf32>)
    -> tensor<1x8x300x64xf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      : tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>,
        tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
      -> tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>
  return %dq : tensor<1x8x300x64xf16>
}
