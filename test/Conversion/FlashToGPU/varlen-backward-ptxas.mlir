// REQUIRES: ptxas
// The packed-batch (varlen) backward kernels assemble without spilling on
// sm_80 (the a100 target's sm80 recipe, atomic and deterministic, whose
// dQ kernel is varlen too) and on sm_90a (the h100 target's sm90 main
// kernel; flashfuse-compile fails on a spill): D = 64 and 128 in every
// causal alignment and a window at D = 128, with the configs
// flash-select-config gives the dense ops. On sm_90a the sequence's
// offsets and the query loop's coordinates are zero-extended
// (VarlenBackwardScheduler::placeSequence, Sm90BackwardBuilder::
// zeroExtendsLoopCoordinates): sign-extended, the D = 128 bottom-right
// kernel spilled 20 bytes. The scheduler reads each block's sequence again
// after the query loop rather than keep its first key row in registers
// across it: kept, the sm90 bottom-right kernels spilled 4 (D = 64) and 28
// (D = 128) bytes. (The D = 128 causal softcap backward is checked, on the
// Hopper recipes, by varlen-backward-softcap-ptxas.mlir.)
// The preprocess and postprocess are the dense kernels.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: flashfuse-compile %s --target=a100 --deterministic -o %t/a100-det | FileCheck %s --check-prefix=DET
// RUN: flashfuse-compile %s --target=h100 -o %t/h100 | FileCheck %s --check-prefix=H100
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
//
// A100-COUNT-6: ptxas sm_80 flash_bwd_sm80_{{.*}}_varlen: {{.*}}, 0/0 bytes spill stores/loads
// DET-COUNT-6: ptxas sm_80 flash_bwd_{{(dq_)?}}sm80_{{.*}}_det_varlen: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_f16_d64_m128n128w8s2_varlen: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d64_m128n128w8s2_causalbr_varlen: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_f16_d128_m64n128w8s2_varlen: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_causal_varlen: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_causalbr_varlen: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_f16_d128_m64n128w8s2_window_varlen: {{.*}}, 0/0 bytes spill stores/loads
//
// MANIFEST-LABEL: kernel flash_bwd_sm90_f16_d64_{{.*}}_varlen
// MANIFEST: kind backward
// MANIFEST: dropout 0
// MANIFEST-NEXT: varlen 1
// MANIFEST-NEXT: params {{.*}} memref:cu_seqlens_q memref:cu_seqlens_k i32:batch i32:heads_q i32:heads_kv i32:seq_q i32:seq_k i32:num_seqs i32:max_seqlen_k i64:q_stride_b
// MANIFEST-LABEL: kernel flash_bwd_post_sm90_f16_d64_
// MANIFEST-NOT: varlen
// MANIFEST: end

func.func @f16_d64_full(%do: tensor<1x8x512x64xf16>, %q: tensor<1x8x512x64xf16>, %k: tensor<1x2x700x64xf16>, %o: tensor<1x8x512x64xf16>, %lse: tensor<1x8x512xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x8x512x64xf16>, tensor<1x2x700x64xf16>, tensor<1x2x700x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %k, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) : tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>, tensor<1x2x700x64xf16>, tensor<1x2x700x64xf16>, tensor<1x8x512x64xf16>, tensor<1x8x512xf32> -> tensor<1x8x512x64xf16>, tensor<1x2x700x64xf16>, tensor<1x2x700x64xf16>
  return %dq, %dk, %dv : tensor<1x8x512x64xf16>, tensor<1x2x700x64xf16>, tensor<1x2x700x64xf16>
}
func.func @bf16_d64_bottom_right(%do: tensor<1x8x512x64xbf16>, %q: tensor<1x8x512x64xbf16>, %k: tensor<1x2x700x64xbf16>, %o: tensor<1x8x512x64xbf16>, %lse: tensor<1x8x512xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x8x512x64xbf16>, tensor<1x2x700x64xbf16>, tensor<1x2x700x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %k, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<bottom_right>} : tensor<1x8x512x64xbf16>, tensor<1x8x512x64xbf16>, tensor<1x2x700x64xbf16>, tensor<1x2x700x64xbf16>, tensor<1x8x512x64xbf16>, tensor<1x8x512xf32> -> tensor<1x8x512x64xbf16>, tensor<1x2x700x64xbf16>, tensor<1x2x700x64xbf16>
  return %dq, %dk, %dv : tensor<1x8x512x64xbf16>, tensor<1x2x700x64xbf16>, tensor<1x2x700x64xbf16>
}
func.func @f16_d128_full(%do: tensor<1x8x512x128xf16>, %q: tensor<1x8x512x128xf16>, %k: tensor<1x2x700x128xf16>, %o: tensor<1x8x512x128xf16>, %lse: tensor<1x8x512xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x8x512x128xf16>, tensor<1x2x700x128xf16>, tensor<1x2x700x128xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %k, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) : tensor<1x8x512x128xf16>, tensor<1x8x512x128xf16>, tensor<1x2x700x128xf16>, tensor<1x2x700x128xf16>, tensor<1x8x512x128xf16>, tensor<1x8x512xf32> -> tensor<1x8x512x128xf16>, tensor<1x2x700x128xf16>, tensor<1x2x700x128xf16>
  return %dq, %dk, %dv : tensor<1x8x512x128xf16>, tensor<1x2x700x128xf16>, tensor<1x2x700x128xf16>
}
func.func @bf16_d128_top_left(%do: tensor<1x8x512x128xbf16>, %q: tensor<1x8x512x128xbf16>, %k: tensor<1x2x700x128xbf16>, %o: tensor<1x8x512x128xbf16>, %lse: tensor<1x8x512xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %k, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<top_left>} : tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512xf32> -> tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16>
  return %dq, %dk, %dv : tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16>
}
func.func @bf16_d128_bottom_right(%do: tensor<1x8x512x128xbf16>, %q: tensor<1x8x512x128xbf16>, %k: tensor<1x2x700x128xbf16>, %o: tensor<1x8x512x128xbf16>, %lse: tensor<1x8x512xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %k, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {causal = #flash.causal<bottom_right>} : tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512xf32> -> tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16>
  return %dq, %dk, %dv : tensor<1x8x512x128xbf16>, tensor<1x2x700x128xbf16>, tensor<1x2x700x128xbf16>
}
func.func @f16_d128_window(%do: tensor<1x8x512x128xf16>, %q: tensor<1x8x512x128xf16>, %k: tensor<1x2x700x128xf16>, %o: tensor<1x8x512x128xf16>, %lse: tensor<1x8x512xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> (tensor<1x8x512x128xf16>, tensor<1x2x700x128xf16>, tensor<1x2x700x128xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %k, %o, %lse varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) {window_left = 64 : i64, window_right = 0 : i64} : tensor<1x8x512x128xf16>, tensor<1x8x512x128xf16>, tensor<1x2x700x128xf16>, tensor<1x2x700x128xf16>, tensor<1x8x512x128xf16>, tensor<1x8x512xf32> -> tensor<1x8x512x128xf16>, tensor<1x2x700x128xf16>, tensor<1x2x700x128xf16>
  return %dq, %dk, %dv : tensor<1x8x512x128xf16>, tensor<1x2x700x128xf16>, tensor<1x2x700x128xf16>
}
