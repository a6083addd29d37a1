// Every verifier message of the block-sparse form of flash.attention and
// flash.attention_grad, one case each.
// RUN: flashfuse-opt %s -split-input-file -verify-diagnostics

func.func @size_without_lists(%q: tensor<1x2x256x32xf16>) {
  // expected-error @below {{'sparse_block_size' is given but there are no block_sparse(...) lists}}
  %o = flash.attention %q, %q, %q {sparse_block_size = array<i64: 128, 128>}
      : tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>
      -> tensor<1x2x256x32xf16>
  return
}

// -----

// The custom form cannot give one operand of a pair alone; the generic
// form can.
func.func @only_num(%q: tensor<1x2x256x32xf16>, %n: tensor<1x2x2xi32>) {
  // expected-error @below {{'kv_num_blocks' and 'kv_indices' must be given together (block_sparse), got only 'kv_num_blocks'}}
  %o = "flash.attention"(%q, %q, %q, %n)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0>}> ({}, {})
      : (tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x2xi32>) -> tensor<1x2x256x32xf16>
  return
}

// -----

func.func @only_full_indices(%q: tensor<1x2x256x32xf16>, %n: tensor<1x2x2xi32>, %i: tensor<1x2x2x2xi32>) {
  // expected-error @below {{'full_kv_num_blocks' and 'full_kv_indices' must be given together (full_blocks), got only 'full_kv_indices'}}
  %o = "flash.attention"(%q, %q, %q, %n, %i, %i)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 0>}> ({}, {})
      : (tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x2xi32>, tensor<1x2x2x2xi32>, tensor<1x2x2x2xi32>) -> tensor<1x2x256x32xf16>
  return
}

// -----

func.func @full_without_partial(%q: tensor<1x2x256x32xf16>, %n: tensor<1x2x2xi32>, %i: tensor<1x2x2x2xi32>) {
  // expected-error @below {{full_blocks(...) needs the partial lists block_sparse('kv_num_blocks', 'kv_indices')}}
  %o = flash.attention %q, %q, %q
      full_blocks(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>)
      : tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>
      -> tensor<1x2x256x32xf16>
  return
}

// -----

func.func @size_three(%q: tensor<1x2x256x32xf16>, %n: tensor<1x2x2xi32>, %i: tensor<1x2x2x2xi32>) {
  // expected-error @below {{'sparse_block_size' must have 2 elements [BQ, BK], got [128, 128, 1]}}
  %o = flash.attention %q, %q, %q
      block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>)
      {sparse_block_size = array<i64: 128, 128, 1>}
      : tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>
      -> tensor<1x2x256x32xf16>
  return
}

// -----

func.func @size_zero(%q: tensor<1x2x256x32xf16>, %n: tensor<1x2x2xi32>, %i: tensor<1x2x2x2xi32>) {
  // expected-error @below {{'sparse_block_size' must be positive, got [128, 0]}}
  %o = flash.attention %q, %q, %q
      block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>)
      {sparse_block_size = array<i64: 128, 0>}
      : tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>
      -> tensor<1x2x256x32xf16>
  return
}

// -----

// Lists are i32, as FlexAttention's.
func.func @lists_i64(%q: tensor<1x2x256x32xf16>, %n: tensor<1x2x2xi64>, %i: tensor<1x2x2x2xi64>) {
  // expected-error @below {{operand #3 must be ranked tensor of 32-bit signless integer values, but got 'tensor<1x2x2xi64>'}}
  %o = flash.attention %q, %q, %q
      block_sparse(%n, %i : tensor<1x2x2xi64>, tensor<1x2x2x2xi64>)
      : tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>
      -> tensor<1x2x256x32xf16>
  return
}

// -----

func.func @num_rank2(%q: tensor<1x2x256x32xf16>, %n: tensor<2x2xi32>, %i: tensor<1x2x2x2xi32>) {
  // expected-error @below {{'kv_num_blocks' must have rank 3 ([B, Hq, QB]), got 'tensor<2x2xi32>'}}
  %o = flash.attention %q, %q, %q
      block_sparse(%n, %i : tensor<2x2xi32>, tensor<1x2x2x2xi32>)
      : tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>
      -> tensor<1x2x256x32xf16>
  return
}

// -----

func.func @indices_rank3(%q: tensor<1x2x256x32xf16>, %n: tensor<1x2x2xi32>, %i: tensor<1x2x2xi32>) {
  // expected-error @below {{'kv_indices' must have rank 4 ([B, Hq, QB, N]), got 'tensor<1x2x2xi32>'}}
  %o = flash.attention %q, %q, %q
      block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2xi32>)
      : tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>
      -> tensor<1x2x256x32xf16>
  return
}

// -----

// Sq = 257 needs ceil(257 / 128) = 3 query blocks: the short last block
// counts.
func.func @query_blocks(%q: tensor<1x2x257x32xf16>, %n: tensor<1x2x2xi32>, %i: tensor<1x2x2x3xi32>) {
  // expected-error @below {{'kv_num_blocks' must have shape [1, 2, 3] ([B, Hq, QB], B and Hq may be 1; QB = ceil(Sq / BQ) = ceil(257 / 128)), got [1, 2, 2]}}
  %o = flash.attention %q, %q, %q
      block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x3xi32>)
      : tensor<1x2x257x32xf16>, tensor<1x2x257x32xf16>, tensor<1x2x257x32xf16>
      -> tensor<1x2x257x32xf16>
  return
}

