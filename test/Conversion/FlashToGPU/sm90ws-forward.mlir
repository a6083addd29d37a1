// RUN: flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s
// RUN: flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" --flash-lower-to-gpu="chip=sm_90a kernels-only=true" --flash-kernels-to-ptx | FileCheck %s --check-prefix=PTX
// RUN: not flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" --flash-lower-to-gpu=chip=sm_90a 2>&1 | FileCheck %s --check-prefix=HOST

// The warp-specialised Hopper forward (Sm90WsForward.cpp): 384 threads, one
// block per SM on a persistent grid (`grid = "persistent"` in the
// manifest); the tensor maps last among the parameters and marked for
// flash-grid-constant-params; thread 0 initialises the 2 + 2 x stages
// mbarriers (Q; K/V full; K/V empty and Q read, one arrival per consumer
// thread); the producer warpgroup (tid < 128) gives registers back and
// thread 0 of it walks the tiles (PersistentScheduler.cpp: a causal mask
// pairs query blocks M-1-i and i, units blockIdx.x, step gridDim.x, and
// walks the (head, batch) pairs of the last round and one more as single
// blocks, longest first, the CTAs taking them in turn and in reverse turn
// every other round): per tile the first stages - 1 key
// blocks, then Q once the consumers have read the previous one, then the
// rest, each block waiting on "empty" from the second round on; the
// consumers take registers, walk the same tiles, wait on "full", release
// with an arrival on "empty" once the P·V product of the block is done,
// signal "Q read" after the key loop, synchronise their epilogue on named
// barrier 1 over 256 threads, stage O in the last block's V buffer and give
// that buffer back after a proxy fence.
// HOST: error: 'flash.attention' op recipe 'sm90ws' takes TMA tensor maps by value, which only the FlashFuse runtime makes: compile it with flashfuse-compile (or kernels-only=true) and launch it through the runtime
// CHECK-LABEL: func.func @causal
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal blocks in ({{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: gpu.func @flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal(
// CHECK-SAME: %arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: !llvm.ptr) kernel
// CHECK-SAME: flash.grid_constant_params = 3 : i64
// CHECK-SAME: grid = "persistent"
// CHECK-SAME: params = ["memref:q", "memref:k", "memref:v", "memref:o", "memref:lse",
// CHECK-SAME: "tensormap:q_map", "tensormap:k_map", "tensormap:v_map"]
// CHECK-SAME: threads = 384
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>
// CHECK-SAME: nvvm.minctasm = 1 : i32
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 8>
// CHECK-COUNT-8: nvgpu.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: cf.cond_br %{{.*}}, ^[[PRODUCER:bb[0-9]+]], ^[[CONSUMER:bb[0-9]+]]
// CHECK: ^[[PRODUCER]]:
// CHECK-NEXT: nvvm.setmaxregister {{ *}}decrease 40
// CHECK: scf.for %[[ITEM:[a-z0-9]+]] = %c0{{.*}} to %{{[0-9]+}} step %{{.*}} iter_args(
// Each tile recomputes the walk from its coordinates read afresh (held
// across the tile, its values spilled):
// CHECK-NEXT: %[[CTA_RAW:[0-9]+]] = llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %ctaid.x;"
// CHECK: %[[GRID_RAW:[0-9]+]] = llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %nctaid.x;"
// CHECK: %[[GRID_INDEX:[0-9]+]] = arith.index_castui %[[GRID_RAW]] : i32 to index
// CHECK: %[[GRID:[0-9]+]] = arith.index_castui %[[GRID_INDEX]] : index to i32
// CHECK: %[[PAIRED:[0-9]+]] = arith.cmpi ult, %[[GRID]], %{{.*}} : i32
// CHECK: %[[PER_HEAD:[0-9]+]] = arith.select %[[PAIRED]], %{{.*}}, %{{.*}} : i32
// The tail: as many (head, batch) pairs as the units past the last whole
// round and one round more need, where the pairs leave a remainder.
// CHECK: %[[REM:[0-9]+]] = arith.remui %{{.*}}, %[[GRID]] : i32
// CHECK: %[[SHORT:[0-9]+]] = arith.andi %[[PAIRED]], %{{.*}} : i1
// CHECK: %[[MORE:[0-9]+]] = arith.addi %[[REM]], %[[GRID]] : i32
// CHECK: %[[NEED:[0-9]+]] = arith.ceildivui %[[MORE]], %[[PER_HEAD]] : i32
// CHECK: %[[CAPPED:[0-9]+]] = arith.minui %{{.*}}, %[[NEED]] : i32
// CHECK: %[[TAIL:[0-9]+]] = arith.select %[[SHORT]], %[[CAPPED]], %{{.*}} : i32
// Each CTA's pairs, then its single blocks: one a round, at its turn in
// even rounds and at grid - 1 - turn in odd ones.
// CHECK: %[[PAIRS:[0-9]+]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK: %[[START:[0-9]+]] = arith.remui %{{.*}}, %[[GRID]] : i32
// CHECK: %[[AHEAD:[0-9]+]] = arith.addi %{{.*}}, %[[GRID]] : i32
// CHECK: %[[FROM:[0-9]+]] = arith.subi %[[AHEAD]], %[[START]] : i32
// CHECK: %[[TURN:[0-9]+]] = arith.remui %[[FROM]], %[[GRID]] : i32
// CHECK: %[[LAST:[0-9]+]] = arith.subi %[[GRID]], %{{.*}} : i32
// CHECK: %[[REVERSED:[0-9]+]] = arith.subi %[[LAST]], %[[TURN]] : i32
// CHECK: %[[IS_PAIR:[0-9]+]] = arith.cmpi ult, %[[ITEM]], %[[PAIRS]] : i32
// CHECK: %[[ROUND:[0-9]+]] = arith.subi %[[ITEM]], %[[PAIRS]] : i32
// CHECK: %[[ODD:[0-9]+]] = arith.trunci %[[ROUND]] : i32 to i1
// CHECK: arith.select %[[ODD]], %[[REVERSED]], %[[TURN]] : i32
// CHECK: arith.select %[[IS_PAIR]], %{{.*}}, %{{.*}} : i32
// CHECK: scf.for
// CHECK: arith.select %[[IS_PAIR]], %{{.*}}, %{{.*}} : i32
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK-COUNT-4: nvgpu.tma.async.load
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK-COUNT-2: nvgpu.tma.async.load
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK-COUNT-4: nvgpu.tma.async.load
// CHECK: gpu.return
// CHECK: ^[[CONSUMER]]:
// CHECK-NEXT: nvvm.setmaxregister {{ *}}increase 232
// CHECK: scf.for
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: wgmma.mma_async
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvgpu.mbarrier.arrive %
// CHECK: nvgpu.mbarrier.arrive %
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.fence.proxy
// CHECK: nvgpu.mbarrier.arrive %
// CHECK: nvgpu.mbarrier.arrive %
// CHECK: gpu.return
// PTX: .param .align 64 .b8 flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal_param_{{[0-9]+}}[128]
// PTX: .maxntid 384, 1, 1
// PTX: .minnctapersm 1
// PTX: setmaxnreg.dec.sync.aligned.u32 {{(\\09)?}}40
// PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX: setmaxnreg.inc.sync.aligned.u32 {{(\\09)?}}232
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX: bar.sync {{(\\09)?}}1, 256
func.func @causal(%q: tensor<2x16x1000x128xbf16>, %k: tensor<2x4x1000x128xbf16>) -> tensor<2x16x1000x128xbf16> {
  %o = flash.attention %q, %k, %k {causal = #flash.causal<top_left>}
      : tensor<2x16x1000x128xbf16>, tensor<2x4x1000x128xbf16>, tensor<2x4x1000x128xbf16>
      -> tensor<2x16x1000x128xbf16>
  return %o : tensor<2x16x1000x128xbf16>
}
