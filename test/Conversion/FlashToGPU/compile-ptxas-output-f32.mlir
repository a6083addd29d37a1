// REQUIRES: ptxas
// The f32-output forwards of the kernel library (gen_suite.py: f16 and
// bf16, D = 64 and 128, full and top-left causal), assembled by ptxas for
// sm_80 (A100) and sm_90a (H100, with the sm90 recipe and with the sm80
// recipe forced) without spilling (flashfuse-compile fails on a spill).
// O leaves straight from the fragments, each pair of f32 columns one
// 8-byte store (st.global.v2.b32): 2 rows x Dv / 8 pairs per m-tile of a
// thread, with 2 m-tiles per warp on the sm80 recipe's 128-row, 4-warp
// tiles and 1 on the sm90 recipe's 128-row, 8-warp ones, summed over
// D = 64, 64, 128, 128 and both dtypes. No 16-byte stores of staged rows
// (st.global.v4) and no 2-byte ones; the 4-byte scalar stores are the
// LSE's.
//
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: flashfuse-compile %s --target=h100 -o %t/h100 | FileCheck %s --check-prefix=H100
// RUN: flashfuse-compile %s --target=h100 --recipe=sm80 -o %t/h100-sm80 | FileCheck %s --check-prefix=H100-SM80
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
// RUN: grep -c "st.global.v2.b32" %t/a100/kernels.ptx | FileCheck %s --check-prefix=SM80-STORES
// RUN: grep -c "st.global.v2.b32" %t/h100-sm80/kernels.ptx | FileCheck %s --check-prefix=SM80-STORES
// RUN: grep -c "st.global.v2.b32" %t/h100/kernels.ptx | FileCheck %s --check-prefix=SM90-STORES
// RUN: not grep -q -e "st.global.v4" -e "st.global.b16" %t/a100/kernels.ptx %t/h100/kernels.ptx %t/h100-sm80/kernels.ptx
//
// A100-COUNT-8: ptxas sm_80 flash_fwd_sm80_{{.*}}_of32: {{.*}}, 0/0 bytes spill stores/loads
// A100: wrote
// H100-COUNT-8: ptxas sm_90a flash_fwd_sm90_{{.*}}_of32: {{.*}}, 0/0 bytes spill stores/loads
// H100: wrote
// H100-SM80-COUNT-8: ptxas sm_90a flash_fwd_sm80_{{.*}}_of32: {{.*}}, 0/0 bytes spill stores/loads
// H100-SM80: wrote
// MANIFEST-COUNT-8: out_f32 1
// MANIFEST-NOT: out_f32
// SM80-STORES: {{^}}384{{$}}
// SM90-STORES: {{^}}192{{$}}

func.func @f16_64(%q: tensor<1x2x256x64xf16>) -> (tensor<1x2x256x64xf32>, tensor<1x2x256xf32>) {
  %o, %lse = flash.attention %q, %q, %q : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf32>, tensor<1x2x256xf32>
  return %o, %lse : tensor<1x2x256x64xf32>, tensor<1x2x256xf32>
}
func.func @f16_64_causal(%q: tensor<1x2x256x64xf16>) -> (tensor<1x2x256x64xf32>, tensor<1x2x256xf32>) {
  %o, %lse = flash.attention %q, %q, %q {causal = #flash.causal<top_left>} : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf32>, tensor<1x2x256xf32>
  return %o, %lse : tensor<1x2x256x64xf32>, tensor<1x2x256xf32>
}
func.func @f16_128(%q: tensor<1x2x256x128xf16>) -> (tensor<1x2x256x128xf32>, tensor<1x2x256xf32>) {
  %o, %lse = flash.attention %q, %q, %q : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16> -> tensor<1x2x256x128xf32>, tensor<1x2x256xf32>
  return %o, %lse : tensor<1x2x256x128xf32>, tensor<1x2x256xf32>
}
func.func @f16_128_causal(%q: tensor<1x2x256x128xf16>) -> (tensor<1x2x256x128xf32>, tensor<1x2x256xf32>) {
  %o, %lse = flash.attention %q, %q, %q {causal = #flash.causal<top_left>} : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16> -> tensor<1x2x256x128xf32>, tensor<1x2x256xf32>
  return %o, %lse : tensor<1x2x256x128xf32>, tensor<1x2x256xf32>
}
func.func @bf16_64(%q: tensor<1x2x256x64xbf16>) -> (tensor<1x2x256x64xf32>, tensor<1x2x256xf32>) {
  %o, %lse = flash.attention %q, %q, %q : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x64xf32>, tensor<1x2x256xf32>
  return %o, %lse : tensor<1x2x256x64xf32>, tensor<1x2x256xf32>
}
func.func @bf16_64_causal(%q: tensor<1x2x256x64xbf16>) -> (tensor<1x2x256x64xf32>, tensor<1x2x256xf32>) {
  %o, %lse = flash.attention %q, %q, %q {causal = #flash.causal<top_left>} : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x64xf32>, tensor<1x2x256xf32>
  return %o, %lse : tensor<1x2x256x64xf32>, tensor<1x2x256xf32>
}
func.func @bf16_128(%q: tensor<1x2x256x128xbf16>) -> (tensor<1x2x256x128xf32>, tensor<1x2x256xf32>) {
  %o, %lse = flash.attention %q, %q, %q : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> -> tensor<1x2x256x128xf32>, tensor<1x2x256xf32>
  return %o, %lse : tensor<1x2x256x128xf32>, tensor<1x2x256xf32>
}
func.func @bf16_128_causal(%q: tensor<1x2x256x128xbf16>) -> (tensor<1x2x256x128xf32>, tensor<1x2x256xf32>) {
  %o, %lse = flash.attention %q, %q, %q {causal = #flash.causal<top_left>} : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> -> tensor<1x2x256x128xf32>, tensor<1x2x256xf32>
  return %o, %lse : tensor<1x2x256x128xf32>, tensor<1x2x256xf32>
}
