// The sm80 tile table on every named target. All four have enough shared
// memory for the forward tiles (the largest need is 99328 bytes, D = 128
// and D = 256 with the swizzle's alignment slack, under L4's 101376), but
// only H100/H200 (prefix TWO97K) hold two blocks of D = 96's and 128's
// 128 x 64, which is what their registers allow; A100 and L4 (ONE97K)
// take 128 x 32 for them; the D = 128 backward's
// 147456 does not fit the L4.
// RUN: flashfuse-opt %s --flash-select-config=target=a100 | FileCheck %s --check-prefixes=CHECK,A100,ONE97K
// RUN: flashfuse-opt %s --flash-select-config=target=l4 | FileCheck %s --check-prefixes=CHECK,L4,ONE97K
// RUN: flashfuse-opt %s --flash-select-config="target=h100 recipe=sm80" | FileCheck %s --check-prefixes=CHECK,A100,TWO97K
// RUN: flashfuse-opt %s --flash-select-config="target=h200 recipe=sm80" | FileCheck %s --check-prefixes=CHECK,A100,TWO97K

// CHECK-LABEL: func.func @fwd_d32
// CHECK: flash.attention {{.*}}{config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>}
func.func @fwd_d32(%x: tensor<2x8x512x32xf16>) -> tensor<2x8x512x32xf16> {
  %o = flash.attention %x, %x, %x
      : tensor<2x8x512x32xf16>, tensor<2x8x512x32xf16>, tensor<2x8x512x32xf16>
      -> tensor<2x8x512x32xf16>
  return %o : tensor<2x8x512x32xf16>
}

// CHECK-LABEL: func.func @fwd_d64
// CHECK: flash.attention {{.*}}{causal = #flash.causal<top_left>, config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>}
func.func @fwd_d64(%x: tensor<1x12x1024x64xbf16>) -> tensor<1x12x1024x64xbf16> {
  %o = flash.attention %x, %x, %x {causal = #flash.causal<top_left>}
      : tensor<1x12x1024x64xbf16>, tensor<1x12x1024x64xbf16>, tensor<1x12x1024x64xbf16>
      -> tensor<1x12x1024x64xbf16>
  return %o : tensor<1x12x1024x64xbf16>
}

// D = 96 is stored 128 columns wide (swizzled): the same 97 KiB at 64 keys.
// CHECK-LABEL: func.func @fwd_d96
// ONE97K: flash.attention {{.*}}{config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>}
// TWO97K: flash.attention {{.*}}{config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>}
func.func @fwd_d96(%x: tensor<1x4x100x96xf16>) -> tensor<1x4x100x96xf16> {
  %o = flash.attention %x, %x, %x
      : tensor<1x4x100x96xf16>, tensor<1x4x100x96xf16>, tensor<1x4x100x96xf16>
      -> tensor<1x4x100x96xf16>
  return %o : tensor<1x4x100x96xf16>
}

// Dynamic batch, heads and lengths do not matter: only the head dim is
// compiled into the kernel.
// CHECK-LABEL: func.func @fwd_d128_dynamic
// ONE97K: flash.attention {{.*}}{config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>}
// TWO97K: flash.attention {{.*}}{config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>}
func.func @fwd_d128_dynamic(%q: tensor<?x?x?x128xf16>, %kv: tensor<?x?x?x128xf16>)
    -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %lse = flash.attention %q, %kv, %kv
      : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>
      -> tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}

