// An unknown name in the option is an error on the root op, before any op
// is looked at.
// RUN: flashfuse-opt %s --flash-select-config=target=v100 -verify-diagnostics

// expected-error @below {{unknown target 'v100'; known targets are a100, l4, h100, h200}}
module {
  func.func @f(%x: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
    %0 = flash.attention %x, %x, %x
        : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
        -> tensor<1x2x64x64xf16>
    return %0 : tensor<1x2x64x64xf16>
  }
}
