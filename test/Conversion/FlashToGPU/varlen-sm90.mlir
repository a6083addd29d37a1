// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s

// The sm90 recipe's forward under the same varlen tile scheduler as the
// sm80 one (varlen.mlir): flash-select-config gives the packed op the dense
// op's config, and the kernel reads its sequence from the offsets, returns
// early past its end, and otherwise runs the wgmma mainloop unchanged.
// CHECK-LABEL: func.func @varlen
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm90_bf16_d128_m128n128w8s3_causal_varlen
// CHECK: gpu.func @flash_fwd_sm90_bf16_d128_m128n128w8s3_causal_varlen(
// CHECK-SAME: varlen = 1
// CHECK: gpu.block_id  z
// CHECK: memref.load %arg5
// CHECK: memref.load %arg6
// CHECK: memref.load %arg5
// CHECK: memref.load %arg6
// CHECK: cf.cond_br %{{.*}}, ^[[EXIT:bb[0-9]+]], ^bb
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16
// CHECK: scf.for
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16
// CHECK: gpu.return
// CHECK: ^[[EXIT]]:
// CHECK-NEXT: gpu.return
func.func @varlen(%q: tensor<1x16x1000x128xbf16>, %k: tensor<1x4x1000x128xbf16>,
                  %cu: tensor<9xi32>) -> tensor<1x16x1000x128xbf16> {
  %o = flash.attention %q, %k, %k varlen(%cu, %cu : tensor<9xi32>, tensor<9xi32>)
      {causal = #flash.causal<top_left>}
      : tensor<1x16x1000x128xbf16>, tensor<1x4x1000x128xbf16>, tensor<1x4x1000x128xbf16>
      -> tensor<1x16x1000x128xbf16>
  return %o : tensor<1x16x1000x128xbf16>
}
