// Operand and result shapes of flash.attention: every message names the
// operand and prints the shape it must have, in its own dimension order.
// RUN: flashfuse-opt %s -split-input-file -verify-diagnostics

func.func @query_rank(%q: tensor<8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
                      %v: tensor<2x8x128x64xf16>) {
  // expected-error @below {{'query' must have rank 4 (logical [B, Hq, Sq, D]), got 'tensor<8x128x64xf16>'}}
  %o = flash.attention %q, %k, %v
      : tensor<8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @query_rank0(%q: tensor<f16>, %k: tensor<2x8x128x64xf16>,
                       %v: tensor<2x8x128x64xf16>) {
  // expected-error @below {{'query' must have rank 4 (logical [B, Hq, Sq, D]), got 'tensor<f16>'}}
  %o = flash.attention %q, %k, %v
      : tensor<f16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @key_rank(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64x1xf16>,
                    %v: tensor<2x8x128x64xf16>) {
  // expected-error @below {{'key' must have rank 4 (logical [B, Hkv, Sk, D]), got 'tensor<2x8x128x64x1xf16>'}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x8x128x64x1xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @value_rank(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
                      %v: tensor<128x64xf16>) {
  // expected-error @below {{'value' must have rank 4 (logical [B, Hkv, Sk, Dv]), got 'tensor<128x64xf16>'}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @key_batch(%q: tensor<2x8x128x64xf16>, %k: tensor<3x8x128x64xf16>,
                     %v: tensor<3x8x128x64xf16>) {
  // expected-error @below {{'key' must have shape [2, ?, ?, 64] (logical [B, Hkv, Sk, D] with B and D of 'query'), got [3, 8, 128, 64]}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<3x8x128x64xf16>, tensor<3x8x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @key_head_dim(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x32xf16>,
                        %v: tensor<2x8x128x64xf16>) {
  // expected-error @below {{'key' must have shape [2, ?, ?, 64] (logical [B, Hkv, Sk, D] with B and D of 'query'), got [2, 8, 128, 32]}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x8x128x32xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

// The expected shape is printed in the operand's own order: K is BSHD here.
func.func @key_head_dim_bshd(%q: tensor<2x8x128x64xf16>, %k: tensor<2x128x8x32xf16>,
                             %v: tensor<2x8x128x64xf16>) {
  // expected-error @below {{'key' must have shape [2, ?, ?, 64] (logical [B, Hkv, Sk, D] with B and D of 'query'), got [2, 128, 8, 32]}}
  %o = flash.attention %q, %k, %v {k_perm = array<i64: 0, 2, 1, 3>}
      : tensor<2x8x128x64xf16>, tensor<2x128x8x32xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @value_seq(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
                     %v: tensor<2x8x100x64xf16>) {
  // expected-error @below {{'value' must have shape [2, 8, 128, ?] (logical [B, Hkv, Sk, Dv] with B, Hkv, Sk of 'key'), got [2, 8, 100, 64]}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x100x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @value_heads(%q: tensor<2x8x128x64xf16>, %k: tensor<2x2x128x64xf16>,
                       %v: tensor<2x4x128x64xf16>) {
  // expected-error @below {{'value' must have shape [2, 2, 128, ?] (logical [B, Hkv, Sk, Dv] with B, Hkv, Sk of 'key'), got [2, 4, 128, 64]}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x4x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

// Q's batch is dynamic; K's static batch still binds V's.
func.func @value_batch_from_key(%q: tensor<?x8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
                                %v: tensor<3x8x128x64xf16>) {
  // expected-error @below {{'value' must have shape [2, 8, 128, ?] (logical [B, Hkv, Sk, Dv] with B, Hkv, Sk of 'key'), got [3, 8, 128, 64]}}
  %o = flash.attention %q, %k, %v
      : tensor<?x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<3x8x128x64xf16>
      -> tensor<?x8x128x64xf16>
  return
}

// -----

func.func @gqa_not_multiple(%q: tensor<2x8x128x64xf16>, %k: tensor<2x3x128x64xf16>,
                            %v: tensor<2x3x128x64xf16>) {
  // expected-error @below {{query heads (8) must be a multiple of key/value heads (3)}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x3x128x64xf16>, tensor<2x3x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

// K's heads are dynamic; V's static count is the one that must divide Hq.
func.func @gqa_heads_from_value(%q: tensor<2x8x128x64xf16>, %k: tensor<2x?x128x64xf16>,
                                %v: tensor<2x3x128x64xf16>) {
  // expected-error @below {{query heads (8) must be a multiple of key/value heads (3)}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x?x128x64xf16>, tensor<2x3x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @zero_kv_heads(%q: tensor<2x8x128x64xf16>, %k: tensor<2x0x128x64xf16>,
                         %v: tensor<2x0x128x64xf16>) {
  // expected-error @below {{'key' and 'value' must have at least one head, got Hkv = 0}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x0x128x64xf16>, tensor<2x0x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @zero_head_dim(%q: tensor<2x8x128x0xf16>, %k: tensor<2x8x128x0xf16>,
                         %v: tensor<2x8x128x64xf16>) {
  // expected-error @below {{head dim D of 'query' and 'key' must be positive, got 0}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x0xf16>, tensor<2x8x128x0xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @zero_value_head_dim(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
                               %v: tensor<2x8x128x0xf16>) {
  // expected-error @below {{head dim Dv of 'value' must be positive, got 0}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x0xf16>
      -> tensor<2x8x128x0xf16>
  return
}

// -----

func.func @output_shape(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x256x64xf16>,
                        %v: tensor<2x8x256x32xf16>) {
  // expected-error @below {{'output' must have shape [2, 8, 128, 32] (logical [B, Hq, Sq, Dv] in the layout of 'query'), got [2, 8, 128, 64]}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x32xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

// With BSHD queries the output is BSHD too.
func.func @output_layout(%q: tensor<2x128x8x64xf16>, %k: tensor<2x8x128x64xf16>,
                         %v: tensor<2x8x128x64xf16>) {
  // expected-error @below {{'output' must have shape [2, 128, 8, 64] (logical [B, Hq, Sq, Dv] in the layout of 'query'), got [2, 8, 128, 64]}}
  %o = flash.attention %q, %k, %v {q_perm = array<i64: 0, 2, 1, 3>}
      : tensor<2x128x8x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @output_rank(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
                       %v: tensor<2x8x128x64xf16>) {
  // expected-error @below {{'output' must have rank 4, got 'tensor<16x128x64xf16>'}}
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
      -> tensor<16x128x64xf16>
  return
}

// -----

func.func @lse_shape(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
                     %v: tensor<2x8x128x64xf16>) {
  // expected-error @below {{'lse' must have shape [2, 8, 128] ([B, Hq, Sq]), got [2, 8, 128, 1]}}
  %o, %lse = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>, tensor<2x8x128x1xf32>
  return
}

// -----

// The LSE is [B, Hq, Sq] whatever the layout of Q.
func.func @lse_not_permuted(%q: tensor<2x128x8x64xf16>, %k: tensor<2x8x128x64xf16>,
                            %v: tensor<2x8x128x64xf16>) {
  // expected-error @below {{'lse' must have shape [2, 8, 128] ([B, Hq, Sq]), got [2, 128, 8]}}
  %o, %lse = flash.attention %q, %k, %v {q_perm = array<i64: 0, 2, 1, 3>}
      : tensor<2x128x8x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x128x8x64xf16>, tensor<2x128x8xf32>
  return
}

// -----

func.func @bias_not_broadcastable(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x256x64xf16>,
                                  %v: tensor<2x8x256x64xf16>, %b: tensor<2x8x128x128xf16>) {
  // expected-error @below {{'bias' must be broadcastable to [2, 8, 128, 256] ([B, Hq, Sq, Sk], each dimension that size or 1), got [2, 8, 128, 128]}}
  %o = flash.attention %q, %k, %v bias(%b : tensor<2x8x128x128xf16>)
      : tensor<2x8x128x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

// Bias and mask are indexed by query heads, not by KV heads.
func.func @bias_kv_heads(%q: tensor<2x8x128x64xf16>, %k: tensor<2x2x128x64xf16>,
                         %v: tensor<2x2x128x64xf16>, %b: tensor<1x2x128x128xf16>) {
  // expected-error @below {{'bias' must be broadcastable to [2, 8, 128, 128] ([B, Hq, Sq, Sk], each dimension that size or 1), got [1, 2, 128, 128]}}
  %o = flash.attention %q, %k, %v bias(%b : tensor<1x2x128x128xf16>)
      : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @bias_rank(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
                     %v: tensor<2x8x128x64xf16>, %b: tensor<128x128xf16>) {
  // expected-error @below {{'bias' must be broadcastable to [2, 8, 128, 128] ([B, Hq, Sq, Sk], each dimension that size or 1), got [128, 128]}}
  %o = flash.attention %q, %k, %v bias(%b : tensor<128x128xf16>)
      : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @mask_not_broadcastable(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
                                  %v: tensor<2x8x128x64xf16>, %m: tensor<2x1x128x64xi1>) {
  // expected-error @below {{'mask' must be broadcastable to [2, 8, 128, 128] ([B, Hq, Sq, Sk], each dimension that size or 1), got [2, 1, 128, 64]}}
  %o = flash.attention %q, %k, %v mask(%m : tensor<2x1x128x64xi1>)
      : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return
}

// -----

// Dynamic sizes are checked where they are known: Sq comes from Q, Sk from
// V when K leaves it dynamic.
func.func @mask_dynamic(%q: tensor<?x?x128x64xf16>, %k: tensor<?x?x?x64xf16>,
                        %v: tensor<?x?x256x64xf16>, %m: tensor<?x1x128x128xi1>) {
  // expected-error @below {{'mask' must be broadcastable to [?, ?, 128, 256] ([B, Hq, Sq, Sk], each dimension that size or 1), got [?, 1, 128, 128]}}
  %o = flash.attention %q, %k, %v mask(%m : tensor<?x1x128x128xi1>)
      : tensor<?x?x128x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x256x64xf16>
      -> tensor<?x?x128x64xf16>
  return
}
