// RUN: flashfuse-opt %s --flash-lower-to-gpu=chip=sm_80 | FileCheck %s

// A block-sparse flash.attention_grad (partial lists broadcast over the
// batch, full lists over the heads): the dense preprocess, the
// backward_sparse_transpose kernel, the sm80 main kernel with the
// query-block iterator (BlockSparseQueryIterator.h) and the dense
// postprocess (docs/KERNEL_ABI.md "Block-sparse backward"). 300 queries and
// keys, 128 x 128 sparse blocks (QB = KB = 3), 64-row kernel blocks (two per
// sparse block).

// The host: per forward pair a workspace of the pair's B' and H' ([1, 4]
// and [2, 1]), KB counts and KB x QB indices; the transpose runs after the
// preprocess and before the main kernel, one thread per key block
// (ceil(KB / 128) blocks) per head and batch; the main kernel takes the
// transposed pairs after the scalars, the postprocess is the dense one.
// CHECK-LABEL: func.func @lists
// CHECK: %[[KB:.*]] = arith.ceildivui %{{.*}}, %c128{{.*}} : index
// CHECK: %[[QB:.*]] = arith.ceildivui %{{.*}}, %c128{{.*}} : index
// CHECK: %[[TN:.*]] = memref.alloc(%[[KB]]) : memref<1x4x?xi32>
// CHECK: %[[TI:.*]] = memref.alloc(%[[KB]], %[[QB]]) : memref<1x4x?x?xi32>
// CHECK: memref.alloc(%[[KB]]) : memref<2x1x?xi32>
// CHECK: memref.alloc(%[[KB]], %[[QB]]) : memref<2x1x?x?xi32>
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_pre_sm80_f16_d64_m64n64w4s2 blocks
// CHECK: %[[TG:.*]] = arith.ceildivui %[[KB]], %c128{{.*}} : index
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_bs_transpose_sm80_f16_d64_m64n64w4s2_bs128x128f blocks in (%[[TG]], %c4{{.*}}, %c2{{.*}}) threads in (%c128
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_sm80_f16_d64_m64n64w4s2_bs128x128f
// CHECK-SAME: %{{.*}} : i64, %{{.*}} : memref<?xi32>, %{{.*}} : memref<?xi32>, %c0_i64{{.*}} : i64, %{{.*}} : i64, %c0_i64{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i32, %{{.*}} : memref<?xi32>, %{{.*}} : memref<?xi32>, %{{.*}} : i64, %c0_i64{{.*}} : i64, %{{.*}} : i64, %c0_i64{{.*}} : i64, %{{.*}} : i32)
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_post_sm80_f16_d64_m64n64w4s2 blocks

// The main kernel: its key block kb = kStart / 128 reads its transposed
// row (counts clamped into [0, slots]) before the loop and saves it (the
// counts, then the rows' offsets) after the stage slots, words 8-11 of the
// [(stages + 1) * 4] i32 tile behind LSE and Dsum; the walk has
// (n_partial + n_full) * 2 positions.
// CHECK: gpu.func @flash_bwd_sm80_f16_d64_m64n64w4s2_bs128x128f(
// CHECK-SAME: %[[QNUM:arg32]]: memref<?xi32>, %[[QIDX:arg33]]: memref<?xi32>, %arg34: i64, %arg35: i64, %arg36: i64, %arg37: i64, %arg38: i32, %[[FQNUM:arg39]]: memref<?xi32>, %[[FQIDX:arg40]]: memref<?xi32>
// CHECK-SAME: block_sparse = 2
// CHECK-SAME: kind = "backward"
// CHECK-SAME: "i64:seed", "memref:q_num_blocks", "memref:q_indices", "i64:q_num_blocks_stride_b", "i64:q_num_blocks_stride_h", "i64:q_indices_stride_b", "i64:q_indices_stride_h", "i32:q_slots", "memref:full_q_num_blocks"
// CHECK: %[[SLOTS:.*]] = memref.view {{.*}} to memref<12xi32, #gpu.address_space<workgroup>>
// CHECK: %[[KBLK:.*]] = arith.divui %{{.*}}, %c128 : index
// CHECK: memref.load %[[QNUM]]
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: memref.load %[[FQNUM]]
// CHECK: memref.store %{{.*}}, %[[SLOTS]][%c8]
// CHECK: memref.store %{{.*}}, %[[SLOTS]][%c9]
// CHECK: memref.store %{{.*}}, %[[SLOTS]][%c10]
// CHECK: memref.store %{{.*}}, %[[SLOTS]][%c11]
// CHECK: %[[SUM:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[ENTRIES:.*]] = arith.index_cast %[[SUM]] : i32 to index
// CHECK: %[[STEPS:.*]] = arith.muli %[[ENTRIES]], %c2{{.*}} : index
// The prologue's fetch (position 0 into stage 0): the saved row read back,
// entry = position / 2, partial entries first; a query block outside
// [0, QB) (and -1 past the walk) becomes the kernel block past Sq; the
// block is recorded in its stage's slot (word 4 * stage).
// CHECK: memref.load %[[SLOTS]]
// CHECK: %[[ENTRY:.*]] = arith.divui %{{.*}}, %c2{{.*}} : index
// CHECK: scf.if
// CHECK: memref.load %[[QIDX]]
// CHECK: } else {
// CHECK: memref.load %[[FQIDX]]
// CHECK: } else {
// CHECK: arith.constant -1 : index
// CHECK: arith.ceildivui %{{.*}}, %c128{{.*}} : index
// CHECK: arith.ceildivui %{{.*}}, %c64{{.*}} : index
// CHECK: arith.select
// CHECK: memref.store %{{.*}}, %[[SLOTS]]
// In the loop: the prefetch fetches (and records) the same way; the step's
// block is read from its stage's slot after the barrier.
// CHECK: scf.for %[[POS:.*]] = %{{.*}} to %[[STEPS]] step %c1
// CHECK: memref.load %[[SLOTS]]
// CHECK: memref.load %[[QIDX]]
// CHECK: memref.store %{{.*}}, %[[SLOTS]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SLOTS]]
// CHECK: gpu.return

// The transpose kernel: one thread per key block (kb < KB); a pair that
// broadcasts the batch or the heads (stride 0) is transposed by batch 0
// (head 0) only; it scans each query block's clamped row for kb and appends
// the query block (in increasing order, once) while the row has room; the
// count goes last.
// CHECK: gpu.func @flash_bwd_bs_transpose_sm80_f16_d64_m64n64w4s2_bs128x128f(%[[NUM:arg0]]: memref<?xi32>, %[[IDX:arg1]]: memref<?xi32>, %[[NSB:arg2]]: i64, %[[NSH:arg3]]: i64, %{{.*}}: i64, %{{.*}}: i64, %[[SLOTS:arg6]]: i32,
// CHECK-SAME: %[[OUTNUM:arg14]]: memref<?xi32>, %[[OUTIDX:arg15]]: memref<?xi32>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %[[OUTSLOTS:arg20]]: i32,
// CHECK-SAME: kind = "backward_sparse_transpose"
// CHECK-SAME: params = ["memref:kv_num_blocks", "memref:kv_indices", {{.*}}, "i32:full_kv_slots", "memref:q_num_blocks", {{.*}}, "i32:full_q_slots", "i32:batch", "i32:heads_q", "i32:seq_q", "i32:seq_k"]
// CHECK-SAME: threads = 128
// CHECK: %[[KEY:.*]] = arith.addi %{{.*}}, %thread_id_x : index
// CHECK: %[[NQB:.*]] = arith.ceildivui %{{.*}}, %c128{{.*}} : index
// CHECK: %[[NKB:.*]] = arith.ceildivui %{{.*}}, %c128{{.*}} : index
// CHECK: arith.cmpi ult, %[[KEY]], %[[NKB]] : index
// CHECK: arith.index_cast %[[NSH]] : i64 to index
// CHECK: arith.cmpi eq, %block_id_y, %c0 : index
// CHECK: arith.index_cast %[[NSB]] : i64 to index
// CHECK: arith.cmpi eq, %block_id_z, %c0 : index
// CHECK: %[[COUNT:.*]] = scf.for %[[QB:.*]] = %c0 to %[[NQB]] step %c1 iter_args(%[[N:.*]] = %c0) -> (index) {
// CHECK: memref.load %[[NUM]]
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: %[[FOUND:.*]] = scf.for {{.*}} iter_args(%[[ANY:.*]] = %false) -> (i1) {
// CHECK: memref.load %[[IDX]]
// CHECK: %[[MATCH:.*]] = arith.cmpi eq, %{{.*}}, %[[KEY]] : index
// CHECK: arith.ori %[[ANY]], %[[MATCH]] : i1
// CHECK: %[[FITS:.*]] = arith.cmpi ult, %[[N]], %{{.*}} : index
// CHECK: %[[APPEND:.*]] = arith.andi %[[FOUND]], %[[FITS]] : i1
// CHECK: scf.if %[[APPEND]] {
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %[[N]] : index
// CHECK: %[[QB32:.*]] = arith.index_cast %[[QB]] : index to i32
// CHECK: memref.store %[[QB32]], %[[OUTIDX]][%[[AT]]]
// CHECK: arith.extui %[[APPEND]] : i1 to i32
// CHECK: memref.store %{{.*}}, %[[OUTNUM]]
// The full pair next, into its own transposed pair.
// CHECK: memref.load %arg7
// CHECK: memref.load %arg8
// CHECK: memref.store %{{.*}}, %arg22
// CHECK: memref.store %{{.*}}, %arg21
// CHECK: gpu.return
func.func @lists(%t: tensor<2x4x300x64xf16>, %lse: tensor<2x4x300xf32>, %n: tensor<1x4x3xi32>, %i: tensor<1x4x3x3xi32>, %fn: tensor<2x1x3xi32>, %fi: tensor<2x1x3x2xi32>) -> tensor<2x4x300x64xf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<1x4x3xi32>, tensor<1x4x3x3xi32>)
      full_blocks(%fn, %fi : tensor<2x1x3xi32>, tensor<2x1x3x2xi32>)
      {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
      : tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>,
        tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>, tensor<2x4x300xf32>
      -> tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>
  return %dq : tensor<2x4x300x64xf16>
}
