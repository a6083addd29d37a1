// flash-raise-attention on decode steps over a KV cache: a length mask
// (keys j < L_b, L_b read from the batch only) becomes
// flash.attention_kvcache with cache_seqlens = L_b built in the IR; masks
// that are not lengths keep the dense flash.attention, with a remark under
// explain=true saying why not the KV-cache op.
// RUN: flashfuse-opt --flash-raise-attention="explain=true" --split-input-file --verify-diagnostics %s | FileCheck %s

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#pos = affine_map<(b, h, i, j) -> (0)>

// One new token per sequence at a batch-uniform position (Hugging Face's
// StaticCache): keys j <= pos, so L = pos + 1 (the new row counts).
// CHECK-LABEL: func @decode_position
// CHECK: %[[LEN:.*]] = tensor.generate {
// CHECK: %[[P:.*]] = tensor.extract %arg3[%{{.*}}] : tensor<1xi64>
// CHECK: %[[L:.*]] = arith.addi %{{.*}}, %[[P]] : i64
// CHECK: %[[L32:.*]] = arith.trunci %[[L]] : i64 to i32
// CHECK: tensor.yield %[[L32]] : i32
// CHECK: } : tensor<2xi32>
// CHECK: %[[O:.*]] = flash.attention_kvcache %arg0, %arg1, %arg2, %[[LEN]] {scale = 2.500000e-01 : f32}
// CHECK-NOT: causal
// CHECK-SAME: : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2xi32> -> tensor<2x4x1x16xf32>
// CHECK-NOT: linalg.softmax
// CHECK: return %[[O]]
func.func @decode_position(%q: tensor<2x4x1x16xf32>, %k: tensor<2x4x64x16xf32>, %v: tensor<2x4x64x16xf32>, %pos: tensor<1xi64>) -> tensor<2x4x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x1x64xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>) outs(%fs : tensor<2x4x1x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x64xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #pos, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %pos : tensor<2x4x1x64xf32>, tensor<1xi64>) outs(%es : tensor<2x4x1x64xf32>) {
  ^bb0(%x: f32, %e0: i64, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %j64 = arith.index_cast %j : index to i64
    %keep = arith.cmpi sle, %j64, %e0 : i64
    %sc = arith.mulf %x, %c : f32
    %y = arith.select %keep, %sc, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x1x64xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<2x4x1x64xf32>)
      outs(%es : tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32>
  %eo = tensor.empty() : tensor<2x4x1x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x1x16xf32>) -> tensor<2x4x1x16xf32>
  // expected-remark @+1 {{flash-raise-attention: decode step: the mask keeps keys j < L_b of a KV cache; cache_seqlens = L_b counts the rows the model wrote into the cache before attending, so the op attends over the updated cache without new_kv}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x1x64xf32>, tensor<2x4x64x16xf32>) outs(%fo : tensor<2x4x1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x16xf32>
  return %out : tensor<2x4x1x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#perb = affine_map<(b, h, i, j) -> (b)>

// Lengths per sequence (a batch of different lengths): j < lens[b].
// CHECK-LABEL: func @decode_lengths_per_sequence
// CHECK: %[[LEN:.*]] = tensor.generate {
// CHECK: ^bb0(%[[B:.*]]: index):
// CHECK: %[[X:.*]] = tensor.extract %arg3[%[[B]]] : tensor<2xi32>
// CHECK: arith.extsi %[[X]] : i32 to i64
// CHECK: } : tensor<2xi32>
// CHECK: flash.attention_kvcache %arg0, %arg1, %arg2, %[[LEN]] {scale = 2.500000e-01 : f32}
func.func @decode_lengths_per_sequence(%q: tensor<2x4x1x16xf32>, %k: tensor<2x4x64x16xf32>, %v: tensor<2x4x64x16xf32>, %lens: tensor<2xi32>) -> tensor<2x4x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x1x64xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>) outs(%fs : tensor<2x4x1x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x64xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #perb, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %lens : tensor<2x4x1x64xf32>, tensor<2xi32>) outs(%es : tensor<2x4x1x64xf32>) {
  ^bb0(%x: f32, %e0: i32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %j32 = arith.index_cast %j : index to i32
    %keep = arith.cmpi slt, %j32, %e0 : i32
    %sc = arith.mulf %x, %c : f32
    %y = arith.select %keep, %sc, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x1x64xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<2x4x1x64xf32>)
      outs(%es : tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32>
  %eo = tensor.empty() : tensor<2x4x1x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x1x16xf32>) -> tensor<2x4x1x16xf32>
  // expected-remark @+1 {{flash-raise-attention: decode step: the mask keeps keys j < L_b of a KV cache; cache_seqlens = L_b counts the rows the model wrote into the cache before attending, so the op attends over the updated cache without new_kv}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x1x64xf32>, tensor<2x4x64x16xf32>) outs(%fo : tensor<2x4x1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x16xf32>
  return %out : tensor<2x4x1x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#pos = affine_map<(b, h, i, j) -> (0)>

// Four new rows (a chunk / speculative step) at pos..pos+3: row i keeps
// keys j <= pos + i, bottom-right causal over L = pos + 4.
// CHECK-LABEL: func @chunked_causal
// CHECK: %[[LEN:.*]] = tensor.generate {
// CHECK: arith.constant 4 : i64
// CHECK: tensor.extract %arg3
// CHECK: } : tensor<2xi32>
// CHECK: flash.attention_kvcache %arg0, %arg1, %arg2, %[[LEN]] {causal = #flash.causal<bottom_right>, scale = 2.500000e-01 : f32}
func.func @chunked_causal(%q: tensor<2x4x4x16xf32>, %k: tensor<2x4x64x16xf32>, %v: tensor<2x4x64x16xf32>, %pos: tensor<1xi64>) -> tensor<2x4x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x4x64xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x4x64xf32>) -> tensor<2x4x4x64xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x4x16xf32>, tensor<2x4x64x16xf32>) outs(%fs : tensor<2x4x4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4x64xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #pos, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %pos : tensor<2x4x4x64xf32>, tensor<1xi64>) outs(%es : tensor<2x4x4x64xf32>) {
  ^bb0(%x: f32, %e0: i64, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %qpos = arith.addi %i64, %e0 : i64
    %keep = arith.cmpi sle, %j64, %qpos : i64
    %sc = arith.mulf %x, %c : f32
    %y = arith.select %keep, %sc, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x4x64xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<2x4x4x64xf32>)
      outs(%es : tensor<2x4x4x64xf32>) -> tensor<2x4x4x64xf32>
  %eo = tensor.empty() : tensor<2x4x4x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x4x16xf32>) -> tensor<2x4x4x16xf32>
  // expected-remark @+1 {{flash-raise-attention: decode step: the mask keeps keys j < L_b of a KV cache; cache_seqlens = L_b counts the rows the model wrote into the cache before attending, so the op attends over the updated cache without new_kv}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x4x64xf32>, tensor<2x4x64x16xf32>) outs(%fo : tensor<2x4x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4x16xf32>
  return %out : tensor<2x4x4x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#bmask = affine_map<(b, h, i, j) -> (b, 0, 0, j)>

