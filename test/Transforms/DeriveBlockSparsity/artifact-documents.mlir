// A document mask over run-time ids: flash-derive-block-sparsity gives it
// host IR computing its lists, and the kernel takes the ids its mask_mod
// reads as the parameter `capture0` (docs/KERNEL_ABI.md "Values captured
// by score_mod and mask_mod"). Lists computed at run time stay the
// caller's to pass (artifact.mlir), and so do the ids. The sm90 recipe,
// named (the default gives the op the sm90ws forward).
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=sm90 --no-cubin -o %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.txt

// CHECK: note: kernel [[K:flash_fwd_sm90_bf16_d64_.*_bs128x128f_mod0]]: block-sparse lists not in the artifact: its lists are computed at run time by host code; the caller passes them
// MANIFEST: kernel flash_fwd_sm90_bf16_d64_{{.*}}_bs128x128f_mod0
// MANIFEST: block_sparse 2
// MANIFEST: params {{.*}} i64:o_stride_s memref:capture0 f32:scale {{.*}} memref:kv_num_blocks
// MANIFEST-NOT: bound
// MANIFEST: end
func.func @documents(%q: tensor<1x4x512x64xbf16>, %ids: tensor<512xi64>) -> tensor<1x4x512x64xbf16> {
  %o = flash.attention %q, %q, %q : tensor<1x4x512x64xbf16>, tensor<1x4x512x64xbf16>, tensor<1x4x512x64xbf16> -> tensor<1x4x512x64xbf16>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %dj = tensor.extract %ids[%j] : tensor<512xi64>
    %di = tensor.extract %ids[%i] : tensor<512xi64>
    %same = arith.cmpi eq, %dj, %di : i64
    flash.yield %same : i1
  }
  return %o : tensor<1x4x512x64xbf16>
}
