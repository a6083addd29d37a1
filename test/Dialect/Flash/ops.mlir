// Round-trip of every form of the flash ops: the custom form printed and
// parsed again, and the generic form parsed back into the custom one.
// RUN: flashfuse-opt %s | flashfuse-opt | FileCheck %s
// RUN: flashfuse-opt %s --mlir-print-op-generic | flashfuse-opt | FileCheck %s
// The generic form itself, to pin the property and segment encoding.
// RUN: flashfuse-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @minimal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf16>, %[[K:.*]]: tensor<2x8x128x64xf16>, %[[V:.*]]: tensor<2x8x128x64xf16>)
// CHECK: %[[O:.*]] = flash.attention %[[Q]], %[[K]], %[[V]] : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16> -> tensor<2x8x128x64xf16>
// CHECK-NOT: score_mod
// CHECK: return %[[O]]
// GENERIC-LABEL: sym_name = "minimal"
// GENERIC: "flash.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}> ({
// GENERIC-NEXT: }, {
// GENERIC-NEXT: }) : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16>
func.func @minimal(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
                   %v: tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16> {
  %o = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// CHECK-LABEL: func.func @lse_bf16_causal
// CHECK: %{{.*}}, %{{.*}} = flash.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = #flash.causal<top_left>, scale = 1.250000e-01 : f32} : tensor<1x4x100x64xbf16>, tensor<1x4x100x64xbf16>, tensor<1x4x100x64xbf16> -> tensor<1x4x100x64xbf16>, tensor<1x4x100xf32>
func.func @lse_bf16_causal(%q: tensor<1x4x100x64xbf16>, %k: tensor<1x4x100x64xbf16>,
                           %v: tensor<1x4x100x64xbf16>)
    -> (tensor<1x4x100x64xbf16>, tensor<1x4x100xf32>) {
  %o, %lse = flash.attention %q, %k, %v
      {causal = #flash.causal<top_left>, scale = 0.125 : f32}
      : tensor<1x4x100x64xbf16>, tensor<1x4x100x64xbf16>, tensor<1x4x100x64xbf16>
      -> tensor<1x4x100x64xbf16>, tensor<1x4x100xf32>
  return %o, %lse : tensor<1x4x100x64xbf16>, tensor<1x4x100xf32>
}

// An f32 O over 16-bit inputs: the unrounded partial results that
// split-sequence attention merges by their LSE. GQA and BSHD operands as
// anywhere (O in Q's layout), f16 and bf16.
// CHECK-LABEL: func.func @f32_output
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = #flash.causal<top_left>} : tensor<1x8x300x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16> -> tensor<1x8x300x64xf32>, tensor<1x8x300xf32>
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} {k_perm = array<i64: 0, 2, 1, 3>, q_perm = array<i64: 0, 2, 1, 3>, v_perm = array<i64: 0, 2, 1, 3>} : tensor<2x100x4x128xf16>, tensor<2x100x4x128xf16>, tensor<2x100x4x128xf16> -> tensor<2x100x4x128xf32>
func.func @f32_output(%q: tensor<1x8x300x64xbf16>, %k: tensor<1x2x300x64xbf16>,
                      %v: tensor<1x2x300x64xbf16>, %x: tensor<2x100x4x128xf16>)
    -> (tensor<1x8x300x64xf32>, tensor<1x8x300xf32>, tensor<2x100x4x128xf32>) {
  %o, %lse = flash.attention %q, %k, %v {causal = #flash.causal<top_left>}
      : tensor<1x8x300x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>
      -> tensor<1x8x300x64xf32>, tensor<1x8x300xf32>
  %p = flash.attention %x, %x, %x
      {q_perm = array<i64: 0, 2, 1, 3>, k_perm = array<i64: 0, 2, 1, 3>,
       v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<2x100x4x128xf16>, tensor<2x100x4x128xf16>, tensor<2x100x4x128xf16>
      -> tensor<2x100x4x128xf32>
  return %o, %lse, %p : tensor<1x8x300x64xf32>, tensor<1x8x300xf32>, tensor<2x100x4x128xf32>
}

// Sq != Sk (a decode step over a cache) with the diagonal at the bottom right.
// CHECK-LABEL: func.func @bottom_right_f32
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = #flash.causal<bottom_right>} : tensor<1x2x1x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32> -> tensor<1x2x1x32xf32>
func.func @bottom_right_f32(%q: tensor<1x2x1x32xf32>, %k: tensor<1x2x512x32xf32>,
                            %v: tensor<1x2x512x32xf32>) -> tensor<1x2x1x32xf32> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<bottom_right>}
      : tensor<1x2x1x32xf32>, tensor<1x2x512x32xf32>, tensor<1x2x512x32xf32>
      -> tensor<1x2x1x32xf32>
  return %o : tensor<1x2x1x32xf32>
}

// Sliding window (both sides), softcap; window without causal is top-left.
// CHECK-LABEL: func.func @window_softcap
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} {softcap = 5.000000e+01 : f32, window_left = 256 : i64, window_right = 0 : i64}
func.func @window_softcap(%q: tensor<1x2x1024x128xf16>, %k: tensor<1x2x1024x128xf16>,
                          %v: tensor<1x2x1024x128xf16>) -> tensor<1x2x1024x128xf16> {
  %o = flash.attention %q, %k, %v
      {window_left = 256 : i64, window_right = 0 : i64, softcap = 50.0 : f32}
      : tensor<1x2x1024x128xf16>, tensor<1x2x1024x128xf16>, tensor<1x2x1024x128xf16>
      -> tensor<1x2x1024x128xf16>
  return %o : tensor<1x2x1024x128xf16>
}

// BSHD operands: each perm names the operand dim holding B, H, S, D. The
// output and the LSE follow the rules of the op: O in Q's layout, LSE BHS.
// CHECK-LABEL: func.func @bshd
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} {k_perm = array<i64: 0, 2, 1, 3>, q_perm = array<i64: 0, 2, 1, 3>, v_perm = array<i64: 0, 2, 1, 3>} : tensor<2x77x12x64xf16>, tensor<2x77x12x64xf16>, tensor<2x77x12x64xf16> -> tensor<2x77x12x64xf16>, tensor<2x12x77xf32>
func.func @bshd(%q: tensor<2x77x12x64xf16>, %k: tensor<2x77x12x64xf16>,
                %v: tensor<2x77x12x64xf16>)
    -> (tensor<2x77x12x64xf16>, tensor<2x12x77xf32>) {
  %o, %lse = flash.attention %q, %k, %v
      {q_perm = array<i64: 0, 2, 1, 3>, k_perm = array<i64: 0, 2, 1, 3>,
       v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<2x77x12x64xf16>, tensor<2x77x12x64xf16>, tensor<2x77x12x64xf16>
      -> tensor<2x77x12x64xf16>, tensor<2x12x77xf32>
  return %o, %lse : tensor<2x77x12x64xf16>, tensor<2x12x77xf32>
}

// Mixed layouts: Q in BHSD, K stored transposed as [B, H, D, S] (the Kᵀ a
// matmul wants), V in BSHD.
// CHECK-LABEL: func.func @mixed_layouts
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} {k_perm = array<i64: 0, 1, 3, 2>, v_perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x50x32xf16>, tensor<2x4x32x70xf16>, tensor<2x70x4x48xf16> -> tensor<2x4x50x48xf16>
func.func @mixed_layouts(%q: tensor<2x4x50x32xf16>, %k: tensor<2x4x32x70xf16>,
                         %v: tensor<2x70x4x48xf16>) -> tensor<2x4x50x48xf16> {
  %o = flash.attention %q, %k, %v
      {k_perm = array<i64: 0, 1, 3, 2>, v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<2x4x50x32xf16>, tensor<2x4x32x70xf16>, tensor<2x70x4x48xf16>
      -> tensor<2x4x50x48xf16>
  return %o : tensor<2x4x50x48xf16>
}

// GQA (8 query heads over 2 KV heads) and MQA (one KV head).
// CHECK-LABEL: func.func @gqa_mqa
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16> -> tensor<2x8x128x64xf16>
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x128x64xf16>, tensor<2x1x128x64xf16>, tensor<2x1x128x64xf16> -> tensor<2x8x128x64xf16>
func.func @gqa_mqa(%q: tensor<2x8x128x64xf16>, %k: tensor<2x2x128x64xf16>,
                   %v: tensor<2x2x128x64xf16>, %k1: tensor<2x1x128x64xf16>,
                   %v1: tensor<2x1x128x64xf16>)
    -> (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) {
  %gqa = flash.attention %q, %k, %v
      : tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
      -> tensor<2x8x128x64xf16>
  %mqa = flash.attention %q, %k1, %v1
      : tensor<2x8x128x64xf16>, tensor<2x1x128x64xf16>, tensor<2x1x128x64xf16>
      -> tensor<2x8x128x64xf16>
  return %gqa, %mqa : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
}

// Each optional operand alone, then all three together. The bias is in the
// query's type or f32; size-1 dims broadcast.
// CHECK-LABEL: func.func @optional_operands
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<2x8x64x64xf16>) : tensor<2x8x64x32xf16>
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<2x1x1x64xi1>) : tensor<2x8x64x32xf16>
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} seed(%{{.*}}) {dropout_p = 1.000000e-01 : f32} : tensor<2x8x64x32xf16>
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<1x8x1x64xf32>) mask(%{{.*}} : tensor<2x1x1x64xi1>) seed(%{{.*}}) {dropout_p = 5.000000e-01 : f32} : tensor<2x8x64x32xf16>
// GENERIC-LABEL: sym_name = "optional_operands"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>
func.func @optional_operands(%q: tensor<2x8x64x32xf16>, %k: tensor<2x8x64x32xf16>,
                             %v: tensor<2x8x64x32xf16>, %bias: tensor<2x8x64x64xf16>,
                             %bias32: tensor<1x8x1x64xf32>,
                             %mask: tensor<2x1x1x64xi1>, %seed: i64) {
  %0 = flash.attention %q, %k, %v bias(%bias : tensor<2x8x64x64xf16>)
      : tensor<2x8x64x32xf16>, tensor<2x8x64x32xf16>, tensor<2x8x64x32xf16>
      -> tensor<2x8x64x32xf16>
  %1 = flash.attention %q, %k, %v mask(%mask : tensor<2x1x1x64xi1>)
      : tensor<2x8x64x32xf16>, tensor<2x8x64x32xf16>, tensor<2x8x64x32xf16>
      -> tensor<2x8x64x32xf16>
  %2 = flash.attention %q, %k, %v seed(%seed) {dropout_p = 0.1 : f32}
      : tensor<2x8x64x32xf16>, tensor<2x8x64x32xf16>, tensor<2x8x64x32xf16>
      -> tensor<2x8x64x32xf16>
  %3 = flash.attention %q, %k, %v bias(%bias32 : tensor<1x8x1x64xf32>)
      mask(%mask : tensor<2x1x1x64xi1>) seed(%seed) {dropout_p = 0.5 : f32}
      : tensor<2x8x64x32xf16>, tensor<2x8x64x32xf16>, tensor<2x8x64x32xf16>
      -> tensor<2x8x64x32xf16>
  return
}

