// Llama decode step over an FP8 StaticCache (llama_decode.linalg.mlir as an
// f16 model whose four caches are f8E4M3FN with per kv head scales: each new
// row quantised as it is written, each cache dequantised before attention,
// K in one fused generic, V as an up-cast then a mul; derived by
// scripts/derive_fp8cache_fixture.py): each layer's attention becomes
// flash.attention_kvcache over the updated e4m3 [2, 2, 64, 16] cache with
// [B, Hkv] descales read from the scales, Q and O f16; no attention stays
// dense or over a 16-bit cache, no dequantise of a cache is left (the
// quantising writes stay) and no attention matmul. The result verifies.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/llama_decode_fp8cache.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul \
// RUN:     --implicit-check-not="f8E4M3FN to f16" --implicit-check-not="flash.attention_kvcache {{.*}}xf16>, tensor<2xi32>"

// CHECK-LABEL: func.func @llama_decode_fp8cache(
// CHECK-SAME: %arg2: tensor<2x2x64x16xf8E4M3FN>
// CHECK-COUNT-2: = flash.attention_kvcache {{.*}} descale({{.*}} : tensor<2x2xf32>, tensor<2x2xf32>) {scale = 2.500000e-01 : f32} : tensor<2x4x1x16xf16>, tensor<2x2x64x16xf8E4M3FN>, tensor<2x2x64x16xf8E4M3FN>, tensor<2xi32> -> tensor<2x4x1x16xf16>
// CHECK-NOT: {{= flash.attention[^_]}}

// The descales read each layer's scale constants at (0, h, 0, 0); the
// caches are the scatter loops' results, the e4m3 caches the model wrote.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/llama_decode_fp8cache.linalg.mlir \
// RUN:   | FileCheck %s --check-prefix=OPS
// OPS-DAG: %[[KS0:.*]] = arith.constant dense<{{\[\[\[\[}}5.000000e-01]], {{\[\[}}2.000000e+00]]]]> : tensor<1x2x1x1xf32>
// OPS-DAG: %[[VS0:.*]] = arith.constant dense<{{\[\[\[\[}}2.500000e-01]], {{\[\[}}1.000000e+00]]]]> : tensor<1x2x1x1xf32>
// OPS: %[[K0:.*]] = scf.for {{.*}} -> (tensor<2x2x64x16xf8E4M3FN>)
// OPS: %[[V0:.*]] = scf.for {{.*}} -> (tensor<2x2x64x16xf8E4M3FN>)
// OPS: %[[KD0:.*]] = linalg.generic {{.*}} ins(%[[KS0]] : tensor<1x2x1x1xf32>) outs(%{{.*}} : tensor<2x2xf32>)
// OPS: %[[VD0:.*]] = linalg.generic {{.*}} ins(%[[VS0]] : tensor<1x2x1x1xf32>) outs(%{{.*}} : tensor<2x2xf32>)
// OPS: flash.attention_kvcache %{{.*}}, %[[K0]], %[[V0]], %{{.*}} descale(%[[KD0]], %[[VD0]] :

// fp8=false keeps both steps over the dequantised f16 caches.
// RUN: flashfuse-opt --flash-raise-attention=fp8=false %flashfuse_src_root/test/models/llama_decode_fp8cache.linalg.mlir \
// RUN:   | FileCheck %s --check-prefix=OFF
// OFF-COUNT-2: = flash.attention_kvcache {{.*}} : tensor<2x4x1x16xf16>, tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16>, tensor<2xi32> -> tensor<2x4x1x16xf16>
// OFF-NOT: descale
