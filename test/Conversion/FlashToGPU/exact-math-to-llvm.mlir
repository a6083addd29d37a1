// RUN: flashfuse-opt %s --pass-pipeline='builtin.module(gpu.module(flash-exact-math-to-llvm))' | FileCheck %s
// flash-exact-math-to-llvm: the math ops of inlined score_mod / mask_mod
// regions that need no libdevice (fma, absf, copysign) leave the math
// dialect before convert-gpu-to-nvvm would map them to __nv_* calls;
// every other math op is left as it is.

gpu.module @kernels {
  // CHECK-LABEL: func.func @exact
  // CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32)
  func.func @exact(%a: f32, %b: f32, %c: f32) -> (f32, f32, f32) {
    // CHECK: %[[FMA:.*]] = llvm.intr.fma(%[[A]], %[[B]], %[[C]]) : (f32, f32, f32) -> f32
    %0 = math.fma %a, %b, %c fastmath<fast> : f32
    // CHECK: %[[AI:.*]] = arith.bitcast %[[A]] : f32 to i32
    // CHECK: %[[MAG:.*]] = arith.constant 2147483647 : i32
    // CHECK: %[[ABSI:.*]] = arith.andi %[[AI]], %[[MAG]] : i32
    // CHECK: %[[ABS:.*]] = arith.bitcast %[[ABSI]] : i32 to f32
    %1 = math.absf %a : f32
    // CHECK: %[[SIGN:.*]] = arith.constant -2147483648 : i32
    // CHECK: arith.andi %{{.*}}, %[[SIGN]] : i32
    // CHECK: arith.ori
    // CHECK: %[[CS:.*]] = arith.bitcast %{{.*}} : i32 to f32
    %2 = math.copysign %a, %b : f32
    // CHECK: return %[[FMA]], %[[ABS]], %[[CS]]
    // CHECK-NOT: math.
    return %0, %1, %2 : f32, f32, f32
  }

  // Half precision and vectors take masks of their own width.
  // CHECK-LABEL: func.func @widths
  func.func @widths(%h: bf16, %v: vector<4xf16>) -> (bf16, vector<4xf16>) {
    // CHECK: arith.bitcast %{{.*}} : bf16 to i16
    // CHECK: arith.constant 32767 : i16
    %0 = math.absf %h : bf16
    // CHECK: arith.bitcast %{{.*}} : vector<4xf16> to vector<4xi16>
    // CHECK: arith.constant dense<32767> : vector<4xi16>
    %1 = math.absf %v : vector<4xf16>
    // CHECK-NOT: math.
    return %0, %1 : bf16, vector<4xf16>
  }

  // What libdevice computes (or integer math) is left alone.
  // CHECK-LABEL: func.func @left_alone
  func.func @left_alone(%a: f32, %i: i32) -> (f32, f32, f32, i32) {
    // CHECK: math.exp
    // CHECK: math.sqrt
    // CHECK: math.floor
    // CHECK: math.absi
    %0 = math.exp %a : f32
    %1 = math.sqrt %a : f32
    %2 = math.floor %a : f32
    %3 = math.absi %i : i32
    return %0, %1, %2, %3 : f32, f32, f32, i32
  }
}
