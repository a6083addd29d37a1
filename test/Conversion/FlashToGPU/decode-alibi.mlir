// The decode kernel's ALiBi stage (alibi_slopes [B, Hq]): each of the
// thread's packed rows reads its slope once, before the key loop, at
// b * Hq + (kv head * G + packed row % G); in the loop every score takes
// -slope * |row + L_b - Sq - col| (the distance exact in i32, converted
// once) and nothing reads the slopes again. Both mainloops: the swapped
// block_m 8 one (sm_90, G * Sq = 4 rows: rows 2t and 2t + 1) and the
// mma one of 16-row tiles (sm_80: rows g and g + 8).
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s --check-prefix=ONCE
// RUN: flashfuse-opt %s --flash-select-config=target=a100 --flash-lower-to-gpu=chip=sm_80 | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: flashfuse-opt %s --flash-select-config=target=a100 --flash-lower-to-gpu=chip=sm_80 | FileCheck %s --check-prefix=ONCE

// SM90-LABEL: gpu.func @flash_decode_bf16_d128_m8n128w4s2_causalbr_alibib(
// SM80-LABEL: gpu.func @flash_decode_bf16_d128_m16n128w4s2_causalbr_alibib(
// CHECK-SAME: %[[SL:arg[0-9]+]]: memref<?xf32>, %arg{{[0-9]+}}: i32, %[[HQARG:arg[0-9]+]]: i32
// CHECK: %[[HQ:.*]] = arith.index_cast %[[HQARG]] : i32 to index
// CHECK: %[[BH0:.*]] = arith.muli %block_id_z, %[[HQ]] : index
// CHECK-NEXT: %[[AT0:.*]] = arith.addi %[[BH0]], %{{.*}} : index
// CHECK-NEXT: %[[S0:.*]] = memref.load %[[SL]][%[[AT0]]] : memref<?xf32>
// CHECK: %[[S1:.*]] = memref.load %[[SL]][%{{.*}}] : memref<?xf32>
// CHECK: scf.for
// CHECK: %[[NEG:.*]] = arith.subi %c0_i32{{.*}}, %[[D:.*]] : i32
// CHECK-NEXT: %[[DIST:.*]] = arith.maxsi %[[D]], %[[NEG]] : i32
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[DIST]] : i32 to f32
// CHECK-NEXT: %[[BIAS:.*]] = arith.mulf %[[S0]], %[[DF]] : f32
// CHECK-NEXT: arith.subf %{{.*}}, %[[BIAS]] : f32
// CHECK: arith.mulf %[[S1]], %{{.*}} : f32
// CHECK: gpu.func @flash_decode_combine

// ONCE-LABEL: gpu.func @flash_decode_bf16_d128_m{{.*}}_alibib(
// ONCE-SAME: %[[SL:arg[0-9]+]]: memref<?xf32>, %arg{{[0-9]+}}: i32
// ONCE: memref.load %[[SL]]
// ONCE: scf.for
// ONCE-NOT: memref.load %[[SL]]
// ONCE: gpu.func @flash_decode_combine

func.func @alibi(%q: tensor<2x32x1x128xbf16>, %k: tensor<2x8x256x128xbf16>, %len: tensor<2xi32>, %s: tensor<2x32xf32>) -> tensor<2x32x1x128xbf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len alibi(%s : tensor<2x32xf32>) {causal = #flash.causal<bottom_right>}
      : tensor<2x32x1x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2x8x256x128xbf16>, tensor<2xi32> -> tensor<2x32x1x128xbf16>
  return %o : tensor<2x32x1x128xbf16>
}
