// A block-sparse kernel that takes a tile order (the sm90ws forward,
// docs/KERNEL_ABI.md "Block-sparse"): its host launch passes 0, the grid's
// own order, and where its lists are bound by the artifact the order is
// bound with them, so that the runtime passes it too: as a buffer (whose
// address the runtime passes) computed from the lists where the sizes fix
// every tile, with the package's policy (block_sparse.tile_order: here no
// row is twice the mean, so head-major, each head's longest row first:
// entries 1, 0 of head 0 and 0, 1 of head 1, (head << 16) | query
// block); as 0 where the batch is dynamic. A kernel that takes no order
// (the sm90 forward) has no such param or line.
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --no-cubin -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.txt
// RUN: od -A d -t x4 -j 144 -N 16 %t/lists.bin | FileCheck %s --check-prefix=ORDER
// The host IR of kernels-only lowering (what flashfuse-compile reads back):
// kv_tile_order is 0, before the null tensor maps the runtime fills in.
// RUN: flashfuse-opt %s --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s --check-prefix=HOST

// CHECK-DAG: kernel flash_fwd_sm90ws_f16_d128_m128n128w8s3_bs128x128: block-sparse lists bound by the artifact (lists.bin)
// CHECK-DAG: kernel flash_fwd_sm90_f16_d128_m128n64w8s2_bs128x128: block-sparse lists bound by the artifact (lists.bin)

// MANIFEST-LABEL: kernel flash_fwd_sm90_f16_d128_m128n64w8s2_bs128x128
// MANIFEST-NOT: kv_tile_order
// MANIFEST: bound kv_slots 2
// MANIFEST-NEXT: end
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_f16_d128_m128n128w8s3_bs128x128
// MANIFEST: params {{.*}} i32:kv_slots i64:kv_tile_order tensormap:q_map
// MANIFEST: bound_for seq_q 256 seq_k 256 batch 1 heads_q 2
// MANIFEST: bound kv_tile_order file lists.bin offset 144 i32 4 crc32 28285f45
// MANIFEST-NOT: kv_tile_order
// MANIFEST: end
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128
// MANIFEST: bound_for seq_q 256 seq_k 256 heads_q 2
// MANIFEST-NOT: kv_tile_order file
// MANIFEST: bound kv_slots 2
// MANIFEST-NEXT: bound kv_tile_order 0
// MANIFEST-NEXT: end

// ORDER: 0000144 00000001 00000000 00010000 00010001

// HOST-LABEL: func.func @grid_order
// HOST: gpu.launch_func {{.*}}@flash_fwd_sm90_f16_d128_m128n64w8s2_bs128x128 {{.*}}: i32){{$}}
// HOST-LABEL: func.func @tiles_in_order
// HOST: gpu.launch_func {{.*}}@flash_fwd_sm90ws_f16_d128_m128n128w8s3_bs128x128
// HOST-SAME: : i32, %c0_i64{{[_0-9]*}} : i64, %{{[0-9]+}} : !llvm.ptr, %{{[0-9]+}} : !llvm.ptr, %{{[0-9]+}} : !llvm.ptr)

func.func @grid_order(%q: tensor<1x2x256x128xf16>) -> tensor<1x2x256x128xf16> {
  %n = arith.constant dense<[[[1, 2], [2, 1]]]> : tensor<1x2x2xi32>
  %i = arith.constant dense<[[[[0, 0], [0, 1]], [[0, 1], [1, 0]]]]> : tensor<1x2x2x2xi32>
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>) {config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 2>} : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16> -> tensor<1x2x256x128xf16>
  return %o : tensor<1x2x256x128xf16>
}

func.func @tiles_in_order(%q: tensor<1x2x256x128xf16>) -> tensor<1x2x256x128xf16> {
  %n = arith.constant dense<[[[1, 2], [2, 1]]]> : tensor<1x2x2xi32>
  %i = arith.constant dense<[[[[0, 0], [0, 1]], [[0, 1], [1, 0]]]]> : tensor<1x2x2x2xi32>
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>) {config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>} : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16> -> tensor<1x2x256x128xf16>
  return %o : tensor<1x2x256x128xf16>
}

func.func @batch_unknown(%q: tensor<?x2x256x128xbf16>) -> tensor<?x2x256x128xbf16> {
  %n = arith.constant dense<[[[1, 2], [2, 1]]]> : tensor<1x2x2xi32>
  %i = arith.constant dense<[[[[0, 0], [0, 1]], [[0, 1], [1, 0]]]]> : tensor<1x2x2x2xi32>
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>) {config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>} : tensor<?x2x256x128xbf16>, tensor<?x2x256x128xbf16>, tensor<?x2x256x128xbf16> -> tensor<?x2x256x128xbf16>
  return %o : tensor<?x2x256x128xbf16>
}
