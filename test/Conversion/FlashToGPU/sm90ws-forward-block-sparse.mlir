// REQUIRES: ptxas
// A block-sparse forward on the sm90ws recipe: the producer copies the key
// blocks the lists name (BlockSparseIterator<Sm90WsForwardBuilder>), one
// tile a block (no persistent walk: the iterator reads the block's query
// block from its coordinates), with no spill.
// RUN: rm -rf %t && flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" | FileCheck %s --check-prefix=CONFIG
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90ws -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.txt

// CONFIG: block_sparse({{.*}}config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
// CHECK-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f: 168 registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_fwd_sm90ws_f16_d128_m128n128w8s3_bs128x128: 168 registers, 0 bytes stack, 0/0 bytes spill
// MANIFEST-LABEL: kernel flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f
// MANIFEST-NOT: grid persistent
// MANIFEST: block_sparse 2
// MANIFEST: params {{.*}}memref:kv_num_blocks{{.*}}tensormap:q_map tensormap:k_map tensormap:v_map{{$}}

func.func @bf16_d128_full(%q: tensor<2x8x1000x128xbf16>, %n: tensor<2x8x8xi32>, %i: tensor<2x8x8x8xi32>, %fn: tensor<2x8x8xi32>, %fi: tensor<2x8x8x8xi32>) -> tensor<2x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>) full_blocks(%fn, %fi : tensor<2x8x8xi32>, tensor<2x8x8x8xi32>) : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16> -> tensor<2x8x1000x128xbf16>
  return %o : tensor<2x8x1000x128xbf16>
}
func.func @f16_d128_partial_broadcast(%q: tensor<2x8x1024x128xf16>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>) -> tensor<2x8x1024x128xf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>) : tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16> -> tensor<2x8x1024x128xf16>
  return %o : tensor<2x8x1024x128xf16>
}
