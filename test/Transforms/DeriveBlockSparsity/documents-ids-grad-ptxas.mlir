// REQUIRES: ptxas
// The backward of document masks over run-time sequence ids: as
// documents-ids-ptxas.mlir for the forward, flash-derive-block-sparsity
// gives each flash.attention_grad lists computed from the ids, and the
// main kernel (the sm90 backward walking the transposed lists) reads the
// ids as capture0. The input of scripts/kernels/check_documents.py's
// backward (flashfuse.artifact.backward): DIR/bwd as compiled here, and
// DIR/bwd-dense, without block skipping (both --recipe=sm90). Some of
// these kernels spill at D = 128 (the id loads beside the backward's 255
// registers), hence --allow-spills; the counts are in docs/PERF.md.
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=sm90 --allow-spills -o %t/bwd | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/bwd/manifest.txt
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90 --allow-spills --no-derive-block-sparsity -o %t/bwd-dense | FileCheck %s --check-prefix=DENSE
// DIR/bwd-ws: --recipe=auto-tma, whose sm90ws backward serves a mask_mod
// over block-sparse lists (and the default recipe gives these ops).
// RUN: flashfuse-compile %s --target=h100 --recipe=auto-tma --allow-spills -o %t/bwd-ws | FileCheck %s --check-prefix=WS
// Without --allow-spills: the non-causal op's kernels spill nothing on
// either recipe, but the causal one's spill 4-8 bytes on every one. The
// default recipe keeps the sm90ws kernels and says so: over the same lists
// the spilling causal kernel is 7.2x faster than the dense walk (and 1.7x
// the 64-key tiles that do not spill; docs/PERF.md run 450).
// RUN: flashfuse-compile %s --target=h100 -o %t/default > %t.log
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.log
// DEFAULT-NOT: compiling again
// DEFAULT-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_bs128x128f_mod0: {{.*}}, 0/0 bytes spill stores/loads
// DEFAULT-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causal_bs128x128f_mod1: {{.*}}, {{[1-9][0-9]*}}/{{[1-9][0-9]*}} bytes spill stores/loads
// DEFAULT: note: kernel flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causal_bs128x128f_mod1 spills registers and is kept
// DEFAULT-NOT: compiling again
// DEFAULT: wrote
// A spill in a kernel that derivation did not make block-sparse (here the
// dense walks, --no-derive-block-sparsity, on the sm90 recipe) still fails
// without --allow-spills.
// RUN: not flashfuse-compile %s --target=h100 --recipe=sm90 --no-derive-block-sparsity -o %t/strict > %t.log 2> %t.err
// RUN: FileCheck %s --check-prefix=STRICT < %t.log
// RUN: FileCheck %s --check-prefix=STRICT-ERR < %t.err
// STRICT: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_{{[a-z_]*}}mod{{[01]}}: {{.*}}, {{[1-9][0-9]*}}/{{[1-9][0-9]*}} bytes spill stores/loads
// STRICT-NOT: is kept
// STRICT-NOT: wrote
// STRICT-ERR: flashfuse-compile: error: a kernel spills registers (see above); pass --allow-spills to accept it

// CHECK-DAG: note: kernel flash_bwd_sm90_bf16_d128_{{[a-z0-9]*}}_bs128x128f_mod0: block-sparse lists not in the artifact
// CHECK-DAG: note: kernel flash_bwd_sm90_bf16_d128_{{[a-z0-9]*}}_causal_bs128x128f_mod1: block-sparse lists not in the artifact
// CHECK-DAG: ptxas sm_90a flash_bwd_bs_transpose_sm90_bf16_d128_{{[a-z0-9]*}}_bs128x128f:
// CHECK-DAG: ptxas sm_90a flash_bwd_bs_transpose_sm90_bf16_d128_{{[a-z0-9]*}}_causal_bs128x128f:
// MANIFEST: kernel flash_bwd_pre_sm90_bf16_d128_{{.*}}_mod0
// MANIFEST-NOT: mods
// MANIFEST: kernel flash_bwd_sm90_bf16_d128_{{.*}}_bs128x128f_mod0
// MANIFEST: mods 1
// MANIFEST-NEXT: captures i32/1
// WS-COUNT-2: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_{{[a-z_]*}}bs128x128f_mod{{[01]}}:
// DENSE-COUNT-2: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_{{[a-z_]*}}mod{{[01]}}:
// DENSE-NOT: _bs128
func.func @documents_grad(%do: tensor<1x16x16384x128xbf16>, %q: tensor<1x16x16384x128xbf16>, %k: tensor<1x16x16384x128xbf16>, %v: tensor<1x16x16384x128xbf16>, %o: tensor<1x16x16384x128xbf16>, %lse: tensor<1x16x16384xf32>, %ids: tensor<16384xi32>) -> (tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384xf32> -> tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<16384xi32>
    %dj = tensor.extract %ids[%j] : tensor<16384xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    flash.yield %same : i1
  }
  return %dq, %dk, %dv : tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>
}

func.func @causal_documents_grad(%do: tensor<1x16x16384x128xbf16>, %q: tensor<1x16x16384x128xbf16>, %k: tensor<1x16x16384x128xbf16>, %v: tensor<1x16x16384x128xbf16>, %o: tensor<1x16x16384x128xbf16>, %lse: tensor<1x16x16384xf32>, %ids: tensor<16384xi32>) -> (tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384xf32> -> tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<16384xi32>
    %dj = tensor.extract %ids[%j] : tensor<16384xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    flash.yield %same : i1
  }
  return %dq, %dk, %dv : tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>
}
