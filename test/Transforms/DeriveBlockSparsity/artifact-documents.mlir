// A document mask over run-time ids: flash-derive-block-sparsity gives it
// host IR computing its lists, but its mask_mod reads the ids from outside
// the region, which no kernel takes yet, so flashfuse-compile refuses the op
// with flash-lower-to-gpu's reason rather than write a kernel without its
// mask (artifact.mlir: host-computed lists stay the caller's).
// RUN: not flashfuse-compile %s --target=h100 --no-cubin -o %t 2>&1 | FileCheck %s

// CHECK: error: 'flash.attention' op a score_mod or mask_mod that reads values from outside its region cannot be compiled into a kernel yet
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
