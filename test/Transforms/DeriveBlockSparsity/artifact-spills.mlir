// REQUIRES: ptxas
// A mask_mod model whose derived block-sparse kernel on the sm90 recipe
// spills where its dense kernel does not (the sm90 forward at D = 128 with
// a sliding window's mask_mod: 76/76 bytes against none). Under the
// default recipe on sm_90 flashfuse-compile gives mask_mod ops the sm90ws
// kernels (their derived forward does not spill). Where the recipe asked
// for is another (here --recipe=sm90), it keeps the spilling block-sparse
// kernel and says so: block skipping is worth far more than the spill
// (such kernels ran 2.3-3.9x faster than the dense walk, docs/PERF.md
// run 118), and no spill fails the compile for it. --allow-spills keeps it
// without the note, and --no-derive-block-sparsity goes dense.
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 -o %t/default | FileCheck %s --check-prefix=DEFAULT
// RUN: FileCheck %s --check-prefix=DEFAULT-MANIFEST < %t/default/manifest.txt
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90 -o %t/kept | FileCheck %s --check-prefix=KEPT
// RUN: ls %t/kept | FileCheck %s --check-prefix=FILES
// RUN: FileCheck %s --check-prefix=KEPT-MANIFEST < %t/kept/manifest.txt
// RUN: flashfuse-compile %s --target=h100 --no-derive-block-sparsity -o %t/dense | FileCheck %s --check-prefix=DENSE
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90 --allow-spills -o %t/spills | FileCheck %s --check-prefix=SPILLS

// DEFAULT-NOT: note: {{.*}}compiling again
// DEFAULT: ptxas sm_90a flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f_mod0: {{.*}}, 0 bytes stack, 0/0 bytes spill stores/loads
// DEFAULT-NOT: note: {{.*}}compiling again
// DEFAULT: kernel flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f_mod0: block-sparse lists bound by the artifact (lists.bin)
// DEFAULT-MANIFEST: kernel flash_fwd_sm90ws_bf16_d128_m128n128w8s3_bs128x128f_mod0
// DEFAULT-MANIFEST: mods 1
// KEPT: ptxas sm_90a flash_fwd_sm90_bf16_d128_m128n128w8s3_bs128x128f_mod0: {{.*}} bytes stack, {{[1-9][0-9]*}}/{{[1-9][0-9]*}} bytes spill stores/loads
// KEPT-NOT: sm90ws
// KEPT: note: kernel flash_fwd_sm90_bf16_d128_m128n128w8s3_bs128x128f_mod0 spills registers and is kept: it is made block-sparse by flash-derive-block-sparsity
// KEPT: kernel flash_fwd_sm90_bf16_d128_m128n128w8s3_bs128x128f_mod0: block-sparse lists bound by the artifact (lists.bin)
// KEPT: wrote {{.*}}kept/{kernels.ptx, kernels.cubin, lists.bin, manifest.txt}
// FILES: lists.bin
// KEPT-MANIFEST: kernel flash_fwd_sm90_bf16_d128_m128n128w8s3_bs128x128f_mod0
// DENSE-NOT: note: kernel
// DENSE: ptxas sm_90a flash_fwd_sm90_bf16_d128_m128n128w8s3_mod0: {{.*}}, 0/0 bytes spill stores/loads
// SPILLS-NOT: spills registers and is kept
// SPILLS: kernel flash_fwd_sm90_bf16_d128_m128n128w8s3_bs128x128f_mod0: block-sparse lists bound by the artifact (lists.bin)

func.func @sliding_window(%q: tensor<1x8x4096x128xbf16>) -> tensor<1x8x4096x128xbf16> {
  %o = flash.attention %q, %q, %q : tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16> -> tensor<1x8x4096x128xbf16>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c0 = arith.constant 0 : index
    %w = arith.constant 1024 : index
    %d = arith.subi %i, %j : index
    %lo = arith.cmpi sge, %d, %c0 : index
    %hi = arith.cmpi slt, %d, %w : index
    %keep = arith.andi %lo, %hi : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x8x4096x128xbf16>
}