// score_mod (ALiBi-like, reading a slope defined above the op) and mask_mod
// (a document mask reading a table), each alone and both together.
// CHECK-LABEL: func.func @regions
// CHECK-SAME: %[[SLOPE:[^:]*]]: f32
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16> -> tensor<1x4x64x64xf16> score_mod {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[J]], %[[I]] : index
// CHECK-NEXT: %[[DI:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[DI]] : i64 to f32
// CHECK-NEXT: %[[B:.*]] = arith.mulf %[[DF]], %[[SLOPE]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[S]], %[[B]] : f32
// CHECK-NEXT: flash.yield %[[R]] : f32
// CHECK-NEXT: }
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16> -> tensor<1x4x64x64xf16> mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[I2:.*]]: index, %[[J2:.*]]: index):
// CHECK: tensor.extract
// CHECK: tensor.extract
// CHECK: %[[SAME:.*]] = arith.cmpi eq
// CHECK-NEXT: flash.yield %[[SAME]] : i1
// CHECK-NEXT: }
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = #flash.causal<top_left>} : {{.*}} score_mod {
// CHECK: flash.yield %{{.*}} : f32
// CHECK-NEXT: } mask_mod {
// CHECK: flash.yield %{{.*}} : i1
// CHECK-NEXT: }
// GENERIC-LABEL: sym_name = "regions"
// GENERIC: "flash.attention"
// GENERIC: "flash.yield"(%{{.*}}) : (f32) -> ()
// GENERIC-NEXT: }, {
// GENERIC-NEXT: }) :
func.func @regions(%q: tensor<1x4x64x64xf16>, %k: tensor<1x4x64x64xf16>,
                   %v: tensor<1x4x64x64xf16>, %slope: f32, %doc: tensor<64xi32>) {
  %0 = flash.attention %q, %k, %v
      : tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16>
      -> tensor<1x4x64x64xf16>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %bias = arith.mulf %df, %slope : f32
    %r = arith.addf %s, %bias : f32
    flash.yield %r : f32
  }
  %1 = flash.attention %q, %k, %v
      : tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16>
      -> tensor<1x4x64x64xf16>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %doc[%i] : tensor<64xi32>
    %dj = tensor.extract %doc[%j] : tensor<64xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    flash.yield %same : i1
  }
  %2 = flash.attention %q, %k, %v {causal = #flash.causal<top_left>}
      : tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16>, tensor<1x4x64x64xf16>
      -> tensor<1x4x64x64xf16>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 30.0 : f32
    %t = arith.divf %s, %c : f32
    %th = math.tanh %t : f32
    %r = arith.mulf %th, %c : f32
    flash.yield %r : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %t = arith.constant true
    flash.yield %t : i1
  }
  return
}

