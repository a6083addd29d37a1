// REQUIRES: ptxas
// The sm90 backward (select-config's choice for D = 64 and 128 on sm_90):
// wgmma products, dQ staged in shared memory and added to its dq_accum tile
// by one bulk reduction per query block, LSE/Dsum staged through shared
// memory by 4-byte cp.async. flashfuse-compile fails on a spill, so all the
// kernels (preprocess, main, postprocess) assemble for sm_90a with none.
// RUN: rm -rf %t && flashfuse-opt %s --flash-select-config=target=h100 | FileCheck %s --check-prefix=CONFIG
// RUN: flashfuse-compile %s --target=h100 -o %t 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.txt
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx
// RUN: not flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90 2>&1 | FileCheck %s --check-prefix=CHIP

// CONFIG: flash.attention_grad {{.*}}config = #flash.config<sm90, block_m = 64, block_n = 128, warps = 8, stages = 2>
// CONFIG: flash.attention_grad {{.*}}config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 8, stages = 2>
// CONFIG: flash.attention_grad {{.*}}config = #flash.config<sm90, block_m = 64, block_n = 128, warps = 8, stages = 2>

// CHECK-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90_f16_d64_m128n128w8s2_causal: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90_f16_d64_m64n128w8s2_softcap: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_pre_sm90_bf16_d128_m64n128w8s2: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_post_sm90_f16_d64_m128n128w8s2_causal: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill

// Shared memory: 1024 (alignment) + 2 ((block_n + 2 block_m) 2D + 2 block_n
// block_m) (K, V, the Q/dO ring, Pᵀ, dSᵀ) + 4 * 2 * 2 block_m (LSE, Dsum)
// + 4 block_m D (the f32 dQ tile).
// MANIFEST: kernel flash_bwd_sm90_bf16_d128_m64n128w8s2
// MANIFEST-NEXT: kind backward
// MANIFEST: smem 198656
// MANIFEST: kernel flash_bwd_sm90_f16_d64_m128n128w8s2_causal
// MANIFEST-NEXT: kind backward
// MANIFEST: smem 199680

// Sᵀ = K Qᵀ (N = block_m = 64), dV/dK (N = D, both operands from shared
// memory, B N-major), dQ (A M-major: transposed, N = 64), the statistics
// copies; the dQ tile's 16-byte stores, the proxy fence, and after the
// step's barrier one bulk reduction of the whole 64 x 128 f32 tile (32768
// bytes), waited for (its reads) before the next step's tile writes.
// PTX-LABEL: .entry flash_bwd_sm90_bf16_d128_m64n128w8s2(
// PTX: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4, {{.*}};
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// PTX: bar.sync
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 1;
// PTX: cp.async.bulk.wait_group.read 0;
// PTX-NEXT: bar.sync 0;
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1, 1;
// PTX-NOT: red.global.add
// PTX-COUNT-8: st.shared.v4.b32
// PTX-NEXT: fence.proxy.async.shared::cta;
// PTX: bar.sync 0;
// PTX: mov.b32 [[BYTES:%r[0-9]+]], 32768;
// PTX: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [ga], [{{%r[0-9]+}}], [[BYTES]];
// PTX: cp.async.bulk.commit_group;
// PTX: cp.async.bulk.wait_group 0;
// PTX-LABEL: .entry flash_bwd_sm90_f16_d64_m128n128w8s2_causal(
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 0;
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 1;
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 1, 1;

// D = 64 at 64 query rows: each warpgroup's dQ slice is 32 columns.
// PTX-LABEL: .entry flash_bwd_sm90_f16_d64_m64n128w8s2_softcap(
// PTX: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {{.*}}, p, 1, 1, 1, 1;

// CHIP: error: 'flash.attention_grad' op recipe 'sm90' needs chip=sm_90a (wgmma), got chip=sm_90
func.func @grad128(%do: tensor<2x8x256x128xbf16>, %q: tensor<2x8x256x128xbf16>, %k: tensor<2x8x256x128xbf16>, %v: tensor<2x8x256x128xbf16>, %o: tensor<2x8x256x128xbf16>, %lse: tensor<2x8x256xf32>) -> (tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256xf32> -> tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>
  return %dq, %dk, %dv : tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>
}

func.func @grad64(%do: tensor<2x8x256x64xf16>, %q: tensor<2x8x256x64xf16>, %k: tensor<2x8x256x64xf16>, %v: tensor<2x8x256x64xf16>, %o: tensor<2x8x256x64xf16>, %lse: tensor<2x8x256xf32>) -> (tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256xf32> -> tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>
  return %dq, %dk, %dv : tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>
}

func.func @grad64_softcap(%do: tensor<2x8x256x64xf16>, %q: tensor<2x8x256x64xf16>, %k: tensor<2x8x256x64xf16>, %v: tensor<2x8x256x64xf16>, %o: tensor<2x8x256x64xf16>, %lse: tensor<2x8x256xf32>) -> (tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {softcap = 30.0 : f32} : tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256xf32> -> tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>
  return %dq, %dk, %dv : tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>
}
