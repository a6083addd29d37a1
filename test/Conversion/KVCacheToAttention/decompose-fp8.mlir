// flash-decompose-kvcache over an FP8 (f8E4M3FN) cache (docs/KVCACHE.md
// "FP8 cache"): new rows quantised with the f32 reciprocal of their head's
// descale, clamped to +-448 and rounded (truncf) before they are written;
// the caches dequantised to f32 (descale[b, h] * extf(x8)) and Q widened,
// so that the flash.attention is an f32 one, whose O is narrowed back.
// RUN: flashfuse-opt %s -split-input-file --flash-decompose-kvcache | FileCheck %s
// Both CPU lowerings (and the CPU pipeline, flash-expand-fp8-casts
// included) leave no flash op and no 8-bit float arithmetic behind.
// RUN: flashfuse-opt %s -split-input-file --flash-lower-naive | FileCheck %s --check-prefix=LOWERED
// RUN: flashfuse-opt %s -split-input-file --flash-lower-to-loops | FileCheck %s --check-prefix=LOWERED
// RUN: flashfuse-opt %s -split-input-file --flash-cpu-pipeline="lowering=loops block-m=16 block-n=16" | FileCheck %s --check-prefix=LLVM
// LOWERED-NOT: flash.
// LLVM-NOT: f8E4M3FN
// LLVM: llvm.return

