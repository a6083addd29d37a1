// flash.attention_kvcache with new_kv: a kv_append launch writes the new
// rows into the caches first, then the decode (and, with several splits,
// the combine) launches attend with seq_new = Snew, all on the host's one
// stream in this order; the updated caches are the cache operands' own
// buffers, written in place (destination style; docs/KVCACHE.md,
// docs/KERNEL_ABI.md "Decode"). Every decode kernel comes with its
// kv_append and decode_check kernels, launched or not.
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s

// B = 4 sequences, Hkv = 8, Snew = 1: 32 new rows, 4 a block (a warp
// each): 8 append blocks; a 64k cache, so 4 splits and a combine.
// CHECK-LABEL: func.func @contiguous(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<4x32x1x128xbf16>, %[[K:[^:]*]]: tensor<4x8x65536x128xbf16>, %[[V:[^:]*]]: tensor<4x8x65536x128xbf16>, %[[LEN:[^:]*]]: tensor<4xi32>, %[[KN:[^:]*]]: tensor<4x8x1x128xbf16>, %[[VN:[^:]*]]: tensor<4x8x1x128xbf16>)
// The caches are written through their own (writable) buffers.
// CHECK: %[[KB:.*]] = bufferization.to_buffer %[[K]] : tensor<4x8x65536x128xbf16> to memref<4x8x65536x128xbf16>
// CHECK-NOT: read_only
// CHECK: %[[VB:.*]] = bufferization.to_buffer %[[V]] : tensor<4x8x65536x128xbf16> to memref<4x8x65536x128xbf16>
// CHECK: bufferization.to_buffer %[[KN]] read_only
// CHECK: bufferization.to_buffer %[[VN]] read_only
// The append writes the caches' buffers with seq_new new rows of each
// sequence; the decode then reads those buffers and counts the same rows.
// CHECK: gpu.launch_func @flash_kernels::@flash_kv_append_bf16_d128_m4n0w4s0 blocks in
// CHECK-SAME: args(%[[KC:[^ ]+]] : memref<?xbf16>, %[[VC:[^ ]+]] : memref<?xbf16>, %{{[^ ]+}} : memref<?xbf16>, %{{[^ ]+}} : memref<?xbf16>, %[[LENS:[^ ]+]] : memref<?xi32>, %{{[^ ]+}} : i32, %{{[^ ]+}} : i32, %{{[^ ]+}} : i32, %[[SNEW:[^ ]+]] : i32,
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.launch_func @flash_kernels::@flash_decode_bf16_d128_m8n128w4s2_causalbr blocks in
// CHECK-SAME: args(%{{[^ ]+}} : memref<?xbf16>, %[[KC]] : memref<?xbf16>, %[[VC]] : memref<?xbf16>, %{{[^ ]+}} : memref<?xbf16>, %{{[^ ]+}} : memref<?xf32>, %{{[^ ]+}} : memref<?xf32>, %{{[^ ]+}} : memref<?xf32>, %{{[^ ]+}} : memref<?xi32>, %[[LENS]] : memref<?xi32>, %{{[^ ]+}} : i32, %{{[^ ]+}} : i32, %{{[^ ]+}} : i32, %{{[^ ]+}} : i32, %{{[^ ]+}} : i32, %[[SNEW]] : i32,
// The host IR launches the combine, so the decode leaves the splits to it
// (merge_splits 0, after num_splits).
// CHECK-SAME: %{{[^ ]+}} : i64, %{{[^ ]+}} : i32, %c0_i32{{[_0-9]*}} : i32, %{{[^ ]+}} : f32,
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.launch_func @flash_kernels::@flash_decode_combine_bf16_d128_m4n0w4s0
// CHECK-NOT: gpu.launch_func
// CHECK: %[[KOUT:.*]] = bufferization.to_tensor %[[KB]]
// CHECK: %[[VOUT:.*]] = bufferization.to_tensor %[[VB]]
// CHECK: return %{{.*}}, %[[KOUT]], %[[VOUT]]
func.func @contiguous(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x65536x128xbf16>,
                      %v: tensor<4x8x65536x128xbf16>, %len: tensor<4xi32>,
                      %kn: tensor<4x8x1x128xbf16>, %vn: tensor<4x8x1x128xbf16>)
    -> (tensor<4x32x1x128xbf16>, tensor<4x8x65536x128xbf16>, tensor<4x8x65536x128xbf16>) {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %len
      new_kv(%kn, %vn : tensor<4x8x1x128xbf16>, tensor<4x8x1x128xbf16>)
      {causal = #flash.causal<bottom_right>}
      : tensor<4x32x1x128xbf16>, tensor<4x8x65536x128xbf16>, tensor<4x8x65536x128xbf16>, tensor<4xi32>
      -> tensor<4x32x1x128xbf16>, tensor<4x8x65536x128xbf16>, tensor<4x8x65536x128xbf16>
  return %o, %kc, %vc : tensor<4x32x1x128xbf16>, tensor<4x8x65536x128xbf16>, tensor<4x8x65536x128xbf16>
}

// Paged, Snew = 4 in BSHD (q_perm): the new rows' strides are read through
// the perm like q's, and the append takes the page table.
// CHECK-LABEL: func.func @paged_bshd(
// CHECK: gpu.launch_func @flash_kernels::@flash_kv_append_f16_d64_m4n0w4s0_page16
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.launch_func @flash_kernels::@flash_decode_f16_d64_{{.*}}_page16
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @paged_bshd(%q: tensor<64x4x8x64xf16>, %k: tensor<1024x16x8x64xf16>,
                      %len: tensor<64xi32>, %bt: tensor<64x16xi32>,
                      %kn: tensor<64x4x8x64xf16>) -> tensor<64x4x8x64xf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %k, %len block_table(%bt : tensor<64x16xi32>)
      new_kv(%kn, %kn : tensor<64x4x8x64xf16>, tensor<64x4x8x64xf16>)
      {q_perm = array<i64: 0, 2, 1, 3>}
      : tensor<64x4x8x64xf16>, tensor<1024x16x8x64xf16>, tensor<1024x16x8x64xf16>, tensor<64xi32>
      -> tensor<64x4x8x64xf16>, tensor<1024x16x8x64xf16>, tensor<1024x16x8x64xf16>
  return %o : tensor<64x4x8x64xf16>
}

