// REQUIRES: ptxas
// RUN: rm -rf %t && flashfuse-compile %s --target=h200 -o %t 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.txt
// RUN: FileCheck %s --check-prefix=SM90 < %t/kernels.ptx
// RUN: flashfuse-compile %s --target=a100 -o %t/a100 > /dev/null
// RUN: FileCheck %s --check-prefix=SM80 < %t/a100/kernels.ptx

// dQ accumulates through reductions of f32 pairs on sm_90 (PTX 8.1), one
// element at a time (atomics) on sm_80.
// SM90: .version 8.1
// SM90: red.global.add.v2.f32
// SM90-NOT: atom.global.add.f32
// SM80: .version 8.0
// SM80-NOT: red.global.add.v2.f32
// SM80: atom.global.add.f32

// The backward kernels assemble for sm_90 without spills (flashfuse-compile
// fails on a spill), and the manifest lists them with their kinds.
// CHECK-DAG: ptxas sm_90a flash_bwd_pre_sm80_bf16_d64_m64n64w4s2: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_sm80_bf16_d64_m64n64w4s2: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// CHECK-DAG: ptxas sm_90a flash_bwd_post_sm80_bf16_d64_m64n64w4s2: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill
// MANIFEST: kernel flash_bwd_pre_sm80_bf16_d64_m64n64w4s2
// MANIFEST-NEXT: kind backward_preprocess
// MANIFEST: kernel flash_bwd_sm80_bf16_d64_m64n64w4s2
// MANIFEST-NEXT: kind backward
// K, V (2 x 64 x 72 x 2 bytes), the Q/dO ring (2 x 2 x 64 x 72 x 2), the
// dS tile (64 x 72 x 2) and the ring's LSE and Dsum (2 x 2 x 64 x 4).
// MANIFEST: smem 65536
// MANIFEST: params memref:q memref:k memref:v memref:do memref:lse memref:delta memref:dq_accum memref:dk memref:dv
// MANIFEST: kernel flash_bwd_post_sm80_bf16_d64_m64n64w4s2
// MANIFEST-NEXT: kind backward_postprocess
func.func @grad(%do: tensor<2x8x256x64xbf16>, %q: tensor<2x8x256x64xbf16>, %k: tensor<2x8x256x64xbf16>, %v: tensor<2x8x256x64xbf16>, %o: tensor<2x8x256x64xbf16>, %lse: tensor<2x8x256xf32>) -> (tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16>, tensor<2x8x256xf32> -> tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16>
  return %dq, %dk, %dv : tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16>
}
