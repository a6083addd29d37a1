// RUN: flashfuse-opt %s --flash-lower-to-gpu=chip=sm_80 | FileCheck %s
// RUN: flashfuse-opt %s --flash-lower-to-gpu="chip=sm_80 deterministic=true" | FileCheck %s --check-prefix=DET

// A varlen (packed) flash.attention_grad: the backward's main kernel under
// the varlen tile scheduler (VarlenScheduler.h, docs/KERNEL_ABI.md
// "Varlen"), between the dense preprocess and postprocess, which run over
// the packed rows. Three sequences in 300 query and 500 key rows, GQA 8/2,
// bottom-right causal.

// The launches: the preprocess over the packed query rows (batch 1), the
// main kernel over key blocks of the packed rows with one z per sequence
// and one more for the key rows past cu_seqlens_k[B], the postprocess over
// max(total_q, total_k) rows (batch 1).
// CHECK-LABEL: func.func @varlen_grad
// CHECK: %[[CUQ:.*]] = bufferization.to_buffer %arg6 read_only : tensor<4xi32> to memref<4xi32>
// CHECK: %[[CUK:.*]] = bufferization.to_buffer %arg7 read_only : tensor<4xi32> to memref<4xi32>
// CHECK: %[[B:.*]] = arith.subi %c4{{.*}}, %c1{{.*}} : index
// CHECK: %[[NUMSEQS:.*]] = arith.index_cast %[[B]] : index to i32
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_pre_sm80_f16_d64_m64n64w4s2_causalbr blocks in (%{{.*}}, %c8, %c1)
// CHECK: %[[GX:.*]] = arith.ceildivui %c500, %c64{{.*}} : index
// CHECK: %[[GZ:.*]] = arith.addi %[[B]], %c1{{.*}} : index
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_sm80_f16_d64_m64n64w4s2_causalbr_varlen blocks in (%[[GX]], %c8, %[[GZ]])
// CHECK-SAME: %{{.*}} : memref<?xi32>, %{{.*}} : memref<?xi32>, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %[[NUMSEQS]] : i32, %{{.*}} : i32, %{{.*}} : i64
// CHECK: arith.maxui %c300, %c500 : index
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_post_sm80_f16_d64_m64n64w4s2_causalbr blocks in (%{{.*}}, %c8, %c1)

// The preprocess is the dense kernel (no varlen params, no varlen flag).
// CHECK: gpu.func @flash_bwd_pre_sm80_f16_d64_m64n64w4s2_causalbr(
// CHECK-NOT: varlen
// CHECK: gpu.return

// The main kernel: the ABI's params with the offsets, num_seqs and
// max_seqlen_k, and the manifest's varlen flag.
// CHECK: gpu.func @flash_bwd_sm80_f16_d64_m64n64w4s2_causalbr_varlen(
// CHECK-SAME: %[[CU_Q:arg9]]: memref<?xi32>, %[[CU_K:arg10]]: memref<?xi32>, %arg11: i32, %arg12: i32, %arg13: i32, %[[TOTQ:arg14]]: i32, %[[TOTK:arg15]]: i32, %[[NSEQ:arg16]]: i32, %arg17: i32,
// CHECK-SAME: kind = "backward"
// CHECK-SAME: "memref:dv", "memref:cu_seqlens_q", "memref:cu_seqlens_k", "i32:batch", "i32:heads_q", "i32:heads_kv", "i32:seq_q", "i32:seq_k", "i32:num_seqs", "i32:max_seqlen_k", "i64:q_stride_b"
// CHECK-SAME: varlen = 1
// The block's sequence z; z = num_seqs is the tail of key rows no
// sequence owns, without queries: its query end is its start, its key end
// total_k.
// CHECK: %[[Z:.*]] = gpu.block_id  z
// CHECK: %[[Z32:.*]] = arith.index_cast %[[Z]] : index to i32
// CHECK: %[[OWNED:.*]] = arith.cmpi ult, %[[Z32]], %[[NSEQ]] : i32
// CHECK: %[[QS_RAW:.*]] = memref.load %[[CU_Q]][%{{.*}}] : memref<?xi32>
// CHECK: %[[QS_HI:.*]] = arith.minsi %[[QS_RAW]], %[[TOTQ]] : i32
// CHECK: %[[QS:.*]] = arith.maxsi %[[QS_HI]], %{{.*}} : i32
// CHECK: %[[KS_RAW:.*]] = memref.load %[[CU_K]][%{{.*}}] : memref<?xi32>
// CHECK: %[[KS_HI:.*]] = arith.minsi %[[KS_RAW]], %[[TOTK]] : i32
// CHECK: %[[KS:.*]] = arith.maxsi %[[KS_HI]], %{{.*}} : i32
// CHECK: %[[QE_CL:.*]] = arith.maxsi %{{.*}}, %[[QS]] : i32
// CHECK: %[[QE:.*]] = arith.select %[[OWNED]], %[[QE_CL]], %[[QS]] : i32
// CHECK: %[[KE_CL:.*]] = arith.maxsi %{{.*}}, %[[KS]] : i32
// CHECK: %[[KE:.*]] = arith.select %[[OWNED]], %[[KE_CL]], %[[TOTK]] : i32
// CHECK: %[[QS_IDX:.*]] = arith.index_cast %[[QS]] : i32 to index
// CHECK: %[[KS_IDX:.*]] = arith.index_cast %[[KS]] : i32 to index
// CHECK: %[[LQ32:.*]] = arith.subi %[[QE]], %[[QS]] : i32
// CHECK: %[[LQ:.*]] = arith.index_cast %[[LQ32]] : i32 to index
// CHECK: %[[LK32:.*]] = arith.subi %[[KE]], %[[KS]] : i32
// CHECK: %[[LK:.*]] = arith.index_cast %[[LK32]] : i32 to index
// Bottom-right alignment by the sequence's own lengths.
// CHECK: arith.subi %[[LK]], %[[LQ]] : index
// The early exit of a key block past its sequence's key length.
// CHECK: %[[BX:.*]] = gpu.block_id  x
// CHECK: %[[K0:.*]] = arith.muli %[[BX]], %c64 : index
// CHECK: %[[PAST:.*]] = arith.cmpi sge, %[[K0]], %[[LK]] : index
// CHECK: cf.cond_br %[[PAST]], ^[[EXIT:bb[0-9]+]], ^[[BODY:bb[0-9]+]]
// CHECK: ^[[BODY]]:
// Q's base: head h's rows of the sequence (h * q_stride_h + start * q_stride_s).
// CHECK: %[[QH:.*]] = arith.muli %block_id_y, %{{.*}} : index
// CHECK: %[[QR:.*]] = arith.muli %[[QS_IDX]], %{{.*}} : index
// CHECK: arith.addi %[[QH]], %[[QR]] : index
// LSE, Dsum and dq_accum rows: head h's of [1, Hq, total_q], from the
// sequence's first row.
// CHECK: %[[TQ:.*]] = arith.index_cast %[[TOTQ]] : i32 to index
// CHECK: %[[HQ:.*]] = arith.muli %block_id_y, %[[TQ]] : index
// CHECK: arith.addi %[[HQ]], %[[QS_IDX]] : index
// After the query loop the sequence is read again, from a block index
// read opaquely (not kept in registers across the loop), for the dK / dV
// slices: head h's rows of [1, Hq, total_k, D] from the sequence's first
// key, stored below its key length.
// CHECK: scf.yield
// CHECK: %[[Z2:.*]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u32 $0, %ctaid.z;"
// CHECK: %[[KS2_RAW:.*]] = memref.load %[[CU_K]]
// CHECK: %[[KS2:.*]] = arith.maxsi %{{.*}}, %{{.*}} : i32
// CHECK: %[[KS2_IDX:.*]] = arith.index_cast %[[KS2]] : i32 to index
// CHECK: %[[LK2_32:.*]] = arith.subi %{{.*}}, %[[KS2]] : i32
// CHECK: %[[LK2:.*]] = arith.index_cast %[[LK2_32]] : i32 to index
// CHECK: arith.cmpi slt, %{{.*}}, %[[LK2]] : index
// CHECK: %[[TK:.*]] = arith.index_cast %[[TOTK]] : i32 to index
// CHECK: %[[HK:.*]] = arith.muli %block_id_y, %[[TK]] : index
// CHECK: arith.addi %[[HK]], %[[KS2_IDX]] : index
// CHECK: ^[[EXIT]]:
// CHECK-NEXT: gpu.return

