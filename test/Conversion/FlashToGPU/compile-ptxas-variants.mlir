// REQUIRES: ptxas
// The sm80 forward's per-element score variants at D = 64, 96 and 128 (a
// mask operand, a bias, a sliding window, softcap, an additive score_mod and
// a mask_mod; f16 and bf16) with the tiles flash-select-config gives them,
// assembled by ptxas for sm_80 (A100) and sm_90a (H100, sm80 recipe forced)
// without spilling (flashfuse-compile fails on a spill). The tiles that
// made it so: mask operands at 64 query rows, and at D >= 96 the variants
// with per-element work at 32 keys (they spill at 64; SelectConfig.cpp).
// The mask_mod ops stay dense (--no-derive-block-sparsity): their derived
// block-sparse kernels are block-sparse-ptxas.mlir's subject; at D = 128
// on sm_90a that one spills 24/16 bytes (DeriveBlockSparsity/artifact-spills.mlir
// for the message such a spill gets).
//
// RUN: rm -rf %t && flashfuse-compile %s --target=a100 --no-derive-block-sparsity -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: flashfuse-compile %s --target=h100 --recipe=sm80 --no-derive-block-sparsity -o %t/h100 | FileCheck %s --check-prefix=H100
//
// A100-COUNT-36: ptxas sm_80 flash_fwd_sm80_{{.*}}, 0/0 bytes spill stores/loads
// A100: kernel flash_fwd_sm80_f16_d64_m64n64w4s2_mask
// A100: kernel flash_fwd_sm80_f16_d96_m64n32w4s2_mask
// A100: kernel flash_fwd_sm80_f16_d96_m128n32w4s2_softcap
// H100-COUNT-36: ptxas sm_90a flash_fwd_sm80_{{.*}}, 0/0 bytes spill stores/loads
// H100: kernel flash_fwd_sm80_f16_d96_m64n32w4s2_mask
// H100: kernel flash_fwd_sm80_f16_d96_m128n32w4s2_bias
// H100: kernel flash_fwd_sm80_f16_d96_m128n64w4s2_softcap
// H100: kernel flash_fwd_sm80_f16_d128_m128n64w4s2_softcap

func.func @mask_bf16_64(%q: tensor<1x2x256x64xbf16>, %m: tensor<1x1x256x256xi1>) -> tensor<1x2x256x64xbf16> {
  %o = flash.attention %q, %q, %q mask(%m : tensor<1x1x256x256xi1>) : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}
func.func @bias_bf16_64(%q: tensor<1x2x256x64xbf16>, %b: tensor<1x2x256x256xf32>) -> tensor<1x2x256x64xbf16> {
  %o = flash.attention %q, %q, %q bias(%b : tensor<1x2x256x256xf32>) : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}
func.func @win_bf16_64(%q: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
  %o = flash.attention %q, %q, %q {window_left = 64 : i64, window_right = 0 : i64} : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}
func.func @sc_bf16_64(%q: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
  %o = flash.attention %q, %q, %q {softcap = 30.0 : f32} : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}
func.func @smod_bf16_64(%q: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x64xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %o : tensor<1x2x256x64xbf16>
}
func.func @mmod_bf16_64(%q: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> -> tensor<1x2x256x64xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %k = arith.cmpi sle, %j, %i : index
    flash.yield %k : i1
  }
  return %o : tensor<1x2x256x64xbf16>
}
func.func @mask_f16_64(%q: tensor<1x2x256x64xf16>, %m: tensor<1x1x256x256xi1>) -> tensor<1x2x256x64xf16> {
  %o = flash.attention %q, %q, %q mask(%m : tensor<1x1x256x256xi1>) : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}
func.func @bias_f16_64(%q: tensor<1x2x256x64xf16>, %b: tensor<1x2x256x256xf32>) -> tensor<1x2x256x64xf16> {
  %o = flash.attention %q, %q, %q bias(%b : tensor<1x2x256x256xf32>) : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}
func.func @win_f16_64(%q: tensor<1x2x256x64xf16>) -> tensor<1x2x256x64xf16> {
  %o = flash.attention %q, %q, %q {window_left = 64 : i64, window_right = 0 : i64} : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}
func.func @sc_f16_64(%q: tensor<1x2x256x64xf16>) -> tensor<1x2x256x64xf16> {
  %o = flash.attention %q, %q, %q {softcap = 30.0 : f32} : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}