// Without new_kv nothing is appended, but the kernels are there.
// CHECK-LABEL: func.func @no_new_rows(
// CHECK-NOT: flash_kv_append
// CHECK: gpu.launch_func @flash_kernels::@flash_decode_f16_d64_
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @no_new_rows(%q: tensor<2x8x1x64xf16>, %k: tensor<2x8x256x64xf16>,
                       %len: tensor<2xi32>) -> tensor<2x8x1x64xf16> {
  %o = flash.attention_kvcache %q, %k, %k, %len
      : tensor<2x8x1x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return %o : tensor<2x8x1x64xf16>
}

// The kernels, with the kinds and params of the manifest. kv_append and
// decode_check kernels come after every other kernel of the module, so
// that the PTX of the others does not depend on them (LowerToGPU.cpp).
// CHECK: gpu.module @flash_kernels
// CHECK: gpu.func @flash_decode_bf16_d128_m8n128w4s2_causalbr(
// CHECK: gpu.func @flash_decode_combine_bf16_d128_m4n0w4s0(
// CHECK: gpu.func @flash_decode_f16_d64_m16n128w4s3_page16(
// CHECK: gpu.func @flash_decode_f16_d64_m16n128w4s3(
// CHECK-NOT: gpu.func @flash_decode_{{[a-z0-9_]*}}(
// CHECK: gpu.func @flash_kv_append_bf16_d128_m4n0w4s0(
// CHECK-SAME: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xi32>
// CHECK-SAME: kind = "kv_append"
// CHECK-SAME: page_size = 0
// CHECK-SAME: params = ["memref:k", "memref:v", "memref:k_new", "memref:v_new", "memref:cache_seqlens", "i32:batch", "i32:heads_kv", "i32:seq_k", "i32:seq_new", "i64:k_stride_b", "i64:k_stride_h", "i64:k_stride_s", "i64:v_stride_b", "i64:v_stride_h", "i64:v_stride_s", "i64:k_new_stride_b", "i64:k_new_stride_h", "i64:k_new_stride_s", "i64:v_new_stride_b", "i64:v_new_stride_h", "i64:v_new_stride_s"]
// CHECK: gpu.func @flash_decode_check_bf16_d128_m256n0w8s0(
// CHECK-SAME: kind = "decode_check"
// CHECK-SAME: params = ["memref:cache_seqlens", "memref:check_status", "i32:batch", "i32:seq_k", "i32:seq_new"]
// CHECK-SAME: smem = 8
// CHECK: gpu.func @flash_kv_append_f16_d64_m4n0w4s0_page16(
// CHECK-SAME: "memref:block_table"
// CHECK-SAME: "i32:num_pages", "i64:block_table_stride"]
// CHECK: gpu.func @flash_decode_check_f16_d64_m256n0w8s0_page16(
// CHECK-SAME: params = ["memref:cache_seqlens", "memref:block_table", "memref:check_status", "i32:batch", "i32:seq_k", "i32:seq_new", "i32:num_pages", "i64:block_table_stride"]
// CHECK: gpu.func @flash_kv_append_f16_d64_m4n0w4s0(
// CHECK: gpu.func @flash_decode_check_f16_d64_m256n0w8s0(
