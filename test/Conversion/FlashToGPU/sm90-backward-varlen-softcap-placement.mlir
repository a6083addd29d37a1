// REQUIRES: ptxas
// The sm90 backward of a packed batch with softcap at D = 128 keeps its
// block's placement in shared memory too (KernelSpec::keepsPlacementShared,
// VarlenScheduler.h's SharedPlacementScheduler): thread 0 writes the slot
// after the statistics, a barrier of its own publishes it (this kernel has
// no roles and no mbarriers), and each step reads the sequence, its operand
// rows and first key back by volatile loads at the slot's one base address.
// Softcap holds its slope (in f16) from P to the dV product; with the slot
// ptxas spills 0 / 8 / 36 bytes (no mask / causal / bottom-right; 68-140
// without the slot and with an f32 tanh held to dS, docs/PERF.md runs 325
// and 333): fewer, not none, so these compile with --allow-spills. The causal kernel without
// softcap spills nothing and keeps its placement in registers: no slot, no
// volatile loads, its shared memory 32 bytes less.
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --allow-spills -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx

// CHECK-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_causal_varlen: {{.*}}, 0 bytes stack, 0/0 bytes spill stores/loads
// CHECK: kernel flash_bwd_sm90_bf16_d128_m64n128w8s2_softcap_varlen (smem [[#SLOT:]] bytes)
// CHECK: kernel flash_bwd_sm90_bf16_d128_m64n128w8s2_causal_softcap_varlen (smem [[#SLOT]] bytes)
// CHECK: kernel flash_bwd_sm90_bf16_d128_m64n128w8s2_causalbr_softcap_varlen (smem [[#SLOT]] bytes)
// CHECK: kernel flash_bwd_sm90_bf16_d128_m64n128w8s2_causal_varlen (smem [[#SLOT-32]] bytes)

// PTX-LABEL: .entry flash_bwd_sm90_bf16_d128_m64n128w8s2_softcap_varlen(
// PTX: st.shared.v4.b32
// PTX: st.shared.v2.b32
// PTX: bar.sync 0;
// PTX: ld.volatile.shared.u32 %r{{[0-9]+}}, {{\[}}[[BASE:%r[0-9]+]]+16];
// PTX: ld.volatile.shared.u32 %r{{[0-9]+}}, {{\[}}[[BASE]]+0];
// PTX-LABEL: .entry flash_bwd_sm90_bf16_d128_m64n128w8s2_causal_softcap_varlen(
// PTX: ld.volatile.shared.u32
// PTX-LABEL: .entry flash_bwd_sm90_bf16_d128_m64n128w8s2_causalbr_softcap_varlen(
// PTX: ld.volatile.shared.u32
// PTX-LABEL: .entry flash_bwd_sm90_bf16_d128_m64n128w8s2_causal_varlen(
// PTX-NOT: ld.volatile.shared
// PTX: ret;

func.func @grad_varlen_bf16_d128_softcap(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {softcap = 30.0 : f32} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
}
func.func @grad_varlen_bf16_d128_causal_softcap(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<top_left>, softcap = 30.0 : f32} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
}
func.func @grad_varlen_bf16_d128_causalbr_softcap(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<bottom_right>, softcap = 30.0 : f32} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
}
func.func @grad_varlen_bf16_d128_causal(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<top_left>} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
}
