// REQUIRES: ptxas
// Every kernel of these variants is generated, lowered to PTX and assembled
// by ptxas for sm_80 (A100) and sm_90a (H100/H200) with zero spill bytes
// (flashfuse-compile fails on a spill unless --allow-spills), and its PTX
// uses the tensor-core mma.sync (the sm80 recipe) or, for the forwards the
// sm90 recipe takes on H100 (D = 64, 128, 256), wgmma. SASS (HMMA, HGMMA)
// is checked by sass-tensor-cores.mlir. Zero spills took tile choices of
// flash-select-config: D = 96 at 128 x 32 (128 x 64 spilled), D = 128 at
// 128 x 64 only with the swizzled tiles and the skipped unit rescale
// (KernelSpec::skipsUnitRescale; 72-112 bytes without), its window and
// dropout variants at 32 keys (60-136 bytes at 64), D = 32 at 128 x 32
// (128 x 64 causal spilled 8 bytes on sm_80), dropout forwards at 64 rows
// on sm80 (20-148 bytes at 128) and at 128 x 48 with three stages for
// D = 256 on sm90 (52 bytes at 128 x 80).
//
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: flashfuse-compile %s --target=h100 --recipe=sm80 -o %t/h100 | FileCheck %s --check-prefix=H100
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
// RUN: grep -c "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" %t/h100/kernels.ptx | FileCheck %s --check-prefix=MMA
// RUN: flashfuse-compile %s --target=h100 -o %t/h100-auto | FileCheck %s --check-prefix=AUTO
// RUN: grep -c "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16" %t/h100-auto/kernels.ptx | FileCheck %s --check-prefix=MMA
// RUN: grep -c "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" %t/a100/kernels.ptx | FileCheck %s --check-prefix=MMA
// No accumulator pair is stored in two 2-byte halves (frag::storePair).
// RUN: not grep -q "st.global.b16" %t/a100/kernels.ptx %t/h100/kernels.ptx %t/h100-auto/kernels.ptx
// O leaves through shared memory in 16-byte stores (ForwardBuilder::
// stagesOutput: the swizzled kernels) wherever the tiles are swizzled, in
// both recipes; the padded D = 32 kernels store pairs.
// RUN: grep -c "st.global.v4.b32" %t/h100/kernels.ptx | FileCheck %s --check-prefix=MMA
// RUN: grep -c "st.global.v4.b32" %t/h100-auto/kernels.ptx | FileCheck %s --check-prefix=MMA
//
// A100-COUNT-27: ptxas sm_80 flash_fwd_sm80_{{.*}}, 0/0 bytes spill stores/loads
// A100: wrote
// H100-COUNT-27: ptxas sm_90a flash_fwd_sm80_{{.*}}, 0/0 bytes spill stores/loads
// H100: wrote
// AUTO-DAG: ptxas sm_90a flash_fwd_sm90_f16_d64_m128n64w8s3: {{.*}}, 0/0 bytes spill stores/loads
// AUTO-DAG: ptxas sm_90a flash_fwd_sm90_f16_d64_m128n64w8s3_causal: {{.*}}, 0/0 bytes spill stores/loads
// AUTO-DAG: ptxas sm_90a flash_fwd_sm90_bf16_d64_m128n64w8s3_softcap: {{.*}}, 0/0 bytes spill stores/loads
// AUTO-DAG: ptxas sm_90a flash_fwd_sm80_f16_d32_m128n32w4s2: {{.*}}, 0/0 bytes spill stores/loads
// AUTO-DAG: ptxas sm_90a flash_fwd_sm90_f16_d256_m128n80w8s2_causal: {{.*}}, 0/0 bytes spill stores/loads
// AUTO-DAG: ptxas sm_90a flash_fwd_sm90_f16_d256_m128n48w8s3_dropout: {{.*}}, 0/0 bytes spill stores/loads
// AUTO-DAG: ptxas sm_90a flash_fwd_sm80_f16_d32_m64n32w4s2_dropout: {{.*}}, 0/0 bytes spill stores/loads
// AUTO: wrote
// MANIFEST: flashfuse-manifest 1
// MANIFEST-NEXT: arch 90
// MANIFEST: kernel flash_fwd_sm80_f16_d64_m128n64w4s2_causalbr
// MANIFEST-NEXT: kind forward
// MANIFEST-NEXT: dtype f16
// MANIFEST-NEXT: head_dim 64
// MANIFEST: causal bottom_right
// MANIFEST: params memref:q memref:k memref:v memref:o memref:lse i32:batch
// MMA: {{[1-9][0-9]+}}

