// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm90ws" --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s

// Ping-pong (KernelSpec::issuesInTurns, Sm90WsForward.h): the two consumer
// warpgroups of the 16-bit D = 128 forward without a mask issue their
// products in turn. Warpgroup 0 hands itself the first turn (named
// barrier 2, both warpgroups' 256 threads); every issue of a block's
// products (the first block's S, the key loop's S_j and P·V_{j-1}, the
// last block's P·V) waits at the warpgroup's own barrier first and arrives
// at the other's as soon as the products are committed, before waiting
// for them.
// CHECK-LABEL: func.func @turns
// CHECK: gpu.func @flash_fwd_sm90ws_bf16_d128_m128n176w8s2(
// CHECK: nvvm.setmaxregister {{ *}}increase
// CHECK: nvvm.barrier.arrive id = %c2_i32{{.*}} number_of_threads = %c256_i32
// The first block's S.
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// The key loop: S_j and P·V_{j-1} in one turn.
// CHECK: scf.for
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The last block's P·V.
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
func.func @turns(%q: tensor<1x8x1000x128xbf16>) -> tensor<1x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q
      : tensor<1x8x1000x128xbf16>, tensor<1x8x1000x128xbf16>, tensor<1x8x1000x128xbf16>
      -> tensor<1x8x1000x128xbf16>
  return %o : tensor<1x8x1000x128xbf16>
}

// -----

// Under a causal mask the D = 128 warpgroups issue as they come (run 281:
// 0.98-1.03x, no steady gain).
// CHECK-LABEL: func.func @causal_no_turns
// CHECK: gpu.func @flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal(
// CHECK-NOT: nvvm.barrier.arrive
func.func @causal_no_turns(%q: tensor<1x8x1000x128xbf16>) -> tensor<1x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q {causal = #flash.causal<top_left>}
      : tensor<1x8x1000x128xbf16>, tensor<1x8x1000x128xbf16>, tensor<1x8x1000x128xbf16>
      -> tensor<1x8x1000x128xbf16>
  return %o : tensor<1x8x1000x128xbf16>
}

// -----

