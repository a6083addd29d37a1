// The sm90ws backward's checks (KernelSpec.cpp, LowerToGPU.cpp): variants
// its producer does not carry yet, tiles its consumer warpgroups cannot
// split, deterministic mode, and in-IR launches, which cannot pass the
// tensor maps the kernel takes by value.
// RUN: flashfuse-opt %s --flash-lower-to-gpu="chip=sm_90a kernels-only=true" --split-input-file --verify-diagnostics
// RUN: not flashfuse-opt %s --flash-lower-to-gpu="chip=sm_90a kernels-only=true deterministic=true" --split-input-file 2>&1 | FileCheck %s --check-prefix=DET
// RUN: not flashfuse-opt %s --flash-lower-to-gpu="chip=sm_90a" --split-input-file 2>&1 | FileCheck %s --check-prefix=LAUNCH

// DET: error: 'flash.attention_grad' op the sm90ws backward does not serve deterministic mode (its dQ kernel) yet; give attention_grad an sm90 config
// LAUNCH: error: 'flash.attention_grad' op recipe 'sm90ws' takes TMA tensor maps by value, which only the FlashFuse runtime makes: compile it with flashfuse-compile (or kernels-only=true) and launch it through the runtime

func.func @plain(%x: tensor<1x4x256x128xf16>, %lse: tensor<1x4x256xf32>) -> (tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse {config = #flash.config<sm90ws, block_m = 64, block_n = 128, warps = 8, stages = 2>}
      : tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>
  return %dq, %dk, %dv : tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>
}

// -----

func.func @bias(%x: tensor<1x2x256x64xbf16>, %lse: tensor<1x2x256xf32>, %b: tensor<1x2x256x256xf32>) -> (tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>) {
  // expected-error @+1 {{the sm90ws backward does not serve a bias operand yet; give attention_grad an sm90 config}}
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse bias(%b : tensor<1x2x256x256xf32>) {config = #flash.config<sm90ws, block_m = 64, block_n = 128, warps = 8, stages = 2>}
      : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256xf32>
      -> tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>
}

// -----

func.func @one_stage(%x: tensor<1x4x256x128xf16>, %lse: tensor<1x4x256xf32>) -> (tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>) {
  // expected-error @+1 {{the sm90ws backward needs warps a multiple of 4, block_n = 16 * warps}}
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse {config = #flash.config<sm90ws, block_m = 64, block_n = 128, warps = 8, stages = 1>}
      : tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>
  return %dq, %dk, %dv : tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>
}

// -----

// D = 256: two warpgroups share each key (KernelSpec::kvColumnGroups), which
// takes the sm90ws consumers' register operands.
func.func @d256_sm90(%x: tensor<1x2x256x256xbf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>) {
  // expected-error @+1 {{the sm90 backward at D = 256, Dv = 256 (D + Dv past 256) splits dK and dV between two warpgroups: it needs the sm90ws recipe, a walk without block-sparse lists or the deterministic mode (a packed one where its dQ rows fit beside the tiles), block_m = 64, and D and Dv multiples of 64}}
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse {config = #flash.config<sm90, block_m = 64, block_n = 64, warps = 8, stages = 2>}
      : tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>, tensor<1x2x256xf32>
      -> tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>
  return %dq, %dk, %dv : tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>
}

// -----

func.func @d256_packed(%x: tensor<1x2x600x256xbf16>, %lse: tensor<1x2x600xf32>, %cu: tensor<3xi32>) -> (tensor<1x2x600x256xbf16>, tensor<1x2x600x256xbf16>, tensor<1x2x600x256xbf16>) {
  // expected-error @+1 {{the sm90ws backward at D = 256, Dv = 256 (D + Dv past 256) splits dK and dV between two warpgroups: it needs the sm90ws recipe, a walk without block-sparse lists or the deterministic mode (a packed one where its dQ rows fit beside the tiles)}}
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse varlen(%cu, %cu : tensor<3xi32>, tensor<3xi32>) {config = #flash.config<sm90ws, block_m = 64, block_n = 64, warps = 8, stages = 2>}
      : tensor<1x2x600x256xbf16>, tensor<1x2x600x256xbf16>, tensor<1x2x600x256xbf16>, tensor<1x2x600x256xbf16>, tensor<1x2x600x256xbf16>, tensor<1x2x600xf32>
      -> tensor<1x2x600x256xbf16>, tensor<1x2x600x256xbf16>, tensor<1x2x600x256xbf16>
  return %dq, %dk, %dv : tensor<1x2x600x256xbf16>, tensor<1x2x600x256xbf16>, tensor<1x2x600x256xbf16>
}
