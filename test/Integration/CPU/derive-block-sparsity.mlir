// flash-derive-block-sparsity keeps the function: each flash.attention
// with a mask_mod, dense (naive lowering) and with the lists the pass
// derives (tiled loops lowering, which visits only the listed blocks and
// skips the mask_mod in full ones; and the naive one, which reads the
// lists as a mask), on the same random inputs. Document ids computed at run
// time get lists computed at run time. A block wrongly listed as
// full (its mask_mod not applied) or wrongly skipped changes the result.
// Sequence lengths are not multiples of the blocks (short last blocks).
// Each input is one function in a module (the script appends a driver).
// The ops_* cases exercise each integer op the evaluator models; the
// *_per_head / *_per_batch cases read h / b and get lists per head / batch.
// The window_global_d* cases are its flash.attention_grad, one gradient
// each (dQ, dK, dV), on random dO, O and LSE: dense and block-sparse agree
// on any inputs.
// RUN: split-file %s %t
// RUN: python3 %flashfuse_src_root/scripts/check_raise_numerics.py --opt flashfuse-opt \
// RUN:   --pass="--flash-derive-block-sparsity=block-q=32 block-k=32" --count="block_sparse(" \
// RUN:   --after-lowering=loops \
// RUN:   %t/causal.mlir %t/window_global.mlir %t/prefix_br.mlir %t/documents.mlir \
// RUN:   %t/dilated_causal.mlir %t/fixed_documents_gqa.mlir \
// RUN:   %t/runtime_documents.mlir %t/random_ids.mlir %t/batch_documents.mlir \
// RUN:   %t/ops_floordiv.mlir %t/ops_ceildiv.mlir %t/ops_remsi.mlir %t/ops_select_casts.mlir %t/ops_minmax.mlir \
// RUN:   %t/window_per_head.mlir %t/prefix_per_batch.mlir \
// RUN:   %t/window_global_dq.mlir %t/window_global_dk.mlir %t/window_global_dv.mlir | FileCheck %s
// RUN: python3 %flashfuse_src_root/scripts/check_raise_numerics.py --opt flashfuse-opt \
// RUN:   --pass="--flash-derive-block-sparsity=block-q=64 block-k=16" --count="full_blocks(" \
// RUN:   %t/causal.mlir %t/window_global.mlir %t/prefix_br.mlir %t/window_global_dk.mlir | FileCheck %s --check-prefix=NAIVE

// CHECK-NOT: {{BAD|ERROR}}
// CHECK-COUNT-19: OK
// CHECK-NOT: {{BAD|ERROR}}
// NAIVE-NOT: {{BAD|ERROR}}
// NAIVE-COUNT-4: OK
// NAIVE-NOT: {{BAD|ERROR}}

//--- causal.mlir
module {
func.func @causal(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>) -> tensor<1x2x200x32xf32> {
  %o = flash.attention %q, %k, %v : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32> -> tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi sle, %j, %i : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x200x32xf32>
}
}

//--- window_global.mlir
// |q - k| < 40, or one of the first 16 keys or queries.
module {
func.func @window_global(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>) -> tensor<1x2x200x32xf32> {
  %o = flash.attention %q, %k, %v : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32> -> tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 40 : index
    %g = arith.constant 16 : index
    %d1 = arith.subi %i, %j : index
    %d2 = arith.subi %j, %i : index
    %n1 = arith.cmpi slt, %d1, %w : index
    %n2 = arith.cmpi slt, %d2, %w : index
    %near = arith.andi %n1, %n2 : i1
    %gk = arith.cmpi slt, %j, %g : index
    %gq = arith.cmpi slt, %i, %g : index
    %glob = arith.ori %gk, %gq : i1
    %keep = arith.ori %near, %glob : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x200x32xf32>
}
}

//--- window_global_dq.mlir
// The gradient of window_global's mask (its dq): the lists derived
// for flash.attention_grad, walked key block by key block.
module {
func.func @window_global_dq(%do: tensor<1x2x200x32xf32>, %q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>, %o: tensor<1x2x200x32xf32>, %lse: tensor<1x2x200xf32>) -> tensor<1x2x200x32xf32> {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200xf32> -> tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 40 : index
    %g = arith.constant 16 : index
    %d1 = arith.subi %i, %j : index
    %d2 = arith.subi %j, %i : index
    %n1 = arith.cmpi slt, %d1, %w : index
    %n2 = arith.cmpi slt, %d2, %w : index
    %near = arith.andi %n1, %n2 : i1
    %gk = arith.cmpi slt, %j, %g : index
    %gq = arith.cmpi slt, %i, %g : index
    %glob = arith.ori %gk, %gq : i1
    %keep = arith.ori %near, %glob : i1
    flash.yield %keep : i1
  }
  return %dq : tensor<1x2x200x32xf32>
}
}