// Dynamic batch, heads and lengths; D static so the default scale is known.
// A dynamic D needs an explicit scale.
// CHECK-LABEL: func.func @dynamic
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<?x1x?x?xi1>) : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.000000e+00 : f32} : tensor<2x8x?x?xbf16>, tensor<2x8x?x?xbf16>, tensor<2x8x?x?xbf16> -> tensor<2x8x?x?xbf16>
func.func @dynamic(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>,
                   %v: tensor<?x?x?x64xf16>, %m: tensor<?x1x?x?xi1>,
                   %qd: tensor<2x8x?x?xbf16>, %kd: tensor<2x8x?x?xbf16>,
                   %vd: tensor<2x8x?x?xbf16>) {
  %o, %lse = flash.attention %q, %k, %v mask(%m : tensor<?x1x?x?xi1>)
      : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>
      -> tensor<?x?x?x64xf16>, tensor<?x?x?xf32>
  %o2 = flash.attention %qd, %kd, %vd {scale = 1.0 : f32}
      : tensor<2x8x?x?xbf16>, tensor<2x8x?x?xbf16>, tensor<2x8x?x?xbf16>
      -> tensor<2x8x?x?xbf16>
  return
}

// A dynamic operand dim is refined by a static one elsewhere: K's static B
// and Sk stand for Q's and V's dynamic ones; the result may stay dynamic.
// CHECK-LABEL: func.func @partially_dynamic
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x4x16x64xf16>, tensor<3x4x?x64xf16>, tensor<?x4x?x64xf16> -> tensor<3x4x?x64xf16>
func.func @partially_dynamic(%q: tensor<?x4x16x64xf16>, %k: tensor<3x4x?x64xf16>,
                             %v: tensor<?x4x?x64xf16>) -> tensor<3x4x?x64xf16> {
  %o = flash.attention %q, %k, %v
      : tensor<?x4x16x64xf16>, tensor<3x4x?x64xf16>, tensor<?x4x?x64xf16>
      -> tensor<3x4x?x64xf16>
  return %o : tensor<3x4x?x64xf16>
}

