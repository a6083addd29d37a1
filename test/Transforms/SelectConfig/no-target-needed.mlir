// A target is only needed by ops that still need a config: a module whose
// ops all carry one, or that has no attention at all, passes through
// unchanged without a target (the RUN line fails on a non-zero exit).
// RUN: flashfuse-opt %s --flash-select-config | FileCheck %s

// CHECK-LABEL: func.func @all_configured
// CHECK: flash.attention {{.*}}{config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
func.func @all_configured(%x: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  %0 = flash.attention %x, %x, %x
      {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
      -> tensor<1x2x64x64xf16>
  return %0 : tensor<1x2x64x64xf16>
}

// CHECK-LABEL: func.func @no_attention
// CHECK-NEXT: return
func.func @no_attention() {
  return
}
