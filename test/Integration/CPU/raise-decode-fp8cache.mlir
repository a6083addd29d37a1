// Raising a decode step over an FP8 KV cache preserves its function: the
// one-layer Llama decode step in f16 whose 32-row cache is f8E4M3FN with
// per kv head scales (test/models/exec_llama_decode_fp8cache.linalg.mlir:
// new rows quantised as they are written, the caches dequantised before
// attention) runs on the CPU before and after flash-raise-attention (its
// attention becomes flash.attention_kvcache on the e4m3 caches with
// k_descale / v_descale, lowered by flash-lower-naive through
// flash-decompose-kvcache) on the same random inputs (cache codes drawn
// from N(0, 1), a random position below 32). --count requires the FP8 cache
// form. The outputs agree within flashfuse-numerics' f16 rule (4e-3 of the
// largest |O|, --rel): the model attends in f16 over products rounded to
// f16, the op in f32 over exact products (about 1e-3 measured, as for the
// 16-bit raise of the same model).
// RUN: python3 %flashfuse_src_root/scripts/check_raise_numerics.py --opt flashfuse-opt \
// RUN:   --rel --tol 4e-3 --count "tensor<2x2x32x8xf8E4M3FN>, tensor<2xi32>" \
// RUN:   %flashfuse_src_root/test/models/exec_llama_decode_fp8cache.linalg.mlir \
// RUN:   | FileCheck %s

// CHECK-NOT: {{BAD|ERROR}}
// CHECK: OK   exec_llama_decode_fp8cache.linalg.mlir: 1 attention(s)
// CHECK-NOT: {{BAD|ERROR}}

// The descales are visible: against the same model with each layer's two
// per-head scales swapped (a descale read at the other kv head), the raised
// step differs by far more than the rule.
// RUN: sed -e 's/\[\[0.5\]\], \[\[2.0\]\]/[[2.0]], [[0.5]]/' -e 's/\[\[0.25\]\], \[\[1.0\]\]/[[1.0]], [[0.25]]/' \
// RUN:   %flashfuse_src_root/test/models/exec_llama_decode_fp8cache.linalg.mlir > %t.swapped.mlir
// RUN: not python3 %flashfuse_src_root/scripts/check_raise_numerics.py --opt flashfuse-opt \
// RUN:   --rel --tol 4e-3 --count "tensor<2x2x32x8xf8E4M3FN>, tensor<2xi32>" \
// RUN:   %flashfuse_src_root/test/models/exec_llama_decode_fp8cache.linalg.mlir=%t.swapped.mlir \
// RUN:   | FileCheck %s --check-prefix=SWAPPED
// SWAPPED: BAD  exec_llama_decode_fp8cache.linalg.mlir: 1 attention(s)
