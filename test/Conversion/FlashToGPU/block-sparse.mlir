// RUN: flashfuse-opt %s --flash-lower-to-gpu=chip=sm_80 | FileCheck %s

// A block-sparse flash.attention (partial and full lists, the partial ones
// broadcast over the batch): the recipe's forward with the block-sparse
// key-block iterator (BlockSparseIterator.h, docs/KERNEL_ABI.md
// "Block-sparse"). 300 queries in 64-row thread blocks, 128 x 128 sparse
// blocks (QB = 3, three slots per row), 64-key kernel blocks (two per
// sparse key block).

// The launch: the dense forward's grid; after the scalars each list pair,
// its batch and head strides (0 where broadcast; [1, 4, 3]: 0 and 3;
// [1, 4, 3, 3]: 0 and 9) and its slots.
// CHECK-LABEL: func.func @lists
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_f16_d64_m64n64w4s2_bs128x128f blocks in (%{{.*}}, %c4, %c2)
// CHECK-SAME: %{{.*}} : i64, %[[PN:.*]] : memref<?xi32>, %[[PI:.*]] : memref<?xi32>, %c0_i64{{.*}} : i64, %[[NH:.*]] : i64, %c0_i64{{.*}} : i64, %[[IH:.*]] : i64, %[[SLOTS:.*]] : i32, %{{.*}} : memref<?xi32>, %{{.*}} : memref<?xi32>, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i32)

// The kernel: the lists' params after the scalars, the manifest's keys.
// CHECK: gpu.func @flash_fwd_sm80_f16_d64_m64n64w4s2_bs128x128f(
// CHECK-SAME: %[[NUM:arg28]]: memref<?xi32>, %[[IDX:arg29]]: memref<?xi32>, %arg30: i64, %arg31: i64, %arg32: i64, %arg33: i64, %[[NSLOTS:arg34]]: i32, %[[FNUM:arg35]]: memref<?xi32>, %[[FIDX:arg36]]: memref<?xi32>
// CHECK-SAME: block_sparse = 2
// CHECK-SAME: "i64:seed", "memref:kv_num_blocks", "memref:kv_indices", "i64:kv_num_blocks_stride_b", "i64:kv_num_blocks_stride_h", "i64:kv_indices_stride_b", "i64:kv_indices_stride_h", "i32:kv_slots", "memref:full_kv_num_blocks"
// CHECK-SAME: sparse_block_k = 128 : i64, sparse_block_q = 128 : i64
// Before the loop: the query block's counts, clamped into [0, slots]; the
// walk's length is their sum times two kernel blocks.
// CHECK: %[[QB:.*]] = arith.divui %{{.*}}, %c128 : index
// CHECK: memref.load %[[NUM]]
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: memref.load %[[FNUM]]
// CHECK: %[[SUM:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[ENTRIES:.*]] = arith.index_cast %[[SUM]] : i32 to index
// CHECK: %[[STEPS:.*]] = arith.muli %[[ENTRIES]], %c2{{.*}} : index
// Inside it, the row is read again from the block's coordinates read
// opaquely; entry = position / 2, partial entries first, loads only inside
// the walk; an index outside [0, KB) (and -1 past the walk) becomes the
// kernel block past Sk.
// CHECK: scf.for %[[POS:.*]] = %{{.*}} to %[[STEPS]] step %c1
// CHECK: llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %ctaid.z;"
// CHECK: memref.load %[[NUM]]
// CHECK: memref.load %[[FNUM]]
// CHECK: %[[ENTRY:.*]] = arith.divui %{{.*}}, %c2{{.*}} : index
// CHECK: %[[SUB:.*]] = arith.remui %{{.*}}, %c2{{.*}} : index
// CHECK: %[[INWALK:.*]] = arith.cmpi ult, %[[ENTRY]], %{{.*}} : index
// CHECK: %[[KB:.*]] = scf.if %[[INWALK]] -> (index) {
// CHECK: scf.if %{{.*}} -> (index) {
// CHECK: memref.load %[[IDX]]
// CHECK: } else {
// CHECK: memref.load %[[FIDX]]
// CHECK: } else {
// CHECK: scf.yield %c-1{{.*}} : index
// CHECK: %[[NKB:.*]] = arith.ceildivui %{{.*}}, %c128{{.*}} : index
// CHECK: %[[PAST:.*]] = arith.ceildivui %{{.*}}, %c64{{.*}} : index
// CHECK: arith.cmpi sge, %[[KB]], %c0{{.*}} : index
// CHECK: arith.cmpi slt, %[[KB]], %[[NKB]] : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[KB]], %c2{{.*}} : index
// CHECK: %[[BLOCK:.*]] = arith.addi %[[FIRST]], %[[SUB]] : index
// CHECK: arith.select %{{.*}}, %[[BLOCK]], %[[PAST]] : index
func.func @lists(%q: tensor<2x4x300x64xf16>, %n: tensor<1x4x3xi32>, %i: tensor<1x4x3x3xi32>, %fn: tensor<2x4x3xi32>, %fi: tensor<2x4x3x3xi32>) -> tensor<2x4x300x64xf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x4x3xi32>, tensor<1x4x3x3xi32>) full_blocks(%fn, %fi : tensor<2x4x3xi32>, tensor<2x4x3x3xi32>) {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16> -> tensor<2x4x300x64xf16>
  return %o : tensor<2x4x300x64xf16>
}
