// REQUIRES: ptxas
// A packed batch's forward on the sm90ws recipe (flashfuse-compile
// --recipe=sm90ws): VarlenScheduler<Sm90WsForwardBuilder> on the
// persistent walk (`grid persistent`: units of the longest sequence's
// query blocks x Hq x sequences, each sequence's own blocks walked and the
// rest skipped, PersistentScheduler.h); the producer copies the sequence's
// rows from its first packed row in batch 0 of the [1][H][total][D]
// tensor maps. 0 spill bytes (flashfuse-compile fails on a spill).
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=sm90ws -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.txt
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx

// CHECK: ptxas sm_90a flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal_varlen: {{.*}}, 0 bytes stack, 0/0 bytes spill stores/loads
// CHECK: kernel flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal_varlen (smem

// MANIFEST-LABEL: kernel flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal_varlen
// MANIFEST: varlen 1
// MANIFEST-NEXT: grid persistent
// MANIFEST-NEXT: params {{.*}}memref:cu_seqlens_q memref:cu_seqlens_k {{.*}}i32:num_seqs i32:max_seqlen_q {{.*}}tensormap:q_map tensormap:k_map tensormap:v_map
// MANIFEST: end

// The producer (40 registers, as the dense walk's) walks its units from
// the CTA's coordinates, reads each unit's sequence (its query blocks: two
// offsets), then the tile's (four), and copies from column 0 of batch 0
// (the same zero register twice); the consumers walk the same units.
// PTX-LABEL: .entry flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal_varlen(
// PTX: setmaxnreg.dec.sync.aligned.u32 40;
// PTX: %nctaid.x
// PTX: %ctaid.x
// PTX: ld.global.b32
// PTX: ld.global.b32
// PTX: ld.global.b32
// PTX: ld.global.b32
// PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {[[ZERO:%r[0-9]+]], {{%r[0-9]+}}, {{%r[0-9]+}}, [[ZERO]]}], [{{.*}}];
// PTX: setmaxnreg.inc.sync.aligned.u32 232;
// PTX: %nctaid.x
// PTX: %ctaid.x
// PTX: ld.global.b32
// PTX: wgmma.mma_async
func.func @varlen(%q: tensor<1x16x1000x128xbf16>, %k: tensor<1x4x1000x128xbf16>,
                  %cu: tensor<9xi32>) -> tensor<1x16x1000x128xbf16> {
  %o = flash.attention %q, %k, %k varlen(%cu, %cu : tensor<9xi32>, tensor<9xi32>)
      {causal = #flash.causal<top_left>}
      : tensor<1x16x1000x128xbf16>, tensor<1x4x1000x128xbf16>, tensor<1x4x1000x128xbf16>
      -> tensor<1x16x1000x128xbf16>
  return %o : tensor<1x16x1000x128xbf16>
}
