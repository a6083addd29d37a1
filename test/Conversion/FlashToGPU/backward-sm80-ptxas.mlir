// REQUIRES: ptxas
// The sm80 backward with the table's tiles (flash-select-config, a100)
// assembles for sm_80 without spills (flashfuse-compile fails on a spill):
// with LSE and Dsum staged in shared memory with each Q tile (4-byte
// cp.async), no longer loaded from global memory inside the query loop,
// D = 128 at 64 x 128 (plain, causal, window), D = 96 and D = 64 causal,
// which spilled 8-120 bytes before.
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx

// CHECK-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d128_m64n128w8s2: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d128_m64n128w8s2_causal: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d128_m64n128w8s2_window: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_80 flash_bwd_sm80_f16_d96_m64n64w4s2: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_80 flash_bwd_sm80_f16_d64_m32n128w4s2_causal: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill

// The main kernels read LSE and Dsum from shared memory: 4-byte copies
// that join Q's group, and no 32-bit global loads (48 per iteration before)
// up to the dQ atomics.
// PTX-LABEL: .entry flash_bwd_sm80_bf16_d128_m64n128w8s2(
// PTX: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4, {{.*}};
// PTX: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4, {{.*}};
// PTX: cp.async.commit_group
// PTX-NOT: ld.global.b32
// PTX: atom.global.add.f32
// PTX-LABEL: .entry

func.func @d128(%do: tensor<1x2x256x128xbf16>, %q: tensor<1x2x256x128xbf16>, %k: tensor<1x2x256x128xbf16>, %v: tensor<1x2x256x128xbf16>, %o: tensor<1x2x256x128xbf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256xf32> -> tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>
  return %dq, %dk, %dv : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>
}
func.func @d128_causal(%do: tensor<1x2x256x128xbf16>, %q: tensor<1x2x256x128xbf16>, %k: tensor<1x2x256x128xbf16>, %v: tensor<1x2x256x128xbf16>, %o: tensor<1x2x256x128xbf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256xf32> -> tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>
  return %dq, %dk, %dv : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>
}
func.func @d128_window(%do: tensor<1x2x256x128xbf16>, %q: tensor<1x2x256x128xbf16>, %k: tensor<1x2x256x128xbf16>, %v: tensor<1x2x256x128xbf16>, %o: tensor<1x2x256x128xbf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {window_left = 64 : i64, window_right = 0 : i64} : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256xf32> -> tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>
  return %dq, %dk, %dv : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>
}
func.func @d96(%do: tensor<1x2x256x96xf16>, %q: tensor<1x2x256x96xf16>, %k: tensor<1x2x256x96xf16>, %v: tensor<1x2x256x96xf16>, %o: tensor<1x2x256x96xf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256xf32> -> tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>
  return %dq, %dk, %dv : tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>
}
func.func @d64_causal(%do: tensor<1x2x256x64xf16>, %q: tensor<1x2x256x64xf16>, %k: tensor<1x2x256x64xf16>, %v: tensor<1x2x256x64xf16>, %o: tensor<1x2x256x64xf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256xf32> -> tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>
  return %dq, %dk, %dv : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>
}
