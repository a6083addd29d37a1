// flash-decompose-kvcache: the cache update, the page gather and the
// flash.attention whose mask_mod holds the per-sequence rules.
// RUN: flashfuse-opt %s -split-input-file --flash-decompose-kvcache | FileCheck %s
// Both CPU lowerings run it first and leave no flash op behind.
// RUN: flashfuse-opt %s -split-input-file --flash-lower-naive | FileCheck %s --check-prefix=LOWERED
// RUN: flashfuse-opt %s -split-input-file --flash-lower-to-loops | FileCheck %s --check-prefix=LOWERED
// LOWERED-NOT: flash.

// Contiguous cache, causal and a left window: the caches go to
// flash.attention as they are (Sk = C = 64), without causal or window
// attributes: the band is per sequence and lives in mask_mod, around
// diag(i) = i + (cache_seqlens[b] + 0) - Sq.
// CHECK-LABEL: func.func @contiguous
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x3x32xf32>, %[[K:.*]]: tensor<2x2x64x32xf32>, %[[V:.*]]: tensor<2x2x64x16xf32>, %[[L:.*]]: tensor<2xi32>)
// CHECK-NOT: flash.attention_kvcache
// CHECK: %[[O:.*]], %[[LSE:.*]] = flash.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f32} : tensor<2x4x3x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x16xf32> -> tensor<2x4x3x16xf32>, tensor<2x4x3xf32>
// CHECK-SAME: mask_mod
// CHECK-NEXT: ^bb0(%[[B:.*]]: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: %[[LEN32:.*]] = tensor.extract %[[L]][%[[B]]] : tensor<2xi32>
// CHECK: %[[LEN:.*]] = arith.index_cast %[[LEN32]] : i32 to index
// CHECK-NOT: arith.addi %[[LEN]]
// CHECK: %[[INLEN:.*]] = arith.cmpi slt, %[[J]], %[[LEN]] : index
// CHECK: %[[SQ:.*]] = arith.constant 3 : index
// CHECK: %[[IL:.*]] = arith.addi %[[I]], %[[LEN]] : index
// CHECK: %[[DIAG:.*]] = arith.subi %[[IL]], %[[SQ]]
// CHECK: %[[CAUSAL:.*]] = arith.cmpi sle, %[[J]], %[[DIAG]] : index
// CHECK: arith.andi %[[INLEN]], %[[CAUSAL]]
// CHECK: %[[W:.*]] = arith.constant 8 : index
// CHECK: %[[LEFT:.*]] = arith.subi %[[DIAG]], %[[W]]
// CHECK: arith.cmpi sge, %[[J]], %[[LEFT]] : index
// CHECK: flash.yield
// CHECK: return %[[O]], %[[LSE]]
func.func @contiguous(%q: tensor<2x4x3x32xf32>, %k: tensor<2x2x64x32xf32>,
                      %v: tensor<2x2x64x16xf32>, %lens: tensor<2xi32>)
    -> (tensor<2x4x3x16xf32>, tensor<2x4x3xf32>) {
  %o, %lse = flash.attention_kvcache %q, %k, %v, %lens
      {causal = #flash.causal<bottom_right>, window_left = 8 : i64,
       scale = 0.25 : f32}
      : tensor<2x4x3x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x16xf32>,
        tensor<2xi32>
      -> tensor<2x4x3x16xf32>, tensor<2x4x3xf32>
  return %o, %lse : tensor<2x4x3x16xf32>, tensor<2x4x3xf32>
}

// -----

