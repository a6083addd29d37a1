// An op no recipe serves is reported once: on sm_90 flashfuse-compile
// first probes the sm90ws recipe for mask_mod ops (a quiet
// flash-select-config), then compiles with the default recipe, whose error
// is the one printed.
//
// RUN: rm -rf %t && not flashfuse-compile %s --target=h100 --no-cubin -o %t 2>&1 | FileCheck %s
//
// CHECK: error: no kernel config for target 'h100': the sm80 recipe needs Dv <= D
// CHECK-NOT: error:

func.func @dv_above_d(%q: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x128xbf16>) -> tensor<1x1x128x128xbf16> {
  %o = flash.attention %q, %q, %v
      : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x128xbf16> -> tensor<1x1x128x128xbf16>
  return %o : tensor<1x1x128x128xbf16>
}
