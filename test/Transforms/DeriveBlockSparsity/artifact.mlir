// flashfuse-compile derives block-sparse lists from mask_mod regions
// (after flash-select-config) and carries the constant ones in the artifact
// (docs/KERNEL_ABI.md "Block-sparse"): `bound_for` and `bound` lines after
// the kernel's params, the lists in lists.bin. Lists host code computes at
// run time and lists the input's function takes stay the caller's, and the
// tool says so on stdout (artifact-documents.mlir: a document mask over
// run-time ids). The sm90 recipe, named (the default gives the mask_mod
// ops sm90ws kernels: documents-ids-ptxas.mlir, artifact-spills.mlir).
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=sm90 --no-cubin -o %t/derived | FileCheck %s --check-prefix=OUT
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/derived/manifest.txt
// The list file: window's partial counts, its indices (2 slots a row), the
// full counts and indices (1 slot), each at a 16-byte aligned offset.
// RUN: od -An -v -t d4 -w32 %t/derived/lists.bin | FileCheck %s --check-prefix=LISTS
// Without derivation the window op keeps a dense kernel (its mask_mod
// evaluated in every block); the user's constant lists are still bound.
// RUN: flashfuse-compile %s --target=h100 --recipe=sm90 --no-cubin --no-derive-block-sparsity -o %t/dense | FileCheck %s --check-prefix=DENSE
// RUN: FileCheck %s --check-prefix=DENSE-MANIFEST < %t/dense/manifest.txt

// OUT-DAG: kernel flash_fwd_sm90_bf16_d64_m128n64w8s3_bs128x128f_mod0: block-sparse lists bound by the artifact (lists.bin)
// OUT-DAG: note: kernel flash_fwd_sm90_bf16_d64_m128n64w8s3_bs128x128f: block-sparse lists not in the artifact: its lists are computed at run time by host code; the caller passes them
// OUT-DAG: note: kernel flash_fwd_sm90_bf16_d64_m128n64w8s3_bs128x128: block-sparse lists not in the artifact: its lists are arguments of the input's function; the caller passes them
// OUT-DAG: kernel flash_fwd_sm90_f16_d64_m128n64w8s3_bs128x128: block-sparse lists bound by the artifact (lists.bin)
// OUT-DAG: note: kernel flash_fwd_sm90_f16_d64_m128n64w8s3_causal_bs128x128: block-sparse lists not in the artifact: several launches pass it different lists; the caller passes them
// OUT: wrote {{.*}}/derived/{kernels.ptx, lists.bin, manifest.txt}

// MANIFEST-LABEL: kernel flash_fwd_sm90_bf16_d64_m128n64w8s3_bs128x128f_mod0
// MANIFEST: block_sparse 2
// MANIFEST: params {{.*}} i32:full_kv_slots
// MANIFEST-NEXT: bound_for seq_q 1024 seq_k 1024 batch 2 heads_q 4
// MANIFEST-NEXT: bound kv_num_blocks file lists.bin offset 0 i32 8 crc32 79276393
// MANIFEST-NEXT: bound kv_indices file lists.bin offset 32 i32 16 crc32 5451b670
// MANIFEST-NEXT: bound full_kv_num_blocks file lists.bin offset 96 i32 8 crc32 bd264cd4
// MANIFEST-NEXT: bound full_kv_indices file lists.bin offset 128 i32 8 crc32 15a49833
// MANIFEST-NEXT: bound kv_num_blocks_stride_b 0
// MANIFEST-NEXT: bound kv_num_blocks_stride_h 0
// MANIFEST-NEXT: bound kv_indices_stride_b 0
// MANIFEST-NEXT: bound kv_indices_stride_h 0
// MANIFEST-NEXT: bound kv_slots 2
// MANIFEST-NEXT: bound full_kv_num_blocks_stride_b 0
// MANIFEST-NEXT: bound full_kv_num_blocks_stride_h 0
// MANIFEST-NEXT: bound full_kv_indices_stride_b 0
// MANIFEST-NEXT: bound full_kv_indices_stride_h 0
// MANIFEST-NEXT: bound full_kv_slots 1
// MANIFEST-NEXT: end
// The host-computed lists' kernel, the function-argument lists' and the
// kernel two ops launch with different lists: no bound lines.
// MANIFEST-LABEL: kernel flash_fwd_sm90_bf16_d64_m128n64w8s3_bs128x128f
// MANIFEST: params
// MANIFEST-NEXT: end
// MANIFEST-LABEL: kernel flash_fwd_sm90_bf16_d64_m128n64w8s3_bs128x128
// MANIFEST: params
// MANIFEST-NEXT: end
// Per-head lists (H' = 2 of Hq = 2) of a kernel two ops launch with the
// same lists: strides by value, and the lists hold for batch 1, 2 heads.
// MANIFEST-LABEL: kernel flash_fwd_sm90_f16_d64_m128n64w8s3_bs128x128
// MANIFEST: params
// MANIFEST-NEXT: bound_for seq_q 256 seq_k 256 batch 1 heads_q 2
// MANIFEST-NEXT: bound kv_num_blocks file lists.bin offset 160 i32 4 crc32 54712443
// MANIFEST-NEXT: bound kv_indices file lists.bin offset 176 i32 8 crc32 2b62221a
// MANIFEST-NEXT: bound kv_num_blocks_stride_b 0
// MANIFEST-NEXT: bound kv_num_blocks_stride_h 2
// MANIFEST-NEXT: bound kv_indices_stride_b 0
// MANIFEST-NEXT: bound kv_indices_stride_h 4
// MANIFEST-NEXT: bound kv_slots 2
// MANIFEST-NEXT: end
// MANIFEST-LABEL: kernel flash_fwd_sm90_f16_d64_m128n64w8s3_causal_bs128x128
// MANIFEST: params
// MANIFEST-NEXT: end

