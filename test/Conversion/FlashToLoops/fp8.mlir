// RUN: flashfuse-opt %s --flash-lower-to-loops="block-m=16 block-n=16" | FileCheck %s

// FP8 flash.attention in the loops lowering (FlashOps.td semantics): the
// descales are read once per (b, h) block, Q·Kᵀ of the e4m3 tiles (extf to
// f32) is multiplied by q_descale · k_descale, a first key loop computes the
// row maxima, the online loop starting from them weights V with
// P8 = e4m3(min(256 p, 448)) (a truncf to f8E4M3FN read back by extf), and
// O = acc / l · v_descale / 256.

// CHECK-LABEL: func.func @fp8
// CHECK-SAME: %[[QD:[a-z0-9]+]]: tensor<2x4xf32>, %[[KD:[a-z0-9]+]]: tensor<2x2xf32>, %[[VD:[a-z0-9]+]]: tensor<2x2xf32>
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %{{.*}}) in
// CHECK: %[[KVH:.*]] = arith.divui %[[H]]
// CHECK: %[[QS:.*]] = tensor.extract %[[QD]][%[[B]], %[[H]]] : tensor<2x4xf32>
// CHECK: %[[KS:.*]] = tensor.extract %[[KD]][%[[B]], %[[KVH]]] : tensor<2x2xf32>
// CHECK: %[[QKS:.*]] = arith.mulf %[[QS]], %[[KS]] : f32
// CHECK: %[[VS:.*]] = tensor.extract %[[VD]][%[[B]], %[[KVH]]] : tensor<2x2xf32>
// The row maxima first: scores and a max reduction, nothing else.
// CHECK: %[[MAX:.*]] = scf.for
// CHECK: arith.extf %{{.*}} : f8E4M3FN to f32
// CHECK: arith.mulf %{{.*}}, %[[QKS]] : f32
// CHECK: arith.maximumf
// CHECK-NOT: arith.truncf
// CHECK: scf.yield
// The online loop from those maxima.
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[MAX]],
// CHECK: arith.mulf %{{.*}}, %[[QKS]] : f32
// CHECK: %[[C256:.*]] = arith.constant 2.560000e+02 : f32
// CHECK: %[[SC:.*]] = arith.mulf %{{.*}}, %[[C256]] : f32
// CHECK: %[[CMAX:.*]] = arith.constant 4.480000e+02 : f32
// CHECK: %[[CL:.*]] = arith.minimumf %[[SC]], %[[CMAX]] : f32
// CHECK: %[[P8:.*]] = arith.truncf %[[CL]] : f32 to f8E4M3FN
// CHECK: arith.extf %[[P8]] : f8E4M3FN to f32
// CHECK: arith.extf %{{.*}} : f8E4M3FN to f32
// CHECK: scf.yield
// O = acc / l · (v_descale / 256) in bf16.
// CHECK: %[[INV:.*]] = arith.constant 3.906250e-03 : f32
// CHECK: arith.mulf %[[VS]], %[[INV]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @fp8(%q: tensor<2x4x40x32xf8E4M3FN>, %k: tensor<2x2x40x32xf8E4M3FN>,
               %v: tensor<2x2x40x32xf8E4M3FN>, %qd: tensor<2x4xf32>,
               %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>) -> tensor<2x4x40x32xbf16> {
  %o = flash.attention %q, %k, %v
      descale(%qd, %kd, %vd : tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
      : tensor<2x4x40x32xf8E4M3FN>, tensor<2x2x40x32xf8E4M3FN>,
        tensor<2x2x40x32xf8E4M3FN> -> tensor<2x4x40x32xbf16>
  return %o : tensor<2x4x40x32xbf16>
}
