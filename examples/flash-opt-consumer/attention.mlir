// The consumer's smoke test (scripts/test-install.sh): the flash dialect
// parses, flash-select-config picks a kernel config, flash-lower-naive
// lowers the op away. scripts/test-install.sh runs
//   flash-opt-consumer attention.mlir --flash-select-config=target=h100
//     | FileCheck attention.mlir --check-prefix=CONFIG
//   flash-opt-consumer attention.mlir
//     --pass-pipeline='builtin.module(func.func(flash-lower-naive))'
//     | FileCheck attention.mlir --check-prefix=NAIVE

// CONFIG-LABEL: func.func @attention
// CONFIG: flash.attention %{{.*}} {causal = #flash.causal<top_left>, config = #flash.config<sm90,
// NAIVE-LABEL: func.func @attention
// NAIVE-NOT: flash.attention
// NAIVE: math.exp
// NAIVE-NOT: flash.attention
func.func @attention(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                     %v: tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<top_left>}
      : tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>
      -> tensor<1x4x128x64xf16>
  return %o : tensor<1x4x128x64xf16>
}
