// RUN: flashfuse-opt %s --flash-lower-naive -split-input-file -verify-diagnostics

// Dynamic sizes are refused with the operand named.
func.func @dynamic_seq(%q: tensor<1x1x?x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x?x16xf32> {
  // expected-error @+1 {{flash-lower-naive needs static shapes: operand #0 has type 'tensor<1x1x?x16xf32>'}}
  %o = flash.attention %q, %k, %v
      : tensor<1x1x?x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x?x16xf32>
  return %o : tensor<1x1x?x16xf32>
}

// -----

// A multiplicative score_mod has no derivative of 1: the gradient is
// refused rather than computed wrongly.
func.func @grad_scaling_score_mod(%do: tensor<1x1x4x8xf32>, %q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>,
                                  %o: tensor<1x1x4x8xf32>, %lse: tensor<1x1x4xf32>)
    -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{score_mod of this form has no gradient lowering}}
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse
      : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>
      -> tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 2.0 : f32
        %r = arith.mulf %s, %c : f32
        flash.yield %r : f32
      }
  return %dq, %dk, %dv : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}

// -----

// fma with the score as a factor scales it: refused.
func.func @grad_fma_scaling(%do: tensor<1x1x4x8xf32>, %q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>,
                            %o: tensor<1x1x4x8xf32>, %lse: tensor<1x1x4xf32>)
    -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{score_mod of this form has no gradient lowering}}
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse
      : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>
      -> tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 2.0 : f32
        %r = math.fma %s, %c, %c : f32
        flash.yield %r : f32
      }
  return %dq, %dk, %dv : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}

// -----

// score + f where f itself reads the score is not additive.
func.func @grad_score_in_both_terms(%do: tensor<1x1x4x8xf32>, %q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>,
                                    %o: tensor<1x1x4x8xf32>, %lse: tensor<1x1x4xf32>)
    -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{score_mod of this form has no gradient lowering}}
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse
      : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>
      -> tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %t = math.tanh %s : f32
        %r = arith.addf %s, %t : f32
        flash.yield %r : f32
      }
  return %dq, %dk, %dv : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}

// -----

// f - score has derivative -1, not 1.
func.func @grad_negated_score(%do: tensor<1x1x4x8xf32>, %q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>,
                              %o: tensor<1x1x4x8xf32>, %lse: tensor<1x1x4xf32>, %f: f32)
    -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{score_mod of this form has no gradient lowering}}
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse
      : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>
      -> tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %r = arith.subf %f, %s : f32
        flash.yield %r : f32
      }
  return %dq, %dk, %dv : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}