// LISTS: 1 1 2 2 2 2 2 2
// LISTS-NEXT: 0 0 1 0 0 2 1 3
// LISTS-NEXT: 2 4 3 5 4 6 5 7
// LISTS-NEXT: 0 1 1 1 1 1 1 1
// LISTS-NEXT: 0 0 1 2 3 4 5 6
// LISTS-NEXT: 1 2 2 1 0 0 0 1
// LISTS-NEXT: 0 1 1 0

// DENSE: kernel flash_fwd_sm90_bf16_d64_m128n64w8s3_mod0 (smem
// DENSE-NOT: _mod0: block-sparse
// DENSE: wrote {{.*}}/dense/{kernels.ptx, lists.bin, manifest.txt}
// DENSE-MANIFEST-LABEL: kernel flash_fwd_sm90_bf16_d64_m128n64w8s3_mod0
// DENSE-MANIFEST-NOT: block_sparse
// DENSE-MANIFEST: params
// DENSE-MANIFEST-NEXT: end

// A window of 256 keys behind each query: constant lists, bound.
func.func @sliding_window(%q: tensor<2x4x1024x64xbf16>) -> tensor<2x4x1024x64xbf16> {
  %o = flash.attention %q, %q, %q : tensor<2x4x1024x64xbf16>, tensor<2x4x1024x64xbf16>, tensor<2x4x1024x64xbf16> -> tensor<2x4x1024x64xbf16>
  mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c0 = arith.constant 0 : index
    %w = arith.constant 256 : index
    %d = arith.subi %i, %j : index
    %lo = arith.cmpi sge, %d, %c0 : index
    %hi = arith.cmpi slt, %d, %w : index
    %keep = arith.andi %lo, %hi : i1
    flash.yield %keep : i1
  }
  return %o : tensor<2x4x1024x64xbf16>
}

// Lists host code computes from the function's arguments: not bound.
func.func @host_lists(%q: tensor<1x4x512x64xbf16>, %fn: tensor<1x1x4xi32>, %i: tensor<1x1x4x4xi32>, %fi: tensor<1x1x4x1xi32>) -> tensor<1x4x512x64xbf16> {
  %c1 = arith.constant dense<1> : tensor<1x1x4xi32>
  %n = arith.subi %c1, %fn : tensor<1x1x4xi32>
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x4xi32>, tensor<1x1x4x4xi32>) full_blocks(%fn, %fi : tensor<1x1x4xi32>, tensor<1x1x4x1xi32>) : tensor<1x4x512x64xbf16>, tensor<1x4x512x64xbf16>, tensor<1x4x512x64xbf16> -> tensor<1x4x512x64xbf16>
  return %o : tensor<1x4x512x64xbf16>
}

// A user's lists from the function's arguments: not bound.
func.func @user_lists(%q: tensor<1x4x512x64xbf16>, %n: tensor<1x1x4xi32>, %i: tensor<1x1x4x4xi32>) -> tensor<1x4x512x64xbf16> {
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x4xi32>, tensor<1x1x4x4xi32>) : tensor<1x4x512x64xbf16>, tensor<1x4x512x64xbf16>, tensor<1x4x512x64xbf16> -> tensor<1x4x512x64xbf16>
  return %o : tensor<1x4x512x64xbf16>
}

// One kernel (no mask_mod, so no kernel of its own), two launches with the
// same constant per-head lists: bound once.
func.func @same_lists_a(%q: tensor<1x2x256x64xf16>) -> tensor<1x2x256x64xf16> {
  %n = arith.constant dense<[[[1, 2], [2, 1]]]> : tensor<1x2x2xi32>
  %i = arith.constant dense<[[[[0, 0], [0, 1]], [[0, 1], [1, 0]]]]> : tensor<1x2x2x2xi32>
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>) : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}
func.func @same_lists_b(%q: tensor<1x2x256x64xf16>) -> tensor<1x2x256x64xf16> {
  %n = arith.constant dense<[[[1, 2], [2, 1]]]> : tensor<1x2x2xi32>
  %i = arith.constant dense<[[[[0, 0], [0, 1]], [[0, 1], [1, 0]]]]> : tensor<1x2x2x2xi32>
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x2x2xi32>, tensor<1x2x2x2xi32>) : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}

// One causal kernel, two launches with different constant lists: the
// artifact cannot carry both, so neither is bound.
func.func @different_lists_a(%q: tensor<1x2x256x64xf16>) -> tensor<1x2x256x64xf16> {
  %n = arith.constant dense<[[[1, 2]]]> : tensor<1x1x2xi32>
  %i = arith.constant dense<[[[[0, 0], [0, 1]]]]> : tensor<1x1x2x2xi32>
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) {causal = #flash.causal<top_left>} : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}
func.func @different_lists_b(%q: tensor<1x2x256x64xf16>) -> tensor<1x2x256x64xf16> {
  %n = arith.constant dense<[[[1, 1]]]> : tensor<1x1x2xi32>
  %i = arith.constant dense<[[[[0, 0], [1, 0]]]]> : tensor<1x1x2x2xi32>
  %o = flash.attention %q, %q, %q block_sparse(%n, %i : tensor<1x1x2xi32>, tensor<1x1x2x2xi32>) {causal = #flash.causal<top_left>} : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}
