// REQUIRES: ptxas
// Block-sparse kernels over sparse blocks other than 128 x 128 (what
// flash-select-config fits its tiles to: block-sparse-sizes.mlir) assemble
// without spilling (flashfuse-compile fails on a spill) on sm_80 and
// sm_90a, forwards and backwards: 64 x 64 at D = 128 (the sm80 recipe,
// its backward on 32 x 64 tiles of four warps), 128 x 64 at D = 64 (the
// wgmma forward's 64-key tile) and 64 x 128 under a causal mask (the sm90
// backward's 64-row steps). Functions from python/flashfuse/variants.py.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: flashfuse-compile %s --target=h100 -o %t/h100 | FileCheck %s --check-prefix=H100
//
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d128_m64n64w4s2_bs64x64f: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d128_m64n64w4s2_causal_bs64x64: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_f16_d64_m128n64w4s2_bs128x64f: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d64_m64n64w4s2_causal_bs64x128f: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d128_m32n64w4s2_bs64x64f: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_f16_d64_m32n64w4s2_bs128x64f: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d64_m32n128w4s2_causal_bs64x128f: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d128_m64n64w4s2_bs64x64f: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d128_m64n64w4s2_causal_bs64x64: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm90_f16_d64_m128n64w8s3_bs128x64f: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_fwd_sm80_bf16_d64_m64n64w4s2_causal_bs64x128f: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d128_m32n64w4s2_bs64x64f: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm80_f16_d64_m32n64w4s2_bs128x64f: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90_bf16_d64_m64n128w8s2_causal_bs64x128f: {{.*}}, 0/0 bytes spill stores/loads

func.func @fwd_d128_64x64(%q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>, %kvn: tensor<1x1x2xi32>, %kvi: tensor<1x1x2x2xi32>, %fkvn: tensor<1x1x2xi32>, %fkvi: tensor<1x1x2x2xi32>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v block_sparse(%kvn, %kvi : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) full_blocks(%fkvn, %fkvi : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) {sparse_block_size = array<i64: 64, 64>} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16> -> tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
}
func.func @fwd_d128_64x64_causal(%q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>, %kvn: tensor<1x1x2xi32>, %kvi: tensor<1x1x2x2xi32>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v block_sparse(%kvn, %kvi : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) {causal = #flash.causal<top_left>, sparse_block_size = array<i64: 64, 64>} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16> -> tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
}
func.func @fwd_d64_128x64(%q: tensor<1x1x128x64xf16>, %k: tensor<1x1x128x64xf16>, %v: tensor<1x1x128x64xf16>, %kvn: tensor<1x1x1xi32>, %kvi: tensor<1x1x1x2xi32>, %fkvn: tensor<1x1x1xi32>, %fkvi: tensor<1x1x1x2xi32>) -> (tensor<1x1x128x64xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v block_sparse(%kvn, %kvi : tensor<1x1x1xi32>, tensor<1x1x1x2xi32>) full_blocks(%fkvn, %fkvi : tensor<1x1x1xi32>, tensor<1x1x1x2xi32>) {sparse_block_size = array<i64: 128, 64>} : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
}
func.func @fwd_d64_64x128_causal(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>, %kvn: tensor<1x1x2xi32>, %kvi: tensor<1x1x2x1xi32>, %fkvn: tensor<1x1x2xi32>, %fkvi: tensor<1x1x2x1xi32>) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v block_sparse(%kvn, %kvi : tensor<1x1x2xi32>, tensor<1x1x2x1xi32>) full_blocks(%fkvn, %fkvi : tensor<1x1x2xi32>, tensor<1x1x2x1xi32>) {causal = #flash.causal<top_left>, sparse_block_size = array<i64: 64, 128>} : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16> -> tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
}

func.func @grad_d128_64x64(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>, %kvn: tensor<1x1x2xi32>, %kvi: tensor<1x1x2x2xi32>, %fkvn: tensor<1x1x2xi32>, %fkvi: tensor<1x1x2x2xi32>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse block_sparse(%kvn, %kvi : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) full_blocks(%fkvn, %fkvi : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) {sparse_block_size = array<i64: 64, 64>} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
}
func.func @grad_d64_128x64(%do: tensor<1x1x128x64xf16>, %q: tensor<1x1x128x64xf16>, %k: tensor<1x1x128x64xf16>, %v: tensor<1x1x128x64xf16>, %o: tensor<1x1x128x64xf16>, %lse: tensor<1x1x128xf32>, %kvn: tensor<1x1x1xi32>, %kvi: tensor<1x1x1x2xi32>, %fkvn: tensor<1x1x1xi32>, %fkvi: tensor<1x1x1x2xi32>) -> (tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse block_sparse(%kvn, %kvi : tensor<1x1x1xi32>, tensor<1x1x1x2xi32>) full_blocks(%fkvn, %fkvi : tensor<1x1x1xi32>, tensor<1x1x1x2xi32>) {sparse_block_size = array<i64: 128, 64>} : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128xf32> -> tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>
  return %dq, %dk, %dv : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>
}
func.func @grad_d64_64x128_causal(%do: tensor<1x1x128x64xbf16>, %q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>, %o: tensor<1x1x128x64xbf16>, %lse: tensor<1x1x128xf32>, %kvn: tensor<1x1x2xi32>, %kvi: tensor<1x1x2x1xi32>, %fkvn: tensor<1x1x2xi32>, %fkvi: tensor<1x1x2x1xi32>) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse block_sparse(%kvn, %kvi : tensor<1x1x2xi32>, tensor<1x1x2x1xi32>) full_blocks(%fkvn, %fkvi : tensor<1x1x2xi32>, tensor<1x1x2x1xi32>) {causal = #flash.causal<top_left>, sparse_block_size = array<i64: 64, 128>} : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>
}

