// REQUIRES: ptxas
// The block-sparse backward on the sm90ws recipe: the producer warp walks
// the transposed lists (BlockSparseQueryIterator, as the sm90 backward
// does), records each step's query block and whether mask_mod applies in
// the stage's slot beside its LSE and Dsum, and arrives on the stage's
// "full" barrier; the consumers read the slot where the sm90 backward
// does. D = 64 assembles with no spill; the D = 128 kernels spill 20 bytes
// at the consumers' 240 registers (the sm90 ones none at 255), hence
// --allow-spills.
// RUN: rm -rf %t && flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" | FileCheck %s --check-prefix=CONFIG
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90ws --allow-spills -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx

// CONFIG: flash.attention_grad {{.*}}config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 2>
// CONFIG: flash.attention_grad {{.*}}config = #flash.config<sm90ws, block_m = 64, block_n = 128, warps = 8, stages = 2>

// CHECK-DAG: kernel flash_bwd_sm90ws_f16_d64_m128n128w8s2_bs128x128f (smem
// CHECK-DAG: kernel flash_bwd_sm90ws_bf16_d128_m64n128w8s2_bs128x128f_mod{{[0-9]+}} (smem
// CHECK-DAG: kernel flash_bwd_bs_transpose_
// CHECK-DAG: ptxas sm_90a flash_bwd_sm90ws_f16_d64_m128n128w8s2_bs128x128f: 168 registers, 0 bytes stack, 0/0 bytes spill

// The producer reads the lists (global loads) before the Q / dO copies of
// a step and stores the step's slot in shared memory before its arrival.
// PTX-LABEL: .entry flash_bwd_sm90ws_f16_d64_m128n128w8s2_bs128x128f(
// PTX: setmaxnreg.dec.sync.aligned.u32 24;
// PTX: ld.global.b32
// PTX: st.shared.b32
// PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX: mbarrier.arrive.shared.b64
// PTX: setmaxnreg.inc.sync.aligned.u32 240;

func.func @f16_d64_full(%t: tensor<2x4x777x64xf16>, %lse: tensor<2x4x777xf32>, %n: tensor<2x1x7xi32>, %i: tensor<2x1x7x7xi32>, %fn: tensor<2x1x7xi32>, %fi: tensor<2x1x7x7xi32>) -> tensor<2x4x777x64xf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<2x1x7xi32>, tensor<2x1x7x7xi32>)
      full_blocks(%fn, %fi : tensor<2x1x7xi32>, tensor<2x1x7x7xi32>)
      : tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>,
        tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>, tensor<2x4x777xf32>
      -> tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>, tensor<2x4x777x64xf16>
  return %dq : tensor<2x4x777x64xf16>
}
func.func @bf16_d128_mask_mod_full(%t: tensor<1x4x1024x128xbf16>, %lse: tensor<1x4x1024xf32>, %n: tensor<1x1x8xi32>, %i: tensor<1x1x8x8xi32>, %fn: tensor<1x1x8xi32>, %fi: tensor<1x1x8x8xi32>) -> tensor<1x4x1024x128xbf16> {
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
      full_blocks(%fn, %fi : tensor<1x1x8xi32>, tensor<1x1x8x8xi32>)
      : tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>,
        tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024xf32>
      -> tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %kj: index):
        %c = arith.constant 256 : index
        %qd = arith.divui %qi, %c : index
        %kd = arith.divui %kj, %c : index
        %same = arith.cmpi eq, %qd, %kd : index
        flash.yield %same : i1
      }
  return %dq : tensor<1x4x1024x128xbf16>
}
