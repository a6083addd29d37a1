// Every verifier message of the tm_tensor ops.
// RUN: flashfuse-opt %s --split-input-file --verify-diagnostics

// scan: one input, two outputs
func.func @f(%x: tensor<2x8xf32>, %o: tensor<2x8xf32>) {
// expected-error @+1 {{'tm_tensor.scan' op expects one input and two outputs (result, accumulator), got 1 and 1}}
  %0 = tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<2x8xf32>) outs(%o : tensor<2x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tm_tensor.yield %s : f32
  } -> tensor<2x8xf32>
  return
}

// -----

// scan: dimension in range
func.func @f(%x: tensor<2x8xf32>, %o: tensor<2x8xf32>, %acc: tensor<2xf32>) {
// expected-error @+1 {{'tm_tensor.scan' op dimension 2 is out of range for the 2-d input}}
  %0:2 = tm_tensor.scan dimension(2) inclusive(true) ins(%x : tensor<2x8xf32>) outs(%o, %acc : tensor<2x8xf32>, tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tm_tensor.yield %s : f32
  } -> tensor<2x8xf32>, tensor<2xf32>
  return
}

// -----

// scan: the accumulator drops the scanned dim
func.func @f(%x: tensor<2x8xf32>, %o: tensor<2x8xf32>, %acc: tensor<8xf32>) {
// expected-error @+1 {{'tm_tensor.scan' op expects the accumulator of shape [2] (the input without dimension 1), got [8]}}
  %0:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<2x8xf32>) outs(%o, %acc : tensor<2x8xf32>, tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tm_tensor.yield %s : f32
  } -> tensor<2x8xf32>, tensor<8xf32>
  return
}

// -----

// scan: the result output has the input's shape
func.func @f(%x: tensor<2x8xf32>, %o: tensor<2x4xf32>, %acc: tensor<2xf32>) {
// expected-error @+1 {{'tm_tensor.scan' op expects the result output of the input's shape [2, 8], got [2, 4]}}
  %0:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<2x8xf32>) outs(%o, %acc : tensor<2x4xf32>, tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tm_tensor.yield %s : f32
  } -> tensor<2x4xf32>, tensor<2xf32>
  return
}

// -----

// scan: the region combines two elements
func.func @f(%x: tensor<2x8xf32>, %o: tensor<2x8xf32>, %acc: tensor<2xf32>) {
// expected-error @+1 {{'tm_tensor.scan' op expects region argument #1 of type 'f32', got 'i64'}}
  %0:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<2x8xf32>) outs(%o, %acc : tensor<2x8xf32>, tensor<2xf32>) {
  ^bb0(%p: f32, %q: i64):
    tm_tensor.yield %p : f32
  } -> tensor<2x8xf32>, tensor<2xf32>
  return
}

// -----

// scan: the region yields the combined element (an empty yield is implied when none is written)
func.func @f(%x: tensor<2x8xf32>, %o: tensor<2x8xf32>, %acc: tensor<2xf32>) {
// expected-error @+1 {{'tm_tensor.scan' op expects its region to yield 1 value(s), got 0}}
  %0:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<2x8xf32>) outs(%o, %acc : tensor<2x8xf32>, tensor<2xf32>) {
  ^bb0(%p: f32, %q: f32):
  } -> tensor<2x8xf32>, tensor<2xf32>
  return
}

// -----

// scan: results are the tensor outputs
func.func @f(%x: tensor<2x8xf32>, %o: tensor<2x8xf32>, %acc: tensor<2xf32>) {
// expected-error @+1 {{'tm_tensor.scan' op expects one result per output, of the output's type}}
  %0 = tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<2x8xf32>) outs(%o, %acc : tensor<2x8xf32>, tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tm_tensor.yield %s : f32
  } -> tensor<2x8xf32>
  return
}

// -----

// scan: memref outputs give no results
func.func @f(%x: memref<8xf32>, %o: memref<8xf32>, %acc: memref<f32>) {
// expected-error @+1 {{'tm_tensor.scan' op has memref outputs and must have no results}}
  %0:2 = tm_tensor.scan dimension(0) inclusive(true) ins(%x : memref<8xf32>) outs(%o, %acc : memref<8xf32>, memref<f32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tm_tensor.yield %s : f32
  } -> tensor<8xf32>, tensor<f32>
  return
}

// -----

