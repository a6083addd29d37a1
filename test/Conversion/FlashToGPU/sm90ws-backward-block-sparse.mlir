// REQUIRES: ptxas
// The block-sparse backward on the sm90ws recipe: the producer warp walks
// the transposed lists (BlockSparseQueryIterator, as the sm90 backward
// does), records each step's query block and whether mask_mod applies in
// the stage's slot beside its LSE and Dsum, and arrives on the stage's
// "full" barrier; the consumers read the slot where the sm90 backward
// does. Each block takes its key block from the tile order at
// `kv_tile_order` (KernelSpec::takesTileOrder: entry ctaid.x + nctaid.x
// (ctaid.y + nctaid.y ctaid.z), (batch << 24) | (head << 16) | key block,
// each field clamped into the grid), or its own where that address is 0:
// read at the entry, again by the producer and again in the consumers'
// epilogue (held through the loop instead, the D = 64 kernel spilled
// 28/40 bytes). Both kernels assemble with no spill.
// RUN: rm -rf %t && flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" | FileCheck %s --check-prefix=CONFIG
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90ws -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.txt
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx
// The host IR passes 0 (the grid's own order) to the main kernel only,
// after its full lists' slots and before the four null tensor maps.
// RUN: flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s --check-prefix=HOST

// CONFIG: flash.attention_grad {{.*}}config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 2>
// CONFIG: flash.attention_grad {{.*}}config = #flash.config<sm90ws, block_m = 64, block_n = 128, warps = 8, stages = 2>

// CHECK-DAG: kernel flash_bwd_sm90ws_f16_d64_m128n128w8s2_bs128x128f (smem
// CHECK-DAG: kernel flash_bwd_sm90ws_bf16_d128_m64n128w8s2_bs128x128f_mod{{[0-9]+}} (smem
// CHECK-DAG: kernel flash_bwd_bs_transpose_
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_f16_d64_m128n128w8s2_bs128x128f: 168 registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_bs128x128f_mod{{[0-9]+}}: 168 registers, 0 bytes stack, 0/0 bytes spill

// The main kernel takes the order after the transposed lists; the
// transposition and the postprocess do not.
// MANIFEST-LABEL: kernel flash_bwd_sm90ws_f16_d64_m128n128w8s2_bs128x128f
// MANIFEST: params {{.*}}memref:full_q_indices{{.*}} i32:full_q_slots i64:kv_tile_order tensormap:q_map tensormap:k_map tensormap:v_map tensormap:do_map{{$}}
// MANIFEST-LABEL: kernel flash_bwd_bs_transpose_
// MANIFEST-NOT: kv_tile_order
// MANIFEST: kernel

// HOST-LABEL: func.func @f16_d64_full
// HOST: gpu.launch_func {{.*}}@flash_bwd_bs_transpose_
// HOST-NOT: c0_i64{{[_0-9]*}} : i64, %{{[0-9]+}} : !llvm.ptr
// HOST: gpu.launch_func {{.*}}@flash_bwd_sm90ws_f16_d64_m128n128w8s2_bs128x128f
// HOST-SAME: : i32, %c0_i64{{[_0-9]*}} : i64, %{{[0-9]+}} : !llvm.ptr, %{{[0-9]+}} : !llvm.ptr, %{{[0-9]+}} : !llvm.ptr, %{{[0-9]+}} : !llvm.ptr)

// The producer reads the lists (global loads) and stores the step's slot
// in shared memory; its copies and arrivals (laid out after the
// consumers' code) follow. The checks stop at the next kernel.
// PTX-LABEL: .entry flash_bwd_sm90ws_f16_d64_m128n128w8s2_bs128x128f(
// PTX: shl.b64 [[OFF:%rd[0-9]+]], {{%rd[0-9]+}}, 2;
// PTX-NEXT: add.s64 [[AT:%rd[0-9]+]], [[ORDER:%rd[0-9]+]], [[OFF]];
// PTX: setp.ne.u64 p, [[ORDER]], 0;
// PTX-NEXT: mov.b32 [[ENTRY:%r[0-9]+]], {{%r[0-9]+}};
// PTX-NEXT: @p ld.global.nc.b32 [[ENTRY]], {{\[}}[[AT]]{{\]}};
// PTX: setmaxnreg.dec.sync.aligned.u32 24;
// PTX: mov.u32 {{%r[0-9]+}}, %nctaid.z;
// PTX: setp.ne.u64 p, [[ORDER]], 0;
// PTX: @p ld.global.nc.b32
// PTX: ld.global.b32
// PTX: st.shared.v4.b32
// PTX: setmaxnreg.inc.sync.aligned.u32 240;
// PTX: wgmma.mma_async
// PTX: setp.ne.u64 p, [[ORDER]], 0;
// PTX: @p ld.global.nc.b32
// PTX: mbarrier.arrive.expect_tx.shared.b64
// PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX: ret;
// PTX-LABEL: .entry flash_bwd_post_sm90_f16_d64_m128n128w8s2(

func.func @f16_d64_full(%t: tensor<2x4x777x64xf16>, %lse: tensor<2x4x777xf32>, %n: tensor<2x1x7xi32>, %i: tensor<2x1x7x7xi32>, %fn: tensor<2x1x7xi32>, %fi: tensor<2x1x7x7xi32>) -> tensor<2x4x777x64xf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<2x1x7xi32>, tensor<2x1x7x7xi32>)
      full_blocks(%fn, %fi : tensor<2x1x7xi32>, tensor<2x1x7x7xi32>)
      : tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>,
        tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>, tensor<2x4x777xf32>
      -> tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>
  return %dq : tensor<2x4x777x64xf16>
}
func.func @bf16_d128_mask_mod_full(%t: tensor<1x4x1024x128xbf16>, %lse: tensor<1x4x1024xf32>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>, %fn: tensor<1x1x8xi32>, %fi: tensor<1x1x8x8xi32>) -> tensor<1x4x1024x128xbf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
      full_blocks(%fn, %fi : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
      : tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>,
        tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024xf32>
      -> tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %kj: index):
        %c = arith.constant 256 : index
        %qd = arith.divui %qi, %c : index
        %kd = arith.divui %kj, %c : index
        %same = arith.cmpi eq, %qd, %kd : index
        flash.yield %same : i1
      }
  return %dq : tensor<1x4x1024x128xbf16>
}
