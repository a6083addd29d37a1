// flash-expand-fp8-casts: f8E4M3FN <-> f32 conversions become integer
// arithmetic. Applied to constants, the rewrite folds (canonicalize) to the
// value it computes, so each case checks one conversion: subnormals, the
// smallest normal, 1, the largest finite (448), NaN, -0, signs; and for
// truncf, round to nearest even at ties (normal and subnormal), a round up
// into the next binade, 464 (a tie between 448 and 480, which e4m3 lacks)
// to 448, and overflow (above 464) and infinity to NaN, as arith.truncf
// does for a format without infinity.
// The expected values were computed by an exhaustive nearest-even search
// over the 254 finite codes, not by the formula under test.
// RUN: flashfuse-opt %s --flash-expand-fp8-casts | FileCheck %s --check-prefix=EXPANDED
// RUN: flashfuse-opt %s --flash-expand-fp8-casts --canonicalize | FileCheck %s

// EXPANDED-NOT: arith.extf %{{.*}} : f8E4M3FN
// EXPANDED-NOT: arith.truncf %{{.*}} to f8E4M3FN

// CHECK-LABEL: func.func @decode_00
// CHECK: %[[C:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: return %[[C]]
func.func @decode_00() -> f32 {
  %c = arith.constant 0 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_01
// CHECK: %[[C:.*]] = arith.constant 0.001953125 : f32
// CHECK: return %[[C]]
func.func @decode_01() -> f32 {
  %c = arith.constant 1 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_07
// CHECK: %[[C:.*]] = arith.constant 0.013671875 : f32
// CHECK: return %[[C]]
func.func @decode_07() -> f32 {
  %c = arith.constant 7 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_08
// CHECK: %[[C:.*]] = arith.constant 1.562500e-02 : f32
// CHECK: return %[[C]]
func.func @decode_08() -> f32 {
  %c = arith.constant 8 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_09
// CHECK: %[[C:.*]] = arith.constant 0.017578125 : f32
// CHECK: return %[[C]]
func.func @decode_09() -> f32 {
  %c = arith.constant 9 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_38
// CHECK: %[[C:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: return %[[C]]
func.func @decode_38() -> f32 {
  %c = arith.constant 56 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_3f
// CHECK: %[[C:.*]] = arith.constant 1.875000e+00 : f32
// CHECK: return %[[C]]
func.func @decode_3f() -> f32 {
  %c = arith.constant 63 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_40
// CHECK: %[[C:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: return %[[C]]
func.func @decode_40() -> f32 {
  %c = arith.constant 64 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_7e
// CHECK: %[[C:.*]] = arith.constant 4.480000e+02 : f32
// CHECK: return %[[C]]
func.func @decode_7e() -> f32 {
  %c = arith.constant 126 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_7f
// CHECK: %[[C:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: return %[[C]]
func.func @decode_7f() -> f32 {
  %c = arith.constant 127 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_80
// CHECK: %[[C:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: return %[[C]]
func.func @decode_80() -> f32 {
  %c = arith.constant -128 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_81
// CHECK: %[[C:.*]] = arith.constant -0.001953125 : f32
// CHECK: return %[[C]]
func.func @decode_81() -> f32 {
  %c = arith.constant -127 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_b8
// CHECK: %[[C:.*]] = arith.constant -1.000000e+00 : f32
// CHECK: return %[[C]]
func.func @decode_b8() -> f32 {
  %c = arith.constant -72 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_fe
// CHECK: %[[C:.*]] = arith.constant -4.480000e+02 : f32
// CHECK: return %[[C]]
func.func @decode_fe() -> f32 {
  %c = arith.constant -2 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @decode_ff
// CHECK: %[[C:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: return %[[C]]
func.func @decode_ff() -> f32 {
  %c = arith.constant -1 : i8
  %f8 = arith.bitcast %c : i8 to f8E4M3FN
  %x = arith.extf %f8 : f8E4M3FN to f32
  return %x : f32
}

// CHECK-LABEL: func.func @encode_0
// CHECK: %[[C:.*]] = arith.constant 56 : i8
// CHECK: return %[[C]]
func.func @encode_0() -> i8 {
  %x = arith.constant 0x3F800000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_1
// CHECK: %[[C:.*]] = arith.constant 56 : i8
// CHECK: return %[[C]]
func.func @encode_1() -> i8 {
  %x = arith.constant 0x3F880000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_2
// CHECK: %[[C:.*]] = arith.constant 58 : i8
// CHECK: return %[[C]]
func.func @encode_2() -> i8 {
  %x = arith.constant 0x3F980000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_3
// CHECK: %[[C:.*]] = arith.constant 57 : i8
// CHECK: return %[[C]]
func.func @encode_3() -> i8 {
  %x = arith.constant 0x3F880008 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_4
// CHECK: %[[C:.*]] = arith.constant 0 : i8
// CHECK: return %[[C]]
func.func @encode_4() -> i8 {
  %x = arith.constant 0x3A800000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_5
// CHECK: %[[C:.*]] = arith.constant 2 : i8
// CHECK: return %[[C]]
func.func @encode_5() -> i8 {
  %x = arith.constant 0x3B400000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_6
// CHECK: %[[C:.*]] = arith.constant 8 : i8
// CHECK: return %[[C]]
func.func @encode_6() -> i8 {
  %x = arith.constant 0x3C7D70A4 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_7
// CHECK: %[[C:.*]] = arith.constant 64 : i8
// CHECK: return %[[C]]
func.func @encode_7() -> i8 {
  %x = arith.constant 0x3FF80000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_8
// CHECK: %[[C:.*]] = arith.constant 126 : i8
// CHECK: return %[[C]]
func.func @encode_8() -> i8 {
  %x = arith.constant 0x43E00000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_9
// CHECK: %[[C:.*]] = arith.constant 126 : i8
// CHECK: return %[[C]]
func.func @encode_9() -> i8 {
  %x = arith.constant 0x43E60000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_10
// CHECK: %[[C:.*]] = arith.constant 126 : i8
// CHECK: return %[[C]]
func.func @encode_10() -> i8 {
  %x = arith.constant 0x43E80000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_11
// CHECK: %[[C:.*]] = arith.constant 127 : i8
// CHECK: return %[[C]]
func.func @encode_11() -> i8 {
  %x = arith.constant 0x4E6E6B28 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_12
// CHECK: %[[C:.*]] = arith.constant -60 : i8
// CHECK: return %[[C]]
func.func @encode_12() -> i8 {
  %x = arith.constant 0xC0400000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_13
// CHECK: %[[C:.*]] = arith.constant 127 : i8
// CHECK: return %[[C]]
func.func @encode_13() -> i8 {
  %x = arith.constant 0x7F800000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_14
// CHECK: %[[C:.*]] = arith.constant -128 : i8
// CHECK: return %[[C]]
func.func @encode_14() -> i8 {
  %x = arith.constant 0x80000000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// CHECK-LABEL: func.func @encode_15
// CHECK: %[[C:.*]] = arith.constant 42 : i8
// CHECK: return %[[C]]
func.func @encode_15() -> i8 {
  %x = arith.constant 0x3E99999A : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}

// Just above the tie: rounds to 480, which e4m3 cannot hold: NaN.
// CHECK-LABEL: func.func @encode_above_tie
// CHECK: %[[C:.*]] = arith.constant 127 : i8
// CHECK: return %[[C]]
func.func @encode_above_tie() -> i8 {
  %x = arith.constant 0x43E88000 : f32
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %c = arith.bitcast %f8 : f8E4M3FN to i8
  return %c : i8
}
