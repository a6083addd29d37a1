// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm90ws" --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s

// The sm90ws forward's two ring shapes (Sm90WsForward.cpp).
//
// Two stages (D = 256: 128 x 80): a block's K and V tiles land and are given
// back apart (keysApart): 2 + 4 x 2 mbarriers; the producer waits for the
// K buffer, arms its own barrier with K's bytes (80 x 256 x 2 = 40960) and
// copies K, then the same for V; one tile a block (no walk), so the
// producer keeps 24 registers and the consumers take 240. The consumers
// wait for K, issue S, wait for V between the two wgmma issues, give K back
// once S has completed (wait.group 1) and V once P·V has.
// CHECK-LABEL: func.func @two_stages
// CHECK: gpu.func @flash_fwd_sm90ws_bf16_d256_m128n80w8s2(
// CHECK-NOT: grid = "persistent"
// CHECK-SAME: threads = 384
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 10>
// CHECK-COUNT-10: nvgpu.mbarrier.init
// CHECK: nvvm.setmaxregister {{ *}}decrease 24
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}[%{{.*}}], %c40960
// CHECK-COUNT-4: nvgpu.tma.async.load
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}[%{{.*}}], %c40960
// CHECK-COUNT-4: nvgpu.tma.async.load
// CHECK: nvvm.setmaxregister {{ *}}increase 240
// The first block: S, then K given back.
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: wgmma.mma_async
// CHECK: nvgpu.mbarrier.arrive
// The key loop: wait for K_j, S_j, wait for V_{j-1}, P·V_{j-1}.
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: wgmma.mma_async
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: mbarrier
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NOT: wgmma
// CHECK: nvgpu.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: wgmma
// CHECK: nvgpu.mbarrier.arrive
func.func @two_stages(%q: tensor<1x8x1000x256xbf16>) -> tensor<1x8x1000x256xbf16> {
  %o = flash.attention %q, %q, %q
      : tensor<1x8x1000x256xbf16>, tensor<1x8x1000x256xbf16>, tensor<1x8x1000x256xbf16>
      -> tensor<1x8x1000x256xbf16>
  return %o : tensor<1x8x1000x256xbf16>
}

// -----

// Three consumer warpgroups (D = 64, no mask: 192 rows, 12 warps) on four
// whole-block stages: 512 threads, 2 + 2 x 4 mbarriers, one arrive.expect_tx
// for K and V together (128 x 64 x 2 x 2 = 32768 bytes), the walk's
// producer at 32 registers and the consumers at 160; their named barrier
// counts 384 threads.
// CHECK-LABEL: func.func @three_consumers
// CHECK: gpu.func @flash_fwd_sm90ws_f16_d64_m192n128w12s4(
// CHECK-SAME: grid = "persistent"
// CHECK-SAME: threads = 512
// CHECK-SAME: known_block_size = array<i32: 512, 1, 1>
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 10>
// CHECK: nvvm.setmaxregister {{ *}}decrease 32
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}[%{{.*}}], %c32768
// CHECK: nvvm.setmaxregister {{ *}}increase 160
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c384
func.func @three_consumers(%q: tensor<1x8x1000x64xf16>) -> tensor<1x8x1000x64xf16> {
  %o = flash.attention %q, %q, %q
      : tensor<1x8x1000x64xf16>, tensor<1x8x1000x64xf16>, tensor<1x8x1000x64xf16>
      -> tensor<1x8x1000x64xf16>
  return %o : tensor<1x8x1000x64xf16>
}
