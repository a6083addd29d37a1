// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=l4 --flash-lower-to-gpu=chip=sm_89 | FileCheck %s

// The mma.sync FP8 forward (Sm80Fp8Forward.cpp) that sm_89 gets: no tensor
// maps, so flash-lower-to-gpu launches it from the IR. V goes to the kernel
// as Vᵀ ([B, Hkv, Dv, Sk_pad], keys contiguous: the B operand of P·V; the
// keys zero-padded to a multiple of 32 and permuted within each group of
// 32, fp8_vt_layout.h), the descales follow LSE with their [B, H] strides.
// Q and K tiles are copied through 16-bit views of their bytes; Vᵀ's chunks
// with a src-size that zero-fills the positions past Sk_pad. Q·Kᵀ and P·V
// are mma.sync m16n8k32 e4m3 (inline PTX, which asks the module for PTX
// 8.4); P is converted with cvt.rn.satfinite.e4m3x2.f32 straight into the
// k32 operands: no shuffle.
// CHECK-LABEL: func.func @fp8_head
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 24, 0]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x2x32x2x2x4x2x128xf8E4M3FN>) outs(%{{.*}} : tensor<2x2x128x32x2x4x2x2xf8E4M3FN>) permutation = [0, 1, 7, 2, 3, 5, 4, 6]
// CHECK: tensor.collapse_shape %{{.*}} : tensor<2x2x128x32x2x4x2x2xf8E4M3FN> into tensor<2x2x128x1024xf8E4M3FN>
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_e4m3_bf16_d128_m128n128w8s2_causalbr blocks in ({{.*}}) threads in (%c256
// CHECK-SAME: dynamic_shared_memory_size %c82944_i32
// CHECK: gpu.module @flash_kernels [#nvvm.target<O = 3, chip = "sm_89", features = "+ptx84">]
// CHECK: gpu.func @flash_fwd_sm80_e4m3_bf16_d128_m128n128w8s2_causalbr(%arg0: memref<?xf8E4M3FN>, %arg1: memref<?xf8E4M3FN>, %arg2: memref<?xf8E4M3FN>, %arg3: memref<?xbf16>, %arg4: memref<?xf32>,
// CHECK-SAME: dtype = "e4m3"
// CHECK-SAME: out_dtype = "bf16"
// CHECK-SAME: params = ["memref:q", "memref:k", "memref:vt", "memref:o", "memref:lse", "memref:q_descale", "memref:k_descale", "memref:v_descale",
// CHECK-SAME: "i64:vt_stride_b", "i64:vt_stride_h", "i64:vt_stride_d",
// CHECK-NOT: tensormap
// CHECK-SAME: smem = 82944
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}} : i16(f8E4M3FN)
// CHECK-NOT: gpu.shuffle {{ *}}idx
// CHECK: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32
func.func @fp8_head(%q: tensor<2x4x1000x128xf8E4M3FN>, %k: tensor<2x2x1000x128xf8E4M3FN>, %v: tensor<2x2x1000x128xf8E4M3FN>, %qd: tensor<2x4xf32>, %kd: tensor<2x2xf32>) -> tensor<2x4x1000x128xbf16> {
  %o = flash.attention %q, %k, %v descale(%qd, %kd, %kd : tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {causal = #flash.causal<bottom_right>} : tensor<2x4x1000x128xf8E4M3FN>, tensor<2x2x1000x128xf8E4M3FN>, tensor<2x2x1000x128xf8E4M3FN> -> tensor<2x4x1000x128xbf16>
  return %o : tensor<2x4x1000x128xbf16>
}

// -----

// D = 64 rows (64 bytes) take whole 128-byte swizzle rows: three stages fit
// l4's 99 KiB; a window and a softcap go through the shared score pipeline.
// CHECK-LABEL: func.func @fp8_tensor
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_e4m3_f16_d64_m128n128w8s3_window_softcap
// CHECK-SAME: dynamic_shared_memory_size %c91136_i32
func.func @fp8_tensor(%q: tensor<1x2x77x64xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x2x77x64xf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {window_left = 32 : i64, softcap = 20.0 : f32} : tensor<1x2x77x64xf8E4M3FN>, tensor<1x2x77x64xf8E4M3FN>, tensor<1x2x77x64xf8E4M3FN> -> tensor<1x2x77x64xf16>
  return %o : tensor<1x2x77x64xf16>
}

// -----

// V in BSHD memory ([B, Sk, Hkv, Dv]) of a dynamic length: Sk_pad is
// ceil(Sk / 32) * 32, the padding the difference, and the expansion of the
// key dimension (physical dimension 1) a dynamic number of groups.
// CHECK-LABEL: func.func @fp8_bshd_dynamic
// CHECK: %[[GROUPS:.*]] = arith.ceildivui %[[SK:.*]], %c32
// CHECK: %[[PAD:.*]] = arith.muli %[[GROUPS]], %c32
// CHECK: %[[HIGH:.*]] = arith.subi %[[PAD]], %[[SK]]
// CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[0, %[[HIGH]], 0, 0]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2, 3, 4, 5], [6], [7]] output_shape [1, %{{.*}}, 2, 2, 4, 2, 2, 64] : tensor<1x?x2x64xf8E4M3FN> into tensor<1x?x2x2x4x2x2x64xf8E4M3FN>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x?x2x2x4x2x2x64xf8E4M3FN>) outs(%{{.*}} : tensor<1x2x64x?x2x4x2x2xf8E4M3FN>) permutation = [0, 6, 7, 1, 2, 4, 3, 5]
// CHECK: tensor.collapse_shape %{{.*}} : tensor<1x2x64x?x2x4x2x2xf8E4M3FN> into tensor<1x2x64x?xf8E4M3FN>
func.func @fp8_bshd_dynamic(%q: tensor<1x?x2x64xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x?x2x64xf16> {
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>) {q_perm = array<i64: 0, 2, 1, 3>, k_perm = array<i64: 0, 2, 1, 3>, v_perm = array<i64: 0, 2, 1, 3>} : tensor<1x?x2x64xf8E4M3FN>, tensor<1x?x2x64xf8E4M3FN>, tensor<1x?x2x64xf8E4M3FN> -> tensor<1x?x2x64xf16>
  return %o : tensor<1x?x2x64xf16>
}

// -----

// A 16-bit module on sm_89 keeps PTX 8.0.
// CHECK-LABEL: func.func @bf16
// CHECK: gpu.module @flash_kernels [#nvvm.target<O = 3, chip = "sm_89", features = "+ptx80">]
func.func @bf16(%q: tensor<1x2x77x64xbf16>) -> tensor<1x2x77x64xbf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x77x64xbf16>, tensor<1x2x77x64xbf16>, tensor<1x2x77x64xbf16> -> tensor<1x2x77x64xbf16>
  return %o : tensor<1x2x77x64xbf16>
}