func.func @f16_d32_full(%q: tensor<1x1x128x32xf16>, %k: tensor<1x1x128x32xf16>, %v: tensor<1x1x128x32xf16>) -> (tensor<1x1x128x32xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v  : tensor<1x1x128x32xf16>, tensor<1x1x128x32xf16>, tensor<1x1x128x32xf16> -> tensor<1x1x128x32xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x32xf16>, tensor<1x1x128xf32>
}
func.func @f16_d64_full(%q: tensor<1x1x128x64xf16>, %k: tensor<1x1x128x64xf16>, %v: tensor<1x1x128x64xf16>) -> (tensor<1x1x128x64xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v  : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
}
func.func @f16_d64_top_left(%q: tensor<1x1x128x64xf16>, %k: tensor<1x1x128x64xf16>, %v: tensor<1x1x128x64xf16>) -> (tensor<1x1x128x64xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
}
func.func @f16_d256_full(%q: tensor<1x1x128x256xf16>, %k: tensor<1x1x128x256xf16>, %v: tensor<1x1x128x256xf16>) -> (tensor<1x1x128x256xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v  : tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16> -> tensor<1x1x128x256xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x256xf16>, tensor<1x1x128xf32>
}
func.func @f16_d256_top_left(%q: tensor<1x1x128x256xf16>, %k: tensor<1x1x128x256xf16>, %v: tensor<1x1x128x256xf16>) -> (tensor<1x1x128x256xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16> -> tensor<1x1x128x256xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x256xf16>, tensor<1x1x128xf32>
}
func.func @f16_d64_bottom_right(%q: tensor<1x1x128x64xf16>, %k: tensor<1x1x128x64xf16>, %v: tensor<1x1x128x64xf16>) -> (tensor<1x1x128x64xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<bottom_right>} : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
}
func.func @f16_d64_window(%q: tensor<1x1x128x64xf16>, %k: tensor<1x1x128x64xf16>, %v: tensor<1x1x128x64xf16>) -> (tensor<1x1x128x64xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {window_left = 32 : i64, window_right = 0 : i64} : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
}
func.func @f16_d64_softcap(%q: tensor<1x1x128x64xf16>, %k: tensor<1x1x128x64xf16>, %v: tensor<1x1x128x64xf16>) -> (tensor<1x1x128x64xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {softcap = 30.0 : f32} : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
}
func.func @bf16_d32_full(%q: tensor<1x1x128x32xbf16>, %k: tensor<1x1x128x32xbf16>, %v: tensor<1x1x128x32xbf16>) -> (tensor<1x1x128x32xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v  : tensor<1x1x128x32xbf16>, tensor<1x1x128x32xbf16>, tensor<1x1x128x32xbf16> -> tensor<1x1x128x32xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x32xbf16>, tensor<1x1x128xf32>
}
func.func @bf16_d64_full(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v  : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16> -> tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
}
func.func @bf16_d64_top_left(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16> -> tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
}
func.func @bf16_d256_full(%q: tensor<1x1x128x256xbf16>, %k: tensor<1x1x128x256xbf16>, %v: tensor<1x1x128x256xbf16>) -> (tensor<1x1x128x256xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v  : tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16> -> tensor<1x1x128x256xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x256xbf16>, tensor<1x1x128xf32>
}
func.func @bf16_d256_top_left(%q: tensor<1x1x128x256xbf16>, %k: tensor<1x1x128x256xbf16>, %v: tensor<1x1x128x256xbf16>) -> (tensor<1x1x128x256xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16> -> tensor<1x1x128x256xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x256xbf16>, tensor<1x1x128xf32>
}
func.func @bf16_d64_bottom_right(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<bottom_right>} : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16> -> tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
}
func.func @bf16_d64_window(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {window_left = 32 : i64, window_right = 0 : i64} : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16> -> tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
}
func.func @bf16_d64_softcap(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>) -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {softcap = 30.0 : f32} : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16> -> tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
}
func.func @f16_d96_full(%q: tensor<1x1x128x96xf16>, %k: tensor<1x1x128x96xf16>, %v: tensor<1x1x128x96xf16>) -> (tensor<1x1x128x96xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v : tensor<1x1x128x96xf16>, tensor<1x1x128x96xf16>, tensor<1x1x128x96xf16> -> tensor<1x1x128x96xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x96xf16>, tensor<1x1x128xf32>
}
func.func @f16_d96_top_left(%q: tensor<1x1x128x96xf16>, %k: tensor<1x1x128x96xf16>, %v: tensor<1x1x128x96xf16>) -> (tensor<1x1x128x96xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x1x128x96xf16>, tensor<1x1x128x96xf16>, tensor<1x1x128x96xf16> -> tensor<1x1x128x96xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x96xf16>, tensor<1x1x128xf32>
}
func.func @bf16_d128_full(%q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16> -> tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
}
func.func @bf16_d128_top_left(%q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16> -> tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
}
func.func @bf16_d128_window(%q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {window_left = 32 : i64, window_right = 0 : i64} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16> -> tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x128xbf16>, tensor<1x1x128xf32>
}
func.func @f16_d32_top_left(%q: tensor<1x1x128x32xf16>, %k: tensor<1x1x128x32xf16>, %v: tensor<1x1x128x32xf16>) -> (tensor<1x1x128x32xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x1x128x32xf16>, tensor<1x1x128x32xf16>, tensor<1x1x128x32xf16> -> tensor<1x1x128x32xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x32xf16>, tensor<1x1x128xf32>
}
func.func @f16_d32_dropout(%q: tensor<1x1x128x32xf16>, %k: tensor<1x1x128x32xf16>, %v: tensor<1x1x128x32xf16>, %seed: i64) -> (tensor<1x1x128x32xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v seed(%seed) {dropout_p = 0.1 : f32} : tensor<1x1x128x32xf16>, tensor<1x1x128x32xf16>, tensor<1x1x128x32xf16> -> tensor<1x1x128x32xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x32xf16>, tensor<1x1x128xf32>
}
func.func @f16_d64_dropout(%q: tensor<1x1x128x64xf16>, %k: tensor<1x1x128x64xf16>, %v: tensor<1x1x128x64xf16>, %seed: i64) -> (tensor<1x1x128x64xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v seed(%seed) {dropout_p = 0.1 : f32} : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
}
func.func @f16_d96_dropout(%q: tensor<1x1x128x96xf16>, %k: tensor<1x1x128x96xf16>, %v: tensor<1x1x128x96xf16>, %seed: i64) -> (tensor<1x1x128x96xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v seed(%seed) {dropout_p = 0.1 : f32} : tensor<1x1x128x96xf16>, tensor<1x1x128x96xf16>, tensor<1x1x128x96xf16> -> tensor<1x1x128x96xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x96xf16>, tensor<1x1x128xf32>
}
func.func @f16_d128_dropout(%q: tensor<1x1x128x128xf16>, %k: tensor<1x1x128x128xf16>, %v: tensor<1x1x128x128xf16>, %seed: i64) -> (tensor<1x1x128x128xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v seed(%seed) {dropout_p = 0.1 : f32} : tensor<1x1x128x128xf16>, tensor<1x1x128x128xf16>, tensor<1x1x128x128xf16> -> tensor<1x1x128x128xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x128xf16>, tensor<1x1x128xf32>
}
func.func @f16_d256_dropout(%q: tensor<1x1x128x256xf16>, %k: tensor<1x1x128x256xf16>, %v: tensor<1x1x128x256xf16>, %seed: i64) -> (tensor<1x1x128x256xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v seed(%seed) {dropout_p = 0.1 : f32} : tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16> -> tensor<1x1x128x256xf16>, tensor<1x1x128xf32>
  return %o, %lse : tensor<1x1x128x256xf16>, tensor<1x1x128xf32>
}
