// Ops that already carry a config (set by hand or by a tuner) are left as
// they are, even where the pass would have refused the op or chosen
// otherwise; the others in the same function still get one.
// RUN: flashfuse-opt %s --flash-select-config=target=a100 | FileCheck %s

// CHECK-LABEL: func.func @keep
// CHECK: flash.attention {{.*}}{config = #flash.config<sm80, block_m = 64, block_n = 128, warps = 8, stages = 3>}
// CHECK: flash.attention {{.*}}{config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 12, stages = 2>}
// CHECK: flash.attention {{.*}}{config = #flash.config<sm80, block_m = 16, block_n = 16, warps = 1, stages = 1>} : tensor<1x2x64x80xf32>
// CHECK: flash.attention_grad {{.*}}{config = #flash.config<decode, block_m = 16, block_n = 16, warps = 1, stages = 1>}
// CHECK: flash.attention {{.*}}{config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>}
func.func @keep(%x: tensor<1x2x64x64xf16>, %f: tensor<1x2x64x80xf32>,
                %lse: tensor<1x2x64xf32>) {
  %0 = flash.attention %x, %x, %x
      {config = #flash.config<sm80, block_m = 64, block_n = 128, warps = 8, stages = 3>}
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
      -> tensor<1x2x64x64xf16>
  // An sm90 config on an sm_80 target is the user's business.
  %1 = flash.attention %x, %x, %x
      {config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 12, stages = 2>}
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
      -> tensor<1x2x64x64xf16>
  // f32 with D = 80 would be refused without a config.
  %2 = flash.attention %f, %f, %f
      {config = #flash.config<sm80, block_m = 16, block_n = 16, warps = 1, stages = 1>}
      : tensor<1x2x64x80xf32>, tensor<1x2x64x80xf32>, tensor<1x2x64x80xf32>
      -> tensor<1x2x64x80xf32>
  %3:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse
      {config = #flash.config<decode, block_m = 16, block_n = 16, warps = 1, stages = 1>}
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>,
        tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64xf32>
      -> tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
  %4 = flash.attention %x, %x, %x
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
      -> tensor<1x2x64x64xf16>
  return
}
