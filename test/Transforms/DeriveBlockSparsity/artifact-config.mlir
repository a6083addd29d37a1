// An op that comes with its config (no flash-select-config run, as nothing
// needs one): flashfuse-compile still derives its lists, with block sizes
// fitted to that config's tiles (multiples of block_m = 128 and block_n =
// 80: 128 x 160), and binds them. The window of 300 keys behind each query
// (causal holds too) makes partial and full blocks.
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --no-cubin -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.txt

// CHECK: kernel flash_fwd_sm90_bf16_d256_m128n80w8s2_causal_bs128x160f_mod0: block-sparse lists bound by the artifact (lists.bin)
// MANIFEST: sparse_block_q 128
// MANIFEST-NEXT: sparse_block_k 160
// MANIFEST: bound_for seq_q 1024 seq_k 1024 batch 1 heads_q 2
func.func @configured(%q: tensor<1x2x1024x256xbf16>) -> tensor<1x2x1024x256xbf16> {
  %o = flash.attention %q, %q, %q {causal = #flash.causal<top_left>, config = #flash.config<sm90, block_m = 128, block_n = 80, warps = 8, stages = 2>} : tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16> -> tensor<1x2x1024x256xbf16>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 300 : index
    %d = arith.subi %i, %j : index
    %hi = arith.cmpi slt, %d, %w : index
    flash.yield %hi : i1
  }
  return %o : tensor<1x2x1024x256xbf16>
}
