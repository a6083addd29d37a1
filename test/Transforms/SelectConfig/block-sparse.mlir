// A block-sparse flash.attention gets the dense op's config (the
// key-block iterator walks the lists over the same tiles; its block sizes
// must be multiples of them, which flash-lower-to-gpu checks); the sm90ws
// recipe, asked for by name, gives both its tiles (its producer walks the
// lists too). A block-sparse flash.attention_grad takes the dense op's
// config too (every backward engine walks the query-block lists), with no
// remark.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=h100 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK --allow-empty < %t.remarks
// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm90" 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=a100 2>&1 | FileCheck %s --check-prefix=A100
// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm90ws" 2>&1 | FileCheck %s --check-prefix=WS

// CHECK-LABEL: func.func @lists
// CHECK: flash.attention {{.*}} block_sparse(%{{.*}}, %{{.*}} : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
// CHECK-SAME: config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 3>
// WS-LABEL: func.func @lists
// WS: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
func.func @lists(%q: tensor<1x8x1024x128xbf16>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>) -> tensor<1x8x1024x128xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
      : tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>
      -> tensor<1x8x1024x128xbf16>
  return %o : tensor<1x8x1024x128xbf16>
}

// -----

// CHECK-LABEL: func.func @gradient
// CHECK: flash.attention_grad {{.*}} block_sparse(%{{.*}}, %{{.*}} : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
// CHECK-SAME: config = #flash.config<sm90, block_m = 64, block_n = 128, warps = 8, stages = 2>
// REMARK-NOT: remark
// SM90: flash.attention_grad {{.*}}config = #flash.config<sm90, block_m = 64, block_n = 128
// WS-LABEL: func.func @gradient
// WS: flash.attention_grad {{.*}}config = #flash.config<sm90ws, block_m = 64, block_n = 128
// A100-NOT: remark
// A100: flash.attention_grad {{.*}}config = #flash.config<sm80,
func.func @gradient(%t: tensor<1x8x1024x128xbf16>, %lse: tensor<1x8x1024xf32>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>) -> tensor<1x8x1024x128xbf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
      : tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>,
        tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024xf32>
      -> tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>
  return %dq : tensor<1x8x1024x128xbf16>
}
