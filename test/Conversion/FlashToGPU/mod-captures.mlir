// Values a score_mod or mask_mod reads from above its op become kernel
// parameters (docs/KERNEL_ABI.md "Values captured by score_mod and
// mask_mod"): a tensor as a flat buffer and the strides of its leading
// dimensions, a scalar as an i32/i64/f32 parameter; constants are cloned
// into the kernel. The region's tensor.extract ops become loads.
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=a100 --flash-lower-to-gpu=chip=sm_80 | FileCheck %s
// RUN: flashfuse-opt %s --split-input-file --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s --check-prefix=H100

// ALiBi with per-head slopes, as flash-attn's alibi_slopes: slopes[h] is
// capture0, the f16 scalar capture1 (passed as f32, truncated back), the
// constant 0 is cloned.
// CHECK-LABEL: func.func @alibi_slopes(
// CHECK-SAME: %[[SLOPES:[^:]+]]: tensor<8xf32>, %[[T:[^:]+]]: f16)
// CHECK: bufferization.to_buffer %[[SLOPES]] read_only
// CHECK: %[[SFLAT:.*]] = memref.cast {{.*}} : memref<8xf32> to memref<?xf32>
// CHECK: %[[TARG:.*]] = arith.extf %[[T]] : f16 to f32
// CHECK: gpu.launch_func @flash_kernels::@flash_fwd_sm80_f16_d64_{{.*}}_mod0
// CHECK-SAME: %[[SFLAT]] : memref<?xf32>, %[[TARG]] : f32, %{{.*}} : f32, %{{.*}} : i32
// CHECK: gpu.func @flash_fwd_sm80_f16_d64_{{.*}}_mod0(
// CHECK-SAME: %[[P22:arg22]]: memref<?xf32>, %[[P23:arg23]]: f32,
// CHECK-SAME: params = [{{.*}}"i64:o_stride_s", "memref:capture0", "f32:capture1", "f32:scale"
// CHECK-NOT: unrealized_conversion_cast
// The forward clamps the region's q_idx and kv_idx into [0, Sq) x [0, Sk)
// (a tile's padding rows and keys read inside captured tensors of Sq / Sk
// entries); the head indexes the slopes as it is.
// CHECK: %[[SQ1:.*]] = arith.subi %{{.*}}, %c1_i32{{.*}} : i32
// CHECK-NEXT: %[[QCLAMP:.*]] = arith.minsi %{{.*}}, %[[SQ1]] : i32
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: %[[SK1:.*]] = arith.subi %{{.*}}, %c1_i32{{.*}} : i32
// CHECK-NEXT: %[[KCLAMP:.*]] = arith.minsi %{{.*}}, %[[SK1]] : i32
// CHECK-NEXT: arith.index_cast %[[QCLAMP]] : i32 to index
// CHECK-NEXT: arith.index_cast %[[KCLAMP]] : i32 to index
// CHECK: arith.truncf %[[P23]] : f32 to f16
// The offset in 32 bits.
// CHECK: %[[HEAD:.*]] = arith.index_cast %block_id_y : index to i32
// CHECK-NEXT: %[[OFF:.*]] = arith.addi %{{.*}}, %[[HEAD]] : i32
// CHECK-NEXT: %[[AT:.*]] = arith.index_cast %[[OFF]] : i32 to index
// CHECK-NEXT: memref.load %[[P22]][%[[AT]]]
// CHECK: gpu.return
// H100: gpu.func @flash_fwd_sm90_f16_d64_{{.*}}_mod0(
// H100-SAME: "memref:capture0", "f32:capture1", "f32:scale"
func.func @alibi_slopes(%q: tensor<2x8x128x64xf16>, %slopes: tensor<8xf32>, %t: f16) -> tensor<2x8x128x64xf16> {
  %zero = arith.constant 0 : index
  %o = flash.attention %q, %q, %q {causal = #flash.causal<top_left>} : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16> -> tensor<2x8x128x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<8xf32>
    %rel = arith.subi %j, %i : index
    %relz = arith.addi %rel, %zero : index
    %reli = arith.index_cast %relz : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %tt = arith.extf %t : f16 to f32
    %m2 = arith.mulf %m, %tt : f32
    %r = arith.addf %s, %m2 : f32
    flash.yield %r : f32
  }
  return %o : tensor<2x8x128x64xf16>
}

// -----

