// RUN: flashfuse-opt %s -flash-lower-to-gpu -split-input-file -verify-diagnostics

// Only additive score_mods (derivative 1) have a backward: scaling the
// score is refused.
func.func @score_mod(%do: tensor<1x1x64x64xf16>, %q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{score_mod of this form has no gradient lowering: only a score_mod yielding score, score + f(b, h, q_idx, kv_idx), score - f(b, h, q_idx, kv_idx), fma(f, g, score) or a chain of these is differentiated (derivative 1)}}
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %q, %o, %lse {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64xf32> -> tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %two = arith.constant 2.0 : f32
    %r = arith.mulf %s, %two : f32
    flash.yield %r : f32
  }
  return %dq : tensor<1x1x64x64xf16>
}

// -----

// Past D + Dv = 320 two warps share each 16-key tile (column groups of dK
// and dV): block_n must be a multiple of 8 * warps.
func.func @d256(%do: tensor<1x1x64x256xf16>, %o: tensor<1x1x64x256xf16>, %lse: tensor<1x1x64xf32>) -> tensor<1x1x64x256xf16> {
  // expected-error @+1 {{the sm80 backward needs an even number of warps and block_n = 16 a multiple of 8 * warps (32) at D = 256, Dv = 256: two warps share each 16-key tile and split the columns of its dK and dV}}
  %dq, %dk, %dv = flash.attention_grad %do, %do, %do, %do, %o, %lse {config = #flash.config<sm80, block_m = 16, block_n = 16, warps = 4, stages = 2>} : tensor<1x1x64x256xf16>, tensor<1x1x64x256xf16>, tensor<1x1x64x256xf16>, tensor<1x1x64x256xf16>, tensor<1x1x64x256xf16>, tensor<1x1x64xf32> -> tensor<1x1x64x256xf16>, tensor<1x1x64x256xf16>, tensor<1x1x64x256xf16>
  return %dq : tensor<1x1x64x256xf16>
}

// -----

// Each warp owns 16-key tiles: block_n must be a multiple of 16 * warps.
func.func @narrow_keys(%do: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{the sm80 backward needs block_n = 32 to be a multiple of 16 * warps (64)}}
  %dq, %dk, %dv = flash.attention_grad %do, %do, %do, %do, %do, %lse {config = #flash.config<sm80, block_m = 64, block_n = 32, warps = 4, stages = 2>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64xf32> -> tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
  return %dq : tensor<1x1x64x64xf16>
}

// -----

// grad_bias needs the full [B, Hq, Sq, Sk] statically (the kernel writes it
// full-size before the broadcast dimensions are summed).
func.func @dynamic_dbias(%do: tensor<?x2x64x64xf16>, %lse: tensor<?x2x64xf32>, %bias: tensor<?x2x64x64xf32>) -> tensor<?x2x64x64xf32> {
  // expected-error @+1 {{the GPU backward computes 'grad_bias' for a static bias of shape [B, Hq, Sq, Sk] = [?, 2, 64, 64] or a broadcast of it (size-1 dimensions), got 'tensor<?x2x64x64xf32>'}}
  %dq, %dk, %dv, %db = flash.attention_grad %do, %do, %do, %do, %do, %lse bias(%bias : tensor<?x2x64x64xf32>) {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<?x2x64x64xf16>, tensor<?x2x64x64xf16>, tensor<?x2x64x64xf16>, tensor<?x2x64x64xf16>, tensor<?x2x64x64xf16>, tensor<?x2x64xf32> -> tensor<?x2x64x64xf16>, tensor<?x2x64x64xf16>, tensor<?x2x64x64xf16>, tensor<?x2x64x64xf32>
  return %db : tensor<?x2x64x64xf32>
}

// -----

// The sm90 backward's warpgroups own 64 keys and 64-row query blocks: a
// 32-row block_m has no wgmma shape.
func.func @sm90_rows(%do: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{the sm90 backward needs warps a multiple of 4, block_n = 16 * warps (8 * warps where two warpgroups share keys), block_m a multiple of 64 and at most threads / 2 (one LSE or Dsum copy per thread) whose 64-row blocks split the warpgroups into dQ slices of 32 or a multiple of 64 columns, D = Dv in {64, 128} (or D + Dv past 256, column halves) and tiles whose 16-byte chunks the threads divide (sm90ws: block_m a multiple of 32 and stages >= 2); got block_m = 32, block_n = 128, warps = 8, stages = 2, D = 64, Dv = 64}}
  %dq, %dk, %dv = flash.attention_grad %do, %do, %do, %do, %do, %lse {config = #flash.config<sm90, block_m = 32, block_n = 128, warps = 8, stages = 2>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64xf32> -> tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
  return %dq : tensor<1x1x64x64xf16>
}

// -----

// One LSE or Dsum copy per thread: 256 threads stage at most 128 rows.
func.func @sm90_stats(%do: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{got block_m = 256, block_n = 128, warps = 8, stages = 2, D = 64}}
  %dq, %dk, %dv = flash.attention_grad %do, %do, %do, %do, %do, %lse {config = #flash.config<sm90, block_m = 256, block_n = 128, warps = 8, stages = 2>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64xf32> -> tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
  return %dq : tensor<1x1x64x64xf16>
}