// BSHD operands and GQA: the head dim is read through the perms.
// CHECK-LABEL: func.func @fwd_d128_bshd_gqa
// ONE97K: flash.attention {{.*}}config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>
// TWO97K: flash.attention {{.*}}config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>
func.func @fwd_d128_bshd_gqa(%q: tensor<1x256x32x128xf16>, %kv: tensor<1x256x8x128xf16>)
    -> tensor<1x256x32x128xf16> {
  %o = flash.attention %q, %kv, %kv
      {q_perm = array<i64: 0, 2, 1, 3>, k_perm = array<i64: 0, 2, 1, 3>,
       v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<1x256x32x128xf16>, tensor<1x256x8x128xf16>, tensor<1x256x8x128xf16>
      -> tensor<1x256x32x128xf16>
  return %o : tensor<1x256x32x128xf16>
}

// CHECK-LABEL: func.func @fwd_d256
// CHECK: flash.attention {{.*}}{config = #flash.config<sm80, block_m = 64, block_n = 32, warps = 4, stages = 2>}
func.func @fwd_d256(%x: tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16> {
  %o = flash.attention %x, %x, %x
      : tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>
      -> tensor<1x8x512x256xbf16>
  return %o : tensor<1x8x512x256xbf16>
}

// CHECK-LABEL: func.func @grad_d64
// CHECK: flash.attention_grad {{.*}}{config = #flash.config<sm80, block_m = 32, block_n = 128, warps = 4, stages = 2>}
func.func @grad_d64(%x: tensor<2x4x128x64xf16>, %lse: tensor<2x4x128xf32>) {
  %0:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>,
        tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<2x4x128xf32>
      -> tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>
  return
}

// CHECK-LABEL: func.func @grad_d128
// The 64x128 tile of 8 warps (155 KiB) does not fit the L4's 99 KiB: 4
// warps, 64 keys (112 KiB: K, V, two stages of Q and dO, dS), then 32 query
// rows a stage (74 KiB).
// A100: flash.attention_grad {{.*}}{config = #flash.config<sm80, block_m = 64, block_n = 128, warps = 8, stages = 2>}
// L4: flash.attention_grad {{.*}}{config = #flash.config<sm80, block_m = 32, block_n = 64, warps = 4, stages = 2>}
func.func @grad_d128(%x: tensor<2x4x128x128xbf16>, %lse: tensor<2x4x128xf32>) {
  %0:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<2x4x128x128xbf16>, tensor<2x4x128x128xbf16>, tensor<2x4x128x128xbf16>,
        tensor<2x4x128x128xbf16>, tensor<2x4x128x128xbf16>, tensor<2x4x128xf32>
      -> tensor<2x4x128x128xbf16>, tensor<2x4x128x128xbf16>, tensor<2x4x128x128xbf16>
  return
}

// D = 160 backward: the row of 256 (D + Dv <= 320), 16 x 32 on 2 warps
// (its 16 x 64 on 4 warps would split dQ into 40-column groups).
// CHECK-LABEL: func.func @grad_d160
// CHECK: flash.attention_grad {{.*}}{config = #flash.config<sm80, block_m = 16, block_n = 32, warps = 2, stages = 2>}
func.func @grad_d160(%x: tensor<1x2x64x160xf16>, %lse: tensor<1x2x64xf32>) {
  %0:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<1x2x64x160xf16>, tensor<1x2x64x160xf16>, tensor<1x2x64x160xf16>,
        tensor<1x2x64x160xf16>, tensor<1x2x64x160xf16>, tensor<1x2x64xf32>
      -> tensor<1x2x64x160xf16>, tensor<1x2x64x160xf16>, tensor<1x2x64x160xf16>
  return
}

// Past D + Dv = 320 two warps share each 16-key tile and split the columns
// of its dK and dV (HeadDims.h's backwardColumnGroups): 16 keys per warp
// pair. D = 256 (Gemma-2): 64 keys on 8 warps, dQ in 32-column groups; the
// L4's 101376 bytes of shared memory take 32 keys on 4 warps.
// CHECK-LABEL: func.func @grad_d256
// A100: flash.attention_grad {{.*}}{config = #flash.config<sm80, block_m = 16, block_n = 64, warps = 8, stages = 2>}
// L4: flash.attention_grad {{.*}}{config = #flash.config<sm80, block_m = 16, block_n = 32, warps = 4, stages = 2>}
func.func @grad_d256(%q: tensor<1x2x64x256xf16>, %v: tensor<1x2x64x256xf16>, %lse: tensor<1x2x64xf32>) {
  %0:3 = flash.attention_grad %v, %q, %q, %v, %v, %lse
      : tensor<1x2x64x256xf16>, tensor<1x2x64x256xf16>, tensor<1x2x64x256xf16>,
        tensor<1x2x64x256xf16>, tensor<1x2x64x256xf16>, tensor<1x2x64xf32>
      -> tensor<1x2x64x256xf16>, tensor<1x2x64x256xf16>, tensor<1x2x64x256xf16>
  return
}

// D = 256 with Dv = 128 (D + Dv = 384) likewise.
// CHECK-LABEL: func.func @grad_d256_dv128
// A100: flash.attention_grad {{.*}}{config = #flash.config<sm80, block_m = 16, block_n = 64, warps = 8, stages = 2>}
func.func @grad_d256_dv128(%q: tensor<1x2x64x256xf16>, %v: tensor<1x2x64x128xf16>, %lse: tensor<1x2x64xf32>) {
  %0:3 = flash.attention_grad %v, %q, %q, %v, %v, %lse
      : tensor<1x2x64x128xf16>, tensor<1x2x64x256xf16>, tensor<1x2x64x256xf16>,
        tensor<1x2x64x128xf16>, tensor<1x2x64x128xf16>, tensor<1x2x64xf32>
      -> tensor<1x2x64x256xf16>, tensor<1x2x64x256xf16>, tensor<1x2x64x128xf16>
  return
}

// D = 224: dQ splits into 112-column groups on 2 warps only.
// CHECK-LABEL: func.func @grad_d224
// CHECK: flash.attention_grad {{.*}}{config = #flash.config<sm80, block_m = 16, block_n = 16, warps = 2, stages = 2>}
func.func @grad_d224(%q: tensor<1x2x64x224xf16>, %v: tensor<1x2x64x224xf16>, %lse: tensor<1x2x64xf32>) {
  %0:3 = flash.attention_grad %v, %q, %q, %v, %v, %lse
      : tensor<1x2x64x224xf16>, tensor<1x2x64x224xf16>, tensor<1x2x64x224xf16>,
        tensor<1x2x64x224xf16>, tensor<1x2x64x224xf16>, tensor<1x2x64xf32>
      -> tensor<1x2x64x224xf16>, tensor<1x2x64x224xf16>, tensor<1x2x64x224xf16>
  return
}

// D = 176 (96 + 80 columns): no column split of dQ in multiples of 16, so
// two 16-row slabs on 2 warps.
// CHECK-LABEL: func.func @grad_d176
// CHECK: flash.attention_grad {{.*}}{config = #flash.config<sm80, block_m = 32, block_n = 16, warps = 2, stages = 2>}
func.func @grad_d176(%q: tensor<1x2x64x176xf16>, %v: tensor<1x2x64x176xf16>, %lse: tensor<1x2x64xf32>) {
  %0:3 = flash.attention_grad %v, %q, %q, %v, %v, %lse
      : tensor<1x2x64x176xf16>, tensor<1x2x64x176xf16>, tensor<1x2x64x176xf16>,
        tensor<1x2x64x176xf16>, tensor<1x2x64x176xf16>, tensor<1x2x64xf32>
      -> tensor<1x2x64x176xf16>, tensor<1x2x64x176xf16>, tensor<1x2x64x176xf16>
  return
}

// Functions without attention are untouched, and so is the rest of a body.
// CHECK-LABEL: func.func @no_attention
// CHECK-NEXT: arith.addf
// CHECK-NEXT: return
func.func @no_attention(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  return %0 : f32
}

// -----

// Dropout forwards take 64 query rows (one m16 tile per warp): the Philox
// keep test's registers make two tiles per warp spill on sm_80.
// CHECK-LABEL: func.func @fwd_d64_dropout
// CHECK: flash.attention {{.*}}config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>
func.func @fwd_d64_dropout(%x: tensor<2x8x512x64xf16>, %seed: i64) -> tensor<2x8x512x64xf16> {
  %o = flash.attention %x, %x, %x seed(%seed) {dropout_p = 0.1 : f32}
      : tensor<2x8x512x64xf16>, tensor<2x8x512x64xf16>, tensor<2x8x512x64xf16>
      -> tensor<2x8x512x64xf16>
  return %o : tensor<2x8x512x64xf16>
}

// D = 128 with a sliding window or dropout keeps 32-key tiles (at 64 keys
// ptxas spills 60-136 bytes); dropout also takes 64 query rows.
// CHECK-LABEL: func.func @fwd_d128_window_dropout
// CHECK: flash.attention {{.*}}config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>
// CHECK: flash.attention {{.*}}config = #flash.config<sm80, block_m = 64, block_n = 32, warps = 4, stages = 2>
func.func @fwd_d128_window_dropout(%x: tensor<2x8x512x128xf16>, %seed: i64) -> (tensor<2x8x512x128xf16>, tensor<2x8x512x128xf16>) {
  %w = flash.attention %x, %x, %x {window_left = 64 : i64, window_right = 0 : i64}
      : tensor<2x8x512x128xf16>, tensor<2x8x512x128xf16>, tensor<2x8x512x128xf16>
      -> tensor<2x8x512x128xf16>
  %d = flash.attention %x, %x, %x seed(%seed) {dropout_p = 0.1 : f32}
      : tensor<2x8x512x128xf16>, tensor<2x8x512x128xf16>, tensor<2x8x512x128xf16>
      -> tensor<2x8x512x128xf16>
  return %w, %d : tensor<2x8x512x128xf16>, tensor<2x8x512x128xf16>
}
