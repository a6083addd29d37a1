// RUN: flashfuse-opt %s --flash-lower-naive | FileCheck %s

// FP8 flash.attention in the naive lowering (FlashOps.td semantics), per
// tensor descales: the raw dots of the e4m3 operands (extf to f32) times
// q_descale · k_descale, exp(s - m) quantised to P8 = e4m3(min(256 p, 448))
// (unnormalised: no division before the product), P8 · V, then
// O = acc / l · v_descale / 256 in f16.

// CHECK-LABEL: func.func @fp8
// CHECK-SAME: %[[QD:[a-z0-9]+]]: tensor<f32>, %[[KD:[a-z0-9]+]]: tensor<f32>, %[[VD:[a-z0-9]+]]: tensor<f32>
// CHECK: arith.extf %{{.*}} : f8E4M3FN to f32
// CHECK: %[[QS:.*]] = tensor.extract %[[QD]][] : tensor<f32>
// CHECK: %[[KS:.*]] = tensor.extract %[[KD]][] : tensor<f32>
// CHECK: %[[QKS:.*]] = arith.mulf %[[QS]], %[[KS]] : f32
// CHECK: arith.mulf %{{.*}}, %[[QKS]] : f32
// CHECK: math.exp
// CHECK-NOT: arith.divf
// CHECK: %[[C256:.*]] = arith.constant 2.560000e+02 : f32
// CHECK: %[[SC:.*]] = arith.mulf %{{.*}}, %[[C256]] : f32
// CHECK: %[[CMAX:.*]] = arith.constant 4.480000e+02 : f32
// CHECK: %[[CL:.*]] = arith.minimumf %[[SC]], %[[CMAX]] : f32
// CHECK: %[[P8:.*]] = arith.truncf %[[CL]] : f32 to f8E4M3FN
// CHECK: arith.extf %[[P8]] : f8E4M3FN to f32
// CHECK: %[[VS:.*]] = tensor.extract %[[VD]][] : tensor<f32>
// CHECK: arith.divf
// CHECK: %[[INV:.*]] = arith.constant 3.906250e-03 : f32
// CHECK: arith.mulf %[[VS]], %[[INV]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @fp8(%q: tensor<1x2x17x32xf8E4M3FN>, %k: tensor<1x2x23x32xf8E4M3FN>,
               %v: tensor<1x2x23x32xf8E4M3FN>, %qd: tensor<f32>,
               %kd: tensor<f32>, %vd: tensor<f32>) -> tensor<1x2x17x32xf16> {
  %o = flash.attention %q, %k, %v
      descale(%qd, %kd, %vd : tensor<f32>, tensor<f32>, tensor<f32>)
      : tensor<1x2x17x32xf8E4M3FN>, tensor<1x2x23x32xf8E4M3FN>,
        tensor<1x2x23x32xf8E4M3FN> -> tensor<1x2x17x32xf16>
  return %o : tensor<1x2x17x32xf16>
}