// The postprocess is the dense kernel.
// CHECK: gpu.func @flash_bwd_post_sm80_f16_d64_m64n64w4s2_causalbr(
// CHECK-NOT: varlen
// CHECK: gpu.return

// Deterministic: the dQ kernel runs under the same scheduler over query
// blocks (the unowned tail is of queries, without keys: dQ = 0), one z per
// sequence and one more.
// DET: %[[B:.*]] = arith.subi %c4{{.*}}, %c1{{.*}} : index
// DET: gpu.launch_func @flash_kernels::@flash_bwd_sm80_f16_d64_m64n64w4s2_causalbr_det_varlen
// DET: %[[GX:.*]] = arith.ceildivui %c300, %c64{{.*}} : index
// DET: %[[GZ:.*]] = arith.addi %[[B]], %c1{{.*}} : index
// DET: gpu.launch_func @flash_kernels::@flash_bwd_dq_sm80_f16_d64_m64n64w4s2_causalbr_det_varlen blocks in (%[[GX]], %c8, %[[GZ]])
// DET: gpu.func @flash_bwd_dq_sm80_f16_d64_m64n64w4s2_causalbr_det_varlen(
// DET-SAME: "i32:seq_k", "i32:num_seqs", "i32:max_seqlen_q", "i64:q_stride_b"
// DET-SAME: varlen = 1
// DET: %[[OWNED:.*]] = arith.cmpi ult, %{{.*}}, %[[NSEQ:.*]] : i32
// DET: %[[QE:.*]] = arith.select %[[OWNED]], %{{.*}}, %[[TOTQ:arg[0-9]+]] : i32
// DET: %[[KE:.*]] = arith.select %[[OWNED]], %{{.*}}, %[[KS:.*]] : i32
// DET: %[[LQ32:.*]] = arith.subi %[[QE]], %{{.*}} : i32
// DET: %[[LQ:.*]] = arith.index_cast %[[LQ32]] : i32 to index
// DET: %[[M0:.*]] = arith.muli %block_id_x, %c64 : index
// DET: %[[PAST:.*]] = arith.cmpi sge, %[[M0]], %[[LQ]] : index
// DET: cf.cond_br %[[PAST]]

func.func @varlen_grad(%do: tensor<1x8x300x64xf16>, %q: tensor<1x8x300x64xf16>, %k: tensor<1x2x500x64xf16>, %v: tensor<1x2x500x64xf16>, %o: tensor<1x8x300x64xf16>, %lse: tensor<1x8x300xf32>, %cu_q: tensor<4xi32>, %cu_k: tensor<4xi32>) -> (tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<4xi32>, tensor<4xi32>)
      {causal = #flash.causal<bottom_right>, config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>, tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
      -> tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>
  return %dq, %dk, %dv : tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>
}
