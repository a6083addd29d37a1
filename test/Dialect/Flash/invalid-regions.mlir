// The score_mod and mask_mod regions, and flash.yield outside them.
// RUN: flashfuse-opt %s -split-input-file -verify-diagnostics

func.func @score_mod_args(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'score_mod' region must take (f32, index, index, index, index), got (f32, index, index, index)}}
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index):
    flash.yield %s : f32
  }
  return
}

// -----

// Scores are f32 whatever the input type: an f16 score argument is wrong.
func.func @score_mod_f16(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'score_mod' region must take (f32, index, index, index, index), got (f16, index, index, index, index)}}
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  score_mod {
  ^bb0(%s: f16, %b: index, %h: index, %i: index, %j: index):
    %f = arith.extf %s : f16 to f32
    flash.yield %f : f32
  }
  return
}

// -----

func.func @score_mod_no_args(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'score_mod' region must take (f32, index, index, index, index), got ()}}
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  score_mod {
    %c = arith.constant 0.0 : f32
    flash.yield %c : f32
  }
  return
}

// -----

func.func @score_mod_yield_type(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'score_mod' region must end in flash.yield of one 'f32', got flash.yield of (f16)}}
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = arith.truncf %s : f32 to f16
    flash.yield %t : f16
  }
  return
}

// -----

func.func @score_mod_yield_two(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'score_mod' region must end in flash.yield of one 'f32', got flash.yield of (f32, f32)}}
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    flash.yield %s, %s : f32, f32
  }
  return
}

// -----

func.func @mask_mod_yield_nothing(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'mask_mod' region must end in flash.yield of one 'i1', got flash.yield of ()}}
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    flash.yield
  }
  return
}

// -----

func.func @mask_mod_args(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'mask_mod' region must take (index, index, index, index), got (i64, i64, i64, i64)}}
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  mask_mod {
  ^bb0(%b: i64, %h: i64, %i: i64, %j: i64):
    %t = arith.constant true
    flash.yield %t : i1
  }
  return
}

// -----

// A mask_mod yields i1 (keep), not an additive f32 bias.
func.func @mask_mod_yield_f32(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'mask_mod' region must end in flash.yield of one 'i1', got flash.yield of (f32)}}
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 0.0 : f32
    flash.yield %c : f32
  }
  return
}

// -----

// The region is one straight-line block: a kernel inlines it per element.
func.func @mask_mod_blocks(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'mask_mod' region must have one block}}
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    cf.br ^bb1
  ^bb1:
    %t = arith.constant true
    flash.yield %t : i1
  }
  return
}

// -----

// The generic verifier rejects an unterminated block before ours runs.
func.func @score_mod_no_terminator(%x: tensor<1x2x16x32xf16>) {
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @below {{block with no terminator}}
    %d = arith.addf %s, %s : f32
  }
  return
}

// -----

func.func @score_mod_empty_block(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{empty block: expect at least a terminator}}
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
  }
  return
}

// -----

// Another dialect's terminator in a mod region.
func.func @score_mod_wrong_terminator(%x: tensor<1x2x16x32xf16>) {
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @below {{'func.return' op expects parent op 'func.func'}}
    func.return %s : f32
  }
  return
}

// -----

// flash.yield outside a flash op.
func.func @yield_in_func() {
  // expected-error @below {{'flash.yield' op expects parent op to be one of 'flash.attention, flash.attention_grad'}}
  flash.yield
}

// -----

// flash.yield nested one level too deep (inside an scf.if of a score_mod).
func.func @yield_nested(%x: tensor<1x2x16x32xf16>, %c: i1) {
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    scf.if %c {
      // expected-error @below {{'flash.yield' op expects parent op to be one of 'flash.attention, flash.attention_grad'}}
      flash.yield %s : f32
    }
    flash.yield %s : f32
  }
  return
}

// -----

// flash.yield in the middle of a block.
func.func @yield_not_last(%x: tensor<1x2x16x32xf16>) {
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @below {{'flash.yield' op must be the last operation in the parent block}}
    flash.yield %s : f32
    %d = arith.addf %s, %s : f32
    flash.yield %d : f32
  }
  return
}

// -----

// A terminator that may end any block is still not a flash.yield.
func.func @score_mod_foreign_terminator(%x: tensor<1x2x16x32xf16>) {
  // expected-error @below {{'score_mod' region must end in flash.yield of one 'f32', got llvm.unreachable}}
  %o = flash.attention %x, %x, %x
      : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>
      -> tensor<1x2x16x32xf16>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    llvm.unreachable
  }
  return
}
