// The sm90ws backward's column groups (sm90ws-backward-column-groups.mlir)
// at D = 192 with Dv = 128.
// DeepSeek MLA's D = 192 with Dv = 128: each warpgroup computes Sᵀ and dPᵀ
// of its 32 of the block's queries (12 + 8 m64n32k16 k-steps), and after
// the consumers' barrier a 64-column half of dV from the whole Pᵀ tile
// (four m64n64k16 k-steps). A group's half of D (96 columns) is not whole
// 64-column blocks, so each group keeps 32 columns of every block of dK
// (three m64n32k16 chains, each B from a 64-byte offset into the Q tile's
// rows); dQ in three 32-column pieces a warpgroup, staged as rows
// (KernelSpec::stagesDQRows: they fit here) and added by one bulk
// reduction a row, no red.global. Every piece spills nothing (the library
// ships these: scripts/kernels/gen_suite.py).
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=sm90ws --no-cubin -o %t 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx

// CHECK: kernel flash_bwd_sm90ws_bf16_d192_dv128_m64n64w8s2_causal (smem 192512 bytes)

// PTX-LABEL: .entry flash_bwd_sm90ws_bf16_d192_dv128_m64n64w8s2_causal(
// PTX-COUNT-20: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PTX-NOT: wgmma.mma_async
// PTX: bar.sync 3, 256;
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PTX-NOT: wgmma.mma_async
// PTX: bar.sync 3, 256;
// PTX-COUNT-24: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PTX-NOT: red.global
// PTX: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// PTX-NOT: red.global
// PTX: .entry flash_bwd_post_sm90_bf16_d192_dv128_m64n64w8s2_causal_dqrows(

func.func @mla(%do: tensor<2x4x300x128xbf16>, %q: tensor<2x4x300x192xbf16>, %k: tensor<2x2x300x192xbf16>, %v: tensor<2x2x300x128xbf16>, %lse: tensor<2x4x300xf32>) -> (tensor<2x4x300x192xbf16>, tensor<2x2x300x192xbf16>, tensor<2x2x300x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %do, %lse {causal = #flash.causal<top_left>}
      : tensor<2x4x300x128xbf16>, tensor<2x4x300x192xbf16>, tensor<2x2x300x192xbf16>, tensor<2x2x300x128xbf16>, tensor<2x4x300x128xbf16>, tensor<2x4x300xf32>
      -> tensor<2x4x300x192xbf16>, tensor<2x2x300x192xbf16>, tensor<2x2x300x128xbf16>
  return %dq, %dk, %dv : tensor<2x4x300x192xbf16>, tensor<2x2x300x192xbf16>, tensor<2x2x300x128xbf16>
}
