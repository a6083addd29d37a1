// REQUIRES: ptxas
// A mask_mod model whose derived block-sparse kernel spills where its dense
// kernel does not (the sm90 forward at D = 128 with a sliding window's
// mask_mod: 76/76 bytes against none): flashfuse-compile's spill error
// names both ways out, and each works.
// RUN: rm -rf %t && not flashfuse-compile %s --target=h100 -o %t/derived 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: flashfuse-compile %s --target=h100 --no-derive-block-sparsity -o %t/dense | FileCheck %s --check-prefix=DENSE
// RUN: flashfuse-compile %s --target=h100 --allow-spills -o %t/spills | FileCheck %s --check-prefix=SPILLS

// REFUSED-DAG: ptxas sm_90a flash_fwd_sm90_bf16_d128_m128n128w8s3_bs128x128f_mod0: {{.*}} bytes stack, {{[1-9][0-9]*}}/{{[1-9][0-9]*}} bytes spill stores/loads
// REFUSED-DAG: error: a kernel spills registers (see above); pass --allow-spills to accept it, or --no-derive-block-sparsity to keep mask_mod ops dense (a block-sparse kernel spills)
// DENSE: ptxas sm_90a flash_fwd_sm90_bf16_d128_m128n128w8s3_mod0: {{.*}}, 0/0 bytes spill stores/loads
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