// Contiguous, per-head descales read at (b, h) of the cache's own layout
// (BHSD here).
// CHECK-LABEL: func.func @contiguous
// CHECK-SAME: %[[KD:[a-z0-9]+]]: tensor<2x2xf32>, %[[VD:[a-z0-9]+]]: tensor<2x2xf32>
// CHECK: %[[KF:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x2x64x32xf8E4M3FN>) outs(%{{.*}} : tensor<2x2x64x32xf32>)
// CHECK: %[[B0:.*]] = linalg.index 0
// CHECK: %[[H0:.*]] = linalg.index 1
// CHECK: tensor.extract %[[KD]][%[[B0]], %[[H0]]]
// CHECK: arith.extf %{{.*}} : f8E4M3FN to f32
// CHECK: arith.mulf
// CHECK: %[[VF:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x2x64x16xf8E4M3FN>) outs(%{{.*}} : tensor<2x2x64x16xf32>)
// CHECK: tensor.extract %[[VD]]
// CHECK: %[[QF:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4x3x32xbf16>) outs(%{{.*}} : tensor<2x4x3x32xf32>)
// CHECK: %[[O:.*]], %[[LSE:.*]] = flash.attention %[[QF]], %[[KF]], %[[VF]] {scale = 2.500000e-01 : f32} : tensor<2x4x3x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x16xf32> -> tensor<2x4x3x16xf32>, tensor<2x4x3xf32>
// CHECK: mask_mod
// CHECK: %[[OB:.*]] = linalg.generic {{.*}} ins(%[[O]] : tensor<2x4x3x16xf32>) outs(%{{.*}} : tensor<2x4x3x16xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[OB]], %[[LSE]]
func.func @contiguous(%q: tensor<2x4x3x32xbf16>, %k: tensor<2x2x64x32xf8E4M3FN>,
                      %v: tensor<2x2x64x16xf8E4M3FN>, %lens: tensor<2xi32>,
                      %kd: tensor<2x2xf32>, %vd: tensor<2x2xf32>)
    -> (tensor<2x4x3x16xbf16>, tensor<2x4x3xf32>) {
  %o, %lse = flash.attention_kvcache %q, %k, %v, %lens
      descale(%kd, %vd : tensor<2x2xf32>, tensor<2x2xf32>)
      {causal = #flash.causal<bottom_right>, scale = 0.25 : f32}
      : tensor<2x4x3x32xbf16>, tensor<2x2x64x32xf8E4M3FN>,
        tensor<2x2x64x16xf8E4M3FN>, tensor<2xi32>
      -> tensor<2x4x3x16xbf16>, tensor<2x4x3xf32>
  return %o, %lse : tensor<2x4x3x16xbf16>, tensor<2x4x3xf32>
}

// -----

// A contiguous cache in BSHD (k_perm): B and H are operand dims 0 and 2.
// CHECK-LABEL: func.func @bshd_cache
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x64x2x32xf8E4M3FN>)
// CHECK: %[[B:.*]] = linalg.index 0
// CHECK: %[[H:.*]] = linalg.index 2
// CHECK: tensor.extract %{{.*}}[%[[B]], %[[H]]] : tensor<1x2xf32>
func.func @bshd_cache(%q: tensor<1x2x1x32xf16>, %k: tensor<1x64x2x32xf8E4M3FN>,
                      %v: tensor<1x64x2x32xf8E4M3FN>, %lens: tensor<1xi32>,
                      %kd: tensor<1x2xf32>, %vd: tensor<f32>)
    -> tensor<1x2x1x32xf16> {
  %o = flash.attention_kvcache %q, %k, %v, %lens
      descale(%kd, %vd : tensor<1x2xf32>, tensor<f32>)
      {k_perm = array<i64: 0, 2, 1, 3>, v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<1x2x1x32xf16>, tensor<1x64x2x32xf8E4M3FN>,
        tensor<1x64x2x32xf8E4M3FN>, tensor<1xi32> -> tensor<1x2x1x32xf16>
  return %o : tensor<1x2x1x32xf16>
}

// -----

// Paged with new rows: each new element is x * (1 / descale[b, h]) in f32,
// clamped to [-448, 448] and truncated to e4m3 before it is inserted; the
// gathered pages are dequantised like a contiguous cache, per tensor here.
// CHECK-LABEL: func.func @paged_append
// CHECK: scf.for
// CHECK: %[[D:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[INV:.*]] = arith.divf %[[ONE]], %[[D]] : f32
// CHECK: %[[X:.*]] = tensor.extract %{{.*}} : tensor<2x2x1x32xf16>
// CHECK: %[[XF:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK: %[[S:.*]] = arith.mulf %[[XF]], %[[INV]] : f32
// CHECK: %[[HI:.*]] = arith.constant 4.480000e+02 : f32
// CHECK: %[[LO:.*]] = arith.constant -4.480000e+02 : f32
// CHECK: %[[C1:.*]] = arith.minimumf %[[S]], %[[HI]] : f32
// CHECK: %[[C2:.*]] = arith.maximumf %[[C1]], %[[LO]] : f32
// CHECK: %[[X8:.*]] = arith.truncf %[[C2]] : f32 to f8E4M3FN
// CHECK: tensor.insert %[[X8]] into %{{.*}} : tensor<9x16x2x32xf8E4M3FN>
// CHECK: flash.attention %{{.*}} : tensor<2x4x1x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32> -> tensor<2x4x1x32xf32>
func.func @paged_append(%q: tensor<2x4x1x32xf16>, %kp: tensor<9x16x2x32xf8E4M3FN>,
                        %vp: tensor<9x16x2x32xf8E4M3FN>, %lens: tensor<2xi32>,
                        %bt: tensor<2x4xi32>, %kn: tensor<2x2x1x32xf16>,
                        %vn: tensor<2x2x1x32xf16>, %kd: tensor<f32>,
                        %vd: tensor<f32>)
    -> (tensor<2x4x1x32xf16>, tensor<9x16x2x32xf8E4M3FN>,
        tensor<9x16x2x32xf8E4M3FN>) {
  %o, %kc, %vc = flash.attention_kvcache %q, %kp, %vp, %lens
      block_table(%bt : tensor<2x4xi32>)
      new_kv(%kn, %vn : tensor<2x2x1x32xf16>, tensor<2x2x1x32xf16>)
      descale(%kd, %vd : tensor<f32>, tensor<f32>)
      {causal = #flash.causal<bottom_right>}
      : tensor<2x4x1x32xf16>, tensor<9x16x2x32xf8E4M3FN>,
        tensor<9x16x2x32xf8E4M3FN>, tensor<2xi32>
      -> tensor<2x4x1x32xf16>, tensor<9x16x2x32xf8E4M3FN>,
         tensor<9x16x2x32xf8E4M3FN>
  return %o, %kc, %vc
      : tensor<2x4x1x32xf16>, tensor<9x16x2x32xf8E4M3FN>,
        tensor<9x16x2x32xf8E4M3FN>
}