// Empty batch and empty sequences are legal: nothing to compute.
// CHECK-LABEL: func.func @empty
// CHECK: flash.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<0x2x0x64xf16>, tensor<0x2x0x64xf16>, tensor<0x2x0x64xf16> -> tensor<0x2x0x64xf16>
func.func @empty(%q: tensor<0x2x0x64xf16>, %k: tensor<0x2x0x64xf16>,
                 %v: tensor<0x2x0x64xf16>) -> tensor<0x2x0x64xf16> {
  %o = flash.attention %q, %k, %v
      : tensor<0x2x0x64xf16>, tensor<0x2x0x64xf16>, tensor<0x2x0x64xf16>
      -> tensor<0x2x0x64xf16>
  return %o : tensor<0x2x0x64xf16>
}

// The kernel configuration chosen by flash-select-config, for each recipe.
// CHECK-LABEL: func.func @configs
// CHECK: {config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>}
// CHECK: {config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 12, stages = 2>}
// CHECK: {config = #flash.config<decode, block_m = 16, block_n = 256, warps = 4, stages = 1>}
func.func @configs(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>,
                   %v: tensor<1x2x64x64xf16>) {
  %0 = flash.attention %q, %k, %v
      {config = #flash.config<sm80, block_m = 128, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
      -> tensor<1x2x64x64xf16>
  %1 = flash.attention %q, %k, %v
      {config = #flash.config<sm90, block_m = 128, block_n = 128, warps = 12, stages = 2>}
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
      -> tensor<1x2x64x64xf16>
  %2 = flash.attention %q, %k, %v
      {config = #flash.config<decode, block_m = 16, block_n = 256, warps = 4, stages = 1>}
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
      -> tensor<1x2x64x64xf16>
  return
}

// The target description, as a module attribute would carry it.
// CHECK-LABEL: func.func @target_attr
// CHECK-SAME: flash.target = #flash.target<name = "h100", arch = 90, sms = 132, smem_per_block = 232448, regs_per_sm = 65536>
func.func @target_attr() attributes {
    flash.target = #flash.target<name = "h100", arch = 90, sms = 132,
                                 smem_per_block = 232448, regs_per_sm = 65536>} {
  return
}

// The gradient without a bias gradient.
// CHECK-LABEL: func.func @grad
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = flash.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal = #flash.causal<top_left>} : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128xf32> -> tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
// GENERIC-LABEL: sym_name = "grad"
// GENERIC: "flash.attention_grad"({{.*}}) <{causal = #flash.causal<top_left>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}>
func.func @grad(%do: tensor<2x8x128x64xf16>, %q: tensor<2x8x128x64xf16>,
                %k: tensor<2x2x128x64xf16>, %v: tensor<2x2x128x64xf16>,
                %o: tensor<2x8x128x64xf16>, %lse: tensor<2x8x128xf32>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse
      {causal = #flash.causal<top_left>}
      : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>,
        tensor<2x2x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128xf32>
      -> tensor<2x8x128x64xf16>, tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>
  return
}

// The gradient with a broadcast bias and its gradient, a mask, dropout,
// BSHD layouts and both regions, in bf16.
// CHECK-LABEL: func.func @grad_full
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = flash.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<1x4x32x32xbf16>) mask(%{{.*}} : tensor<2x1x32x32xi1>) seed(%{{.*}}) {dropout_p = 1.000000e-01 : f32, k_perm = array<i64: 0, 2, 1, 3>, q_perm = array<i64: 0, 2, 1, 3>, scale = 2.500000e-01 : f32, v_perm = array<i64: 0, 2, 1, 3>, window_left = 8 : i64} : tensor<2x32x4x16xbf16>, tensor<2x32x4x16xbf16>, tensor<2x32x4x16xbf16>, tensor<2x32x4x16xbf16>, tensor<2x32x4x16xbf16>, tensor<2x4x32xf32> -> tensor<2x32x4x16xbf16>, tensor<2x32x4x16xbf16>, tensor<2x32x4x16xbf16>, tensor<1x4x32x32xbf16> score_mod {
// CHECK: flash.yield %{{.*}} : f32
// CHECK-NEXT: } mask_mod {
// CHECK: flash.yield %{{.*}} : i1
// GENERIC-LABEL: sym_name = "grad_full"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>
func.func @grad_full(%do: tensor<2x32x4x16xbf16>, %q: tensor<2x32x4x16xbf16>,
                     %k: tensor<2x32x4x16xbf16>, %v: tensor<2x32x4x16xbf16>,
                     %o: tensor<2x32x4x16xbf16>, %lse: tensor<2x4x32xf32>,
                     %bias: tensor<1x4x32x32xbf16>, %mask: tensor<2x1x32x32xi1>,
                     %seed: i64) {
  %dq, %dk, %dv, %db = flash.attention_grad %do, %q, %k, %v, %o, %lse
      bias(%bias : tensor<1x4x32x32xbf16>) mask(%mask : tensor<2x1x32x32xi1>)
      seed(%seed)
      {q_perm = array<i64: 0, 2, 1, 3>, k_perm = array<i64: 0, 2, 1, 3>,
       v_perm = array<i64: 0, 2, 1, 3>, scale = 0.25 : f32,
       dropout_p = 0.1 : f32, window_left = 8 : i64}
      : tensor<2x32x4x16xbf16>, tensor<2x32x4x16xbf16>, tensor<2x32x4x16xbf16>,
        tensor<2x32x4x16xbf16>, tensor<2x32x4x16xbf16>, tensor<2x4x32xf32>
      -> tensor<2x32x4x16xbf16>, tensor<2x32x4x16xbf16>, tensor<2x32x4x16xbf16>,
         tensor<1x4x32x32xbf16>
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %two = arith.constant 2.0 : f32
    %r = arith.mulf %s, %two : f32
    flash.yield %r : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi ne, %i, %j : index
    flash.yield %keep : i1
  }
  return
}

// A bias without its gradient (the bias is a constant of the model), and a
// dynamic-shape gradient in f32 with an explicit scale.
// CHECK-LABEL: func.func @grad_bias_no_dbias
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = flash.attention_grad {{.*}} bias(%{{.*}} : tensor<1x1x8x8xf32>) : {{.*}} -> tensor<1x2x8x32xf16>, tensor<1x2x8x32xf16>, tensor<1x2x8x32xf16>{{$}}
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = flash.attention_grad {{.*}} {scale = 5.000000e-01 : f32} : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
func.func @grad_bias_no_dbias(%do: tensor<1x2x8x32xf16>, %q: tensor<1x2x8x32xf16>,
                              %k: tensor<1x2x8x32xf16>, %v: tensor<1x2x8x32xf16>,
                              %o: tensor<1x2x8x32xf16>, %lse: tensor<1x2x8xf32>,
                              %bias: tensor<1x1x8x8xf32>, %x: tensor<?x?x?x?xf32>,
                              %l: tensor<?x?x?xf32>) {
  %0:3 = flash.attention_grad %do, %q, %k, %v, %o, %lse
      bias(%bias : tensor<1x1x8x8xf32>)
      : tensor<1x2x8x32xf16>, tensor<1x2x8x32xf16>, tensor<1x2x8x32xf16>,
        tensor<1x2x8x32xf16>, tensor<1x2x8x32xf16>, tensor<1x2x8xf32>
      -> tensor<1x2x8x32xf16>, tensor<1x2x8x32xf16>, tensor<1x2x8x32xf16>
  %1:3 = flash.attention_grad %x, %x, %x, %x, %x, %l {scale = 0.5 : f32}
      : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>,
        tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
      -> tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
  return
}
