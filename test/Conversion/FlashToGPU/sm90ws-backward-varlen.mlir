// REQUIRES: ptxas
// A packed batch's backward on an explicit sm90ws config (select-config
// keeps packed batches on sm90: no faster, docs/PERF.md run 143): the
// producer places the block in its sequence (VarlenBackwardScheduler's
// rereadPlacement) and copies the sequence's rows from its first packed
// row in batch 0 of the [1][H][total][D] tensor maps; the consumers stage
// dQ as rows and add each with a bulk reduction (KernelSpec::stagesDQRows;
// no red.global). This one spills nothing (flashfuse-compile fails on a
// spill); the D = 128 window and bottom-right ones and the D = 64 one
// without a mask keep their placement in shared memory
// (sm90ws-backward-varlen-placement.mlir).
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx

// CHECK: kernel flash_bwd_sm90ws_f16_d64_m128n128w8s2_causalbr_varlen (smem
// CHECK: kernel flash_bwd_post_sm90_f16_d64_m128n128w8s2_causalbr_dqrows (smem

// The producer reads the offsets again after its setmaxnreg; its first K
// copy (column 0) is in batch 0: the same zero register twice.
// PTX-LABEL: .entry flash_bwd_sm90ws_f16_d64_m128n128w8s2_causalbr_varlen(
// PTX: setmaxnreg.dec.sync.aligned.u32 24;
// PTX: ld.global.b32
// PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {[[ZERO:%r[0-9]+]], {{%r[0-9]+}}, {{%r[0-9]+}}, [[ZERO]]}], [__mbarrier];
// PTX: setmaxnreg.inc.sync.aligned.u32 240;
// The tail tiles hold the next sequence's rows, and 0 · NaN is not 0: the
// consumers zero K and V rows past the sequence's keys once, every
// chunk of both tiles unrolled (8 a thread, stored where the row is past
// the tail), fenced for wgmma and published by both warpgroups' barrier;
// then, in the query loop, Q and dO rows past its queries in the tail step.
// PTX-COUNT-8: st.shared.v4.b32 [{{%rd[0-9]+}}{{(\+[0-9]+)?}}], {0, 0, 0, 0};
// PTX: fence.proxy.async.shared::cta;
// PTX-NEXT: bar.sync 3, 256;
// PTX-COUNT-8: st.shared.v4.b32 [{{%rd[0-9]+}}+{{[0-9]+}}], {0, 0, 0, 0};
// PTX: fence.proxy.async.shared::cta;
// PTX-NEXT: bar.sync 3, 256;
// PTX-NOT: red.global
// PTX: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// PTX-NOT: red.global
// PTX: .entry

func.func @varlen_grad(%do: tensor<1x8x300x64xf16>, %q: tensor<1x8x300x64xf16>, %k: tensor<1x2x500x64xf16>, %v: tensor<1x2x500x64xf16>, %o: tensor<1x8x300x64xf16>, %lse: tensor<1x8x300xf32>, %cu_q: tensor<4xi32>, %cu_k: tensor<4xi32>) -> (tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<4xi32>, tensor<4xi32>)
      {causal = #flash.causal<bottom_right>, config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 2>}
      : tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>, tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
      -> tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>
  return %dq, %dk, %dv : tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>
}
