// RUN: flashfuse-opt %s --flash-select-config=target=a100 --flash-lower-to-gpu=chip=sm_80 --split-input-file | FileCheck %s
// The D = 40 backward's 12 dQ atomic pairs (rows g and g + 8 x 6 column
// tiles) each under a test of its column against D = 40: the copies'
// column tests feed an andi instead.
// RUN: flashfuse-opt %s --flash-select-config=target=a100 --flash-lower-to-gpu=chip=sm_80 --split-input-file | grep -A1 "arith.cmpi ult, %.*, %c40" | grep -c "scf.if" | FileCheck %s --check-prefix=GUARDS
// GUARDS: {{^}}12{{$}}

// Head dims that are not whole mma steps or swizzle rows run on wider tiles
// whose extra columns are zero-filled on load and never stored
// (docs/config-selection.md). D = 40: padded tiles of 48 columns (three
// k16 steps) plus the 8-element row pad, the copies' chunks at columns
// 40-47 zero-filled (src-size 0), and O stored for its 40 columns only.

// CHECK-LABEL: func.func @fwd_d40
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_f16_d40_m128n64w4s2
// CHECK: gpu.func @flash_fwd_sm80_f16_d40_m128n64w4s2(
// CHECK-SAME: head_dim = 40 : i64, head_dim_v = 40 : i64
// CHECK-SAME: smem = 43008
// CHECK: memref.view {{.*}} to memref<128x56xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x64x56xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x64x56xf16, #gpu.address_space<workgroup>>
// A chunk is read only where its column is below D: src-size 8 or 0.
// CHECK: %[[D:.*]] = arith.constant 40 : index
// CHECK: %[[COL_OK:.*]] = arith.cmpi ult, %{{.*}}, %[[D]] : index
// CHECK: %[[VALID:.*]] = arith.andi %{{.*}}, %[[COL_OK]] : i1
// CHECK: %[[SIZE:.*]] = arith.select %[[VALID]], %c8{{.*}}, %c0{{.*}} : index
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %[[SIZE]] {bypassL1} : memref<?xf16> to memref<128x56xf16
// Per 64-key block and m-tile: S over 3 k-steps x 8 key tiles, O over
// 4 key steps x 6 column tiles (the sixth, columns 40-47, never stored):
// 2 m-tiles x (24 + 24) mma.
// CHECK: scf.for
// CHECK-COUNT-96: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
func.func @fwd_d40(%q: tensor<1x2x200x40xf16>) -> tensor<1x2x200x40xf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x200x40xf16>, tensor<1x2x200x40xf16>, tensor<1x2x200x40xf16> -> tensor<1x2x200x40xf16>
  return %o : tensor<1x2x200x40xf16>
}

// -----

// The D = 40 backward (64 x 64: its row's 32 x 128 would split dQ into
// 24-column groups): K, V, Q, dO on 56-element rows, and the dQ atomics of
// the sixth column tile (columns 40-47, computed from zeros) skipped (the
// GUARDS run above).
// CHECK-LABEL: func.func @bwd_d40
// CHECK: gpu.func @flash_bwd_sm80_f16_d40_m64n64w4s2(
// CHECK-SAME: head_dim = 40 : i64, head_dim_v = 40 : i64
// CHECK: memref.view {{.*}} to memref<64x56xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<64x56xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x64x56xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x64x56xf16, #gpu.address_space<workgroup>>
// CHECK: memref.atomic_rmw addf
// CHECK: gpu.return
func.func @bwd_d40(%do: tensor<1x2x200x40xf16>, %q: tensor<1x2x200x40xf16>, %lse: tensor<1x2x200xf32>) -> (tensor<1x2x200x40xf16>, tensor<1x2x200x40xf16>, tensor<1x2x200x40xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %q, %do, %lse : tensor<1x2x200x40xf16>, tensor<1x2x200x40xf16>, tensor<1x2x200x40xf16>, tensor<1x2x200x40xf16>, tensor<1x2x200x40xf16>, tensor<1x2x200xf32> -> tensor<1x2x200x40xf16>, tensor<1x2x200x40xf16>, tensor<1x2x200x40xf16>
  return %dq, %dk, %dv : tensor<1x2x200x40xf16>, tensor<1x2x200x40xf16>, tensor<1x2x200x40xf16>
}

// -----

// D = 192, Dv = 128 (DeepSeek MLA prefill): the name and manifest carry
// both; swizzled tiles of 192 columns for Q and K and 128 for V, in one
// view: 64 x 192 + 2 stages x 32 x (192 + 128) elements.
// CHECK-LABEL: func.func @fwd_d192_dv128
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_bf16_d192_dv128_m64n32w4s2
// CHECK: gpu.func @flash_fwd_sm80_bf16_d192_dv128_m64n32w4s2(
// CHECK-SAME: head_dim = 192 : i64, head_dim_v = 128 : i64
// CHECK: memref.view {{.*}} to memref<32768xbf16, #gpu.address_space<workgroup>>
func.func @fwd_d192_dv128(%q: tensor<1x2x200x192xbf16>, %v: tensor<1x2x200x128xbf16>) -> tensor<1x2x200x128xbf16> {
  %o = flash.attention %q, %q, %v : tensor<1x2x200x192xbf16>, tensor<1x2x200x192xbf16>, tensor<1x2x200x128xbf16> -> tensor<1x2x200x128xbf16>
  return %o : tensor<1x2x200x128xbf16>
}
