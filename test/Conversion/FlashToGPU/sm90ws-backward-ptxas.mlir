// REQUIRES: ptxas
// The sm90ws backward (select-config's recipe=sm90ws for the backwards it
// serves): the sm90 backward's tiles and products (backward-sm90-ptxas.mlir)
// in two consumer warpgroups of 240 registers, fed by a producer warpgroup
// of 24 whose first warp issues the TMA copies of K and V once and of each
// query block's Q and dO into a two-deep ring (lane 0, mbarrier
// expect_tx), copies the block's LSE and Dsum rows beside them and arrives
// on the buffer's "full" barrier; the consumers hand each buffer back on
// its "empty" barrier and synchronise among themselves on named barrier 3.
// The preprocess and postprocess are the sm90 recipe's. dV and dK read
// the packed Pᵀ and dSᵀ from registers (wgmma's register A operand), so
// the consumers store only dSᵀ (for dQ) and never wait on a barrier
// before dV. Every kernel assembles for sm_90a with no spill
// (flashfuse-compile fails on one): at D = 128 the consumers derive the
// kv head, the lengths and their thread number again in 32 bits and the
// epilogue reads the block's head and batch afresh, where the prologue's
// 64-bit copies once lived through the loop on the stack (16-20 bytes,
// docs/PERF.md "Zero spill bytes in the sm90ws backward").
// RUN: rm -rf %t && flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" | FileCheck %s --check-prefix=CONFIG
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90ws -o %t 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.txt
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx

// CONFIG: flash.attention_grad {{.*}}config = #flash.config<sm90ws, block_m = 64, block_n = 128, warps = 8, stages = 2>
// CONFIG: flash.attention_grad {{.*}}config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 2>
// CONFIG: flash.attention_grad {{.*}}config = #flash.config<sm90ws, block_m = 64, block_n = 128, warps = 8, stages = 2>
// CONFIG-COUNT-3: flash.attention_grad {{.*}}config = #flash.config<sm90ws, block_m = 64, block_n = 128, warps = 8, stages = 2>

// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2: 168 registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causal: 168 registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_f16_d128_m64n128w8s2_causalbr: 168 registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_window: 168 registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_f16_d64_m128n128w8s2_causal: 168 registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_f16_d64_m64n128w8s2_softcap: 168 registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_pre_sm90_bf16_d128_m64n128w8s2: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_post_sm90_f16_d64_m128n128w8s2_causal: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill

// 384 threads (the producer warpgroup on top of the 8 consumer warps), the
// sm90 backward's shared memory less its Pᵀ tile (198656 - 2 x 64 x 128
// bytes), and the four tensor maps last.
// MANIFEST: kernel flash_bwd_sm90ws_bf16_d128_m64n128w8s2
// MANIFEST-NEXT: kind backward
// MANIFEST: threads 384
// MANIFEST-NEXT: smem 182272
// MANIFEST: params {{.*}} f32:scale {{.*}} tensormap:q_map tensormap:k_map tensormap:v_map tensormap:do_map{{$}}

// PTX-LABEL: .entry flash_bwd_sm90ws_bf16_d128_m64n128w8s2(
// PTX: .maxntid 384, 1, 1
// PTX: .minnctapersm 1
// PTX: mbarrier.init.shared.b64 [__mbarrier], {{%r[0-9]+}};
// PTX: fence.mbarrier_init.release.cluster;
// PTX: setmaxnreg.dec.sync.aligned.u32 24;
// K and V (two 64-column boxes each) on barrier 0, then Q and dO of a
// query block on its "full" barrier.
// PTX: mbarrier.arrive.expect_tx.shared.b64 {{%rd[0-9]+}}, [__mbarrier], {{%r[0-9]+}};
// PTX-COUNT-4: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes {{.*}}, [__mbarrier];
// PTX: mbarrier.arrive.expect_tx.shared.b64 {{%rd[0-9]+}}, [__mbarrier+8], {{%r[0-9]+}};
// PTX-COUNT-4: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes {{.*}}, [__mbarrier+8];
// PTX: mbarrier.arrive.shared.b64 {{%rd[0-9]+}}, [__mbarrier+8];
// PTX: setmaxnreg.inc.sync.aligned.u32 240;
// PTX-NOT: cp.async.ca
// PTX: mbarrier.try_wait.parity
// Sᵀ and dPᵀ from shared memory, then dV (n = D) and dK with Pᵀ and dSᵀ
// from registers ({4 registers} as A), dQ from the dSᵀ tile.
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd
// PTX-NOT: bar.sync 1, 128;
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd
// PTX: bar.sync 3, 256;
// PTX: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// The epilogue at D = 128: dK and dV staged in the K and V tiles, then
// 16-byte chunks to global memory (8 a thread for each), no 4-byte pairs.
// PTX-NOT: st.global.b32
// PTX: ld.shared.v4.b32
// PTX-COUNT-16: st.global.v4.b32
// PTX-NOT: st.global.b32
// PTX: .entry

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

func.func @grad128_causal(%do: tensor<2x8x256x128xbf16>, %q: tensor<2x8x256x128xbf16>, %k: tensor<2x8x256x128xbf16>, %v: tensor<2x8x256x128xbf16>, %o: tensor<2x8x256x128xbf16>, %lse: tensor<2x8x256xf32>) -> (tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256xf32> -> tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>
  return %dq, %dk, %dv : tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>
}

func.func @grad128_causal_br(%do: tensor<2x8x256x128xf16>, %q: tensor<2x8x256x128xf16>, %k: tensor<2x8x256x128xf16>, %v: tensor<2x8x256x128xf16>, %o: tensor<2x8x256x128xf16>, %lse: tensor<2x8x256xf32>) -> (tensor<2x8x256x128xf16>, tensor<2x8x256x128xf16>, tensor<2x8x256x128xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<bottom_right>} : tensor<2x8x256x128xf16>, tensor<2x8x256x128xf16>, tensor<2x8x256x128xf16>, tensor<2x8x256x128xf16>, tensor<2x8x256x128xf16>, tensor<2x8x256xf32> -> tensor<2x8x256x128xf16>, tensor<2x8x256x128xf16>, tensor<2x8x256x128xf16>
  return %dq, %dk, %dv : tensor<2x8x256x128xf16>, tensor<2x8x256x128xf16>, tensor<2x8x256x128xf16>
}

func.func @grad128_window(%do: tensor<2x8x256x128xbf16>, %q: tensor<2x8x256x128xbf16>, %k: tensor<2x8x256x128xbf16>, %v: tensor<2x8x256x128xbf16>, %o: tensor<2x8x256x128xbf16>, %lse: tensor<2x8x256xf32>) -> (tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {window_left = 512 : i64, window_right = 0 : i64} : tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256xf32> -> tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>
  return %dq, %dk, %dv : tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>
}
