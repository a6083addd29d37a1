// REQUIRES: ptxas
// Document masks over run-time sequence ids, with and without causality:
// flash-derive-block-sparsity gives each host IR computing its lists from
// the ids, and the kernel reads the ids its mask_mod compares as the
// captured value capture0 (docs/KERNEL_ABI.md "Values captured by
// score_mod and mask_mod"). With --recipe=auto-tma, the sm90ws forward
// (its 128 x 128 tile for regions) walking the lists, no spill; the
// sm90 forward spills over them (--recipe=sm90: flashfuse-compile keeps
// it, with a note: the dense walk is 9x slower), and the default recipe
// gives these mask_mod
// ops the sm90ws kernels, the same as --recipe=auto-tma's. The input of
// the GPU check
// scripts/kernels/check_documents.py: DIR/derived as compiled here, and
// DIR/dense, without block skipping (the sm90 forward evaluating the
// mask_mod in every key block); the caller passes the lists
// (flashfuse.artifact.forward(..., block_mask=)).
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=auto-tma -o %t/derived | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/derived/manifest.txt
// RUN: flashfuse-compile %s --target=h100 --no-derive-block-sparsity -o %t/dense | FileCheck %s --check-prefix=DENSE
// RUN: flashfuse-compile %s --target=h100 -o %t/default 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90 -o %t/kept 2>&1 | FileCheck %s --check-prefix=KEPT

// CHECK-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f_mod0: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill stores/loads
// CHECK-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal_bs128x128f_mod1: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill stores/loads
// CHECK-DAG: note: kernel flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f_mod0: block-sparse lists not in the artifact: its lists are computed at run time by host code
// CHECK-DAG: note: kernel flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal_bs128x128f_mod1: block-sparse lists not in the artifact
// MANIFEST-COUNT-2: captures i32/1
// DENSE-DAG: ptxas sm_90a flash_fwd_sm90_bf16_d128_m128n128w8s3_mod0: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill stores/loads
// DENSE-DAG: ptxas sm_90a flash_fwd_sm90_bf16_d128_m128n128w8s3_causal_mod1: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill stores/loads
// DENSE-NOT: _bs128
// DEFAULT-NOT: compiling again
// DEFAULT-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f_mod0: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill stores/loads
// DEFAULT-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d128_m128n128w8s3_causal_bs128x128f_mod1: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill stores/loads
// DEFAULT-NOT: compiling again
// KEPT: ptxas sm_90a flash_fwd_sm90_bf16_d128_m128n128w8s3_bs128x128f_mod0: {{.*}}, {{[1-9][0-9]*}}/{{[1-9][0-9]*}} bytes spill stores/loads
// KEPT: note: kernel flash_fwd_sm90_bf16_d128_m128n128w8s3_bs128x128f_mod0 spills registers and is kept: it is made block-sparse by flash-derive-block-sparsity, and the dense walk it replaces visits every key block (--no-derive-block-sparsity compiles the mask_mod ops dense)
// KEPT-NOT: compiling again
// KEPT: wrote {{.*}}kept/{kernels.ptx, kernels.cubin, manifest.txt}

func.func @documents(%q: tensor<1x16x16384x128xbf16>, %k: tensor<1x16x16384x128xbf16>, %v: tensor<1x16x16384x128xbf16>, %ids: tensor<16384xi32>) -> tensor<1x16x16384x128xbf16> {
  %o = flash.attention %q, %k, %v : tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16> -> tensor<1x16x16384x128xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<16384xi32>
    %dj = tensor.extract %ids[%j] : tensor<16384xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    flash.yield %same : i1
  }
  return %o : tensor<1x16x16384x128xbf16>
}

func.func @causal_documents(%q: tensor<1x16x16384x128xbf16>, %k: tensor<1x16x16384x128xbf16>, %v: tensor<1x16x16384x128xbf16>, %ids: tensor<16384xi32>) -> tensor<1x16x16384x128xbf16> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16>, tensor<1x16x16384x128xbf16> -> tensor<1x16x16384x128xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<16384xi32>
    %dj = tensor.extract %ids[%j] : tensor<16384xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    flash.yield %same : i1
  }
  return %o : tensor<1x16x16384x128xbf16>
}
