// recipe=sm90ws: forward ops get the warp-specialised TMA forward's tiles
// (128 query rows over two consumer warpgroups, three stages of 128 keys
// at D = 64/128 and two of 80 at D = 256; without a causal or window mask
// 192 rows over three consumer warpgroups and four stages at D = 64, also
// top-left causal from 4096 static queries and keys, two stages of 176 keys at
// D = 128 unless a softcap is on); backward ops the sm90ws backward
// serves get the sm90 backward's tiles under the sm90ws recipe, the others
// (bias, dropout, ...) what auto gives them; a forward it cannot serve is
// an error naming why.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config="target=h100 recipe=sm90ws" -verify-diagnostics | FileCheck %s
// RUN: not flashfuse-opt %s --split-input-file --flash-select-config="target=a100 recipe=sm90ws" 2>&1 | FileCheck %s --check-prefix=A100

// CHECK-LABEL: func.func @d128
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
// A100: error: no kernel config for target 'a100': the sm90ws recipe cannot serve this op: wgmma and TMA need sm_90, target is sm_80
func.func @d128(%x: tensor<2x8x512x128xbf16>) -> tensor<2x8x512x128xbf16> {
  %o = flash.attention %x, %x, %x {causal = #flash.causal<top_left>}
      : tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>
      -> tensor<2x8x512x128xbf16>
  return %o : tensor<2x8x512x128xbf16>
}

// -----

// CHECK-LABEL: func.func @d128_unmasked
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 176, warps = 8, stages = 2>
// CHECK-LABEL: func.func @d128_softcap
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
func.func @d128_unmasked(%x: tensor<2x8x512x128xbf16>) -> tensor<2x8x512x128xbf16> {
  %o = flash.attention %x, %x, %x
      : tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>
      -> tensor<2x8x512x128xbf16>
  return %o : tensor<2x8x512x128xbf16>
}
func.func @d128_softcap(%x: tensor<2x8x512x128xbf16>) -> tensor<2x8x512x128xbf16> {
  %o = flash.attention %x, %x, %x {softcap = 30.0 : f32}
      : tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>, tensor<2x8x512x128xbf16>
      -> tensor<2x8x512x128xbf16>
  return %o : tensor<2x8x512x128xbf16>
}

// -----

// CHECK-LABEL: func.func @d64
// CHECK: config = #flash.config<sm90ws, block_m = 192, block_n = 128, warps = 12, stages = 4>
func.func @d64(%x: tensor<2x8x512x64xf16>) -> tensor<2x8x512x64xf16> {
  %o = flash.attention %x, %x, %x
      : tensor<2x8x512x64xf16>, tensor<2x8x512x64xf16>, tensor<2x8x512x64xf16>
      -> tensor<2x8x512x64xf16>
  return %o : tensor<2x8x512x64xf16>
}

// -----

// Causal or windowed, D = 64 keeps two consumer warpgroups.
// CHECK-LABEL: func.func @d64_causal
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
// CHECK-LABEL: func.func @d64_window
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
func.func @d64_causal(%x: tensor<2x8x512x64xbf16>) -> tensor<2x8x512x64xbf16> {
  %o = flash.attention %x, %x, %x {causal = #flash.causal<bottom_right>}
      : tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16>
      -> tensor<2x8x512x64xbf16>
  return %o : tensor<2x8x512x64xbf16>
}
func.func @d64_window(%x: tensor<2x8x512x64xbf16>) -> tensor<2x8x512x64xbf16> {
  %o = flash.attention %x, %x, %x {window_left = 128 : i64, window_right = 128 : i64}
      : tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16>, tensor<2x8x512x64xbf16>
      -> tensor<2x8x512x64xbf16>
  return %o : tensor<2x8x512x64xbf16>
}

// -----

// Causal (top-left) D = 64 of static lengths from 4096 queries and keys
// takes the 192 rows too (SelectConfig.cpp kLongCausalMinLength);
// bottom-right, shorter, dynamic, softcapped or f32-output ones keep 128.
// CHECK-LABEL: func.func @d64_causal_long
// CHECK: config = #flash.config<sm90ws, block_m = 192, block_n = 128, warps = 12, stages = 4>
// CHECK-LABEL: func.func @d64_causal_long_br
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
// CHECK-LABEL: func.func @d64_causal_short_keys
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
// CHECK-LABEL: func.func @d64_causal_dynamic
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
// CHECK-LABEL: func.func @d64_causal_long_softcap
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
// CHECK-LABEL: func.func @d64_causal_long_f32_out
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
func.func @d64_causal_long(%x: tensor<1x8x4096x64xbf16>) -> tensor<1x8x4096x64xbf16> {
  %o = flash.attention %x, %x, %x {causal = #flash.causal<top_left>}
      : tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>
      -> tensor<1x8x4096x64xbf16>
  return %o : tensor<1x8x4096x64xbf16>
}
func.func @d64_causal_long_br(%q: tensor<1x8x4096x64xf16>, %k: tensor<1x8x8192x64xf16>) -> tensor<1x8x4096x64xf16> {
  %o = flash.attention %q, %k, %k {causal = #flash.causal<bottom_right>}
      : tensor<1x8x4096x64xf16>, tensor<1x8x8192x64xf16>, tensor<1x8x8192x64xf16>
      -> tensor<1x8x4096x64xf16>
  return %o : tensor<1x8x4096x64xf16>
}
func.func @d64_causal_short_keys(%q: tensor<1x8x4096x64xbf16>, %k: tensor<1x8x2048x64xbf16>) -> tensor<1x8x4096x64xbf16> {
  %o = flash.attention %q, %k, %k {causal = #flash.causal<bottom_right>}
      : tensor<1x8x4096x64xbf16>, tensor<1x8x2048x64xbf16>, tensor<1x8x2048x64xbf16>
      -> tensor<1x8x4096x64xbf16>
  return %o : tensor<1x8x4096x64xbf16>
}
func.func @d64_causal_dynamic(%x: tensor<1x8x?x64xbf16>) -> tensor<1x8x?x64xbf16> {
  %o = flash.attention %x, %x, %x {causal = #flash.causal<top_left>}
      : tensor<1x8x?x64xbf16>, tensor<1x8x?x64xbf16>, tensor<1x8x?x64xbf16>
      -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}
func.func @d64_causal_long_softcap(%x: tensor<1x8x4096x64xbf16>) -> tensor<1x8x4096x64xbf16> {
  %o = flash.attention %x, %x, %x {causal = #flash.causal<top_left>, softcap = 30.0 : f32}
      : tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>
      -> tensor<1x8x4096x64xbf16>
  return %o : tensor<1x8x4096x64xbf16>
}
func.func @d64_causal_long_f32_out(%x: tensor<1x8x4096x64xbf16>) -> tensor<1x8x4096x64xf32> {
  %o = flash.attention %x, %x, %x {causal = #flash.causal<top_left>}
      : tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>
      -> tensor<1x8x4096x64xf32>
  return %o : tensor<1x8x4096x64xf32>
}

// -----

// CHECK-LABEL: func.func @d256
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 80, warps = 8, stages = 2>
func.func @d256(%x: tensor<1x4x512x256xbf16>) -> tensor<1x4x512x256xbf16> {
  %o = flash.attention %x, %x, %x
      : tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>, tensor<1x4x512x256xbf16>
      -> tensor<1x4x512x256xbf16>
  return %o : tensor<1x4x512x256xbf16>
}

// -----

// The backward takes the sm90 backward's tiles, fed by the producer.
// CHECK-LABEL: func.func @grad
// CHECK: config = #flash.config<sm90ws, block_m = 64, block_n = 128, warps = 8, stages = 2>
func.func @grad(%x: tensor<1x4x256x128xbf16>, %lse: tensor<1x4x256xf32>) -> (tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse
      : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>
  return %dq, %dk, %dv : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>
}

// -----

// A backward the sm90ws backward does not serve (a bias) keeps auto's.
// CHECK-LABEL: func.func @grad_bias
// CHECK: config = #flash.config<sm90, block_m = 64, block_n = 128, warps = 8, stages = 2>
func.func @grad_bias(%x: tensor<1x4x256x64xbf16>, %lse: tensor<1x4x256xf32>, %b: tensor<1x4x256x256xf32>) -> (tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %x, %x, %x, %x, %x, %lse bias(%b : tensor<1x4x256x256xf32>)
      : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256xf32>
      -> tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>
  return %dq, %dk, %dv : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>
}

// -----

// score_mod and mask_mod regions, reading values from above the op too:
// the sm90ws forward serves them (its consumer warpgroups inline them; the
// ALiBi forward over captured slopes read 0.74 ms against the sm90
// forward's 0.96 at 8k, docs/PERF.md run 440).
// CHECK-LABEL: func.func @alibi_slopes
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
func.func @alibi_slopes(%x: tensor<1x4x256x128xbf16>, %slopes: tensor<4xf32>) -> tensor<1x4x256x128xbf16> {
  %o = flash.attention %x, %x, %x {causal = #flash.causal<top_left>}
      : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>
      -> tensor<1x4x256x128xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<4xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %o : tensor<1x4x256x128xbf16>
}

// -----

func.func @bias(%x: tensor<1x4x256x128xbf16>, %bias: tensor<1x4x256x256xf32>) -> tensor<1x4x256x128xbf16> {
  // expected-error @+1 {{no kernel config for target 'h100': the sm90ws recipe cannot serve this op: it does not serve bias, mask or dropout yet}}
  %o = flash.attention %x, %x, %x bias(%bias : tensor<1x4x256x256xf32>) : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16> -> tensor<1x4x256x128xbf16>
  return %o : tensor<1x4x256x128xbf16>
}

// -----

func.func @d96(%x: tensor<1x4x256x96xbf16>) -> tensor<1x4x256x96xbf16> {
  // expected-error @+1 {{the sm90ws recipe cannot serve this op: it serves (D, Dv) in {(64, 64), (128, 128), (192, 128), (256, 256)}, got D = 96, Dv = 96}}
  %o = flash.attention %x, %x, %x
      : tensor<1x4x256x96xbf16>, tensor<1x4x256x96xbf16>, tensor<1x4x256x96xbf16>
      -> tensor<1x4x256x96xbf16>
  return %o : tensor<1x4x256x96xbf16>
}

// -----

// A packed batch's backward takes the sm90ws backward too (with dV and dK
// from registers its varlen kernels are the faster ones, docs/PERF.md run
// 152), on the sm90 backward's tiles.
// CHECK-LABEL: func.func @grad_varlen
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 2>
func.func @grad_varlen(%do: tensor<1x8x300x64xf16>, %q: tensor<1x8x300x64xf16>, %k: tensor<1x2x500x64xf16>, %v: tensor<1x2x500x64xf16>, %o: tensor<1x8x300x64xf16>, %lse: tensor<1x8x300xf32>, %cu_q: tensor<4xi32>, %cu_k: tensor<4xi32>) -> (tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse varlen(%cu_q, %cu_k : tensor<4xi32>, tensor<4xi32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<1x8x300x64xf16>, tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>, tensor<1x8x300x64xf16>, tensor<1x8x300xf32>
      -> tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>
  return %dq, %dk, %dv : tensor<1x8x300x64xf16>, tensor<1x2x500x64xf16>, tensor<1x2x500x64xf16>
}

// -----

// A packed batch's forward takes the sm90ws forward's tiles too, as the
// dense op of its shapes would (the varlen tile scheduler places one tile
// a block, VarlenScheduler.h).
// CHECK-LABEL: func.func @varlen
// CHECK: config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>
func.func @varlen(%q: tensor<1x16x1000x128xbf16>, %k: tensor<1x4x1000x128xbf16>,
                  %cu: tensor<9xi32>) -> tensor<1x16x1000x128xbf16> {
  %o = flash.attention %q, %k, %k varlen(%cu, %cu : tensor<9xi32>, tensor<9xi32>)
      {causal = #flash.causal<top_left>}
      : tensor<1x16x1000x128xbf16>, tensor<1x4x1000x128xbf16>, tensor<1x4x1000x128xbf16>
      -> tensor<1x16x1000x128xbf16>
  return %o : tensor<1x16x1000x128xbf16>
}
