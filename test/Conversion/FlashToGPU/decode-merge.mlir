// The counters' merge of a decode step's splits (Sm80Decode.cpp,
// mergeIfLastSplit): the block that completes a row group deals its
// (row, 4 columns) items out to all its threads, each counting its items
// from 0, and each item folds 16 splits at a time (mergeSplitQuad): 16
// LSEs and 16 vector<4xf32> pieces of the partial O (%arg5, o_partial) in
// flight with a running max, one pass over the partial results. Past 32
// splits in two levels (decode_splits.h, flashfuse_decode_merge_chunks):
// the block that completes a chunk of 16 splits merges them into the
// chunk's first split's partial rows (a vector<4xf32> store to o_partial),
// fences and counts in on its group's counter; the block that completes
// the group merges the chunks into O (%arg3). D = 256 with ALiBi, at the
// 255-register cap, folds one split at a time, in one level.
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s

// CHECK-LABEL: gpu.func @flash_decode_bf16_d256_m16n64w4s3_causalbr(
// CHECK: arith.cmpi ugt, %{{.*}}, %c32{{.*}} : index
// CHECK: llvm.atomicrmw uinc_wrap
// CHECK: scf.if %{{.*}} -> (i1) {
// CHECK-NEXT: scf.if %{{.*}} -> (i1) {
// CHECK-NEXT: nvvm.memory.barrier <gpu>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c1
// CHECK: scf.for %{{.*}} step %c16{{.*}} -> (f32, f32, vector<4xf32>)
// CHECK-COUNT-16: vector.load %arg5[%{{.*}}] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-NOT: vector.load %arg5
// CHECK: scf.yield {{.*}} : f32, f32, vector<4xf32>
// CHECK-NOT: %arg3
// CHECK: vector.store %{{.*}}, %arg5[%{{.*}}] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK: nvvm.memory.barrier <gpu>
// CHECK-NEXT: gpu.barrier
// CHECK: llvm.atomicrmw uinc_wrap
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: nvvm.memory.barrier <gpu>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c1
// CHECK: scf.for %{{.*}} step %c16{{.*}} -> (f32, f32, vector<4xf32>)
// CHECK-COUNT-16: vector.load %arg5[%{{.*}}] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-NOT: vector.load %arg5
// CHECK: scf.yield {{.*}} : f32, f32, vector<4xf32>
// CHECK-NOT: vector.store %{{.*}}, %arg5
// CHECK: vector.store %{{.*}}, %arg3[%{{.*}}] {{.*}} vector<2xbf16>
// CHECK: gpu.return
func.func @gemma(%q: tensor<?x8x1x256xbf16>, %k: tensor<?x4x?x256xbf16>, %len: tensor<?xi32>) -> tensor<?x8x1x256xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {causal = #flash.causal<bottom_right>}
      : tensor<?x8x1x256xbf16>, tensor<?x4x?x256xbf16>, tensor<?x4x?x256xbf16>, tensor<?xi32> -> tensor<?x8x1x256xbf16>
  return %o : tensor<?x8x1x256xbf16>
}

// CHECK-LABEL: gpu.func @flash_decode_bf16_d256_m64n32w4s2_causalbr_alibib(
// CHECK: llvm.atomicrmw uinc_wrap
// CHECK-NOT: llvm.atomicrmw
// CHECK: scf.for %{{.*}} step %c1{{.*}} -> (f32, f32, vector<4xf32>)
// CHECK-COUNT-1: vector.load %arg{{[0-9]+}}[%{{.*}}] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-NEXT: arith.maximumf
func.func @alibi(%q: tensor<2x16x1x256xbf16>, %k: tensor<2x4x256x256xbf16>, %len: tensor<2xi32>, %s: tensor<2x16xf32>) -> tensor<2x16x1x256xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len alibi(%s : tensor<2x16xf32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x16x1x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2x4x256x256xbf16>, tensor<2xi32> -> tensor<2x16x1x256xbf16>
  return %o : tensor<2x16x1x256xbf16>
}