//--- window_global_dk.mlir
// The gradient of window_global's mask (its dk): the lists derived
// for flash.attention_grad, walked key block by key block.
module {
func.func @window_global_dk(%do: tensor<1x2x200x32xf32>, %q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>, %o: tensor<1x2x200x32xf32>, %lse: tensor<1x2x200xf32>) -> tensor<1x2x200x32xf32> {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200xf32> -> tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 40 : index
    %g = arith.constant 16 : index
    %d1 = arith.subi %i, %j : index
    %d2 = arith.subi %j, %i : index
    %n1 = arith.cmpi slt, %d1, %w : index
    %n2 = arith.cmpi slt, %d2, %w : index
    %near = arith.andi %n1, %n2 : i1
    %gk = arith.cmpi slt, %j, %g : index
    %gq = arith.cmpi slt, %i, %g : index
    %glob = arith.ori %gk, %gq : i1
    %keep = arith.ori %near, %glob : i1
    flash.yield %keep : i1
  }
  return %dk : tensor<1x2x200x32xf32>
}
}

//--- window_global_dv.mlir
// The gradient of window_global's mask (its dv): the lists derived
// for flash.attention_grad, walked key block by key block.
module {
func.func @window_global_dv(%do: tensor<1x2x200x32xf32>, %q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>, %o: tensor<1x2x200x32xf32>, %lse: tensor<1x2x200xf32>) -> tensor<1x2x200x32xf32> {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200xf32> -> tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 40 : index
    %g = arith.constant 16 : index
    %d1 = arith.subi %i, %j : index
    %d2 = arith.subi %j, %i : index
    %n1 = arith.cmpi slt, %d1, %w : index
    %n2 = arith.cmpi slt, %d2, %w : index
    %near = arith.andi %n1, %n2 : i1
    %gk = arith.cmpi slt, %j, %g : index
    %gq = arith.cmpi slt, %i, %g : index
    %glob = arith.ori %gk, %gq : i1
    %keep = arith.ori %near, %glob : i1
    flash.yield %keep : i1
  }
  return %dv : tensor<1x2x200x32xf32>
}
}

//--- prefix_br.mlir
// Prefix-LM over Sq = 150 queries and Sk = 230 keys (the queries are the
// last 150): the first 70 keys, or causal bottom-right; the op's own
// bottom-right causal attribute and a left window of 120 on top.
module {
func.func @prefix_br(%q: tensor<1x2x150x32xf32>, %k: tensor<1x2x230x32xf32>, %v: tensor<1x2x230x32xf32>) -> tensor<1x2x150x32xf32> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<bottom_right>, window_left = 120 : i64} : tensor<1x2x150x32xf32>, tensor<1x2x230x32xf32>, tensor<1x2x230x32xf32> -> tensor<1x2x150x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %p = arith.constant 70 : index
    %off = arith.constant 80 : index
    %inprefix = arith.cmpi ult, %j, %p : index
    %diag = arith.addi %i, %off : index
    %causal = arith.cmpi sle, %j, %diag : index
    %keep = arith.ori %inprefix, %causal : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x150x32xf32>
}
}

//--- documents.mlir
// Documents from a constant id table: [0, 50), [50, 130), [130, 200).
module {
func.func @documents(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>) -> tensor<1x2x200x32xf32> {
  %ids = arith.constant dense<[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]> : tensor<200xi32>
  %o = flash.attention %q, %k, %v : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32> -> tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<200xi32>
    %dj = tensor.extract %ids[%j] : tensor<200xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x200x32xf32>
}
}

//--- dilated_causal.mlir
module {
func.func @dilated_causal(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>) -> tensor<1x2x200x32xf32> {
  %o = flash.attention %q, %k, %v : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32> -> tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %d = arith.subi %i, %j : index
    %r = arith.remsi %d, %c2 : index
    %even = arith.cmpi eq, %r, %c0 : index
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %even, %causal : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x200x32xf32>
}
}

//--- fixed_documents_gqa.mlir
// Documents of 50 tokens from the indices, 4 query heads over 2 KV heads,
// a score_mod (ALiBi-like) applied in every block, full ones included.
module {
func.func @fixed_documents_gqa(%q: tensor<1x4x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>) -> tensor<1x4x200x32xf32> {
  %o = flash.attention %q, %k, %v : tensor<1x4x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32> -> tensor<1x4x200x32xf32>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %c = arith.constant 0.0625 : f32
    %bias = arith.mulf %df, %c : f32
    %r = arith.addf %s, %bias : f32
    flash.yield %r : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c50 = arith.constant 50 : index
    %di = arith.divsi %i, %c50 : index
    %dj = arith.divsi %j, %c50 : index
    %keep = arith.cmpi eq, %di, %dj : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x4x200x32xf32>
}
}

