// The decomposition needs static shapes (its loop bounds, the capacity that
// bounds the cache writes and the page arithmetic are constants); the op is
// refused with the name of the pass that ran it, and left in place.
// RUN: flashfuse-opt %s -split-input-file -verify-diagnostics --flash-decompose-kvcache
// RUN: not flashfuse-opt %s -split-input-file --flash-lower-naive 2>&1 | FileCheck %s --check-prefix=NAIVE
// RUN: not flashfuse-opt %s -split-input-file --flash-lower-to-loops 2>&1 | FileCheck %s --check-prefix=LOOPS

// NAIVE: error: 'flash.attention_kvcache' op flash-lower-naive needs static shapes: operand #0 has type 'tensor<?x4x1x32xf32>'
// LOOPS: error: 'flash.attention_kvcache' op flash-lower-to-loops needs static shapes: operand #0 has type 'tensor<?x4x1x32xf32>'
func.func @dynamic_batch(%q: tensor<?x4x1x32xf32>, %k: tensor<?x2x64x32xf32>,
                         %v: tensor<?x2x64x32xf32>, %lens: tensor<?xi32>)
    -> tensor<?x4x1x32xf32> {
  // expected-error @below {{flash-decompose-kvcache needs static shapes: operand #0 has type 'tensor<?x4x1x32xf32>'}}
  %o = flash.attention_kvcache %q, %k, %v, %lens
      : tensor<?x4x1x32xf32>, tensor<?x2x64x32xf32>, tensor<?x2x64x32xf32>,
        tensor<?xi32>
      -> tensor<?x4x1x32xf32>
  return %o : tensor<?x4x1x32xf32>
}

// -----

// NAIVE: error: 'flash.attention_kvcache' op flash-lower-naive needs static shapes: operand #1 has type 'tensor<?x16x2x32xf32>'
// LOOPS: error: 'flash.attention_kvcache' op flash-lower-to-loops needs static shapes: operand #1 has type 'tensor<?x16x2x32xf32>'
func.func @dynamic_pool(%q: tensor<2x4x1x32xf32>, %kp: tensor<?x16x2x32xf32>,
                        %vp: tensor<?x16x2x32xf32>, %lens: tensor<2xi32>,
                        %bt: tensor<2x4xi32>) -> tensor<2x4x1x32xf32> {
  // expected-error @below {{flash-decompose-kvcache needs static shapes: operand #1 has type 'tensor<?x16x2x32xf32>'}}
  %o = flash.attention_kvcache %q, %kp, %vp, %lens
      block_table(%bt : tensor<2x4xi32>)
      : tensor<2x4x1x32xf32>, tensor<?x16x2x32xf32>, tensor<?x16x2x32xf32>,
        tensor<2xi32>
      -> tensor<2x4x1x32xf32>
  return %o : tensor<2x4x1x32xf32>
}