// A decode-shaped attention whose mask is data (a padding mask argument),
// not a length: dense, with the mask as an operand.
// CHECK-LABEL: func @decode_data_mask
// CHECK-NOT: tensor.generate
// CHECK-NOT: flash.attention_kvcache
// CHECK: flash.attention %arg0, %arg1, %arg2 mask(%arg3 : tensor<2x1x1x64xi1>) {scale = 2.500000e-01 : f32} : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32> -> tensor<2x4x1x16xf32>{{$}}
func.func @decode_data_mask(%q: tensor<2x4x1x16xf32>, %k: tensor<2x4x64x16xf32>, %v: tensor<2x4x64x16xf32>, %mask: tensor<2x1x1x64xi1>) -> tensor<2x4x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x1x64xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>) outs(%fs : tensor<2x4x1x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x64xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #bmask, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x1x64xf32>, tensor<2x1x1x64xi1>) outs(%es : tensor<2x4x1x64xf32>) {
  ^bb0(%x: f32, %e0: i1, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %true = arith.constant true
    %keep = arith.andi %e0, %true : i1
    %sc = arith.mulf %x, %c : f32
    %y = arith.select %keep, %sc, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x1x64xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<2x4x1x64xf32>)
      outs(%es : tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32>
  %eo = tensor.empty() : tensor<2x4x1x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x1x16xf32>) -> tensor<2x4x1x16xf32>
  // expected-remark @+1 {{flash-raise-attention: dense flash.attention, not flash.attention_kvcache: the mask is not a length mask (key j < L_b, L_b read from the batch index only), so flash.attention_kvcache cannot express it; kept as a mask of flash.attention}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x1x64xf32>, tensor<2x4x64x16xf32>) outs(%fo : tensor<2x4x1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x16xf32>
  return %out : tensor<2x4x1x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#pos = affine_map<(b, h, i, j) -> (0)>

// Keys j >= pos (a lower bound, as a window's left edge): not a length.
// CHECK-LABEL: func @decode_lower_bound
// CHECK-NOT: flash.attention_kvcache
// CHECK: flash.attention %arg0, %arg1, %arg2
func.func @decode_lower_bound(%q: tensor<2x4x1x16xf32>, %k: tensor<2x4x64x16xf32>, %v: tensor<2x4x64x16xf32>, %pos: tensor<1xi64>) -> tensor<2x4x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x1x64xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>) outs(%fs : tensor<2x4x1x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x64xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #pos, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %pos : tensor<2x4x1x64xf32>, tensor<1xi64>) outs(%es : tensor<2x4x1x64xf32>) {
  ^bb0(%x: f32, %e0: i64, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %j64 = arith.index_cast %j : index to i64
    %keep = arith.cmpi sge, %j64, %e0 : i64
    %sc = arith.mulf %x, %c : f32
    %y = arith.select %keep, %sc, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x1x64xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<2x4x1x64xf32>)
      outs(%es : tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32>
  %eo = tensor.empty() : tensor<2x4x1x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x1x16xf32>) -> tensor<2x4x1x16xf32>
  // expected-remark @+1 {{flash-raise-attention: dense flash.attention, not flash.attention_kvcache: the mask is not a length mask (key j < L_b, L_b read from the batch index only), so flash.attention_kvcache cannot express it; kept as a mask of flash.attention}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x1x64xf32>, tensor<2x4x64x16xf32>) outs(%fo : tensor<2x4x1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x16xf32>
  return %out : tensor<2x4x1x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#perh = affine_map<(b, h, i, j) -> (h)>

// A length per head, not per sequence: the KV-cache op has one per sequence.
// CHECK-LABEL: func @decode_length_per_head
// CHECK-NOT: flash.attention_kvcache
// CHECK: flash.attention %arg0, %arg1, %arg2
func.func @decode_length_per_head(%q: tensor<2x4x1x16xf32>, %k: tensor<2x4x64x16xf32>, %v: tensor<2x4x64x16xf32>, %lens: tensor<4xi64>) -> tensor<2x4x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x1x64xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>) outs(%fs : tensor<2x4x1x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x64xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #perh, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %lens : tensor<2x4x1x64xf32>, tensor<4xi64>) outs(%es : tensor<2x4x1x64xf32>) {
  ^bb0(%x: f32, %e0: i64, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %j64 = arith.index_cast %j : index to i64
    %keep = arith.cmpi slt, %j64, %e0 : i64
    %sc = arith.mulf %x, %c : f32
    %y = arith.select %keep, %sc, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x1x64xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<2x4x1x64xf32>)
      outs(%es : tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32>
  %eo = tensor.empty() : tensor<2x4x1x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x1x16xf32>) -> tensor<2x4x1x16xf32>
  // expected-remark @+1 {{flash-raise-attention: dense flash.attention, not flash.attention_kvcache: the mask is not a length mask (key j < L_b, L_b read from the batch index only), so flash.attention_kvcache cannot express it; kept as a mask of flash.attention}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x1x64xf32>, tensor<2x4x64x16xf32>) outs(%fo : tensor<2x4x1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x16xf32>
  return %out : tensor<2x4x1x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#pos = affine_map<(b, h, i, j) -> (0)>

// A length mask and a bias: the KV-cache op has no bias operand.
// CHECK-LABEL: func @decode_length_and_bias
// CHECK-NOT: flash.attention_kvcache
// CHECK: flash.attention %arg0, %arg1, %arg2 bias(%arg4
func.func @decode_length_and_bias(%q: tensor<2x4x1x16xf32>, %k: tensor<2x4x64x16xf32>, %v: tensor<2x4x64x16xf32>, %pos: tensor<1xi64>, %bias: tensor<2x4x1x64xf32>) -> tensor<2x4x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x1x64xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x1x16xf32>, tensor<2x4x64x16xf32>) outs(%fs : tensor<2x4x1x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x64xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #pos, #id4, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %pos, %bias : tensor<2x4x1x64xf32>, tensor<1xi64>, tensor<2x4x1x64xf32>) outs(%es : tensor<2x4x1x64xf32>) {
  ^bb0(%x: f32, %e0: i64, %e1: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %j64 = arith.index_cast %j : index to i64
    %keep = arith.cmpi sle, %j64, %e0 : i64
    %s0 = arith.mulf %x, %c : f32
    %sc = arith.addf %s0, %e1 : f32
    %y = arith.select %keep, %sc, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x1x64xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<2x4x1x64xf32>)
      outs(%es : tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32>
  %eo = tensor.empty() : tensor<2x4x1x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x1x16xf32>) -> tensor<2x4x1x16xf32>
  // expected-remark @+1 {{flash-raise-attention: dense flash.attention, not flash.attention_kvcache: flash.attention_kvcache has no bias or score_mod}}
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x1x64xf32>, tensor<2x4x64x16xf32>) outs(%fo : tensor<2x4x1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x16xf32>
  return %out : tensor<2x4x1x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#perb = affine_map<(b, h, i, j) -> (b)>

// As many queries as keys (an encoder's padding lengths): no decode step,
// dense and no remark.
// CHECK-LABEL: func @prefill_length
// CHECK-NOT: flash.attention_kvcache
// CHECK: flash.attention %arg0, %arg1, %arg2
func.func @prefill_length(%q: tensor<2x4x64x16xf32>, %k: tensor<2x4x64x16xf32>, %v: tensor<2x4x64x16xf32>, %lens: tensor<2xi64>) -> tensor<2x4x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x64x64xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>) outs(%fs : tensor<2x4x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x64x64xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #perb, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %lens : tensor<2x4x64x64xf32>, tensor<2xi64>) outs(%es : tensor<2x4x64x64xf32>) {
  ^bb0(%x: f32, %e0: i64, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %j64 = arith.index_cast %j : index to i64
    %keep = arith.cmpi slt, %j64, %e0 : i64
    %sc = arith.mulf %x, %c : f32
    %y = arith.select %keep, %sc, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x64x64xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<2x4x64x64xf32>)
      outs(%es : tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf32>
  %eo = tensor.empty() : tensor<2x4x64x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x64x16xf32>) -> tensor<2x4x64x16xf32>
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x64x64xf32>, tensor<2x4x64x16xf32>) outs(%fo : tensor<2x4x64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x64x16xf32>
  return %out : tensor<2x4x64x16xf32>
}

