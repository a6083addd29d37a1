// REQUIRES: ptxas
// Dropout draws one Philox4x32-10 per octet {q, q + 8} x {kv, kv + 1,
// kv + 8, kv + 9} (Conversion/Common/Philox.h), the eight scores an mma
// fragment holds of two rows and two neighbouring 8-column tiles: 20
// products (mului_extended) a draw. The sm90 forward at D = 64 (128 x 64,
// two warpgroups) holds 32 scores a thread a key block: 4 draws, 80
// products, in each of the key loop's two copies. The sm90 backward's Sᵀ
// has keys as rows: a lane holds 4 scores of each of two octets (queries q
// and q + 8 of columns j = 0 and 1, keys k and k + 8), lane ^ 4 the odd
// keys' 4 of each; the pair draws one octet each and swaps two words by a
// shuffle: 4 draws and 8 shuffles a step for the lane's 32 scores (one call
// a score drew 32, and the backward spilled 44 / 60 bytes). The factors
// are drawn once a step, for dV, and reused by dS.
//
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s --check-prefix=SHFL
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 -o %t 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK-LABEL: gpu.func @flash_fwd_sm90_bf16_d64_m128n64w8s3_dropout(
// CHECK-COUNT-160: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK-LABEL: gpu.func @flash_bwd_pre_sm90_bf16_d64_m64n128w8s2_dropout(
// CHECK-NOT: arith.mului_extended
// CHECK-LABEL: gpu.func @flash_bwd_sm90_bf16_d64_m64n128w8s2_dropout(
// CHECK-COUNT-80: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK-LABEL: gpu.func @flash_bwd_post_sm90_bf16_d64_m64n128w8s2_dropout(

// The backward's word exchange: an i32 shuffle with lane ^ 4, two a pair of
// octets, 8 a step.
// SHFL-LABEL: gpu.func @flash_bwd_sm90_bf16_d64_m64n128w8s2_dropout(
// SHFL-COUNT-8: gpu.shuffle  xor %{{[0-9]+}}, %c4_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : i32
// SHFL-NOT: gpu.shuffle  xor %{{[0-9]+}}, %c4_i32{{(_[0-9]+)?}}, %c32_i32{{(_[0-9]+)?}} : i32
// SHFL-LABEL: gpu.func @flash_bwd_post_sm90_bf16_d64_m64n128w8s2_dropout(

// flashfuse-compile fails on a spill (no --allow-spills here).
// PTXAS-DAG: flash_bwd_sm90_bf16_d64_m64n128w8s2_dropout: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// PTXAS-DAG: flash_fwd_sm90_bf16_d64_m128n64w8s3_dropout: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill

func.func @grad_bf16_d64_dropout(%do: tensor<1x1x128x64xbf16>, %q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>, %o: tensor<1x1x128x64xbf16>, %lse: tensor<1x1x128xf32>, %s: i64) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse seed(%s) {dropout_p = 0.17 : f32} : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>
}
func.func @fwd_bf16_d64_dropout(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>, %s: i64) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v seed(%s) {dropout_p = 0.17 : f32} : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16> -> tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
}
