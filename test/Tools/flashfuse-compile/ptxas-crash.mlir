// flashfuse-compile gives ptxas a limit that grows with the module's
// kernels (300 s + 30 s a kernel), and a ptxas that crashes or runs past
// it fails the compile with a message that says so. A stand-in ptxas that
// kills itself stands for both.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: printf '#!/bin/sh\nkill -9 $$\n' > %t/ptxas && chmod +x %t/ptxas
// RUN: not flashfuse-compile %s --target=h100 --ptxas=%t/ptxas -o %t/out 2>&1 | FileCheck %s
//
// CHECK: ptxas failed:
// CHECK-NEXT: {{.*}}(ptxas crashed, or ran past its limit of 360 s for 2 kernels

func.func @two(%q: tensor<1x1x128x64xf16>, %k: tensor<1x1x128x64xf16>, %v: tensor<1x1x128x64xf16>) -> (tensor<1x1x128x64xf16>, tensor<1x1x128xf32>, tensor<1x1x128x64xf16>, tensor<1x1x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
  %o2, %lse2 = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
  return %o, %lse, %o2, %lse2 : tensor<1x1x128x64xf16>, tensor<1x1x128xf32>, tensor<1x1x128x64xf16>, tensor<1x1x128xf32>
}
