// The sm90ws backward at D = 256 (KernelSpec::kvColumnGroups, HeadDims.h's
// wgmmaBackwardColumnGroups): both consumer warpgroups own the block's 64
// keys and split its 64 queries for the scores (scoresByQueryHalves): each
// computes Sᵀ and dPᵀ of its 32 queries (sixteen m64n32k16 k-steps each
// over D = 256), stores its half of Pᵀ, and after the consumers' barrier
// accumulates one 128-column half of dV from the whole Pᵀ tile (four
// m64n128k16 k-steps over the 64 queries); the same for dSᵀ and dK. From
// dSᵀ each warpgroup takes a 128-column half of dQ in two 64-column
// products and stages it in the step's own Q and dO column blocks of its
// half (KernelSpec::stagesDQInQueryTiles; no room for a dQ tile of its
// own), in the tiles' fragment order that the postprocess reads (no
// `_dqrows`), then one thread of the warpgroup adds both pieces with two
// bulk reductions, no red.global. That thread's arrival on the buffer's
// "empty" barrier waits for the reductions to have read it, in the next
// step, after its first products are issued. ptxas (not run here,
// --no-cubin) gives these kernels 0 spill bytes.
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=sm90ws --no-cubin -o %t 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.txt

// CHECK: kernel flash_bwd_pre_sm90_bf16_d256_m64n64w8s2_causal (smem 0 bytes)
// CHECK: kernel flash_bwd_sm90ws_bf16_d256_m64n64w8s2_causal (smem 215040 bytes)
// CHECK: kernel flash_bwd_post_sm90_bf16_d256_m64n64w8s2_causal (smem 0 bytes)

// MANIFEST-LABEL: kernel flash_bwd_sm90ws_bf16_d256_m64n64w8s2_causal
// MANIFEST: kind backward
// MANIFEST: block_m 64
// MANIFEST-NEXT: block_n 64

// PTX-LABEL: .entry flash_bwd_sm90ws_bf16_d256_m64n64w8s2_causal(
// PTX: setmaxnreg.dec.sync.aligned.u32 {{[[:space:]]*}}24;
// PTX: setmaxnreg.inc.sync.aligned.u32 {{[[:space:]]*}}240;
// PTX-COUNT-32: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PTX-NOT: wgmma.mma_async
// PTX: cp.async.bulk.wait_group.read {{[[:space:]]*}}0;
// PTX-NEXT: mbarrier.arrive.shared.b64
// PTX: wgmma.wait_group.sync.aligned {{[[:space:]]*}}1;
// PTX: bar.sync {{[[:space:]]*}}3, 256;
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-NOT: wgmma.mma_async
// PTX: bar.sync {{[[:space:]]*}}3, 256;
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PTX-NOT: red.global
// PTX-COUNT-2: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// PTX: cp.async.bulk.commit_group;
// PTX-NOT: red.global
// PTX: .entry flash_bwd_post_sm90_bf16_d256_m64n64w8s2_causal(

func.func @d256(%x: tensor<2x4x300x256xbf16>, %lse: tensor<2x4x300xf32>) -> (tensor<2x4x300x256xbf16>, tensor<2x4x300x256xbf16>, tensor<2x4x300x256xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse {causal = #flash.causal<top_left>}
      : tensor<2x4x300x256xbf16>, tensor<2x4x300x256xbf16>, tensor<2x4x300x256xbf16>, tensor<2x4x300x256xbf16>, tensor<2x4x300x256xbf16>, tensor<2x4x300xf32>
      -> tensor<2x4x300x256xbf16>, tensor<2x4x300x256xbf16>, tensor<2x4x300x256xbf16>
  return %dq, %dk, %dv : tensor<2x4x300x256xbf16>, tensor<2x4x300x256xbf16>, tensor<2x4x300x256xbf16>
}
