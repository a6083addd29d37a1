// Every verifier message of flash.attention_kvcache (docs/KVCACHE.md).
// RUN: flashfuse-opt %s -split-input-file -verify-diagnostics

// A misspelt variant attribute is an error; dialect-prefixed ones pass.
func.func @unknown_attribute(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'flash.attention_kvcache' op has no attribute 'window' (its attributes: causal, config, k_perm, q_perm, rotary_interleaved, scale, softcap, v_perm, window_left, window_right; dialect-prefixed names pass through)}}
  %o = flash.attention_kvcache %q, %k, %v, %lens {window = 4 : i64, mytool.ok = 1 : i64}
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @bad_perm(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'q_perm' must be a permutation of [0, 1, 2, 3], got [0, 1, 1, 3]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens {q_perm = array<i64: 0, 1, 1, 3>}
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

// A paged cache has its fixed layout.
func.func @k_perm_paged(%q: tensor<2x8x1x64xf16>, %k: tensor<16x32x2x64xf16>, %v: tensor<16x32x2x64xf16>, %lens: tensor<2xi32>, %bt: tensor<2x4xi32>) {
  // expected-error @below {{'k_perm' is not allowed with a paged cache (its layout is fixed: [num_pages, page_size, Hkv, D])}}
  %o = flash.attention_kvcache %q, %k, %v, %lens block_table(%bt : tensor<2x4xi32>) {k_perm = array<i64: 0, 2, 1, 3>}
      : tensor<2x8x1x64xf16>, tensor<16x32x2x64xf16>, tensor<16x32x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @v_perm_paged(%q: tensor<2x8x1x64xf16>, %k: tensor<16x32x2x64xf16>, %v: tensor<16x32x2x64xf16>, %lens: tensor<2xi32>, %bt: tensor<2x4xi32>) {
  // expected-error @below {{'v_perm' is not allowed with a paged cache (its layout is fixed: [num_pages, page_size, Hkv, D])}}
  %o = flash.attention_kvcache %q, %k, %v, %lens block_table(%bt : tensor<2x4xi32>) {v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<2x8x1x64xf16>, tensor<16x32x2x64xf16>, tensor<16x32x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @causal_top_left(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'causal' must be #flash.causal<bottom_right>: each sequence's last query row sits at its own last key (cache_seqlens[b] + Snew - 1), which top_left alignment cannot express}}
  %o = flash.attention_kvcache %q, %k, %v, %lens {causal = #flash.causal<top_left>}
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @scale_inf(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'scale' must be finite, got inf}}
  %o = flash.attention_kvcache %q, %k, %v, %lens {scale = 0x7F800000 : f32}
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @softcap_zero(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'softcap' must be positive and finite, got 0}}
  %o = flash.attention_kvcache %q, %k, %v, %lens {softcap = 0.0 : f32}
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

// FlashAttention's -1 for no window is spelt by leaving the attribute out.
func.func @window_negative(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'window_left' must be non-negative, got -1 (leave it out for no limit)}}
  %o = flash.attention_kvcache %q, %k, %v, %lens {window_left = -1 : i64}
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @query_rank(%q: tensor<2x8x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'query' must have rank 4 (logical [B, Hq, Sq, D]), got 'tensor<2x8x64xf16>'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @key_cache_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'key_cache' must have rank 4 (logical [B, Hkv, C, D]), got 'tensor<2x128x64xf16>'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @value_cache_rank_paged(%q: tensor<2x8x1x64xf16>, %k: tensor<16x32x2x64xf16>, %v: tensor<512x2x64xf16>, %lens: tensor<2xi32>, %bt: tensor<2x4xi32>) {
  // expected-error @below {{'value_cache' must have rank 4 (paged [num_pages, page_size, Hkv, Dv]), got 'tensor<512x2x64xf16>'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens block_table(%bt : tensor<2x4xi32>)
      : tensor<2x8x1x64xf16>, tensor<16x32x2x64xf16>, tensor<512x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @seqlens_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2x1xi32>) {
  // expected-error @below {{'cache_seqlens' must have rank 1 ([B]), got 'tensor<2x1xi32>'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x1xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

// cache_seqlens is i32, as the kernels read it.
func.func @seqlens_type(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi64>) {
  // expected-error @below {{operand #3 must be ranked tensor of 32-bit signless integer values, but got 'tensor<2xi64>'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi64>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @block_table_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<16x32x2x64xf16>, %v: tensor<16x32x2x64xf16>, %lens: tensor<2xi32>, %bt: tensor<8xi32>) {
  // expected-error @below {{'block_table' must have rank 2 ([B, max_pages]), got 'tensor<8xi32>'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens block_table(%bt : tensor<8xi32>)
      : tensor<2x8x1x64xf16>, tensor<16x32x2x64xf16>, tensor<16x32x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

// new_kv's operands come together (only the generic form can split them).
func.func @key_new_alone(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>) {
  // expected-error @below {{'key_new' and 'value_new' must be given together}}
  %o = "flash.attention_kvcache"(%q, %k, %v, %lens, %kn) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>}>
      : (tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>, tensor<2x2x1x64xf16>) -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @key_new_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x64xf16>, %vn: tensor<2x2x1x64xf16>) {
  // expected-error @below {{'key_new' must have rank 4 (logical [B, Hkv, Snew, D]), got 'tensor<2x2x64xf16>'}}
  %r:3 = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %vn : tensor<2x2x64xf16>, tensor<2x2x1x64xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// -----

func.func @value_new_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x64xf16>) {
  // expected-error @below {{'value_new' must have rank 4 (logical [B, Hkv, Snew, Dv]), got 'tensor<2x2x64xf16>'}}
  %r:3 = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %vn : tensor<2x2x1x64xf16>, tensor<2x2x64xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// -----

func.func @output_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'output' must have rank 4 (logical [B, Hq, Sq, Dv]), got 'tensor<2x8x64xf16>'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x64xf16>
  return
}

// -----

func.func @key_cache_element_type(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xbf16>, %v: tensor<2x2x128x64xbf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'key_cache' element type 'bf16' must match 'query' element type 'f16'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @key_new_element_type(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x1x64xf32>) {
  // expected-error @below {{'value_new' element type 'f32' must match 'query' element type 'f16'}}
  %r:3 = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %vn : tensor<2x2x1x64xf16>, tensor<2x2x1x64xf32>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// -----

func.func @output_element_type(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'output' element type 'f32' must match 'query' element type 'f16'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf32>
  return
}

// -----

func.func @paged_head_dim(%q: tensor<2x8x1x64xf16>, %k: tensor<16x32x2x128xf16>, %v: tensor<16x32x2x64xf16>, %lens: tensor<2xi32>, %bt: tensor<2x4xi32>) {
  // expected-error @below {{'key_cache' must have shape [16, 32, 2, 64] (paged [num_pages, page_size, Hkv, D] with D of 'query'), got [16, 32, 2, 128]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens block_table(%bt : tensor<2x4xi32>)
      : tensor<2x8x1x64xf16>, tensor<16x32x2x128xf16>, tensor<16x32x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @paged_value_page_size(%q: tensor<2x8x1x64xf16>, %k: tensor<16x32x2x64xf16>, %v: tensor<16x16x2x64xf16>, %lens: tensor<2xi32>, %bt: tensor<2x4xi32>) {
  // expected-error @below {{'value_cache' must have shape [16, 32, 2, 64] (paged [num_pages, page_size, Hkv, Dv] with num_pages, page_size, Hkv of 'key_cache'), got [16, 16, 2, 64]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens block_table(%bt : tensor<2x4xi32>)
      : tensor<2x8x1x64xf16>, tensor<16x32x2x64xf16>, tensor<16x16x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

// The page size is part of the kernel: it must be static.
func.func @paged_dynamic_page_size(%q: tensor<2x8x1x64xf16>, %k: tensor<16x?x2x64xf16>, %v: tensor<16x?x2x64xf16>, %lens: tensor<2xi32>, %bt: tensor<2x4xi32>) {
  // expected-error @below {{page size (dim 1 of 'key_cache') must be static and positive, got [16, ?, 2, 64]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens block_table(%bt : tensor<2x4xi32>)
      : tensor<2x8x1x64xf16>, tensor<16x?x2x64xf16>, tensor<16x?x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @paged_zero_page_size(%q: tensor<2x8x1x64xf16>, %k: tensor<16x0x2x64xf16>, %v: tensor<16x0x2x64xf16>, %lens: tensor<2xi32>, %bt: tensor<2x4xi32>) {
  // expected-error @below {{page size (dim 1 of 'key_cache') must be static and positive, got [16, 0, 2, 64]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens block_table(%bt : tensor<2x4xi32>)
      : tensor<2x8x1x64xf16>, tensor<16x0x2x64xf16>, tensor<16x0x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @empty_page_pool(%q: tensor<2x8x1x64xf16>, %k: tensor<0x32x2x64xf16>, %v: tensor<0x32x2x64xf16>, %lens: tensor<2xi32>, %bt: tensor<2x4xi32>) {
  // expected-error @below {{the page pool (dim 0 of 'key_cache') must hold at least one page}}
  %o = flash.attention_kvcache %q, %k, %v, %lens block_table(%bt : tensor<2x4xi32>)
      : tensor<2x8x1x64xf16>, tensor<0x32x2x64xf16>, tensor<0x32x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @block_table_batch(%q: tensor<2x8x1x64xf16>, %k: tensor<16x32x2x64xf16>, %v: tensor<16x32x2x64xf16>, %lens: tensor<2xi32>, %bt: tensor<3x4xi32>) {
  // expected-error @below {{'block_table' must have shape [2, ?] ([B, max_pages]), got [3, 4]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens block_table(%bt : tensor<3x4xi32>)
      : tensor<2x8x1x64xf16>, tensor<16x32x2x64xf16>, tensor<16x32x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @key_cache_batch(%q: tensor<2x8x1x64xf16>, %k: tensor<3x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'key_cache' must have shape [2, 2, 128, 64] (logical [B, Hkv, C, D] with B and D of 'query'), got [3, 2, 128, 64]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<3x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

// V must hold as many rows as K; with v_perm the shape is printed in V's own order.
func.func @value_cache_capacity(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x64x100xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'value_cache' must have shape [2, 2, 64, 128] (logical [B, Hkv, C, Dv] with B, Hkv, C of 'key_cache'), got [2, 2, 64, 100]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens {v_perm = array<i64: 0, 1, 3, 2>}
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x64x100xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @seqlens_batch(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<3xi32>) {
  // expected-error @below {{'cache_seqlens' must have shape [2] ([B]), got [3]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<3xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @zero_head_dim(%q: tensor<2x8x1x0xf16>, %k: tensor<2x2x128x0xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{head dim D of 'query' and 'key_cache' must be positive, got 0}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x0xf16>, tensor<2x2x128x0xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @zero_head_dim_v(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x0xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{head dim Dv of 'value_cache' must be positive, got 0}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x0xf16>, tensor<2xi32>
      -> tensor<2x8x1x0xf16>
  return
}

// -----

func.func @dynamic_head_dim_no_scale(%q: tensor<2x8x1x?xf16>, %k: tensor<2x2x128x?xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'scale' must be given when the head dim D is dynamic}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x?xf16>, tensor<2x2x128x?xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @zero_kv_heads(%q: tensor<2x8x1x64xf16>, %k: tensor<2x0x128x64xf16>, %v: tensor<2x0x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'key_cache' and 'value_cache' must have at least one head, got Hkv = 0}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x0x128x64xf16>, tensor<2x0x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @gqa_ratio(%q: tensor<2x8x1x64xf16>, %k: tensor<2x3x128x64xf16>, %v: tensor<2x3x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{query heads (8) must be a multiple of key/value heads (3)}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x3x128x64xf16>, tensor<2x3x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

// new_kv is in the layout of Q (here BSHD), with the cache's Hkv.
func.func @key_new_shape(%q: tensor<2x1x8x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x1x4x64xf16>, %vn: tensor<2x1x4x64xf16>) {
  // expected-error @below {{'key_new' must have shape [2, 1, 2, 64] (logical [B, Hkv, Snew, D] in the layout of 'query'), got [2, 1, 4, 64]}}
  %r:3 = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %vn : tensor<2x1x4x64xf16>, tensor<2x1x4x64xf16>) {q_perm = array<i64: 0, 2, 1, 3>}
      : tensor<2x1x8x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x1x8x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// -----

func.func @value_new_rows(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x3x64xf16>) {
  // expected-error @below {{'value_new' must have shape [2, 2, 1, 64] (logical [B, Hkv, Snew, Dv] in the layout of 'query'), got [2, 2, 3, 64]}}
  %r:3 = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %vn : tensor<2x2x1x64xf16>, tensor<2x2x3x64xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// -----

func.func @query_longer_than_cache(%q: tensor<2x8x200x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'query' has Sq = 200 rows but the cache holds at most C = 128}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x200x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x200x64xf16>
  return
}

// -----

// The paged capacity is max_pages * page_size = 4 * 32.
func.func @new_rows_longer_than_paged_cache(%q: tensor<2x8x1x64xf16>, %k: tensor<16x32x2x64xf16>, %v: tensor<16x32x2x64xf16>, %lens: tensor<2xi32>, %bt: tensor<2x4xi32>, %kn: tensor<2x2x129x64xf16>, %vn: tensor<2x2x129x64xf16>) {
  // expected-error @below {{'key_new' has Snew = 129 rows but the cache holds at most C = 128}}
  %r:3 = flash.attention_kvcache %q, %k, %v, %lens block_table(%bt : tensor<2x4xi32>) new_kv(%kn, %vn : tensor<2x2x129x64xf16>, tensor<2x2x129x64xf16>)
      : tensor<2x8x1x64xf16>, tensor<16x32x2x64xf16>, tensor<16x32x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<16x32x2x64xf16>, tensor<16x32x2x64xf16>
  return
}

// -----

func.func @output_shape(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'output' must have shape [2, 8, 1, 64] (logical [B, Hq, Sq, Dv] in the layout of 'query'), got [2, 8, 2, 64]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x2x64xf16>
  return
}

// -----

func.func @lse_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'lse' must have rank 3 ([B, Hq, Sq]), got 'tensor<2x8xf32>'}}
  %r:2 = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x8xf32>
  return
}

// -----

func.func @lse_shape(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'lse' must have shape [2, 8, 1] ([B, Hq, Sq]), got [2, 4, 1]}}
  %r:2 = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x4x1xf32>
  return
}

// -----

// With new_kv the updated caches are results (only the generic form can drop them).
func.func @new_kv_without_cache_results(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x1x64xf16>) {
  // expected-error @below {{with 'new_kv' the updated caches must be results ('key_cache_out' and 'value_cache_out')}}
  %o = "flash.attention_kvcache"(%q, %k, %v, %lens, %kn, %vn) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>}>
      : (tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>, tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>) -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @cache_results_without_new_kv(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'key_cache_out' and 'value_cache_out' are results only with 'new_kv'}}
  %o:3 = "flash.attention_kvcache"(%q, %k, %v, %lens) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 1, 1>}>
      : (tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>) -> (tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>)
  return
}

// -----

func.func @cache_result_type(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x1x64xf16>) {
  // expected-error @below {{'value_cache_out' must have the type of 'value_cache' 'tensor<2x2x128x64xf16>', got 'tensor<2x2x64x64xf16>'}}
  %r:3 = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %vn : tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x64x64xf16>
  return
}

// -----

func.func @result_count(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @+3 {{expected 1 or 2 result types (O [, LSE]), got 3}}
  %o:3 = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// -----

func.func @result_count_new_kv(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>) {
  // expected-error @+3 {{expected 3 or 4 result types (O [, LSE], key_cache_out, value_cache_out), got 1}}
  %o = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %kn : tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @leftpad_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %pad: tensor<2x1xi32>) {
  // expected-error @below {{'cache_leftpad' must have rank 1 ([B]), got 'tensor<2x1xi32>'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens cache_leftpad(%pad : tensor<2x1xi32>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @leftpad_batch(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %pad: tensor<3xi32>) {
  // expected-error @below {{'cache_leftpad' must have shape [2] ([B]), got [3]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens cache_leftpad(%pad : tensor<3xi32>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

// cache_leftpad is i32, as the kernels read it.
func.func @leftpad_type(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %pad: tensor<2xi64>) {
  // expected-error @below {{operand #4 must be ranked tensor of 32-bit signless integer values, but got 'tensor<2xi64>'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens cache_leftpad(%pad : tensor<2xi64>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @alibi_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %s: tensor<2x8x1xf32>) {
  // expected-error @below {{'alibi_slopes' must be [Hq] or [B, Hq] (rank 1 or 2), got rank 3}}
  %o = flash.attention_kvcache %q, %k, %v, %lens alibi(%s : tensor<2x8x1xf32>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

// One slope a query head, not a kv head.
func.func @alibi_heads(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %s: tensor<2xf32>) {
  // expected-error @below {{'alibi_slopes' must have shape [8] ([Hq] or [B, Hq]), got [2]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens alibi(%s : tensor<2xf32>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @alibi_batch(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %s: tensor<3x8xf32>) {
  // expected-error @below {{'alibi_slopes' must have shape [2, 8] ([Hq] or [B, Hq]), got [3, 8]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens alibi(%s : tensor<3x8xf32>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @alibi_type(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %s: tensor<8xf16>) {
  // expected-error @below {{operand #4 must be ranked tensor of 32-bit float values, but got 'tensor<8xf16>'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens alibi(%s : tensor<8xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

// Rotary embedding: cos and sin together (only the generic form can split them).
func.func @rotary_cos_alone(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x1x64xf16>, %c: tensor<128x32xf16>) {
  // expected-error @below {{'rotary_cos' and 'rotary_sin' must be given together}}
  %o:3 = "flash.attention_kvcache"(%q, %k, %v, %lens, %kn, %vn, %c) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 1, 1>}>
      : (tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>, tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>, tensor<128x32xf16>) -> (tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>)
  return
}

// -----

func.func @rotary_interleaved_alone(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'rotary_interleaved' needs 'rotary_cos' and 'rotary_sin'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens {rotary_interleaved}
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @rotary_without_new_kv(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %c: tensor<128x32xf16>) {
  // expected-error @below {{rotary embedding needs 'new_kv': it rotates the new keys as they are appended}}
  %o = flash.attention_kvcache %q, %k, %v, %lens rotary(%c, %c : tensor<128x32xf16>, tensor<128x32xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @rotary_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x1x64xf16>, %c: tensor<1x128x32xf16>) {
  // expected-error @below {{'rotary_cos' must have rank 2 ([R, rotary_dim / 2]), got 'tensor<1x128x32xf16>'}}
  %o:3 = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %vn : tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>) rotary(%c, %c : tensor<1x128x32xf16>, tensor<1x128x32xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// -----

func.func @rotary_type(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x1x64xf16>, %c: tensor<128x32xf32>) {
  // expected-error @below {{'rotary_cos' element type 'f32' must match 'query' element type 'f16'}}
  %o:3 = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %vn : tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>) rotary(%c, %c : tensor<128x32xf32>, tensor<128x32xf32>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// -----

func.func @rotary_sin_shape(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x1x64xf16>, %c: tensor<128x32xf16>, %s: tensor<128x16xf16>) {
  // expected-error @below {{'rotary_sin' must have shape [128, 32] ([R, rotary_dim / 2] of 'rotary_cos'), got [128, 16]}}
  %o:3 = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %vn : tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>) rotary(%c, %s : tensor<128x32xf16>, tensor<128x16xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// -----

func.func @rotary_dim_too_wide(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x1x64xf16>, %c: tensor<128x40xf16>) {
  // expected-error @below {{rotary_dim = 80 (twice dim 1 of 'rotary_cos') must not exceed the head dim D = 64}}
  %o:3 = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %vn : tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>) rotary(%c, %c : tensor<128x40xf16>, tensor<128x40xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// -----

func.func @rotary_dim_dynamic(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x1x64xf16>, %c: tensor<128x?xf16>) {
  // expected-error @below {{rotary_dim / 2 (dim 1 of 'rotary_cos') must be static and positive, got [128, ?]}}
  %o:3 = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %vn : tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>) rotary(%c, %c : tensor<128x?xf16>, tensor<128x?xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// -----

func.func @rotary_too_few_positions(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x1x64xf16>, %vn: tensor<2x2x1x64xf16>, %c: tensor<127x32xf16>) {
  // expected-error @below {{'rotary_cos' has R = 127 positions but the cache holds C = 128 rows: every row a new key can take needs one}}
  %o:3 = flash.attention_kvcache %q, %k, %v, %lens new_kv(%kn, %vn : tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>) rotary(%c, %c : tensor<127x32xf16>, tensor<127x32xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// -----

// cache_batch_idx: [B], a contiguous pool of at least one sequence whose
// caches agree.
func.func @pool_index_shape(%q: tensor<2x8x1x64xf16>, %k: tensor<5x2x128x64xf16>, %lens: tensor<2xi32>, %idx: tensor<3xi32>) {
  // expected-error @below {{'cache_batch_idx' must have shape [2] ([B]), got [3]}}
  %o = flash.attention_kvcache %q, %k, %k, %lens cache_batch_idx(%idx : tensor<3xi32>)
      : tensor<2x8x1x64xf16>, tensor<5x2x128x64xf16>, tensor<5x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @pool_index_rank(%q: tensor<2x8x1x64xf16>, %k: tensor<5x2x128x64xf16>, %lens: tensor<2xi32>, %idx: tensor<2x1xi32>) {
  // expected-error @below {{'cache_batch_idx' must have rank 1 ([B]), got 'tensor<2x1xi32>'}}
  %o = flash.attention_kvcache %q, %k, %k, %lens cache_batch_idx(%idx : tensor<2x1xi32>)
      : tensor<2x8x1x64xf16>, tensor<5x2x128x64xf16>, tensor<5x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @pool_paged(%q: tensor<2x8x1x64xf16>, %k: tensor<10x16x2x64xf16>, %lens: tensor<2xi32>, %bt: tensor<2x4xi32>, %idx: tensor<2xi32>) {
  // expected-error @below {{'cache_batch_idx' is for a contiguous cache: a paged one reaches each sequence's rows through 'block_table'}}
  %o = flash.attention_kvcache %q, %k, %k, %lens block_table(%bt : tensor<2x4xi32>) cache_batch_idx(%idx : tensor<2xi32>)
      : tensor<2x8x1x64xf16>, tensor<10x16x2x64xf16>, tensor<10x16x2x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @pool_values_differ(%q: tensor<2x8x1x64xf16>, %k: tensor<5x2x128x64xf16>, %v: tensor<4x2x128x64xf16>, %lens: tensor<2xi32>, %idx: tensor<2xi32>) {
  // expected-error @below {{'value_cache' must have shape [5, 2, 128, 64] (logical [Bc, Hkv, C, Dv] with Bc, Hkv, C of 'key_cache'), got [4, 2, 128, 64]}}
  %o = flash.attention_kvcache %q, %k, %v, %lens cache_batch_idx(%idx : tensor<2xi32>)
      : tensor<2x8x1x64xf16>, tensor<5x2x128x64xf16>, tensor<4x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

func.func @pool_empty(%q: tensor<2x8x1x64xf16>, %k: tensor<0x2x128x64xf16>, %lens: tensor<2xi32>, %idx: tensor<2xi32>) {
  // expected-error @below {{with 'cache_batch_idx' the caches must hold at least one sequence (dim Bc of 'key_cache'), got 0}}
  %o = flash.attention_kvcache %q, %k, %k, %lens cache_batch_idx(%idx : tensor<2xi32>)
      : tensor<2x8x1x64xf16>, tensor<0x2x128x64xf16>, tensor<0x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

// Without cache_batch_idx the caches' B is the query's.
func.func @pool_without_indices(%q: tensor<2x8x1x64xf16>, %k: tensor<5x2x128x64xf16>, %lens: tensor<2xi32>) {
  // expected-error @below {{'key_cache' must have shape [2, 2, 128, 64] (logical [B, Hkv, C, D] with B and D of 'query'), got [5, 2, 128, 64]}}
  %o = flash.attention_kvcache %q, %k, %k, %lens
      : tensor<2x8x1x64xf16>, tensor<5x2x128x64xf16>, tensor<5x2x128x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>
  return
}

// -----

// Positions are clamped into [0, R): R = 0 leaves nothing to read.
func.func @rotary_no_positions(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x0x64xf16>, %lens: tensor<2xi32>, %kn: tensor<2x2x0x64xf16>, %c: tensor<0x32xf16>) {
  // expected-error @below {{'rotary_cos' must hold at least one position, got [0, 32]}}
  %o:3 = flash.attention_kvcache %q, %k, %k, %lens new_kv(%kn, %kn : tensor<2x2x0x64xf16>, tensor<2x2x0x64xf16>) rotary(%c, %c : tensor<0x32xf16>, tensor<0x32xf16>)
      : tensor<2x8x1x64xf16>, tensor<2x2x0x64xf16>, tensor<2x2x0x64xf16>, tensor<2xi32>
      -> tensor<2x8x1x64xf16>, tensor<2x2x0x64xf16>, tensor<2x2x0x64xf16>
  return
}
