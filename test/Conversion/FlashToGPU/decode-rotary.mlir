// kv_append's rotary stage (docs/KVCACHE.md "Rotary"): with rotary(cos, sin)
// the host code allocates q_rot, launches kv_append over the new rows and
// then the query rows (B * Hkv * Snew + B * Hq * Sq warps) and hands the
// decode q_rot as its q; the kernel reads the tables at the row's
// position, rotates in f32 and rounds back. GPT-NeoX halves rotate a piece
// with its partner rotary_dim / 2 on (two 16-byte loads of the row, one of
// each table); GPT-J pairs split a piece into its even and odd elements.
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s --check-prefix=HOST
// RUN: flashfuse-opt %s --flash-select-config=target=a100 --flash-lower-to-gpu=chip=sm_80 | FileCheck %s --check-prefix=HOST

// CHECK-LABEL: gpu.func @flash_kv_append_bf16_d128{{.*}}_rotary64_qsamepos(
// CHECK-SAME: %[[K:arg[0-9]+]]: memref<?xbf16>
// CHECK: memref.load
// The new key's piece and its partner 32 elements on, and the tables.
// CHECK: scf.if
// CHECK: %[[X0:.*]] = vector.load %{{.*}} : memref<?xbf16>, vector<8xbf16>
// CHECK: %[[X1:.*]] = vector.load %{{.*}} : memref<?xbf16>, vector<8xbf16>
// CHECK: vector.load %{{.*}} : memref<?xbf16>, vector<8xbf16>
// CHECK: arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK: arith.mulf {{.*}} : vector<8xf32>
// CHECK: arith.subf {{.*}} : vector<8xf32>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @flash_kv_append_f16_d64{{.*}}_rotary32i(
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6] : vector<8xf16>, vector<8xf16>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [1, 3, 5, 7] : vector<8xf16>, vector<8xf16>
// CHECK: vector.load %{{.*}} : memref<?xf16>, vector<4xf16>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 4, 1, 5, 2, 6, 3, 7] : vector<4xf16>, vector<4xf16>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf16>
// CHECK: gpu.return

// HOST-LABEL: func.func @halves
// HOST: memref.alloc() : memref<2x32x1x128xbf16>
// HOST: %[[QROT:.*]] = memref.alloc() : memref<2x32x1x128xbf16>
// HOST-NEXT: %[[QC:.*]] = memref.collapse_shape %[[QROT]]
// HOST-NEXT: %[[QF:.*]] = memref.cast %[[QC]]
// HOST: gpu.launch_func @{{.*}}::@flash_kv_append_bf16_d128_{{.*}}_rotary64_qsamepos
// HOST-SAME: %[[QF]] : memref<?xbf16>
// HOST: gpu.launch_func @{{.*}}::@flash_decode_bf16_d128_{{[^ ]*}} blocks
// HOST-SAME: args(%[[QF]] : memref<?xbf16>
// HOST-LABEL: func.func @interleaved

func.func @halves(%q: tensor<2x32x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>,
                  %kn: tensor<2x8x1x128xbf16>, %c: tensor<256x32xbf16>) -> tensor<2x32x1x128xbf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %k, %len
      new_kv(%kn, %kn : tensor<2x8x1x128xbf16>, tensor<2x8x1x128xbf16>)
      rotary(%c, %c : tensor<256x32xbf16>, tensor<256x32xbf16>)
      : tensor<2x32x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32>
      -> tensor<2x32x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}

func.func @interleaved(%q: tensor<2x8x2x64xf16>, %k: tensor<2x2x128x64xf16>, %len: tensor<2xi32>,
                       %kn: tensor<2x2x2x64xf16>, %c: tensor<128x16xf16>) -> tensor<2x8x2x64xf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %k, %len
      new_kv(%kn, %kn : tensor<2x2x2x64xf16>, tensor<2x2x2x64xf16>)
      rotary(%c, %c : tensor<128x16xf16>, tensor<128x16xf16>)
      {causal = #flash.causal<bottom_right>, rotary_interleaved}
      : tensor<2x8x2x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x2x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return %o : tensor<2x8x2x64xf16>
}
