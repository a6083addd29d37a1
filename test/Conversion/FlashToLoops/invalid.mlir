// RUN: flashfuse-opt %s --flash-lower-to-loops -split-input-file -verify-diagnostics

// Dynamic sizes are refused with the operand named.
func.func @dynamic_batch(%q: tensor<?x1x8x16xf32>, %k: tensor<?x1x8x16xf32>, %v: tensor<?x1x8x16xf32>) -> tensor<?x1x8x16xf32> {
  // expected-error @+1 {{flash-lower-to-loops needs static shapes: operand #0 has type 'tensor<?x1x8x16xf32>'}}
  %o = flash.attention %q, %k, %v
      : tensor<?x1x8x16xf32>, tensor<?x1x8x16xf32>, tensor<?x1x8x16xf32> -> tensor<?x1x8x16xf32>
  return %o : tensor<?x1x8x16xf32>
}

// -----

func.func @dynamic_lse(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x?xf32> {
  // expected-error @+1 {{flash-lower-to-loops needs static shapes: result #1 has type 'tensor<1x1x?xf32>'}}
  %o, %lse = flash.attention %q, %k, %v
      : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>, tensor<1x1x?xf32>
  return %lse : tensor<1x1x?xf32>
}

// -----

// The backward loops refuse a score_mod they cannot differentiate.
func.func @grad_nonlinear_score_mod(%do: tensor<1x1x4x8xf32>, %q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>,
                                    %o: tensor<1x1x4x8xf32>, %lse: tensor<1x1x4xf32>)
    -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{score_mod of this form has no gradient lowering}}
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse
      : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>
      -> tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %r = math.tanh %s : f32
        flash.yield %r : f32
      }
  return %dq, %dk, %dv : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}
