// The decode kernel of an FP8 (f8E4M3FN) KV cache (docs/KVCACHE.md "FP8
// cache", Sm80Decode.cpp): built only with experimental-fp8-kvcache, on
// sm_89+. The caches reach the kernel as e4m3 buffers, copied by cp.async
// as a 16-bit view; the codes become the MMA's type with
// nvvm.convert.f8x2.to.f16x2 (and f16 -> f32 -> bf16 for a bf16 query);
// the descales are [B, Hkv] buffers with strides (Hkv, 1), or [] with
// strides 0. No kv_append kernel is built for such a cache (it would copy
// 16-bit rows).
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu="chip=sm_90a experimental-fp8-kvcache=true" | FileCheck %s
// RUN: flashfuse-opt %s --flash-select-config=target=h100 | FileCheck %s --check-prefix=CONFIG
// Without the option, or on sm_80, the lowering refuses the op by name.
// RUN: not flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a 2>&1 | FileCheck %s --check-prefix=EXPERIMENTAL
// RUN: not flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu="chip=sm_80 experimental-fp8-kvcache=true" 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not flashfuse-opt %s --flash-select-config=target=a100 2>&1 | FileCheck %s --check-prefix=SM80

// EXPERIMENTAL: error: 'flash.attention_kvcache' op the GPU decode kernel of an f8E4M3FN KV cache is experimental (checked on a GPU, but no kernel quantises new rows into the cache yet): pass experimental-fp8-kvcache=true to flash-lower-to-gpu (flashfuse-compile --experimental-fp8-kvcache) to build it
// SM80: no GPU kernel for an f8E4M3FN KV cache on this target: the decode kernel converts e4m3 with cvt.rn.f16x2.e4m3x2, which needs sm_89 or later

// D = 128: blocks of 256 keys, the bytes of the 16-bit kernel's 128.
// CONFIG-LABEL: func.func @per_head
// CONFIG: #flash.config<decode, block_m = 16, block_n = 256, warps = 4, stages = 2
// CONFIG-LABEL: func.func @paged_per_tensor
// CONFIG: #flash.config<decode, block_m = 16, block_n = 128, warps = 4, stages = 3

// CHECK-LABEL: func.func @per_head
// CHECK: gpu.launch_func @flash_kernels::@flash_decode_bf16_kvf8_d128_m16n256w4s2_causalbr
// CHECK-SAME: memref<?xf8E4M3FN>, %{{.*}} : memref<?xf8E4M3FN>
// CHECK-SAME: %{{.*}} : memref<?xf32>, %{{.*}} : memref<?xf32>, %[[KSB:.*]] : i64, %[[KSH:.*]] : i64, %{{.*}} : i64, %{{.*}} : i64)
func.func @per_head(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x4096x128xf8E4M3FN>,
                    %len: tensor<4xi32>, %kd: tensor<4x8xf32>, %vd: tensor<4x8xf32>)
    -> (tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>) {
  %o, %lse = flash.attention_kvcache %q, %k, %k, %len descale(%kd, %vd : tensor<4x8xf32>, tensor<4x8xf32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x128xbf16>, tensor<4x8x4096x128xf8E4M3FN>, tensor<4x8x4096x128xf8E4M3FN>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
  return %o, %lse : tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
}

// Per-tensor descales are read as [1] with strides 0.
// CHECK-LABEL: func.func @paged_per_tensor
// CHECK: gpu.launch_func @flash_kernels::@flash_decode_f16_kvf8_d64_m16n128w4s3_page16
// CHECK-SAME: memref<?xf32>, %{{.*}} : memref<?xf32>, %c0_i64{{[_0-9]*}} : i64, %c0_i64{{[_0-9]*}} : i64, %c0_i64{{[_0-9]*}} : i64, %c0_i64{{[_0-9]*}} : i64)
func.func @paged_per_tensor(%q: tensor<2x8x1x64xf16>, %k: tensor<64x16x2x64xf8E4M3FN>,
                            %len: tensor<2xi32>, %bt: tensor<2x32xi32>, %d: tensor<f32>)
    -> tensor<2x8x1x64xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<2x32xi32>) descale(%d, %d : tensor<f32>, tensor<f32>)
      : tensor<2x8x1x64xf16>, tensor<64x16x2x64xf8E4M3FN>, tensor<64x16x2x64xf8E4M3FN>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return %o : tensor<2x8x1x64xf16>
}

// CHECK: gpu.module @flash_kernels
// CHECK-NOT: flash_kv_append
// CHECK: gpu.func @flash_decode_bf16_kvf8_d128_m16n256w4s2_causalbr(
// CHECK-SAME: %{{[^:]*}}: memref<?xbf16>, %{{[^:]*}}: memref<?xf8E4M3FN>, %{{[^:]*}}: memref<?xf8E4M3FN>, %{{[^:]*}}: memref<?xbf16>
// CHECK-SAME: kv_dtype = "e4m3"
// K's codes pair up as the fragments' (4t, 4t+1 | 4t+2, 4t+3) columns, Q is
// read in that order (4 columns a row), and a bf16 query takes the f16
// values through f32.
// CHECK: vector.load %{{.*}} : memref<{{[0-9]+}}xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// CHECK: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK: arith.extf %{{.*}} : vector<2xf16> to vector<2xf32>
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: gpu.func @flash_decode_combine_bf16_d128_m4n0w4s0(
// CHECK: gpu.func @flash_decode_f16_kvf8_d64_m16n128w4s3_page16(
// CHECK-NOT: arith.extf %{{.*}} : vector<2xf16> to vector<2xf32>
// CHECK: gpu.func @flash_decode_check_