// The e4m3 D = 64 causal forward on two warpgroups (128 x 192, the tile
// of the bottom-right mask; given here for the top-left one) takes turns
// between them.
// CHECK-LABEL: func.func @fp8_d64_causal
// CHECK: gpu.func @flash_fwd_sm90ws_e4m3_bf16_d64_m128n192w8s2_causal(
// CHECK: nvvm.barrier.arrive id = %c2_i32{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256
// CHECK-NEXT: nvvm.wgmma.fence.aligned
func.func @fp8_d64_causal(%q: tensor<2x8x1000x64xf8E4M3FN>, %k: tensor<2x2x1000x64xf8E4M3FN>,
                          %v: tensor<2x2x1000x64xf8E4M3FN>, %qd: tensor<2x8xf32>,
                          %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>)
    -> (tensor<2x8x1000x64xbf16>, tensor<2x8x1000xf32>) {
  %o, %lse = flash.attention %q, %k, %v
      descale(%qd, %kd, %vd : tensor<2x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
      {causal = #flash.causal<top_left>,
       config = #flash.config<sm90ws, block_m = 128, block_n = 192, warps = 8, stages = 2>}
      : tensor<2x8x1000x64xf8E4M3FN>, tensor<2x2x1000x64xf8E4M3FN>,
        tensor<2x2x1000x64xf8E4M3FN>
      -> tensor<2x8x1000x64xbf16>, tensor<2x8x1000xf32>
  return %o, %lse : tensor<2x8x1000x64xbf16>, tensor<2x8x1000xf32>
}

// -----

// CHECK-LABEL: func.func @fp8_d128_no_turns
// CHECK: gpu.func @flash_fwd_sm90ws_e4m3_bf16_d128_m128n192w8s2(
// CHECK-NOT: nvvm.barrier.arrive
func.func @fp8_d128_no_turns(%q: tensor<2x8x1000x128xf8E4M3FN>, %k: tensor<2x2x1000x128xf8E4M3FN>,
                             %v: tensor<2x2x1000x128xf8E4M3FN>, %qd: tensor<2x8xf32>,
                             %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>)
    -> (tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>) {
  %o, %lse = flash.attention %q, %k, %v
      descale(%qd, %kd, %vd : tensor<2x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
      : tensor<2x8x1000x128xf8E4M3FN>, tensor<2x2x1000x128xf8E4M3FN>,
        tensor<2x2x1000x128xf8E4M3FN>
      -> tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
  return %o, %lse : tensor<2x8x1000x128xbf16>, tensor<2x8x1000xf32>
}

// -----

// Three consumer warpgroups (e4m3 D = 64 without a mask) take turns in a
// ring: warpgroup w passes its turn to barrier 2 + (w + 1) mod 3, still of
// 256 threads (its own and the one handing it the turn).
// CHECK-LABEL: func.func @fp8_d64_ring
// CHECK: gpu.func @flash_fwd_sm90ws_e4m3_bf16_d64_m192n128w12s4(
// CHECK: nvvm.barrier.arrive id = %c2_i32{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: %[[NEXT:.*]] = arith.addi %{{.*}}, %c1_i32
// CHECK: %[[WRAPS:.*]] = arith.cmpi eq, %[[NEXT]], %c3_i32
// CHECK: %[[RING:.*]] = arith.select %[[WRAPS]], %c0_i32{{.*}}, %[[NEXT]]
// CHECK: %[[ID:.*]] = arith.addi %[[RING]], %c2_i32
// CHECK: nvvm.barrier.arrive id = %[[ID]] number_of_threads = %c256
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
func.func @fp8_d64_ring(%q: tensor<2x8x1000x64xf8E4M3FN>, %k: tensor<2x2x1000x64xf8E4M3FN>,
                        %v: tensor<2x2x1000x64xf8E4M3FN>, %qd: tensor<2x8xf32>,
                        %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>)
    -> (tensor<2x8x1000x64xbf16>, tensor<2x8x1000xf32>) {
  %o, %lse = flash.attention %q, %k, %v
      descale(%qd, %kd, %vd : tensor<2x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
      : tensor<2x8x1000x64xf8E4M3FN>, tensor<2x2x1000x64xf8E4M3FN>,
        tensor<2x2x1000x64xf8E4M3FN>
      -> tensor<2x8x1000x64xbf16>, tensor<2x8x1000xf32>
  return %o, %lse : tensor<2x8x1000x64xbf16>, tensor<2x8x1000xf32>
}

// -----

// The 16-bit D = 64 forward on three warpgroups issues as they come (run
// 290: 0.92-1.02x with the ring).
// CHECK-LABEL: func.func @bf16_d64_no_turns
// CHECK: gpu.func @flash_fwd_sm90ws_bf16_d64_m192n128w12s4(
// CHECK-NOT: nvvm.barrier.arrive
func.func @bf16_d64_no_turns(%q: tensor<1x8x1000x64xbf16>) -> tensor<1x8x1000x64xbf16> {
  %o = flash.attention %q, %q, %q
      : tensor<1x8x1000x64xbf16>, tensor<1x8x1000x64xbf16>, tensor<1x8x1000x64xbf16>
      -> tensor<1x8x1000x64xbf16>
  return %o : tensor<1x8x1000x64xbf16>
}

// -----

// The 16-bit D = 64 causal forward of long static lengths (192 rows on
// three warpgroups, SelectConfig.cpp kLongCausalMinLength) takes turns in
// the ring (run 294: 1.03-1.09x the same tile without them from 4k); of
// shorter lengths it keeps 128 rows on two and issues as they come.
// CHECK-LABEL: func.func @bf16_d64_causal_long_ring
// CHECK: gpu.func @flash_fwd_sm90ws_bf16_d64_m192n128w12s4_causal(
// CHECK: nvvm.barrier.arrive id = %c2_i32{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: %[[NEXT:.*]] = arith.addi %{{.*}}, %c1_i32
// CHECK: %[[WRAPS:.*]] = arith.cmpi eq, %[[NEXT]], %c3_i32
// CHECK: %[[RING:.*]] = arith.select %[[WRAPS]], %c0_i32{{.*}}, %[[NEXT]]
// CHECK: %[[ID:.*]] = arith.addi %[[RING]], %c2_i32
// CHECK: nvvm.barrier.arrive id = %[[ID]] number_of_threads = %c256
func.func @bf16_d64_causal_long_ring(%q: tensor<1x8x4096x64xbf16>) -> tensor<1x8x4096x64xbf16> {
  %o = flash.attention %q, %q, %q {causal = #flash.causal<top_left>}
      : tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>
      -> tensor<1x8x4096x64xbf16>
  return %o : tensor<1x8x4096x64xbf16>
}

// -----

// CHECK-LABEL: func.func @bf16_d64_causal_short
// CHECK: gpu.func @flash_fwd_sm90ws_bf16_d64_m128n128w8s3_causal(
// CHECK-NOT: nvvm.barrier.arrive
func.func @bf16_d64_causal_short(%q: tensor<1x8x2048x64xbf16>) -> tensor<1x8x2048x64xbf16> {
  %o = flash.attention %q, %q, %q {causal = #flash.causal<top_left>}
      : tensor<1x8x2048x64xbf16>, tensor<1x8x2048x64xbf16>, tensor<1x8x2048x64xbf16>
      -> tensor<1x8x2048x64xbf16>
  return %o : tensor<1x8x2048x64xbf16>
}

// -----

// The e4m3 D = 64 top-left causal forward runs 192 rows on three
// warpgroups, which issue as they come (run 296: the ring of turns was
// 0.97x / 1.06-1.07x the two-warpgroup kernel, without it 1.01x / 1.10x),
// over blocks of 160 keys (run 422).
// CHECK-LABEL: func.func @fp8_d64_causal_three
// CHECK: gpu.func @flash_fwd_sm90ws_e4m3_bf16_d64_m192n160w12s4_causal(
// CHECK-NOT: nvvm.barrier.arrive
func.func @fp8_d64_causal_three(%q: tensor<2x8x1000x64xf8E4M3FN>, %k: tensor<2x2x1000x64xf8E4M3FN>,
                                %v: tensor<2x2x1000x64xf8E4M3FN>, %qd: tensor<2x8xf32>,
                                %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>)
    -> (tensor<2x8x1000x64xbf16>, tensor<2x8x1000xf32>) {
  %o, %lse = flash.attention %q, %k, %v
      descale(%qd, %kd, %vd : tensor<2x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
      {causal = #flash.causal<top_left>}
      : tensor<2x8x1000x64xf8E4M3FN>, tensor<2x2x1000x64xf8E4M3FN>,
        tensor<2x2x1000x64xf8E4M3FN>
      -> tensor<2x8x1000x64xbf16>, tensor<2x8x1000xf32>
  return %o, %lse : tensor<2x8x1000x64xbf16>, tensor<2x8x1000xf32>
}

// -----

// Over block-sparse lists without a causal mask, D = 128 and MLA's (192,
// 128) take turns too (run 522: 1.00-1.02x, most at 10% density); a causal
// block-sparse forward issues as it comes.
// CHECK-LABEL: func.func @block_sparse_turns
// CHECK: gpu.func @flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128(
// CHECK: nvvm.barrier.arrive id = %c2_i32{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256
// CHECK-NEXT: nvvm.wgmma.fence.aligned
func.func @block_sparse_turns(%q: tensor<1x4x1024x128xbf16>, %n: tensor<1x4x8xi32>, %i: tensor<1x4x8x8xi32>) -> tensor<1x4x1024x128xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x4x8xi32>, tensor<1x4x8x8xi32>)
      : tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>
      -> tensor<1x4x1024x128xbf16>
  return %o : tensor<1x4x1024x128xbf16>
}

// -----

// CHECK-LABEL: func.func @mla_block_sparse_turns
// CHECK: gpu.func @flash_fwd_sm90ws_bf16_d192_dv128_m128n128w8s2_bs128x128(
// CHECK: nvvm.barrier.arrive id = %c2_i32{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256
// CHECK-NEXT: nvvm.wgmma.fence.aligned
func.func @mla_block_sparse_turns(%q: tensor<1x4x1024x192xbf16>, %v: tensor<1x4x1024x128xbf16>, %n: tensor<1x4x8xi32>, %i: tensor<1x4x8x8xi32>) -> tensor<1x4x1024x128xbf16> {
  %o = flash.attention %q, %q, %v block_sparse(%n, %i : tensor<1x4x8xi32>, tensor<1x4x8x8xi32>)
      : tensor<1x4x1024x192xbf16>, tensor<1x4x1024x192xbf16>, tensor<1x4x1024x128xbf16>
      -> tensor<1x4x1024x128xbf16>
  return %o : tensor<1x4x1024x128xbf16>
}

// -----

// CHECK-LABEL: func.func @causal_block_sparse_no_turns
// CHECK: gpu.func @flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal_bs128x128(
// CHECK-NOT: nvvm.barrier.arrive
func.func @causal_block_sparse_no_turns(%q: tensor<1x4x1024x128xbf16>, %n: tensor<1x4x8xi32>, %i: tensor<1x4x8x8xi32>) -> tensor<1x4x1024x128xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x4x8xi32>, tensor<1x4x8x8xi32>) {causal = #flash.causal<top_left>}
      : tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>
      -> tensor<1x4x1024x128xbf16>
  return %o : tensor<1x4x1024x128xbf16>
}
