// One-layer Llama decode step over an FP8 cache with its weights kept
// (exec_llama_decode.linalg.mlir in f16 with an f8E4M3FN 32-row cache and
// per kv head scales): the fixture raise-decode-fp8cache.mlir runs before
// and after raising. Here: its one attention becomes flash.attention_kvcache
// on the e4m3 caches with [B, Hkv] descales, the dequantises go, and the
// result verifies.
// RUN: flashfuse-opt --flash-raise-attention %flashfuse_src_root/test/models/exec_llama_decode_fp8cache.linalg.mlir \
// RUN:   | flashfuse-opt | FileCheck %s --implicit-check-not=linalg.batch_matmul --implicit-check-not="f8E4M3FN to f16"

// CHECK-COUNT-1: = flash.attention_kvcache {{.*}} descale({{.*}} : tensor<2x2xf32>, tensor<2x2xf32>) {{.*}}: tensor<2x4x1x8xf16>, tensor<2x2x32x8xf8E4M3FN>, tensor<2x2x32x8xf8E4M3FN>, tensor<2xi32> -> tensor<2x4x1x8xf16>
// CHECK-NOT: {{= flash.attention[^_]}}
