// REQUIRES: ptxas
// The packed sm90ws backward keeps a block's placement in shared memory
// where its band depends on the sequence's lengths at D = 128 (bottom-right,
// window; KernelSpec::keepsPlacementShared): thread 0 writes the slot's
// eight words (startQ, startK, lengthQ, lengthK, the first key, the kv
// head) after the statistics, and the roles read it back by volatile
// loads (the producer's placement, each step of the query loop, the
// epilogue) instead of holding it in registers from the prologue to the
// epilogue, where ptxas spilled 8-28 bytes of it. These compile without
// --allow-spills (flashfuse-compile fails on a spill). The top-left
// causal kernel, which spills nothing without it, keeps its placement in
// registers: no slot, no volatile loads, its shared memory 32 bytes less.
// At D = 64 the kernel without a band keeps the slot too (it spilled 28/20
// bytes without it): its consumers read it, its producer, 24 registers,
// reads cu_seqlens as before and divides the kv head in 32 bits, and the
// query loop counts in 32 bits (Sm90WsBackward.cpp,
// narrowsForSharedPlacement).
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=sm90ws -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx

// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_window_varlen: {{.*}}, 0 bytes stack, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causalbr_varlen: {{.*}}, 0 bytes stack, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causal_varlen: {{.*}}, 0 bytes stack, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d64_m128n128w8s2_varlen: {{.*}}, 0 bytes stack, 0/0 bytes spill stores/loads
// DeepSeek's MLA (D = 192, Dv = 128) keeps the slot under the top-left
// causal mask too: without it its consumers spilled 16 bytes.
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d192_dv128_m64n64w8s2_causal_varlen: {{.*}}, 0 bytes stack, 0/0 bytes spill stores/loads
// The slot's 32 bytes in the two kernels that keep it.
// CHECK: kernel flash_bwd_sm90ws_bf16_d128_m64n128w8s2_window_varlen (smem [[#SLOT:]] bytes)
// CHECK: kernel flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causalbr_varlen (smem [[#SLOT]] bytes)
// CHECK: kernel flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causal_varlen (smem [[#SLOT-32]] bytes)

// PTX-LABEL: .entry flash_bwd_sm90ws_bf16_d128_m64n128w8s2_window_varlen(
// The slot's words written (LLVM merges the stores), then the barrier
// that publishes the mbarriers' initialisation; each role reads them.
// PTX: st.shared.v4.b32
// PTX: bar.sync 0;
// Every load takes the slot's one base address, the word's offset as its
// immediate (an address per word is a register per word to hold).
// PTX: setmaxnreg.dec.sync.aligned.u32 24;
// PTX: ld.volatile.shared.u32 %r{{[0-9]+}}, {{\[}}[[BASE:%r[0-9]+]]+{{[0-9]+}}];
// PTX: setmaxnreg.inc.sync.aligned.u32 240;
// PTX: ld.volatile.shared.u32 %r{{[0-9]+}}, {{\[}}[[BASE]]+0];
// PTX: ld.volatile.shared.u32 %r{{[0-9]+}}, {{\[}}[[BASE]]+4];
// PTX-NOT: ld.volatile.shared.u32 %r{{[0-9]+}}, [%r{{[0-9]+}}];
// PTX-LABEL: .entry flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causalbr_varlen(
// PTX: ld.volatile.shared.u32
// PTX-LABEL: .entry flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causal_varlen(
// PTX-NOT: ld.volatile.shared
// PTX: ret;
// PTX-LABEL: .entry flash_bwd_sm90ws_bf16_d64_m128n128w8s2_varlen(
// PTX: st.shared.v4.b32
// PTX: setmaxnreg.dec.sync.aligned.u32 24;
// PTX-NOT: ld.volatile.shared
// PTX-NOT: div.u64
// PTX: div.u32
// PTX-NOT: ld.volatile.shared
// PTX: setmaxnreg.inc.sync.aligned.u32 240;
// PTX: ld.volatile.shared.u32
// PTX-LABEL: .entry flash_bwd_sm90ws_bf16_d192_dv128_m64n64w8s2_causal_varlen(
// PTX: ld.volatile.shared.u32

func.func @grad_varlen_bf16_d128_window(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {window_left = 64 : i64, window_right = 0 : i64} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
}
func.func @grad_varlen_bf16_d128_bottom_right(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<bottom_right>} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
}
func.func @grad_varlen_bf16_d128_top_left(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<top_left>} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
}
func.func @grad_varlen_bf16_d64(%do: tensor<1x1x128x64xbf16>, %q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>, %o: tensor<1x1x128x64xbf16>, %lse: tensor<1x1x128xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>
}
func.func @grad_varlen_bf16_mla_top_left(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x192xbf16>, %k: tensor<1x1x128x192xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<top_left>} : tensor<1x1x128x128xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x192xbf16>, tensor<1x1x128x192xbf16>, tensor<1x1x128x128xbf16>
}
