// RUN: flashfuse-opt %s --flash-lower-to-gpu=chip=sm_80 --split-input-file | FileCheck %s

// A varlen (packed) flash.attention: the recipe's forward under the varlen
// tile scheduler (VarlenScheduler.h, docs/KERNEL_ABI.md "Varlen"). Three
// sequences in 300 query and 500 key rows, GQA 8/2, bottom-right causal.

// The launch: one block per (query block of the packed rows, query head,
// sequence), and one z more for the rows past cu_seqlens_q[B] that no
// sequence owns; the offsets are i32 buffers after LSE.
// CHECK-LABEL: func.func @varlen
// CHECK: %[[CUQ:.*]] = bufferization.to_buffer %arg2 read_only : tensor<4xi32> to memref<4xi32>
// CHECK: %[[CUK:.*]] = bufferization.to_buffer %arg3 read_only : tensor<4xi32> to memref<4xi32>
// CHECK: %[[B:.*]] = arith.subi %c4{{.*}}, %c1{{.*}} : index
// CHECK: %[[NUMSEQS:.*]] = arith.index_cast %[[B]] : index to i32
// CHECK: %[[GX:.*]] = arith.ceildivui %c300, %c64{{.*}} : index
// CHECK: %[[GZ:.*]] = arith.addi %[[B]], %c1{{.*}} : index
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_f16_d64_m64n64w4s2_causalbr_varlen blocks in (%[[GX]], %c8, %[[GZ]])
// CHECK-SAME: : memref<?xf32>, %{{.*}} : memref<?xi32>, %{{.*}} : memref<?xi32>, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %[[NUMSEQS]] : i32, %{{.*}} : i32, %{{.*}} : i64

// The kernel: the ABI's params with the offsets, num_seqs and max_seqlen_q,
// and the manifest's varlen flag.
// CHECK: gpu.func @flash_fwd_sm80_f16_d64_m64n64w4s2_causalbr_varlen(
// CHECK-SAME: %arg4: memref<?xf32>, %[[CU_Q:arg5]]: memref<?xi32>, %[[CU_K:arg6]]: memref<?xi32>, %arg7: i32, %arg8: i32, %arg9: i32, %[[TOTQ:arg10]]: i32, %[[TOTK:arg11]]: i32, %[[NSEQ:arg12]]: i32, %arg13: i32,
// CHECK-SAME: causal = "bottom_right"
// CHECK-SAME: "memref:lse", "memref:cu_seqlens_q", "memref:cu_seqlens_k", "i32:batch", "i32:heads_q", "i32:heads_kv", "i32:seq_q", "i32:seq_k", "i32:num_seqs", "i32:max_seqlen_q", "i64:q_stride_b"
// CHECK-SAME: varlen = 1
// The block's sequence z (clamped to num_seqs: z = num_seqs is the tail of
// unowned rows, without keys): cu[z] and cu[z + 1] of Q and K, clamped
// into [0, total] and non-decreasing, in i32.
// CHECK: %[[Z:.*]] = gpu.block_id  z
// CHECK: %[[Z32:.*]] = arith.index_cast %[[Z]] : index to i32
// CHECK: %[[AT:.*]] = arith.minui %[[Z32]], %[[NSEQ]] : i32
// CHECK: %[[OWNED:.*]] = arith.cmpi ult, %[[Z32]], %[[NSEQ]] : i32
// CHECK: %[[NEXT:.*]] = arith.select %[[OWNED]], %{{.*}}, %[[AT]] : i32
// CHECK: %[[QS_RAW:.*]] = memref.load %[[CU_Q]][%{{.*}}] : memref<?xi32>
// CHECK: %[[QS_HI:.*]] = arith.minsi %[[QS_RAW]], %[[TOTQ]] : i32
// CHECK: %[[QS:.*]] = arith.maxsi %[[QS_HI]], %{{.*}} : i32
// CHECK: memref.load %[[CU_K]][%{{.*}}] : memref<?xi32>
// CHECK: %[[QE_RAW:.*]] = memref.load %[[CU_Q]][%{{.*}}] : memref<?xi32>
// CHECK: %[[QE_HI:.*]] = arith.minsi %[[QE_RAW]], %[[TOTQ]] : i32
// CHECK: %[[QE_CL:.*]] = arith.maxsi %[[QE_HI]], %[[QS]] : i32
// CHECK: %[[QE:.*]] = arith.select %[[OWNED]], %[[QE_CL]], %[[TOTQ]] : i32
// CHECK: memref.load %[[CU_K]][%{{.*}}] : memref<?xi32>
// CHECK: %[[QS_IDX:.*]] = arith.index_cast %[[QS]] : i32 to index
// CHECK: %[[LQ32:.*]] = arith.subi %[[QE]], %[[QS]] : i32
// CHECK: %[[LQ:.*]] = arith.index_cast %[[LQ32]] : i32 to index
// CHECK: %[[LK32:.*]] = arith.subi
// CHECK: %[[LK:.*]] = arith.index_cast %[[LK32]] : i32 to index
// Bottom-right alignment by the sequence's own lengths.
// CHECK: arith.subi %[[LK]], %[[LQ]] : index
// The early exit of a block past its sequence's end (causal blocks are
// launched last row block first, from gridDim.x).
// CHECK: gpu.grid_dim  x
// CHECK: gpu.block_id  x
// CHECK: %[[M0:.*]] = arith.muli %{{.*}}, %c64 : index
// CHECK: %[[PAST:.*]] = arith.cmpi sge, %[[M0]], %[[LQ]] : index
// CHECK: cf.cond_br %[[PAST]], ^[[EXIT:bb[0-9]+]], ^[[BODY:bb[0-9]+]]
// CHECK: ^[[BODY]]:
// Q's base: head h's rows of the sequence (h * q_stride_h + start * q_stride_s).
// CHECK: %[[QH:.*]] = arith.muli %block_id_y, %{{.*}} : index
// CHECK: %[[QSS:.*]] = arith.muli %[[QS_IDX]], %{{.*}} : index
// CHECK: arith.addi %[[QH]], %[[QSS]] : index
// CHECK: scf.for
// After the key loop the epilogue reads the block's sequence again from
// the coordinates re-read opaquely, and LSE [1, Hq, total_q] gets the
// rows of head h of the sequence: h * total_q + start.
// CHECK: "mov.u32 $0, %ctaid.y;"
// CHECK: %[[Z2:.*]] = llvm.inline_asm has_side_effects {{.*}} "mov.u32 $0, %ctaid.z;"
// CHECK: memref.load %[[CU_Q]]
// CHECK: %[[H2:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[TOTQ_IDX:.*]] = arith.index_cast %[[TOTQ]] : i32 to index
// CHECK: %[[LSE_H:.*]] = arith.muli %{{.*}}, %[[TOTQ_IDX]] : index
// CHECK: %[[LSE_ROW:.*]] = arith.addi %[[LSE_H]], %{{.*}} : index
// CHECK: arith.addi %[[LSE_ROW]], %{{.*}} : index
// CHECK: memref.store %{{.*}}, %arg4[%{{.*}}] : memref<?xf32>
// CHECK: gpu.return
// CHECK: ^[[EXIT]]:
// CHECK-NEXT: gpu.return