// Layouts pass through to flash.attention; without causal or window the
// mask keeps exactly the keys below the length.
// CHECK-LABEL: func.func @layouts_no_band
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} {k_perm = array<i64: 0, 2, 1, 3>, q_perm = array<i64: 0, 2, 1, 3>, softcap = 3.000000e+01 : f32, v_perm = array<i64: 0, 2, 1, 3>}
// CHECK: mask_mod
// CHECK: %[[KEEP:.*]] = arith.cmpi slt
// CHECK-NOT: arith.cmpi
// CHECK: flash.yield %[[KEEP]] : i1
func.func @layouts_no_band(%q: tensor<1x2x4x32xf32>, %k: tensor<1x64x2x32xf32>,
                           %v: tensor<1x64x2x32xf32>, %lens: tensor<1xi32>)
    -> tensor<1x2x4x32xf32> {
  %o = flash.attention_kvcache %q, %k, %v, %lens
      {softcap = 30.0 : f32, q_perm = array<i64: 0, 2, 1, 3>,
       k_perm = array<i64: 0, 2, 1, 3>, v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<1x2x4x32xf32>, tensor<1x64x2x32xf32>, tensor<1x64x2x32xf32>,
        tensor<1xi32>
      -> tensor<1x2x4x32xf32>
  return %o : tensor<1x2x4x32xf32>
}

// -----

// Paged: the pool is gathered into a dense [B, Hkv, C, D] cache, C =
// max_pages * page_size = 4 * 16, reading page block_table[b, j / 16]
// (clamped into [0, num_pages)) at row j % 16.
// CHECK-LABEL: func.func @paged
// CHECK-SAME: %[[KP:[^:]*]]: tensor<10x16x2x32xf32>, %[[VP:[^:]*]]: tensor<10x16x2x32xf32>, %[[L:[^:]*]]: tensor<2xi32>, %[[BT:[^:]*]]: tensor<2x4xi32>
// CHECK: %[[KD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2x64x32xf32>)
// CHECK: %[[B:.*]] = linalg.index 0 : index
// CHECK: %[[H:.*]] = linalg.index 1 : index
// CHECK: %[[J:.*]] = linalg.index 2 : index
// CHECK: %[[E:.*]] = linalg.index 3 : index
// CHECK: %[[PS:.*]] = arith.constant 16 : index
// CHECK: %[[SLOT:.*]] = arith.divui %[[J]], %[[PS]]
// CHECK: %[[P32:.*]] = tensor.extract %[[BT]][%[[B]], %[[SLOT]]] : tensor<2x4xi32>
// CHECK: %[[P:.*]] = arith.index_cast %[[P32]] : i32 to index
// CHECK: %[[PLO:.*]] = arith.maxsi %[[P]], %{{.*}}
// CHECK: %[[LAST:.*]] = arith.constant 9 : index
// CHECK: %[[PAGE:.*]] = arith.minsi %[[PLO]], %[[LAST]]
// CHECK: %[[ROW:.*]] = arith.remui %[[J]], %[[PS]]
// CHECK: %[[X:.*]] = tensor.extract %[[KP]][%[[PAGE]], %[[ROW]], %[[H]], %[[E]]] : tensor<10x16x2x32xf32>
// CHECK: linalg.yield %[[X]]
// CHECK: %[[VD:.*]] = linalg.generic
// CHECK: tensor.extract %[[VP]]
// CHECK: flash.attention %{{.*}}, %[[KD]], %[[VD]] : tensor<2x4x1x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32> -> tensor<2x4x1x32xf32> mask_mod
func.func @paged(%q: tensor<2x4x1x32xf32>, %kp: tensor<10x16x2x32xf32>,
                 %vp: tensor<10x16x2x32xf32>, %lens: tensor<2xi32>,
                 %bt: tensor<2x4xi32>) -> tensor<2x4x1x32xf32> {
  %o = flash.attention_kvcache %q, %kp, %vp, %lens
      block_table(%bt : tensor<2x4xi32>)
      : tensor<2x4x1x32xf32>, tensor<10x16x2x32xf32>, tensor<10x16x2x32xf32>,
        tensor<2xi32>
      -> tensor<2x4x1x32xf32>
  return %o : tensor<2x4x1x32xf32>
}

// -----

// new_kv on a paged cache: for each sequence b and new row t, row
// r = cache_seqlens[b] + t is written (if it lies in [0, C) and its page,
// read at a slot kept inside the table, in [0, num_pages): a row is
// dropped, never clamped onto another page) element by element through
// the page table; the updated pools are the op's last results and what the
// gather reads. Snew = 2 enters L_b.
// CHECK-LABEL: func.func @paged_append
// CHECK-SAME: %[[KP:[^:]*]]: tensor<10x16x2x32xf32>, %[[VP:[^:]*]]: tensor<10x16x2x32xf32>, %[[L:[^:]*]]: tensor<2xi32>, %[[BT:[^:]*]]: tensor<2x4xi32>, %[[KN:[^:]*]]: tensor<2x2x2x32xf32>, %[[VN:[^:]*]]: tensor<2x2x2x32xf32>
// CHECK: %[[UP:.*]]:2 = scf.for %[[B:.*]] = %{{.*}} to %c2 step %{{.*}} iter_args(%{{.*}} = %[[KP]], %{{.*}} = %[[VP]])
// CHECK: tensor.extract %[[L]][%[[B]]]
// CHECK: %[[START:.*]] = arith.index_cast
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: %[[R:.*]] = arith.addi %[[START]], %[[T]]
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: %[[CAP:.*]] = arith.constant 64 : index
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[R]], %[[ZERO]]
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[R]], %[[CAP]]
// CHECK: %[[IN:.*]] = arith.andi %[[GE]], %[[LT]]
// CHECK: %[[RSLOT:.*]] = arith.divui %[[R]], %{{.*}}
// CHECK: %[[SAFE:.*]] = arith.select %[[IN]], %[[RSLOT]], %[[ZERO]]
// CHECK: %[[E0:.*]] = tensor.extract %[[BT]][%[[B]], %[[SAFE]]]
// CHECK: %[[P0:.*]] = arith.index_cast %[[E0]]
// CHECK: %[[NP:.*]] = arith.constant 10 : index
// CHECK: %[[PGE:.*]] = arith.cmpi sge, %[[P0]], %[[ZERO]]
// CHECK: %[[PLT:.*]] = arith.cmpi slt, %[[P0]], %[[NP]]
// CHECK: %[[POK:.*]] = arith.andi %[[PGE]], %[[PLT]]
// CHECK: %[[WRITE:.*]] = arith.andi %[[IN]], %[[POK]]
// CHECK: scf.if %[[WRITE]]
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[KACC:[^ ]*]] = {{.*}}, %{{.*}} = %{{.*}})
// CHECK: %[[DL:.*]] = arith.constant 32 : index
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %[[DL]] step %{{.*}} iter_args(%[[KROW:.*]] = %[[KACC]])
// CHECK: %[[X:.*]] = tensor.extract %[[KN]][%[[B]], %[[H]], %[[T]], %[[E]]]
// CHECK: %[[SLOT:.*]] = arith.divui %[[R]], %{{.*}}
// CHECK: tensor.extract %[[BT]][%[[B]], %[[SLOT]]]
// CHECK: arith.maxsi
// CHECK: %[[PAGE:.*]] = arith.minsi
// CHECK: %[[OFF:.*]] = arith.remui %[[R]], %{{.*}}
// CHECK: tensor.insert %[[X]] into %[[KROW]][%[[PAGE]], %[[OFF]], %[[H]], %[[E]]]
// CHECK: tensor.extract %[[VN]][%[[B]], %[[H]], %[[T]], %{{.*}}]
// CHECK: } else {
// CHECK: %[[KD:.*]] = linalg.generic
// CHECK: tensor.extract %[[UP]]#0
// CHECK: %[[VD:.*]] = linalg.generic
// CHECK: tensor.extract %[[UP]]#1
// CHECK: %[[O:.*]] = flash.attention %{{.*}}, %[[KD]], %[[VD]]
// CHECK: mask_mod
// CHECK: %[[SNEW:.*]] = arith.constant 2 : index
// CHECK: arith.addi %{{.*}}, %[[SNEW]] : index
// CHECK: return %[[O]], %[[UP]]#0, %[[UP]]#1
func.func @paged_append(%q: tensor<2x4x2x32xf32>, %kp: tensor<10x16x2x32xf32>,
                        %vp: tensor<10x16x2x32xf32>, %lens: tensor<2xi32>,
                        %bt: tensor<2x4xi32>, %kn: tensor<2x2x2x32xf32>,
                        %vn: tensor<2x2x2x32xf32>)
    -> (tensor<2x4x2x32xf32>, tensor<10x16x2x32xf32>, tensor<10x16x2x32xf32>) {
  %o, %kc, %vc = flash.attention_kvcache %q, %kp, %vp, %lens
      block_table(%bt : tensor<2x4xi32>)
      new_kv(%kn, %vn : tensor<2x2x2x32xf32>, tensor<2x2x2x32xf32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<2x4x2x32xf32>, tensor<10x16x2x32xf32>, tensor<10x16x2x32xf32>,
        tensor<2xi32>
      -> tensor<2x4x2x32xf32>, tensor<10x16x2x32xf32>, tensor<10x16x2x32xf32>
  return %o, %kc, %vc
      : tensor<2x4x2x32xf32>, tensor<10x16x2x32xf32>, tensor<10x16x2x32xf32>
}

// -----

// Negative: flash.attention is not this pass's business and stays as it is.
// CHECK-LABEL: func.func @plain_attention
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = #flash.causal<bottom_right>}
// CHECK-NOT: mask_mod
func.func @plain_attention(%q: tensor<1x2x4x32xf32>, %k: tensor<1x2x64x32xf32>)
    -> tensor<1x2x4x32xf32> {
  %o = flash.attention %q, %k, %k {causal = #flash.causal<bottom_right>}
      : tensor<1x2x4x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
      -> tensor<1x2x4x32xf32>
  return %o : tensor<1x2x4x32xf32>
}

// -----

// new_kv on a contiguous BSHD cache: key_new is read in Q's layout
// [b, t, h, e] and written at [b, r, h, e] of the cache (k_perm), and the
// updated caches go to flash.attention with their perms.
// CHECK-LABEL: func.func @contiguous_append_bshd
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x32x2x16xf32>, %[[V:[^:]*]]: tensor<1x32x2x16xf32>, %[[L:[^:]*]]: tensor<1xi32>, %[[KN:[^:]*]]: tensor<1x3x2x16xf32>
// CHECK: %[[UP:.*]]:2 = scf.for %[[B:.*]] = {{.*}} iter_args(%{{.*}} = %[[K]], %{{.*}} = %[[V]])
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[R:.*]] = arith.addi %{{.*}}, %[[T]]
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: %[[X:.*]] = tensor.extract %[[KN]][%[[B]], %[[T]], %[[H]], %[[E]]]
// CHECK: tensor.insert %[[X]] into %[[ACC]][%[[B]], %[[R]], %[[H]], %[[E]]] : tensor<1x32x2x16xf32>
// CHECK: %[[O:.*]] = flash.attention %{{.*}}, %[[UP]]#0, %[[UP]]#1 {k_perm = array<i64: 0, 2, 1, 3>, q_perm = array<i64: 0, 2, 1, 3>, v_perm = array<i64: 0, 2, 1, 3>}
// CHECK: return %[[O]], %[[UP]]#0, %[[UP]]#1
func.func @contiguous_append_bshd(%q: tensor<1x3x4x16xf32>,
                                  %k: tensor<1x32x2x16xf32>,
                                  %v: tensor<1x32x2x16xf32>,
                                  %lens: tensor<1xi32>,
                                  %kn: tensor<1x3x2x16xf32>,
                                  %vn: tensor<1x3x2x16xf32>)
    -> (tensor<1x3x4x16xf32>, tensor<1x32x2x16xf32>, tensor<1x32x2x16xf32>) {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %lens
      new_kv(%kn, %vn : tensor<1x3x2x16xf32>, tensor<1x3x2x16xf32>)
      {q_perm = array<i64: 0, 2, 1, 3>, k_perm = array<i64: 0, 2, 1, 3>,
       v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<1x3x4x16xf32>, tensor<1x32x2x16xf32>, tensor<1x32x2x16xf32>,
        tensor<1xi32>
      -> tensor<1x3x4x16xf32>, tensor<1x32x2x16xf32>, tensor<1x32x2x16xf32>
  return %o, %kc, %vc
      : tensor<1x3x4x16xf32>, tensor<1x32x2x16xf32>, tensor<1x32x2x16xf32>
}

// -----

// cache_leftpad: key j is also kept only from the sequence's first row on,
// with or without a band.
// CHECK-LABEL: func.func @leftpad
// CHECK-SAME: %[[L:[^:]*]]: tensor<2xi32>, %[[P:[^:]*]]: tensor<2xi32>)
// CHECK: mask_mod
// CHECK-NEXT: ^bb0(%[[B:.*]]: index, %{{.*}}: index, %{{.*}}: index, %[[J:.*]]: index):
// CHECK: %[[INLEN:.*]] = arith.cmpi slt, %[[J]], %{{.*}} : index
// CHECK: %[[P32:.*]] = tensor.extract %[[P]][%[[B]]] : tensor<2xi32>
// CHECK: %[[FIRST:.*]] = arith.index_cast %[[P32]] : i32 to index
// CHECK: %[[FROM:.*]] = arith.cmpi sge, %[[J]], %[[FIRST]] : index
// CHECK: %[[KEEP:.*]] = arith.andi %[[INLEN]], %[[FROM]]
// CHECK-NOT: arith.cmpi
// CHECK: flash.yield %[[KEEP]] : i1
func.func @leftpad(%q: tensor<2x4x1x32xf32>, %k: tensor<2x2x64x32xf32>,
                   %v: tensor<2x2x64x32xf32>, %lens: tensor<2xi32>,
                   %pad: tensor<2xi32>) -> tensor<2x4x1x32xf32> {
  %o = flash.attention_kvcache %q, %k, %v, %lens
      cache_leftpad(%pad : tensor<2xi32>)
      : tensor<2x4x1x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32>,
        tensor<2xi32> -> tensor<2x4x1x32xf32>
  return %o : tensor<2x4x1x32xf32>
}

// -----

// alibi_slopes [B, Hq]: a score_mod subtracts slope[b, h] * |diag(i) - j|,
// diag(i) = i + L_b - Sq with L_b = cache_seqlens[b] + Snew, the distance
// in index arithmetic; the mask_mod is the one without ALiBi.
// CHECK-LABEL: func.func @alibi
// CHECK-SAME: %[[L:[^:]*]]: tensor<2xi32>, %{{[^:]*}}: tensor<2x2x1x32xf32>, %{{[^:]*}}: tensor<2x2x1x32xf32>, %[[S:[^:]*]]: tensor<2x4xf32>)
// CHECK: score_mod
// CHECK-NEXT: ^bb0(%[[SC:.*]]: f32, %[[B:.*]]: index, %[[H:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: %[[SLOPE:.*]] = tensor.extract %[[S]][%[[B]], %[[H]]] : tensor<2x4xf32>
// CHECK: %[[L32:.*]] = tensor.extract %[[L]][%[[B]]] : tensor<2xi32>
// CHECK: %[[LEN0:.*]] = arith.index_cast %[[L32]] : i32 to index
// CHECK: %[[LEN:.*]] = arith.addi %[[LEN0]], %c1
// CHECK: %[[OFF:.*]] = arith.subi %[[LEN]], %c2
// CHECK: %[[DIAG:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK: %[[D:.*]] = arith.subi %[[DIAG]], %[[J]] : index
// CHECK: %[[ND:.*]] = arith.subi %c0{{.*}}, %[[D]] : index
// CHECK: %[[DIST:.*]] = arith.maxsi %[[D]], %[[ND]] : index
// CHECK: %[[D64:.*]] = arith.index_cast %[[DIST]] : index to i64
// CHECK: %[[DF:.*]] = arith.sitofp %[[D64]] : i64 to f32
// CHECK: %[[BIAS:.*]] = arith.mulf %[[SLOPE]], %[[DF]] : f32
// CHECK: %[[R:.*]] = arith.subf %[[SC]], %[[BIAS]] : f32
// CHECK: flash.yield %[[R]] : f32
// CHECK: mask_mod
// CHECK: flash.yield
func.func @alibi(%q: tensor<2x4x2x32xf32>, %k: tensor<2x2x64x32xf32>,
                 %v: tensor<2x2x64x32xf32>, %lens: tensor<2xi32>,
                 %kn: tensor<2x2x1x32xf32>, %vn: tensor<2x2x1x32xf32>,
                 %s: tensor<2x4xf32>) -> tensor<2x4x2x32xf32> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %lens
      new_kv(%kn, %vn : tensor<2x2x1x32xf32>, tensor<2x2x1x32xf32>)
      alibi(%s : tensor<2x4xf32>)
      : tensor<2x4x2x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32>,
        tensor<2xi32> -> tensor<2x4x2x32xf32>, tensor<2x2x64x32xf32>,
        tensor<2x2x64x32xf32>
  return %o : tensor<2x4x2x32xf32>
}

// -----

// rotary(cos, sin): two elementwise generics first, the query's and
// key_new's, each element reading its partner and its position's table
// entries (f32 products, rounded back); the append then writes the rotated
// key_new, and the attention reads the rotated query. Not causal and no
// window: every query row sits at cache_seqlens[b] (no row index added).
// CHECK-LABEL: func.func @rotary
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x4x2x32xbf16>, %{{[^:]*}}: tensor<2x2x64x32xbf16>, %{{[^:]*}}: tensor<2x2x64x32xbf16>, %[[L:[^:]*]]: tensor<2xi32>, %[[KN:[^:]*]]: tensor<2x2x2x32xbf16>, %{{[^:]*}}: tensor<2x2x2x32xbf16>, %[[C:[^:]*]]: tensor<64x8xbf16>, %[[S:[^:]*]]: tensor<64x8xbf16>)
// CHECK: %[[QR:.*]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<2x4x2x32xbf16>)
// CHECK: %[[POS:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK-NOT: arith.addi %[[POS]]
// CHECK: arith.maxsi %[[POS]], %c0{{.*}}
// CHECK: tensor.extract %[[Q]]
// CHECK: tensor.extract %[[C]]
// CHECK: tensor.extract %[[S]]
// CHECK: arith.mulf {{.*}} : f32
// CHECK: arith.subf {{.*}} : f32
// CHECK: arith.addf {{.*}} : f32
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: %[[KR:.*]] = linalg.generic {{.*}} ins(%[[KN]] : tensor<2x2x2x32xbf16>)
// CHECK: %[[KPOS:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: arith.addi %[[KPOS]], %{{.*}} : index
// CHECK: scf.for
// CHECK: tensor.extract %[[KR]]
// CHECK: flash.attention %[[QR]]
func.func @rotary(%q: tensor<2x4x2x32xbf16>, %k: tensor<2x2x64x32xbf16>,
                  %v: tensor<2x2x64x32xbf16>, %lens: tensor<2xi32>,
                  %kn: tensor<2x2x2x32xbf16>, %vn: tensor<2x2x2x32xbf16>,
                  %c: tensor<64x8xbf16>, %s: tensor<64x8xbf16>) -> tensor<2x4x2x32xbf16> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %lens
      new_kv(%kn, %vn : tensor<2x2x2x32xbf16>, tensor<2x2x2x32xbf16>)
      rotary(%c, %s : tensor<64x8xbf16>, tensor<64x8xbf16>)
      : tensor<2x4x2x32xbf16>, tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>,
        tensor<2xi32> -> tensor<2x4x2x32xbf16>, tensor<2x2x64x32xbf16>,
        tensor<2x2x64x32xbf16>
  return %o : tensor<2x4x2x32xbf16>
}