//--- runtime_documents.mlir
// Documents of 37 tokens whose ids are computed at run time (offset by a
// random input), and-ed with causal: the lists are computed at run time.
module {
func.func @runtime_documents(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>, %base: tensor<1xi64>) -> tensor<1x2x200x32xf32> {
  %c0 = arith.constant 0 : index
  %c37 = arith.constant 37 : index
  %b0 = tensor.extract %base[%c0] : tensor<1xi64>
  %ids = tensor.generate {
  ^bb0(%t: index):
    %d = arith.divui %t, %c37 : index
    %di = arith.index_cast %d : index to i64
    %id = arith.addi %di, %b0 : i64
    tensor.yield %id : i64
  } : tensor<200xi64>
  %o = flash.attention %q, %k, %v : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32> -> tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<200xi64>
    %dj = tensor.extract %ids[%j] : tensor<200xi64>
    %same = arith.cmpi eq, %di, %dj : i64
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %same, %causal : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x200x32xf32>
}
}

//--- random_ids.mlir
// Ids drawn at random per token (below 32): blocks mostly partial, some
// skipped where short blocks' ranges are disjoint.
module {
func.func @random_ids(%q: tensor<1x2x100x32xf32>, %k: tensor<1x2x100x32xf32>, %v: tensor<1x2x100x32xf32>, %ids: tensor<100xi64>) -> tensor<1x2x100x32xf32> {
  %o = flash.attention %q, %k, %v : tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<1x2x100x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%i] : tensor<100xi64>
    %dj = tensor.extract %ids[%j] : tensor<100xi64>
    %keep = arith.cmpi eq, %di, %dj : i64
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x100x32xf32>
}
}

//--- batch_documents.mlir
// Per-batch document ids ([B, S]: batch 0 in documents of 30 tokens, batch
// 1 of 45), computed at run time, and-ed with causal: lists per batch.
module {
func.func @batch_documents(%q: tensor<2x2x100x32xf32>, %k: tensor<2x2x100x32xf32>, %v: tensor<2x2x100x32xf32>, %base: tensor<1xi64>) -> tensor<2x2x100x32xf32> {
  %c0 = arith.constant 0 : index
  %c30 = arith.constant 30 : index
  %c15 = arith.constant 15 : index
  %b0 = tensor.extract %base[%c0] : tensor<1xi64>
  %ids = tensor.generate {
  ^bb0(%r: index, %t: index):
    %len0 = arith.muli %r, %c15 : index
    %len = arith.addi %len0, %c30 : index
    %d = arith.divui %t, %len : index
    %di = arith.index_cast %d : index to i64
    %id = arith.addi %di, %b0 : i64
    tensor.yield %id : i64
  } : tensor<2x100xi64>
  %o = flash.attention %q, %k, %v : tensor<2x2x100x32xf32>, tensor<2x2x100x32xf32>, tensor<2x2x100x32xf32> -> tensor<2x2x100x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%b, %i] : tensor<2x100xi64>
    %dj = tensor.extract %ids[%b, %j] : tensor<2x100xi64>
    %same = arith.cmpi eq, %di, %dj : i64
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %same, %causal : i1
    flash.yield %keep : i1
  }
  return %o : tensor<2x2x100x32xf32>
}
}

//--- ops_floordiv.mlir
// A band through floordivsi of a signed difference: 0 <= q - k < 50.
module {
func.func @ops_floordiv(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>) -> tensor<1x2x200x32xf32> {
  %o = flash.attention %q, %k, %v : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32> -> tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c0 = arith.constant 0 : index
    %c50 = arith.constant 50 : index
    %d = arith.subi %i, %j : index
    %f = arith.floordivsi %d, %c50 : index
    %keep = arith.cmpi eq, %f, %c0 : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x200x32xf32>
}
}

//--- ops_ceildiv.mlir
// Chunked causal through ceildivsi on i32: ceil(k / 30) <= ceil(q / 30).
module {
func.func @ops_ceildiv(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>) -> tensor<1x2x200x32xf32> {
  %o = flash.attention %q, %k, %v : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32> -> tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c30 = arith.constant 30 : i32
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %ci = arith.ceildivsi %ii, %c30 : i32
    %cj = arith.ceildivsi %jj, %c30 : i32
    %keep = arith.cmpi sle, %cj, %ci : i32
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x200x32xf32>
}
}