// -----

// H is that of the query heads (GQA: 4 query heads over 2 kv heads).
func.func @kv_heads(%q: tensor<1x4x128x32xf16>, %kv: tensor<1x2x128x32xf16>, %n: tensor<1x2x1xi32>, %i: tensor<1x2x1x1xi32>) {
  // expected-error @below {{'kv_num_blocks' must have shape [1, 4, 1] ([B, Hq, QB], B and Hq may be 1; QB = ceil(Sq / BQ) = ceil(128 / 128)), got [1, 2, 1]}}
  %o = flash.attention %q, %kv, %kv
      block_sparse(%n, %i : tensor<1x2x1xi32>, tensor<1x2x1x1xi32>)
      : tensor<1x4x128x32xf16>, tensor<1x2x128x32xf16>, tensor<1x2x128x32xf16>
      -> tensor<1x4x128x32xf16>
  return
}

// -----

func.func @indices_leading(%q: tensor<2x2x256x32xf16>, %n: tensor<2x1x2xi32>, %i: tensor<1x1x2x2xi32>) {
  // expected-error @below {{'kv_indices' must have shape [2, 1, 2, ?] ([B, Hq, QB, N] with the B, Hq, QB of 'kv_num_blocks'), got [1, 1, 2, 2]}}
  %o = flash.attention %q, %q, %q
      block_sparse(%n, %i : tensor<2x1x2xi32>, tensor<1x1x2x2xi32>)
      : tensor<2x2x256x32xf16>, tensor<2x2x256x32xf16>, tensor<2x2x256x32xf16>
      -> tensor<2x2x256x32xf16>
  return
}

// -----

// The full lists are checked like the partial ones (64-row query blocks).
func.func @full_query_blocks(%q: tensor<1x2x256x32xf16>, %n: tensor<1x2x4xi32>, %i: tensor<1x2x4x4xi32>, %fn: tensor<1x2x2xi32>, %fi: tensor<1x2x2x4xi32>) {
  // expected-error @below {{'full_kv_num_blocks' must have shape [1, 2, 4] ([B, Hq, QB], B and Hq may be 1; QB = ceil(Sq / BQ) = ceil(256 / 64)), got [1, 2, 2]}}
  %o = flash.attention %q, %q, %q
      block_sparse(%n, %i : tensor<1x2x4xi32>, tensor<1x2x4x4xi32>)
      full_blocks(%fn, %fi : tensor<1x2x2xi32>, tensor<1x2x2x4xi32>)
      {sparse_block_size = array<i64: 64, 64>}
      : tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>
      -> tensor<1x2x256x32xf16>
  return
}

// -----

func.func @with_varlen(%q: tensor<1x2x256x32xf16>, %cu: tensor<3xi32>, %n: tensor<1x2x2xi32>, %i: tensor<1x2x2x2xi32>) {
  // expected-error @below {{block_sparse with varlen is not supported yet (the lists would be per packed sequence)}}
  %o = flash.attention %q, %q, %q varlen(%cu, %cu : tensor<3xi32>, tensor<3xi32>)
      block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>)
      : tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>
      -> tensor<1x2x256x32xf16>
  return
}

// -----

func.func @with_mask(%q: tensor<1x2x256x32xf16>, %m: tensor<1x1x256x256xi1>, %n: tensor<1x2x2xi32>, %i: tensor<1x2x2x2xi32>) {
  // expected-error @below {{block_sparse with a 'mask' operand is not supported yet (express the mask as mask_mod)}}
  %o = flash.attention %q, %q, %q mask(%m : tensor<1x1x256x256xi1>)
      block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>)
      : tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x32xf16>
      -> tensor<1x2x256x32xf16>
  return
}

// -----

func.func @with_fp8(%q: tensor<1x2x256x32xf8E4M3FN>, %d: tensor<f32>, %n: tensor<1x2x2xi32>, %i: tensor<1x2x2x2xi32>) {
  // expected-error @below {{block_sparse with FP8 operands is not supported yet}}
  %o = flash.attention %q, %q, %q
      block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>)
      descale(%d, %d, %d : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x256x32xf8E4M3FN>, tensor<1x2x256x32xf8E4M3FN>, tensor<1x2x256x32xf8E4M3FN>
      -> tensor<1x2x256x32xbf16>
  return
}

// -----

// The gradient verifies its lists as the forward does.
func.func @grad_batch(%t: tensor<2x2x256x32xf16>, %lse: tensor<2x2x256xf32>, %n: tensor<3x2x2xi32>, %i: tensor<3x2x2x2xi32>) {
  // expected-error @below {{'kv_num_blocks' must have shape [2, 2, 2] ([B, Hq, QB], B and Hq may be 1; QB = ceil(Sq / BQ) = ceil(256 / 128)), got [3, 2, 2]}}
  %dq, %dk, %dv = flash.attention_grad %t, %t, %t, %t, %t, %lse
      block_sparse(%n, %i : tensor<3x2x2xi32>, tensor<3x2x2x2xi32>)
      : tensor<2x2x256x32xf16>, tensor<2x2x256x32xf16>, tensor<2x2x256x32xf16>,
        tensor<2x2x256x32xf16>, tensor<2x2x256x32xf16>, tensor<2x2x256xf32>
      -> tensor<2x2x256x32xf16>, tensor<2x2x256x32xf16>, tensor<2x2x256x32xf16>
  return
}
