// REQUIRES: ptxas
// The sm90 backward at D = 128 reads the block's head and batch afresh for
// its epilogue (Sm90BackwardBuilder::enterEpilogue: asm reads of %ctaid.y
// and %ctaid.z that LLVM can neither hoist nor merge, after the walk's last
// bulk reduction) and derives the kv head and the gradient slices' rows
// from them in 32 bits, zero-extended. Under a bottom-right causal mask the
// prologue's 64-bit slice row, kept through the query loop instead, spilled
// 4 bytes at 255 registers; flashfuse-compile fails on a spill.
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 -o %t 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx

// CHECK: ptxas sm_90a flash_bwd_sm90_bf16_d128_m64n128w8s2_causalbr: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill

// The prologue's plain reads; after the walk (its dQ reductions drained),
// the epilogue's opaque ones.
// PTX-LABEL: .entry flash_bwd_sm90_bf16_d128_m64n128w8s2_causalbr(
// PTX: mov.u32 {{.*}}%ctaid.y;
// PTX: mov.u32 {{.*}}%ctaid.z;
// PTX: cp.async.bulk.wait_group 0;
// PTX-NEXT: // begin inline asm
// PTX-NEXT: mov.u32 %r{{[0-9]+}}, %ctaid.y;
// PTX-NEXT: // end inline asm
// PTX-NEXT: cvt.u64.u32
// PTX-NEXT: // begin inline asm
// PTX-NEXT: mov.u32 %r{{[0-9]+}}, %ctaid.z;
// PTX-LABEL: .entry flash_bwd_post_sm90_bf16_d128_m64n128w8s2_causalbr(

func.func @grad_bf16_d128_bottom_right(%do: tensor<1x1x128x128xbf16>, %q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x1x128x128xbf16>, %o: tensor<1x1x128x128xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<bottom_right>} : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128xf32> -> tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>
}