// scatter: indices are [N, depth] integers
func.func @f(%u: tensor<2x8xf32>, %i: tensor<2xi64>, %o: tensor<4x8xf32>) {
// expected-error @+1 {{'tm_tensor.scatter' op expects indices [N, depth] of integers, got 'tensor<2xi64>'}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%u, %i : tensor<2x8xf32>, tensor<2xi64>) outs(%o : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  } -> tensor<4x8xf32>
  return
}

// -----

// scatter: one update per index row
func.func @f(%u: tensor<3x8xf32>, %i: tensor<2x1xi64>, %o: tensor<4x8xf32>) {
// expected-error @+1 {{'tm_tensor.scatter' op expects updates [N, ...] with N = 2 (the indices' rows), got 'tensor<3x8xf32>'}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%u, %i : tensor<3x8xf32>, tensor<2x1xi64>) outs(%o : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  } -> tensor<4x8xf32>
  return
}

// -----

// scatter: one dimension_map entry per index column
func.func @f(%u: tensor<2x8xf32>, %i: tensor<2x1xi64>, %o: tensor<4x8xf32>) {
// expected-error @+1 {{'tm_tensor.scatter' op expects dimension_map of 1 entries (the index depth), got 2}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0, 1>} unique_indices(true) ins(%u, %i : tensor<2x8xf32>, tensor<2x1xi64>) outs(%o : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  } -> tensor<4x8xf32>
  return
}

// -----

// scatter: mapped dims exist
func.func @f(%u: tensor<2x8xf32>, %i: tensor<2x1xi64>, %o: tensor<4x8xf32>) {
// expected-error @+1 {{'tm_tensor.scatter' op dimension_map entry 2 is out of range for the 2-d original}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 2>} unique_indices(true) ins(%u, %i : tensor<2x8xf32>, tensor<2x1xi64>) outs(%o : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  } -> tensor<4x8xf32>
  return
}

// -----

// scatter: slices fit the original
func.func @f(%u: tensor<2x16xf32>, %i: tensor<2x1xi64>, %o: tensor<4x8xf32>) {
// expected-error @+1 {{'tm_tensor.scatter' op update slice dim 1 (16) exceeds the original's (8)}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%u, %i : tensor<2x16xf32>, tensor<2x1xi64>) outs(%o : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  } -> tensor<4x8xf32>
  return
}

// -----

// sort: outputs of one shape
func.func @f(%v: tensor<2x8xf32>, %i: tensor<2x4xi64>) {
// expected-error @+1 {{'tm_tensor.sort' op expects every output of shape [2, 8], output #1 is [2, 4]}}
  %0:2 = tm_tensor.sort dimension(1) outs(%v, %i : tensor<2x8xf32>, tensor<2x4xi64>) {
  ^bb0(%a: f32, %b: f32, %c: i64, %d: i64):
    %lt = arith.cmpf olt, %a, %b : f32
    tm_tensor.yield %lt : i1
  } -> tensor<2x8xf32>, tensor<2x4xi64>
  return
}

// -----

// sort: the comparator takes two elements of every output
func.func @f(%v: tensor<2x8xf32>, %i: tensor<2x8xi64>) {
// expected-error @+1 {{'tm_tensor.sort' op expects its region to take 4 arguments, got 2}}
  %0:2 = tm_tensor.sort dimension(1) outs(%v, %i : tensor<2x8xf32>, tensor<2x8xi64>) {
  ^bb0(%a: f32, %b: f32):
    %lt = arith.cmpf olt, %a, %b : f32
    tm_tensor.yield %lt : i1
  } -> tensor<2x8xf32>, tensor<2x8xi64>
  return
}

// -----

// sort: the comparator yields an i1
func.func @f(%v: tensor<8xf32>) {
// expected-error @+1 {{'tm_tensor.sort' op expects its region to yield 'i1' as value #0, got 'f32'}}
  %0 = tm_tensor.sort dimension(0) outs(%v : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  } -> tensor<8xf32>
  return
}

// -----

// topk: outputs match the input but for the k dim
func.func @f(%x: tensor<2x8xf32>, %v: tensor<3x3xf32>, %i: tensor<3x3xi64>) {
// expected-error @+1 {{'tm_tensor.topk' op expects outputs of the input's shape but for dimension 1, got [3, 3]}}
  %0:2 = tm_tensor.topk dimension(1) ins(%x : tensor<2x8xf32>) outs(%v, %i : tensor<3x3xf32>, tensor<3x3xi64>) {
  ^bb0(%a: f32, %b: f32):
    %c = arith.cmpf ogt, %a, %b : f32
    tm_tensor.yield %c : i1
  } -> tensor<3x3xf32>, tensor<3x3xi64>
  return
}