func.func @smod_f16_64(%q: tensor<1x2x256x64xf16>) -> tensor<1x2x256x64xf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %o : tensor<1x2x256x64xf16>
}
func.func @mmod_f16_64(%q: tensor<1x2x256x64xf16>) -> tensor<1x2x256x64xf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %k = arith.cmpi sle, %j, %i : index
    flash.yield %k : i1
  }
  return %o : tensor<1x2x256x64xf16>
}
func.func @mask_bf16_96(%q: tensor<1x2x256x96xbf16>, %m: tensor<1x1x256x256xi1>) -> tensor<1x2x256x96xbf16> {
  %o = flash.attention %q, %q, %q mask(%m : tensor<1x1x256x256xi1>) : tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16> -> tensor<1x2x256x96xbf16>
  return %o : tensor<1x2x256x96xbf16>
}
func.func @bias_bf16_96(%q: tensor<1x2x256x96xbf16>, %b: tensor<1x2x256x256xf32>) -> tensor<1x2x256x96xbf16> {
  %o = flash.attention %q, %q, %q bias(%b : tensor<1x2x256x256xf32>) : tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16> -> tensor<1x2x256x96xbf16>
  return %o : tensor<1x2x256x96xbf16>
}
func.func @win_bf16_96(%q: tensor<1x2x256x96xbf16>) -> tensor<1x2x256x96xbf16> {
  %o = flash.attention %q, %q, %q {window_left = 64 : i64, window_right = 0 : i64} : tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16> -> tensor<1x2x256x96xbf16>
  return %o : tensor<1x2x256x96xbf16>
}
func.func @sc_bf16_96(%q: tensor<1x2x256x96xbf16>) -> tensor<1x2x256x96xbf16> {
  %o = flash.attention %q, %q, %q {softcap = 30.0 : f32} : tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16> -> tensor<1x2x256x96xbf16>
  return %o : tensor<1x2x256x96xbf16>
}
func.func @smod_bf16_96(%q: tensor<1x2x256x96xbf16>) -> tensor<1x2x256x96xbf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16> -> tensor<1x2x256x96xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %o : tensor<1x2x256x96xbf16>
}
func.func @mmod_bf16_96(%q: tensor<1x2x256x96xbf16>) -> tensor<1x2x256x96xbf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16> -> tensor<1x2x256x96xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %k = arith.cmpi sle, %j, %i : index
    flash.yield %k : i1
  }
  return %o : tensor<1x2x256x96xbf16>
}
func.func @mask_f16_96(%q: tensor<1x2x256x96xf16>, %m: tensor<1x1x256x256xi1>) -> tensor<1x2x256x96xf16> {
  %o = flash.attention %q, %q, %q mask(%m : tensor<1x1x256x256xi1>) : tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16> -> tensor<1x2x256x96xf16>
  return %o : tensor<1x2x256x96xf16>
}
func.func @bias_f16_96(%q: tensor<1x2x256x96xf16>, %b: tensor<1x2x256x256xf32>) -> tensor<1x2x256x96xf16> {
  %o = flash.attention %q, %q, %q bias(%b : tensor<1x2x256x256xf32>) : tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16> -> tensor<1x2x256x96xf16>
  return %o : tensor<1x2x256x96xf16>
}
func.func @win_f16_96(%q: tensor<1x2x256x96xf16>) -> tensor<1x2x256x96xf16> {
  %o = flash.attention %q, %q, %q {window_left = 64 : i64, window_right = 0 : i64} : tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16> -> tensor<1x2x256x96xf16>
  return %o : tensor<1x2x256x96xf16>
}
func.func @sc_f16_96(%q: tensor<1x2x256x96xf16>) -> tensor<1x2x256x96xf16> {
  %o = flash.attention %q, %q, %q {softcap = 30.0 : f32} : tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16> -> tensor<1x2x256x96xf16>
  return %o : tensor<1x2x256x96xf16>
}
func.func @smod_f16_96(%q: tensor<1x2x256x96xf16>) -> tensor<1x2x256x96xf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16> -> tensor<1x2x256x96xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %o : tensor<1x2x256x96xf16>
}
func.func @mmod_f16_96(%q: tensor<1x2x256x96xf16>) -> tensor<1x2x256x96xf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16>, tensor<1x2x256x96xf16> -> tensor<1x2x256x96xf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %k = arith.cmpi sle, %j, %i : index
    flash.yield %k : i1
  }
  return %o : tensor<1x2x256x96xf16>
}
func.func @mask_bf16_128(%q: tensor<1x2x256x128xbf16>, %m: tensor<1x1x256x256xi1>) -> tensor<1x2x256x128xbf16> {
  %o = flash.attention %q, %q, %q mask(%m : tensor<1x1x256x256xi1>) : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> -> tensor<1x2x256x128xbf16>
  return %o : tensor<1x2x256x128xbf16>
}
func.func @bias_bf16_128(%q: tensor<1x2x256x128xbf16>, %b: tensor<1x2x256x256xf32>) -> tensor<1x2x256x128xbf16> {
  %o = flash.attention %q, %q, %q bias(%b : tensor<1x2x256x256xf32>) : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> -> tensor<1x2x256x128xbf16>
  return %o : tensor<1x2x256x128xbf16>
}
func.func @win_bf16_128(%q: tensor<1x2x256x128xbf16>) -> tensor<1x2x256x128xbf16> {
  %o = flash.attention %q, %q, %q {window_left = 64 : i64, window_right = 0 : i64} : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> -> tensor<1x2x256x128xbf16>
  return %o : tensor<1x2x256x128xbf16>
}
func.func @sc_bf16_128(%q: tensor<1x2x256x128xbf16>) -> tensor<1x2x256x128xbf16> {
  %o = flash.attention %q, %q, %q {softcap = 30.0 : f32} : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> -> tensor<1x2x256x128xbf16>
  return %o : tensor<1x2x256x128xbf16>
}
func.func @smod_bf16_128(%q: tensor<1x2x256x128xbf16>) -> tensor<1x2x256x128xbf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> -> tensor<1x2x256x128xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %o : tensor<1x2x256x128xbf16>
}
func.func @mmod_bf16_128(%q: tensor<1x2x256x128xbf16>) -> tensor<1x2x256x128xbf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> -> tensor<1x2x256x128xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %k = arith.cmpi sle, %j, %i : index
    flash.yield %k : i1
  }
  return %o : tensor<1x2x256x128xbf16>
}
func.func @mask_f16_128(%q: tensor<1x2x256x128xf16>, %m: tensor<1x1x256x256xi1>) -> tensor<1x2x256x128xf16> {
  %o = flash.attention %q, %q, %q mask(%m : tensor<1x1x256x256xi1>) : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16> -> tensor<1x2x256x128xf16>
  return %o : tensor<1x2x256x128xf16>
}
func.func @bias_f16_128(%q: tensor<1x2x256x128xf16>, %b: tensor<1x2x256x256xf32>) -> tensor<1x2x256x128xf16> {
  %o = flash.attention %q, %q, %q bias(%b : tensor<1x2x256x256xf32>) : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16> -> tensor<1x2x256x128xf16>
  return %o : tensor<1x2x256x128xf16>
}
func.func @win_f16_128(%q: tensor<1x2x256x128xf16>) -> tensor<1x2x256x128xf16> {
  %o = flash.attention %q, %q, %q {window_left = 64 : i64, window_right = 0 : i64} : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16> -> tensor<1x2x256x128xf16>
  return %o : tensor<1x2x256x128xf16>
}
func.func @sc_f16_128(%q: tensor<1x2x256x128xf16>) -> tensor<1x2x256x128xf16> {
  %o = flash.attention %q, %q, %q {softcap = 30.0 : f32} : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16> -> tensor<1x2x256x128xf16>
  return %o : tensor<1x2x256x128xf16>
}
func.func @smod_f16_128(%q: tensor<1x2x256x128xf16>) -> tensor<1x2x256x128xf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16> -> tensor<1x2x256x128xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %o : tensor<1x2x256x128xf16>
}
func.func @mmod_f16_128(%q: tensor<1x2x256x128xf16>) -> tensor<1x2x256x128xf16> {
  %o = flash.attention %q, %q, %q : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16> -> tensor<1x2x256x128xf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %k = arith.cmpi sle, %j, %i : index
    flash.yield %k : i1
  }
  return %o : tensor<1x2x256x128xf16>
}
