// FP8 flash.attention on the GPU: a target without FP8 tensor cores (a100,
// sm_80) is refused naming that reason; on sm_89 and sm_90 (l4, h100) no
// FP8 mainloop is built yet, and the refusal says so rather than picking a
// 16-bit recipe that would read e4m3 bytes as f16.
// RUN: flashfuse-opt %s --flash-select-config=target=a100 -verify-diagnostics
// RUN: not flashfuse-opt %s --flash-select-config=target=h100 2>&1 | FileCheck %s --check-prefix=H100
// RUN: not flashfuse-opt %s --flash-select-config=target=l4 2>&1 | FileCheck %s --check-prefix=L4

// H100: no kernel config for target 'h100': no GPU kernel serves FP8 (f8E4M3FN) attention yet
// L4: no kernel config for target 'l4': no GPU kernel serves FP8 (f8E4M3FN) attention yet
func.func @fp8(%q: tensor<1x2x128x64xf8E4M3FN>, %d: tensor<f32>) -> tensor<1x2x128x64xbf16> {
  // expected-error @below {{no kernel config for target 'a100': FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or newer), target is sm_80}}
  %o = flash.attention %q, %q, %q descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x128x64xf8E4M3FN>, tensor<1x2x128x64xf8E4M3FN>, tensor<1x2x128x64xf8E4M3FN>
      -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}