//--- ops_remsi.mlir
// remsi of a negative difference (the dividend's sign): keeps q >= k and
// the keys 64, 128, ... after the query.
module {
func.func @ops_remsi(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>) -> tensor<1x2x200x32xf32> {
  %o = flash.attention %q, %k, %v : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32> -> tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %cm1 = arith.constant -1 : index
    %c64 = arith.constant 64 : index
    %d = arith.subi %i, %j : index
    %r = arith.remsi %d, %c64 : index
    %keep = arith.cmpi sgt, %r, %cm1 : index
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x200x32xf32>
}
}

//--- ops_select_casts.mlir
// select between two prefixes, through extui / trunci / extsi / index_castui.
module {
func.func @ops_select_casts(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>) -> tensor<1x2x200x32xf32> {
  %o = flash.attention %q, %k, %v : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32> -> tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c100 = arith.constant 100 : index
    %c50 = arith.constant 50 : i64
    %c150 = arith.constant 150 : i64
    %top = arith.cmpi ult, %i, %c100 : index
    %j64 = arith.index_castui %j : index to i64
    %lim = arith.select %top, %c50, %c150 : i64
    %lt = arith.cmpi slt, %j64, %lim : i64
    %w = arith.extui %lt : i1 to i32
    %n = arith.extsi %lt : i1 to i8
    %t = arith.trunci %w : i32 to i1
    %m1 = arith.constant -1 : i8
    %neg = arith.cmpi eq, %n, %m1 : i8
    %keep = arith.andi %t, %neg : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x200x32xf32>
}
}

//--- ops_minmax.mlir
// maxsi / minsi / maxui / minui / divui / remui / andi of indices.
module {
func.func @ops_minmax(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>) -> tensor<1x2x200x32xf32> {
  %o = flash.attention %q, %k, %v : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32> -> tensor<1x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c120 = arith.constant 120 : index
    %c160 = arith.constant 160 : index
    %c7 = arith.constant 7 : index
    %c40 = arith.constant 40 : index
    %mx = arith.maxsi %i, %j : index
    %mn = arith.minui %i, %j : index
    %a = arith.cmpi slt, %mx, %c120 : index
    %bq = arith.cmpi sge, %mn, %c160 : index
    %qd = arith.divui %i, %c40 : index
    %kr = arith.remui %j, %c40 : index
    %kd = arith.divui %j, %c40 : index
    %same = arith.cmpi eq, %qd, %kd : index
    %lo = arith.andi %kr, %c7 : index
    %x = arith.maxui %lo, %kr : index
    %early = arith.cmpi ult, %x, %c40 : index
    %s2 = arith.andi %same, %early : i1
    %ab = arith.ori %a, %bq : i1
    %keep = arith.ori %ab, %s2 : i1
    flash.yield %keep : i1
  }
  return %o : tensor<1x2x200x32xf32>
}
}

//--- window_per_head.mlir
module {
func.func @window_per_head(%q: tensor<2x3x200x32xf32>, %k: tensor<2x3x200x32xf32>, %v: tensor<2x3x200x32xf32>) -> tensor<2x3x200x32xf32> {
  %o = flash.attention %q, %k, %v : tensor<2x3x200x32xf32>, tensor<2x3x200x32xf32>, tensor<2x3x200x32xf32> -> tensor<2x3x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %c40 = arith.constant 40 : index
    %h1 = arith.addi %h, %c1 : index
    %w = arith.muli %h1, %c40 : index
    %d = arith.subi %i, %j : index
    %causal = arith.cmpi sle, %j, %i : index
    %near = arith.cmpi slt, %d, %w : index
    %keep = arith.andi %causal, %near : i1
    flash.yield %keep : i1
  }
  return %o : tensor<2x3x200x32xf32>
}
}

//--- prefix_per_batch.mlir
module {
func.func @prefix_per_batch(%q: tensor<3x2x200x32xf32>, %k: tensor<3x2x200x32xf32>, %v: tensor<3x2x200x32xf32>) -> tensor<3x2x200x32xf32> {
  %o = flash.attention %q, %k, %v : tensor<3x2x200x32xf32>, tensor<3x2x200x32xf32>, tensor<3x2x200x32xf32> -> tensor<3x2x200x32xf32>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %c50 = arith.constant 50 : index
    %b1 = arith.addi %b, %c1 : index
    %prefix = arith.muli %b1, %c50 : index
    %causal = arith.cmpi sle, %j, %i : index
    %inprefix = arith.cmpi slt, %j, %prefix : index
    %keep = arith.ori %causal, %inprefix : i1
    flash.yield %keep : i1
  }
  return %o : tensor<3x2x200x32xf32>
}
}