// -----

// topk: values and indices of one shape
func.func @f(%x: tensor<2x8xf32>, %v: tensor<2x3xf32>, %i: tensor<2x4xi64>) {
// expected-error @+1 {{'tm_tensor.topk' op expects the two outputs to have one shape}}
  %0:2 = tm_tensor.topk dimension(1) ins(%x : tensor<2x8xf32>) outs(%v, %i : tensor<2x3xf32>, tensor<2x4xi64>) {
  ^bb0(%a: f32, %b: f32):
    %c = arith.cmpf ogt, %a, %b : f32
    tm_tensor.yield %c : i1
  } -> tensor<2x3xf32>, tensor<2x4xi64>
  return
}

// -----

// attention: Q, K, V and an optional mask
func.func @f(%q: tensor<4x16x8xf32>, %k: tensor<4x16x8xf32>, %o: tensor<4x16x8xf32>) {
// expected-error @+1 {{'tm_tensor.attention' op expects inputs query, key, value and an optional mask, and one output; got 2 and 1}}
  %0 = tm_tensor.attention ins(%q, %k : tensor<4x16x8xf32>, tensor<4x16x8xf32>) outs(%o : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return
}

// -----

// attention: a batch dim
func.func @f(%q: tensor<16x8xf32>) {
// expected-error @+1 {{'tm_tensor.attention' op expects query [batch..., M, D] of rank >= 3, got 'tensor<16x8xf32>'}}
  %0 = tm_tensor.attention ins(%q, %q, %q : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) outs(%q : tensor<16x8xf32>) -> tensor<16x8xf32>
  return
}

// -----

// attention: K shares Q's batch and head dim
func.func @f(%q: tensor<4x16x8xf32>, %k: tensor<4x32x16xf32>, %v: tensor<4x32x8xf32>, %o: tensor<4x16x8xf32>) {
// expected-error @+1 {{'tm_tensor.attention' op expects key of shape [4, 32, 8], got [4, 32, 16]}}
  %0 = tm_tensor.attention ins(%q, %k, %v : tensor<4x16x8xf32>, tensor<4x32x16xf32>, tensor<4x32x8xf32>) outs(%o : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return
}

// -----

// attention: V has K's sequence length
func.func @f(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %v: tensor<4x16x8xf32>, %o: tensor<4x16x8xf32>) {
// expected-error @+1 {{'tm_tensor.attention' op expects value of shape [4, 32, 8], got [4, 16, 8]}}
  %0 = tm_tensor.attention ins(%q, %k, %v : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x16x8xf32>) outs(%o : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return
}

// -----

// attention: the output is [batch..., M, Dv]
func.func @f(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %v: tensor<4x32x4xf32>, %o: tensor<4x16x8xf32>) {
// expected-error @+1 {{'tm_tensor.attention' op expects output of shape [4, 16, 4], got [4, 16, 8]}}
  %0 = tm_tensor.attention ins(%q, %k, %v : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x4xf32>) outs(%o : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return
}

// -----

// attention: the mask is [batch..., M, N]
func.func @f(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %v: tensor<4x32x8xf32>, %m: tensor<4x16x16xi1>, %o: tensor<4x16x8xf32>) {
// expected-error @+1 {{'tm_tensor.attention' op expects mask of shape [4, 16, 32], got [4, 16, 16]}}
  %0 = tm_tensor.attention ins(%q, %k, %v, %m : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x8xf32>, tensor<4x16x16xi1>) outs(%o : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return
}

// -----

// attention: the mask is additive (float) or boolean (i1)
func.func @f(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %v: tensor<4x32x8xf32>, %m: tensor<4x16x32xi8>, %o: tensor<4x16x8xf32>) {
// expected-error @+1 {{'tm_tensor.attention' op expects a floating-point (additive) or i1 mask, got 'i8'}}
  %0 = tm_tensor.attention ins(%q, %k, %v, %m : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x8xf32>, tensor<4x16x32xi8>) outs(%o : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return
}

// -----

// yield: only inside the region ops
func.func @f() {
// expected-error @+1 {{'tm_tensor.yield' op expects parent op to be one of 'tm_tensor.scan, tm_tensor.scatter, tm_tensor.sort, tm_tensor.topk'}}
  tm_tensor.yield
  return
}
