// REQUIRES: ptxas
// The decode kernel of block_m = 8 (KernelSpec::swapsDecodeOperands,
// Sm80DecodeSwapped.cpp): the packed rows are the n of the products,
// S^T = K Q^T and O^T = V^T P^T, P^T turned into the B operand by
// movmatrix.trans. A key block of 128 keys is 16 mma.sync a warp for S^T
// and 16 for O^T (the m16 engine's 32 and 32), so each kernel's PTX holds
// 32 products in its key loop and none elsewhere. Contiguous and paged,
// causal with a window and softcap, without spills.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 -o %t/h100 | FileCheck %s
//
// CHECK-DAG: kernel flash_decode_bf16_d128_m8n128w4s2 (smem
// CHECK-DAG: ptxas sm_90a flash_decode_bf16_d128_m8n128w4s2: {{.*}}, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_decode_bf16_d128_m8n128w4s2_causalbr_window_softcap_page16: {{.*}}, 0/0 bytes spill stores/loads
// CHECK: wrote
//
// RUN: FileCheck %s --check-prefix=PTX < %t/h100/kernels.ptx
// PTX-LABEL: .entry flash_decode_bf16_d128_m8n128w4s2(
// PTX-COUNT-32: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-NOT: mma.sync
// PTX: .entry
// PTX-LABEL: .entry flash_decode_bf16_d128_m8n128w4s2_causalbr_window_softcap_page16(
// PTX-COUNT-32: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-NOT: mma.sync
// PTX: .entry
//
// Four movmatrix a warp's 32 keys (two 8 x 8 blocks of P^T per 16 keys).
// RUN: grep -c "movmatrix.sync.aligned.m8n8.trans.b16" %t/h100/kernels.ptx | FileCheck %s --check-prefix=MOV
// MOV: 8

func.func @contiguous(%q: tensor<2x32x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>) -> tensor<2x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len {config = #flash.config<decode, block_m = 8, block_n = 128, warps = 4, stages = 2>}
      : tensor<2x32x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32> -> tensor<2x32x1x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}

func.func @paged(%q: tensor<2x32x1x128xbf16>, %k: tensor<40x16x8x128xbf16>, %len: tensor<2xi32>, %bt: tensor<2x16xi32>) -> tensor<2x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<2x16xi32>) {causal = #flash.causal<bottom_right>, window_left = 64 : i64, softcap = 30.0 : f32, config = #flash.config<decode, block_m = 8, block_n = 128, warps = 4, stages = 2>}
      : tensor<2x32x1x128xbf16>, tensor<40x16x8x128xbf16>, tensor<40x16x8x128xbf16>, tensor<2xi32> -> tensor<2x32x1x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}
