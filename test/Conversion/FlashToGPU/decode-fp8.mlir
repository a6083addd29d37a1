// The decode kernel of an FP8 (f8E4M3FN) KV cache (docs/KVCACHE.md "FP8
// cache", Sm80Decode.cpp), on sm_89+. The caches reach the kernel as e4m3
// buffers, copied by cp.async as a 16-bit view; the codes become the MMA's
// type with nvvm.convert.f8x2.to.f16x2 (and f16 -> f32 -> bf16 for a bf16
// query); the descales are [B, Hkv] buffers with strides (Hkv, 1), or []
// with strides 0. The kv_append of such a cache (KVAppend.cpp) takes the
// descales by the same names and quantises the new rows: f32 products with
// 1 / descale, converted pairwise by nvvm.convert.f32x2.to.f8x2 (satfinite,
// round to nearest even) and stored as 8 e4m3 codes a lane.
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s
// RUN: flashfuse-opt %s --flash-select-config=target=h100 | FileCheck %s --check-prefix=CONFIG
// On sm_80 the lowering and the config selection refuse the op by name.
// RUN: not flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_80 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not flashfuse-opt %s --flash-select-config=target=a100 2>&1 | FileCheck %s --check-prefix=SM80
// On sm_89 the module asks for PTX 8.1, from which LLVM selects the e4m3
// conversions there (with the default 8.0 instruction selection failed).
// RUN: flashfuse-opt %s --flash-select-config=target=l4 --flash-lower-to-gpu=chip=sm_89 | FileCheck %s --check-prefix=SM89
// SM89: gpu.module @flash_kernels [#nvvm.target<O = 3, chip = "sm_89", features = "+ptx81">]
// The experimental option is gone.
// RUN: not flashfuse-opt %s --flash-lower-to-gpu="chip=sm_90a experimental-fp8-kvcache=true" 2>&1 | FileCheck %s --check-prefix=NOOPTION

// SM80: no GPU kernel for an f8E4M3FN KV cache on this target: the decode kernel converts e4m3 with cvt.rn.f16x2.e4m3x2 and kv_append with cvt.rn.satfinite.e4m3x2.f32, which need sm_89 or later
// NOOPTION: no such option experimental-fp8-kvcache

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

// New rows: kv_append first, with the descales after its 16-bit kernel's
// parameters ([B, Hkv] k_descale: strides (Hkv, 1); [] v_descale: 0, 0),
// then the decode over the updated caches.
// CHECK-LABEL: func.func @append
// CHECK: gpu.launch_func @flash_kernels::@flash_kv_append_f16_kvf8_d64_m4n0w4s0_page16
// CHECK-SAME: args(%{{.*}} : memref<?xf8E4M3FN>, %{{.*}} : memref<?xf8E4M3FN>, %{{.*}} : memref<?xf16>, %{{.*}} : memref<?xf16>,
// CHECK-SAME: %{{.*}} : memref<?xf32>, %{{.*}} : memref<?xf32>, %{{.*}} : i64, %c1_i64{{[_0-9]*}} : i64, %c0_i64{{[_0-9]*}} : i64, %c0_i64{{[_0-9]*}} : i64)
// CHECK: gpu.launch_func @flash_kernels::@flash_decode_f16_kvf8_d64_m16n128w4s3_page16
func.func @append(%q: tensor<2x8x1x64xf16>, %k: tensor<64x16x2x64xf8E4M3FN>, %v: tensor<64x16x2x64xf8E4M3FN>,
                  %len: tensor<2xi32>, %bt: tensor<2x32xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x1x64xf16>,
                  %kd: tensor<2x2xf32>, %vd: tensor<f32>)
    -> (tensor<2x8x1x64xf16>, tensor<64x16x2x64xf8E4M3FN>, tensor<64x16x2x64xf8E4M3FN>) {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %len block_table(%bt : tensor<2x32xi32>) new_kv(%kn, %vn : tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>) descale(%kd, %vd : tensor<2x2xf32>, tensor<f32>)
      : tensor<2x8x1x64xf16>, tensor<64x16x2x64xf8E4M3FN>, tensor<64x16x2x64xf8E4M3FN>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<64x16x2x64xf8E4M3FN>, tensor<64x16x2x64xf8E4M3FN>
  return %o, %kc, %vc : tensor<2x8x1x64xf16>, tensor<64x16x2x64xf8E4M3FN>, tensor<64x16x2x64xf8E4M3FN>
}

// CHECK: gpu.module @flash_kernels
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
// Every decode kernel comes with its append, the FP8 ones last in the
// module (after the decode_check kernels, whose PTX stays as it was).
// CHECK: gpu.func @flash_kv_append_bf16_kvf8_d128_m4n0w4s0(%{{[^:]*}}: memref<?xf8E4M3FN>, %{{[^:]*}}: memref<?xf8E4M3FN>, %{{[^:]*}}: memref<?xbf16>, %{{[^:]*}}: memref<?xbf16>
// CHECK: gpu.func @flash_kv_append_f16_kvf8_d64_m4n0w4s0_page16(
// CHECK-SAME: kind = "kv_append", kv_dtype = "e4m3"
// CHECK-SAME: "i32:num_pages", "i64:block_table_stride", "memref:k_descale", "memref:v_descale", "i64:k_descale_stride_b", "i64:k_descale_stride_h", "i64:v_descale_stride_b", "i64:v_descale_stride_h"]
// One IEEE division per row and cache: the reciprocals of the descales.
// CHECK: %[[KD:.*]] = memref.load %{{.*}} : memref<?xf32>
// CHECK: %[[KINV:.*]] = arith.divf %{{.*}}, %[[KD]] : f32
// CHECK: %[[VD:.*]] = memref.load %{{.*}} : memref<?xf32>
// CHECK: arith.divf %{{.*}}, %[[VD]] : f32
// A lane's 8 new elements (16 bytes) times 1 / k_descale in f32, converted
// in pairs (element 2i in the low byte: the op's first operand is the high
// one) and stored as 8 codes.
// CHECK: %[[ROW:.*]] = vector.load %{{.*}} {alignment = 16 : i64} : memref<?xf16>, vector<8xf16>
// CHECK: %[[INV8:.*]] = vector.broadcast %[[KINV]] : f32 to vector<8xf32>
// CHECK: %[[WIDE:.*]] = arith.extf %[[ROW]] : vector<8xf16> to vector<8xf32>
// CHECK: %[[X:.*]] = arith.mulf %[[WIDE]], %[[INV8]] : vector<8xf32>
// CHECK: %[[X1:.*]] = vector.extract %[[X]][1]
// CHECK: %[[X0:.*]] = vector.extract %[[X]][0]
// CHECK: %[[P0:.*]] = nvvm.convert.f32x2.to.f8x2 %[[X1]], %[[X0]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK-COUNT-3: nvvm.convert.f32x2.to.f8x2
// CHECK: %[[PAIRS:.*]] = vector.from_elements %[[P0]], %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi16>
// CHECK: %[[CODES:.*]] = vector.bitcast %[[PAIRS]] : vector<4xi16> to vector<8xf8E4M3FN>
// CHECK: vector.store %[[CODES]], %{{.*}} {alignment = 8 : i64} : memref<?xf8E4M3FN>, vector<8xf8E4M3FN>