// -----

#qk_q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qk_k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#qk_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pv_p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#pv_v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#pv_o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>

// Keys strictly below the top-left diagonal (j < i) over fewer queries
// than keys: a length fixed at compile time, no cache fill level read at
// run time. It stays a mask_mod of the dense op, silently.
// CHECK-LABEL: func @chunk_below_diagonal
// CHECK-NOT: flash.attention_kvcache
// CHECK: flash.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f32}
// CHECK-SAME: mask_mod
func.func @chunk_below_diagonal(%q: tensor<2x4x4x16xf32>, %k: tensor<2x4x64x16xf32>, %v: tensor<2x4x64x16xf32>) -> tensor<2x4x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %es = tensor.empty() : tensor<2x4x4x64xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x4x64xf32>) -> tensor<2x4x4x64xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x4x16xf32>, tensor<2x4x64x16xf32>) outs(%fs : tensor<2x4x4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4x64xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x4x64xf32>) outs(%es : tensor<2x4x4x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %keep = arith.cmpi slt, %j, %i : index
    %sc = arith.mulf %x, %c : f32
    %y = arith.select %keep, %sc, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x4x64xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<2x4x4x64xf32>)
      outs(%es : tensor<2x4x4x64xf32>) -> tensor<2x4x4x64xf32>
  %eo = tensor.empty() : tensor<2x4x4x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x4x16xf32>) -> tensor<2x4x4x16xf32>
  %out = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x4x64xf32>, tensor<2x4x64x16xf32>) outs(%fo : tensor<2x4x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4x16xf32>
  return %out : tensor<2x4x4x16xf32>
}
