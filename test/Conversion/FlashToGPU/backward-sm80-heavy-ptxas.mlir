// REQUIRES: ptxas
// The sm80 backward of the variants with more per-element work (softcap,
// dBias, dropout) takes half the query rows of the table at D = 64 (and
// 128): at 32 x 128 they spilled 176-472 bytes on sm_80, at 16 x 128 they
// assemble with none (flashfuse-compile fails on a spill).
// RUN: flashfuse-opt %s --flash-select-config=target=a100 | FileCheck %s --check-prefix=CONFIG
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 -o %t | FileCheck %s

// CONFIG-COUNT-3: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 16, block_n = 128, warps = 4, stages = 2>
// CHECK-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d64_m16n128w4s2_softcap: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d64_m16n128w4s2_bias_dbias: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d64_m16n128w4s2_dropout: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill

func.func @grad_d64_softcap(%do: tensor<1x1x128x64xbf16>, %q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>, %o: tensor<1x1x128x64xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {softcap = 30.0 : f32} : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>
}
func.func @grad_d64_bias(%do: tensor<1x1x128x64xbf16>, %q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>, %o: tensor<1x1x128x64xbf16>, %lse: tensor<1x1x128xf32>, %b: tensor<1x1x128x128xf32>) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x128xf32>) {
  %dq, %dk, %dv, %db = flash.attention_grad %do, %q, %k, %v, %o, %lse bias(%b : tensor<1x1x128x128xf32>) : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x128xf32>
  return %dq, %dk, %dv, %db : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x128xf32>
}
func.func @grad_d64_dropout(%do: tensor<1x1x128x64xbf16>, %q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>, %o: tensor<1x1x128x64xbf16>, %lse: tensor<1x1x128xf32>, %s: i64) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse seed(%s) {dropout_p = 0.17 : f32} : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>
}