// A document mask over per-batch sequence ids of dynamic length: the i64
// ids' row stride is a parameter computed from the tensor's size on the
// host; an index scalar goes as i64; an i1 table as i8 bytes. Captures are
// numbered by first use (the offset, then the ids, then the table).
// CHECK-LABEL: func.func @documents(
// CHECK-SAME: %[[IDS:[^:]+]]: tensor<2x?xi64>, %[[OFF:[^:]+]]: index, %[[KEEP:[^:]+]]: tensor<4xi1>)
// CHECK: %[[OFF64:.*]] = arith.index_cast %[[OFF]] : index to i64
// CHECK: %[[DIM:.*]] = tensor.dim %[[IDS]], %c1
// CHECK: %[[STRIDE:.*]] = arith.muli %{{.*}}, %[[DIM]] : index
// CHECK: %[[STRIDE64:.*]] = arith.index_cast %[[STRIDE]] : index to i64
// CHECK: arith.extui %[[KEEP]] : tensor<4xi1> to tensor<4xi8>
// CHECK: gpu.launch_func
// CHECK-SAME: %[[OFF64]] : i64, %{{.*}} : memref<?xi64>, %[[STRIDE64]] : i64, %{{.*}} : memref<?xi8>, %{{.*}} : f32
// CHECK: gpu.func @flash_fwd_sm80_bf16_d64_{{.*}}_mod0(
// CHECK-SAME: "i64:capture0", "memref:capture1", "i64:capture1_stride_0", "memref:capture2", "f32:scale"
// CHECK: memref.load %{{.*}} : memref<?xi64>
// CHECK: memref.load %{{.*}} : memref<?xi8>
// CHECK: arith.cmpi ne, %{{.*}}, %c0_i8 : i8
func.func @documents(%q: tensor<2x4x100x64xbf16>, %ids: tensor<2x?xi64>, %off: index, %keep: tensor<4xi1>) -> tensor<2x4x100x64xbf16> {
  %o = flash.attention %q, %q, %q : tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16> -> tensor<2x4x100x64xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %jo = arith.addi %j, %off : index
    %io = arith.addi %i, %off : index
    %dj = tensor.extract %ids[%b, %jo] : tensor<2x?xi64>
    %di = tensor.extract %ids[%b, %io] : tensor<2x?xi64>
    %same = arith.cmpi eq, %dj, %di : i64
    %k = tensor.extract %keep[%h] : tensor<4xi1>
    %both = arith.andi %same, %k : i1
    flash.yield %both : i1
  }
  return %o : tensor<2x4x100x64xbf16>
}

// -----

// The backward's main kernel takes the captures too (the preprocess and
// postprocess, which do not inline the region, do not).
// CHECK-LABEL: func.func @alibi_grad(
// CHECK: gpu.func @flash_bwd_pre_sm80_f16_d64_{{.*}}_mod0(
// CHECK-NOT: capture0
// CHECK: gpu.func @flash_bwd_sm80_f16_d64_{{.*}}_mod0(
// CHECK-SAME: "i64:do_stride_s", "memref:capture0", "f32:scale"
// The backward clamps the load's offset into the buffer instead.
// CHECK: %[[N:.*]] = memref.dim %[[SLOPES:arg[0-9]+]], %{{.*}} : memref<?xf32>
// CHECK-NEXT: %[[N32:.*]] = arith.index_cast %[[N]] : index to i32
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[N32]], %{{.*}} : i32
// CHECK: %[[LO:.*]] = arith.minsi %{{.*}}, %[[LAST]] : i32
// CHECK-NEXT: %[[OFF:.*]] = arith.maxsi %[[LO]], %{{.*}} : i32
// CHECK-NEXT: %[[AT:.*]] = arith.index_cast %[[OFF]] : i32 to index
// CHECK-NEXT: memref.load %[[SLOPES]][%[[AT]]] : memref<?xf32>
// CHECK: gpu.func @flash_bwd_post_sm80_f16_d64_{{.*}}_mod0(
// CHECK-NOT: capture0
// CHECK: gpu.return
func.func @alibi_grad(%do: tensor<1x4x96x64xf16>, %q: tensor<1x4x96x64xf16>, %o: tensor<1x4x96x64xf16>, %lse: tensor<1x4x96xf32>, %slopes: tensor<4xf32>) -> (tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %q, %q, %o, %lse : tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16>, tensor<1x4x96xf32> -> tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<4xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16>
}
