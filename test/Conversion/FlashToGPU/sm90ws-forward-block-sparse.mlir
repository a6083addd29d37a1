// REQUIRES: ptxas
// A block-sparse forward on the sm90ws recipe: the producer copies the key
// blocks the lists name (BlockSparseIterator<Sm90WsForwardBuilder>), one
// tile a block (no persistent walk: the iterator reads the block's query
// block from its coordinates), with no spill. The producer publishes each
// ring stage's key block in the key table after the tiles (4 bytes a
// stage: 1024 + 2 * (128 * 128 + 3 * 128 * 256) + 12 bytes at D = 128),
// with bit 31 set where mask_mod applies, before it arms the stage's
// "full" barrier; the consumers read the stage's entry from there (the
// table sits 229376 bytes past the tiles' base at D = 128) instead of the
// lists. With one tile a block, Q goes out before the key blocks, whose
// copies wait for the lists' reads. Each block takes its tile from the
// tile order at `kv_tile_order` (entry ctaid.x + nctaid.x (ctaid.y +
// nctaid.y ctaid.z), (batch << 24) | (head << 16) | query block, each field
// clamped into the grid), or its own where that address is 0.
// RUN: rm -rf %t && flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" | FileCheck %s --check-prefix=CONFIG
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90ws -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.txt
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx

// CONFIG: block_sparse({{.*}}config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
// CHECK-DAG: kernel flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f (smem 230412 bytes)
// CHECK-DAG: kernel flash_fwd_sm90ws_bf16_d64_m128n128w8s3_bs128x128f_mod{{[0-9]+}} (smem 115724 bytes)
// CHECK-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f: 168 registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_fwd_sm90ws_f16_d128_m128n128w8s3_bs128x128: 168 registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d64_m128n128w8s3_bs128x128f_mod{{[0-9]+}}: 168 registers, 0 bytes stack, 0/0 bytes spill
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f
// MANIFEST-NOT: grid persistent
// MANIFEST: block_sparse 2
// MANIFEST: params {{.*}}memref:kv_num_blocks{{.*}} i32:full_kv_slots i64:kv_tile_order tensormap:q_map tensormap:k_map tensormap:v_map{{$}}

// The producer reads the row's counts, issues Q (32768 bytes) before any
// key block, then stores each step's entry before the stage's K and V
// (65536 bytes) are expected.
// PTX-LABEL: .entry flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f(
// PTX: shl.b64 [[OFF:%rd[0-9]+]], {{%rd[0-9]+}}, 2;
// PTX-NEXT: add.s64 [[AT:%rd[0-9]+]], [[ORDER:%rd[0-9]+]], [[OFF]];
// PTX: setp.ne.u64 p, [[ORDER]], 0;
// PTX-NEXT: mov.b32 [[ENTRY:%r[0-9]+]], [[OWN:%r[0-9]+]];
// PTX-NEXT: @p ld.global.nc.b32 [[ENTRY]], {{\[}}[[AT]]{{\]}};
// PTX: and.b32 {{%r[0-9]+}}, [[ENTRY]], 65535;
// PTX-NEXT: bfe.u32 {{%r[0-9]+}}, [[ENTRY]], 16, 8;
// PTX: min.u64
// PTX: setmaxnreg.dec.sync.aligned.u32 24;
// PTX: ld.global.b32
// PTX-NOT: st.shared.b32
// PTX: mov.b32 {{%r[0-9]+}}, 32768;
// PTX-NEXT: mbarrier.arrive.expect_tx.shared.b64 {{%rd[0-9]+}}, [__mbarrier],
// PTX: st.shared.b32 [{{%rd[0-9]+}}], {{%r[0-9]+}};
// PTX-NEXT: mov.b32 {{%r[0-9]+}}, 65536;
// PTX-NEXT: mbarrier.arrive.expect_tx.shared.b64
// PTX: setmaxnreg.inc.sync.aligned.u32 240;
// PTX: mbarrier.try_wait.parity.shared.b64
// PTX: ld.shared.b32 {{%r[0-9]+}}, [{{%rd[0-9]+}}+229376];
// PTX-LABEL: .entry flash_fwd_sm90ws_f16_d128_m128n128w8s3_bs128x128(
// PTX-LABEL: .entry flash_fwd_sm90ws_bf16_d64_m128n128w8s3_bs128x128f_mod
// PTX: or.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, -2147483648;
// PTX: st.shared.b32
// PTX: and.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 2147483647;

func.func @bf16_d128_full(%q: tensor<2x8x1000x128xbf16>, %n: tensor<2x8x8xi32>, %i: tensor<2x8x8x8xi32>, %fn: tensor<2x8x8xi32>, %fi: tensor<2x8x8x8xi32>) -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>) full_blocks(%fn, %fi : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>) : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
func.func @f16_d128_partial_broadcast(%q: tensor<2x8x1024x128xf16>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>) -> tensor<2x8x1024x128xf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>) : tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16> -> tensor<2x8x1024x128xf16>
  return %o : tensor<2x8x1024x128xf16>
}
func.func @bf16_d64_mask_mod_full(%q: tensor<1x4x1024x64xbf16>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>, %fn: tensor<1x1x8xi32>, %fi: tensor<1x1x8x8xi32>) -> tensor<1x4x1024x64xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>) full_blocks(%fn, %fi : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>) : tensor<1x4x1024x64xbf16>, tensor<1x4x1024x64xbf16>, tensor<1x4x1024x64xbf16> -> tensor<1x4x1024x64xbf16>
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %kj: index):
        %c = arith.constant 256 : index
        %qd = arith.divui %qi, %c : index
        %kd = arith.divui %kj, %c : index
        %same = arith.cmpi eq, %qd, %kd : index
        flash.yield %same : i1
      }
  return %o : tensor<1x4x1024x64xbf16>
}
