// The sm90 forward's config checks (KernelSpec.cpp): head dims it has no
// swizzled tiling for, and tiles that do not match its warpgroups.
// RUN: flashfuse-opt %s --flash-lower-to-gpu=chip=sm_90a --split-input-file --verify-diagnostics

func.func @head_dim_96(%q: tensor<1x1x128x96xf16>) -> tensor<1x1x128x96xf16> {
  // expected-error @+1 {{the sm90 recipe needs warps a multiple of 4, block_m = 16 * warps, block_n a multiple of 16 up to 256, D and Dv <= D multiples of 64 up to 256 and tiles whose 16-byte chunks the threads divide; got block_m = 128, block_n = 64, warps = 8, D = 96, Dv = 96}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm90, block_m = 128, block_n = 64, warps = 8, stages = 2>} : tensor<1x1x128x96xf16>, tensor<1x1x128x96xf16>, tensor<1x1x128x96xf16> -> tensor<1x1x128x96xf16>
  return %o : tensor<1x1x128x96xf16>
}

// -----

func.func @rows_per_warpgroup(%q: tensor<1x1x128x256xf16>) -> tensor<1x1x128x256xf16> {
  // expected-error @+1 {{got block_m = 64, block_n = 80, warps = 8, D = 256}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm90, block_m = 64, block_n = 80, warps = 8, stages = 2>} : tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16> -> tensor<1x1x128x256xf16>
  return %o : tensor<1x1x128x256xf16>
}

// -----

func.func @key_tile_too_wide(%q: tensor<1x1x128x256xf16>) -> tensor<1x1x128x256xf16> {
  // expected-error @+1 {{got block_m = 128, block_n = 272, warps = 8, D = 256}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm90, block_m = 128, block_n = 272, warps = 8, stages = 2>} : tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16>, tensor<1x1x128x256xf16> -> tensor<1x1x128x256xf16>
  return %o : tensor<1x1x128x256xf16>
}
