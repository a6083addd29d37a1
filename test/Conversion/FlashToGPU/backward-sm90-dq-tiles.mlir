// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a -verify-diagnostics | FileCheck %s

// The sm90 recipe's dense backward (KernelSpec::dqTiles, docs/KERNEL_ABI.md
// "Backward"): dq_accum is Sq rounded up to 128 rows (one 64-row tile per
// query block here, 3 tiles of 64 x 128 for Sq = 130, allocated as 256
// rows); the preprocess zeroes whole tiles; the main kernel takes grad_k /
// grad_v and, where Hq = Hkv, writes them itself (a select, not a second
// epilogue); the postprocess reads 64-byte chunks of the tile and splits
// each into two 8-column row segments.
// CHECK-LABEL: func.func @dense
// CHECK: memref.alloc() : memref<1x4x256x128xf32>
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_pre_sm90_bf16_d128_m64n128w8s2 blocks
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_sm90_bf16_d128_m64n128w8s2 blocks
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_post_sm90_bf16_d128_m64n128w8s2 blocks

// CHECK-LABEL: gpu.func @flash_bwd_pre_sm90_bf16_d128_m64n128w8s2(
// CHECK: arith.ceildivui %{{.*}}, %c64
// CHECK: vector.store {{.*}} : memref<?xf32>, vector<4xf32>