func.func @varlen(%q: tensor<1x8x300x64xf16>, %k: tensor<1x2x500x64xf16>,
                  %cu_q: tensor<4xi32>, %cu_k: tensor<4xi32>)
    -> (tensor<1x8x300x64xf16>, tensor<1x8x300xf32>) {
  %o, %lse = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<4xi32>, tensor<4xi32>)
      {causal = #flash.causal<bottom_right>,
       config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>
      -> tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
  return %o, %lse : tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
}

// -----

// Dynamic sizes: B from the offsets' size, max_seqlen_q = total_q (the
// bound flash-lower-to-gpu knows), a dense op beside it keeps its own
// kernel (no varlen in its name, params or manifest).
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[N:.*]] = tensor.dim %arg2, %c0{{.*}} : tensor<?xi32>
// CHECK: %[[B:.*]] = arith.subi %[[N]], %c1{{.*}} : index
// CHECK: %[[SQ:.*]] = tensor.dim %arg0, %c2{{.*}} : tensor<1x4x?x128xbf16>
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_bf16_d128_m128n64w4s2_varlen
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_bf16_d128_m128n64w4s2 blocks
// CHECK: gpu.func @flash_fwd_sm80_bf16_d128_m128n64w4s2_varlen(
// CHECK: gpu.func @flash_fwd_sm80_bf16_d128_m128n64w4s2(
// CHECK-NOT: cu_seqlens
// CHECK-NOT: varlen
// CHECK: gpu.return
func.func @dynamic(%q: tensor<1x4x?x128xbf16>, %k: tensor<1x4x?x128xbf16>,
                   %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> (tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>) {
  %o = flash.attention %q, %k, %k varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>)
      {config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>
      -> tensor<1x4x?x128xbf16>
  %d = flash.attention %q, %k, %k
      {config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>
      -> tensor<1x4x?x128xbf16>
  return %o, %d : tensor<1x4x?x128xbf16>, tensor<1x4x?x128xbf16>
}
