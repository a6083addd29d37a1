// When the table's tiles overflow the target's shared memory per block, the
// pass halves block_n (down to 16, or 16 keys a warp in the backward), then
// (backward) block_m, then drops to one pipeline stage. A forward's shared
// memory = 2 * (block_m * D + stages * block_n * (D + Dv)) bytes, plus 1024
// for D a multiple of 64 (their swizzled tiles start at a 1024-byte
// boundary); the backward's is SharedMemory.h's.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config | FileCheck %s

// L4 at D = 256 keeps the table's tiles: 1024 + 2 * (64*256 + 2*32*512) =
// 99328 bytes, under its 101376.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=l4 | FileCheck %s --check-prefix=L4

// D = 128: the table's 128 x 64 takes 99328 bytes, over this target's
// 70000; 128 x 32 takes 66560. The L4 (101376) would fit 128 x 64 once but
// not twice, and two blocks per SM are what the registers allow: 128 x 32.
// CHECK-LABEL: func.func @half_block_n
// CHECK: config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>
// L4-LABEL: func.func @half_block_n
// L4: config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>
module attributes {flash.target = #flash.target<name = "70k", arch = 86, sms = 84, smem_per_block = 70000, regs_per_sm = 65536>} {
  func.func @half_block_n(%x: tensor<1x8x256x128xf16>) -> tensor<1x8x256x128xf16> {
    %o = flash.attention %x, %x, %x
        : tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>
        -> tensor<1x8x256x128xf16>
    return %o : tensor<1x8x256x128xf16>
  }
}

// -----

// 50 KiB: block_n 64 -> 16 = 50176 bytes.
// CHECK-LABEL: func.func @quarter_block_n
// CHECK: config = #flash.config<sm80, block_m = 128, block_n = 16, warps = 4, stages = 2>
module attributes {flash.target = #flash.target<name = "50k", arch = 80, sms = 108, smem_per_block = 51200, regs_per_sm = 65536>} {
  func.func @quarter_block_n(%x: tensor<1x8x256x128xf16>) -> tensor<1x8x256x128xf16> {
    %o = flash.attention %x, %x, %x
        : tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>
        -> tensor<1x8x256x128xf16>
    return %o : tensor<1x8x256x128xf16>
  }
}

// -----

// 45000 bytes: block_n = 16 with two stages needs 50176; one stage 41984.
// CHECK-LABEL: func.func @one_stage
// CHECK: config = #flash.config<sm80, block_m = 128, block_n = 16, warps = 4, stages = 1>
module attributes {flash.target = #flash.target<name = "tight", arch = 80, sms = 108, smem_per_block = 45000, regs_per_sm = 65536>} {
  func.func @one_stage(%x: tensor<1x8x256x128xf16>) -> tensor<1x8x256x128xf16> {
    %o = flash.attention %x, %x, %x
        : tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>
        -> tensor<1x8x256x128xf16>
    return %o : tensor<1x8x256x128xf16>
  }
}

// -----

// D = 256 on 65536 bytes: forward block_n 32 -> 16 gives 1024 + 2*(64*256 +
// 2*16*512) = 66560, so one stage (50176). (D = 256 has no backward:
// errors.mlir.)
// CHECK-LABEL: func.func @d256
// CHECK: flash.attention {{.*}}config = #flash.config<sm80, block_m = 64, block_n = 16, warps = 4, stages = 1>
// L4-LABEL: func.func @d256
// L4: flash.attention {{.*}}config = #flash.config<sm80, block_m = 64, block_n = 32, warps = 4, stages = 2>
module attributes {flash.target = #flash.target<name = "small", arch = 86, sms = 84, smem_per_block = 65536, regs_per_sm = 65536>} {
  func.func @d256(%x: tensor<1x2x64x256xf16>) {
    %o = flash.attention %x, %x, %x
        : tensor<1x2x64x256xf16>, tensor<1x2x64x256xf16>, tensor<1x2x64x256xf16>
        -> tensor<1x2x64x256xf16>
    return
  }
}

// -----

// At 40960 bytes the forward op (128 rows: 1024 + 49152) halves block_n to
// 32 (33792). The backward's padded tiles (rows of D + 8) hold K and V of
// block_n keys, two stages of Q and dO of block_m rows, dS [block_n][block_m
// + 8] and the ring's LSE and Dsum: the table's 32 x 128 takes 66048 bytes;
// block_n goes down to its 4 warps' 64 keys (42496), then block_m to 16
// (30976), the ring kept two deep.
// CHECK-LABEL: func.func @grad_fits_forward_does_not
// CHECK: flash.attention {{.*}}config = #flash.config<sm80, block_m = 128, block_n = 32, warps = 4, stages = 2>
// CHECK: flash.attention_grad {{.*}}config = #flash.config<sm80, block_m = 16, block_n = 64, warps = 4, stages = 2>
module attributes {flash.target = #flash.target<name = "40k", arch = 80, sms = 108, smem_per_block = 40960, regs_per_sm = 65536>} {
  func.func @grad_fits_forward_does_not(%x: tensor<1x2x64x64xf16>, %lse: tensor<1x2x64xf32>) {
    %o = flash.attention %x, %x, %x
        : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
        -> tensor<1x2x64x64xf16>
    %g:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse
        : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>,
          tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64xf32>
        -> tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
    return
  }
}