// -----

// cache_batch_idx over a pool of 3 sequences' rows for a batch of 2: a new
// row is written only where its sequence's index lies in [0, 3) (never
// clamped onto another row); the attention reads the pool gathered into
// [B, Hkv, C, D] through the indices clamped into [0, 3).
// CHECK-LABEL: func.func @pool
// CHECK-SAME: %[[IDX:[^:]*]]: tensor<2xi32>, %{{[^:]*}}: tensor<2x2x1x32xf32>, %{{[^:]*}}: tensor<2x2x1x32xf32>)
// CHECK: scf.for
// CHECK: %[[AT0:.*]] = tensor.extract %[[IDX]][%{{.*}}] : tensor<2xi32>
// CHECK: %[[AT:.*]] = arith.index_cast %[[AT0]] : i32 to index
// CHECK: arith.cmpi sge, %[[AT]], %c0
// CHECK: arith.cmpi slt, %[[AT]], %c3
// CHECK: scf.if
// CHECK: %[[G:.*]] = linalg.generic
// CHECK: %[[R0:.*]] = tensor.extract %[[IDX]][%{{.*}}] : tensor<2xi32>
// CHECK: %[[R:.*]] = arith.index_cast %[[R0]] : i32 to index
// CHECK: %[[LO:.*]] = arith.maxsi %[[R]], %c0
// CHECK: %[[HI:.*]] = arith.minsi %[[LO]], %c2
// CHECK: tensor.extract %{{.*}}[%[[HI]], %{{.*}}, %{{.*}}, %{{.*}}] : tensor<3x2x64x32xf32>
// CHECK: flash.attention %{{.*}}, %[[G]], %{{.*}} : tensor<2x4x1x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32>
func.func @pool(%q: tensor<2x4x1x32xf32>, %k: tensor<3x2x64x32xf32>,
                %v: tensor<3x2x64x32xf32>, %lens: tensor<2xi32>,
                %idx: tensor<2xi32>,
                %kn: tensor<2x2x1x32xf32>, %vn: tensor<2x2x1x32xf32>) -> tensor<2x4x1x32xf32> {
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %lens
      cache_batch_idx(%idx : tensor<2xi32>)
      new_kv(%kn, %vn : tensor<2x2x1x32xf32>, tensor<2x2x1x32xf32>)
      : tensor<2x4x1x32xf32>, tensor<3x2x64x32xf32>, tensor<3x2x64x32xf32>,
        tensor<2xi32> -> tensor<2x4x1x32xf32>, tensor<3x2x64x32xf32>,
        tensor<3x2x64x32xf32>
  return %o : tensor<2x4x1x32xf32>
}