// CHECK-LABEL: gpu.func @flash_bwd_sm90_bf16_d128_m64n128w8s2(
// CHECK-SAME: "memref:dk", "memref:dv", "memref:grad_k", "memref:grad_v",
// CHECK-SAME: "i64:grad_k_stride_s"
// CHECK: scf.for
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<8192xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: nvvm.fence.proxy
// CHECK: gpu.barrier
// CHECK: nvvm.inline_ptx "{ .reg .u64 ga; cvta.to.global.u64 ga, $0; cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [ga], [$1], $2; }"
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: scf.yield
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT: read
// CHECK: %[[DIRECT:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK: arith.select %[[DIRECT]], %{{.*}}, %{{.*}} : memref<?xbf16>
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @flash_bwd_post_sm90_bf16_d128_m64n128w8s2(
// CHECK: vector.load {{.*}} : memref<?xf32>, vector<16xf32>
// CHECK: vector.shuffle {{.*}} [0, 1, 4, 5, 8, 9, 12, 13] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle {{.*}} [2, 3, 6, 7, 10, 11, 14, 15] : vector<16xf32>, vector<16xf32>
// CHECK: arith.cmpi ne, %{{.*}}, %c1
func.func @dense(%do: tensor<1x4x130x128xbf16>, %q: tensor<1x4x130x128xbf16>, %k: tensor<1x4x200x128xbf16>, %v: tensor<1x4x200x128xbf16>, %o: tensor<1x4x130x128xbf16>, %lse: tensor<1x4x130xf32>) -> (tensor<1x4x130x128xbf16>, tensor<1x4x200x128xbf16>, tensor<1x4x200x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x4x130x128xbf16>, tensor<1x4x130x128xbf16>, tensor<1x4x200x128xbf16>, tensor<1x4x200x128xbf16>, tensor<1x4x130x128xbf16>, tensor<1x4x130xf32> -> tensor<1x4x130x128xbf16>, tensor<1x4x200x128xbf16>, tensor<1x4x200x128xbf16>
  return %dq, %dk, %dv : tensor<1x4x130x128xbf16>, tensor<1x4x200x128xbf16>, tensor<1x4x200x128xbf16>
}

// -----

// A packed batch keeps dQ in rows (its blocks do not start at fixed
// tiles), the "_dqrows" preprocess and postprocess
// (KernelSpec::stagesDQRows): the main kernel stages dQ in shared memory
// as 128 rows of 64 + 8 floats (pair stores), and after the step's barrier
// each of threads 0-127 adds its row, if inside the sequence, with one
// bulk reduction of 256 bytes from row r * 72; the last one is waited for
// before the epilogue. Like the dense kernel it takes grad_k / grad_v and
// writes them itself where Hq = Hkv; the postprocess then sums the slices
// only with GQA.
// CHECK-LABEL: func.func @packed
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_pre_sm90_f16_d64_m128n128w8s2_dqrows blocks
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_sm90_f16_d64_m128n128w8s2_varlen blocks
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_post_sm90_f16_d64_m128n128w8s2_dqrows blocks
// CHECK-LABEL: gpu.func @flash_bwd_pre_sm90_f16_d64_m128n128w8s2_dqrows(
// CHECK-LABEL: gpu.func @flash_bwd_sm90_f16_d64_m128n128w8s2_varlen(
// CHECK-SAME: "memref:dk", "memref:dv", "memref:grad_k", "memref:grad_v", "memref:cu_seqlens_q"
// CHECK: scf.for
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<9216xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: nvvm.fence.proxy
// CHECK: gpu.barrier
// CHECK: %[[BYTES:.*]] = arith.constant 256 : i32
// CHECK: %[[INSEQ:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK: %[[INBLOCK:.*]] = arith.cmpi ult, %[[ROW:.*]], %c128{{.*}} : index
// CHECK: %[[MINE:.*]] = arith.andi %[[INBLOCK]], %[[INSEQ]] : i1
// CHECK: scf.if %[[MINE]] {
// CHECK: arith.muli %[[ROW]], %c72{{.*}} : index
// CHECK: nvvm.inline_ptx "{ .reg .u64 ga; cvta.to.global.u64 ga, $0; cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [ga], [$1], $2; }" ro(%{{.*}}, %{{.*}}, %[[BYTES]] : i64, i32, i32)
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK: scf.yield
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT: read
// CHECK: %[[DIRECT:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK: arith.select %[[DIRECT]], %{{.*}}, %{{.*}} : memref<?xf16>
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @flash_bwd_post_sm90_f16_d64_m128n128w8s2_dqrows(
// CHECK: vector.load {{.*}} : memref<?xf32>, vector<8xf32>
// CHECK: arith.cmpi ne, %{{.*}}, %c1
// CHECK: vector.load {{.*}} : memref<?xf16>, vector<8xf16>
// CHECK: gpu.return
func.func @packed(%do: tensor<1x4x512x64xf16>, %q: tensor<1x4x512x64xf16>, %k: tensor<1x4x512x64xf16>, %o: tensor<1x4x512x64xf16>, %lse: tensor<1x4x512xf32>, %cu: tensor<?xi32>) -> (tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %k, %o, %lse varlen(%cu, %cu : tensor<?xi32>, tensor<?xi32>) : tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512xf32> -> tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>
  return %dq, %dk, %dv : tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>
}

// -----

// Both in one module: their preprocess and postprocess would share a
// variant key with different dQ layouts, which an artifact cannot tell
// apart: refused, and the module left as it was.
func.func @mixed(%do: tensor<1x4x512x64xf16>, %q: tensor<1x4x512x64xf16>, %k: tensor<1x4x512x64xf16>, %o: tensor<1x4x512x64xf16>, %lse: tensor<1x4x512xf32>, %cu: tensor<?xi32>) -> (tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %k, %o, %lse : tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512xf32> -> tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>
  // expected-error @+1 {{shares its variant with another flash.attention_grad of this module, and the two accumulate dQ in different layouts (this one in rows (a packed batch), the other in tiles of 128 rows (sm90 recipe)); the runtime pairs one preprocess and postprocess with every backward of a variant: compile them into separate artifacts}}
  %dq2, %dk2, %dv2 = flash.attention_grad %do, %q, %k, %k, %o, %lse varlen(%cu, %cu : tensor<?xi32>, tensor<?xi32>) : tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512xf32> -> tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>
  return %dq, %dq2 : tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>
}

// -----

// Likewise an sm80-recipe gradient (dQ in rows) beside an sm90 one of the
// same variant, here a block-sparse one (its sm90 kernels take dQ tiles
// like the dense ones; test/Conversion/FlashToGPU/block-sparse-backward.mlir).
func.func @mixed_recipes(%do: tensor<1x4x512x64xf16>, %q: tensor<1x4x512x64xf16>, %lse: tensor<1x4x512xf32>, %n: tensor<1x1x4xi32>, %i: tensor<1x1x4x4xi32>) -> (tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %q, %q, %lse block_sparse(%n, %i : tensor<1x1x4xi32>, tensor<1x1x4x4xi32>) : tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512xf32> -> tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>
  // expected-error @+1 {{shares its variant with another flash.attention_grad of this module, and the two accumulate dQ in different layouts (this one in rows (recipe 'sm80'), the other in tiles of 128 rows (sm90 recipe))}}
  %dq2, %dk2, %dv2 = flash.attention_grad %do, %q, %q, %q, %q, %lse {config = #flash.config<sm80, block_m = 64, block_n = 128, warps = 8, stages = 2>} : tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512xf32> -> tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>
  return %dq, %dq2 : tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>
}
