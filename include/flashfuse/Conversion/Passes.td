//===- Passes.td - lowerings of the flash dialect -----------*- tablegen -*-===//
#ifndef FLASHFUSE_CONVERSION_PASSES_TD
#define FLASHFUSE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FlashDecomposeKVCache : Pass<"flash-decompose-kvcache"> {
  let summary = "Rewrite flash.attention_kvcache into a cache update, a page "
                "gather and flash.attention";
  let description = [{
    The CPU form of the decoding op (docs/KVCACHE.md), in ops the CPU
    lowerings already handle:
    1. with `new_kv`, an scf.for nest writes row t of key_new[b] and
       value_new[b] into cache row cache_seqlens[b] + t of sequence b
       (through the block table when paged); its results replace the
       updated-cache results;
    2. a paged cache is gathered into a dense [B, Hkv, C, D] tensor by a
       linalg.generic reading page block_table[b, j / page_size];
    3. a flash.attention over the dense caches (Sk = C) computes O and the
       LSE; its `mask_mod` region reads cache_seqlens and keeps key j for
       query i of sequence b iff j < L_b = cache_seqlens[b] + Snew and j lies
       in the causal / window band around diag(i) = i + L_b - Sq.
    Rows that would land outside [0, C) are not written and page indices are
    clamped into [0, num_pages), so input outside the contract gives a wrong
    answer, never an out-of-bounds access.

    An f8E4M3FN cache (`descale(...)`): step 1 quantises each new element
    as e4m3(clamp(x * (1 / descale), -448, 448)); before step 3 the dense
    caches are dequantised to f32 (descale[b, h] * x8) and Q widened to
    f32, so the flash.attention is an f32 one and its O is narrowed back to
    Q's type: the op's dequantised semantics exactly, with no FP8 attention
    in between. Run flash-expand-fp8-casts before lowering to LLVM.

    flash-lower-naive and flash-lower-to-loops run this rewrite first; the
    pass exists to inspect it. Ops with dynamic shapes are refused with an
    error.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def FlashLowerNaive : Pass<"flash-lower-naive"> {
  let summary = "Lower flash ops to a materialised reference in linalg";
  let description = [{
    Slow but inspectable: materialises the full [B, Hq, Sq, Sk] score tensor,
    applies scale, softcap, bias, score_mod and every mask, takes a
    numerically safe softmax in f32 and multiplies by V, all as
    linalg.generic on tensors. flash.attention_grad is lowered the same way
    (P from LSE, dV = Pᵀ dO, dP = dO Vᵀ, dS = P ∘ (dP − rowsum(dO ∘ O)),
    dQ = dS K · scale, dK = dSᵀ Q · scale). Runs on the CPU after
    bufferization; the reference every other lowering is checked against.

    The whole variant set is handled: operand layouts (q/k/v_perm) and GQA
    through indexing maps (no copies; the GQA sums of dK and dV reduce over
    a [Hkv, G] reshape of the heads), causal (both alignments) and window
    bands, softcap (with its 1 - tanh² chain rule), broadcast bias (dBias
    summed over the broadcast dimensions) and mask, score_mod and mask_mod
    bodies cloned into the score generic, dropout by the counter-based
    Philox keep test of flashfuse/Conversion/Common/Philox.h, the optional
    LSE (+inf for a fully masked row, whose O is 0). Statistics and
    accumulations are f32 for f16, bf16 and f32 inputs.

    flash.attention_kvcache is first rewritten by flash-decompose-kvcache
    into flash.attention and lowered with it. A varlen flash.attention or
    flash.attention_grad (cu_seqlens_q / cu_seqlens_k over a packed batch)
    is first rewritten into the dense op over the packed tensors with a
    mask_mod that keeps, for each query row, the keys of its own sequence
    under that sequence's causal / window band
    (lib/Conversion/Common/DecomposeVarlen.cpp); the cross-sequence scores
    are computed and masked, not skipped. A block-sparse flash.attention or
    flash.attention_grad (block_sparse(...) / full_blocks(...) lists) is
    rewritten into the block class of every (b, h, query block, key block)
    and the dense op whose mask_mod keeps full blocks whole and partial ones
    through the original mask_mod, the band staying an attribute
    (lib/Conversion/Common/DecomposeBlockSparse.cpp); unlisted blocks are
    computed and masked here.

    FP8 flash.attention (f8E4M3FN Q, K, V with `descale`) follows the
    op's stated semantics: the e4m3 operands enter the f32 products
    through `arith.extf`, the raw dots are multiplied by
    q_descale · k_descale before the score pipeline, P is quantised as
    `arith.truncf(min(exp(s - m) * 256, 448))` to f8E4M3FN and read back
    with `arith.extf` for the P·V product, and O = acc / l · v_descale / 256.
    Run flash-expand-fp8-casts before lowering to LLVM on the CPU.

    Refused with an error: dynamic shapes, and in flash.attention_grad a
    score_mod whose derivative with respect to the score is not provably 1
    (only `score`, `score + f(b, h, q, k)`, `score - f(...)` and
    `math.fma(f, g, score)` are differentiated).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def FlashLowerToLoops : Pass<"flash-lower-to-loops"> {
  let summary = "Lower flash ops to tiled loops with an online softmax";
  let description = [{
    The FlashAttention algorithm on scf/linalg/tensor, target independent and
    CPU-runnable: for each (batch, head, block of `block-m` query rows) a loop
    over blocks of `block-n` keys keeps the running row maximum m and sum l in
    f32 and rescales the f32 accumulator, so nothing of size Sq x Sk is ever
    built. Lengths need not be multiples of the tiles (tail tiles are
    dynamically sized slices); key blocks wholly outside the causal or
    window band are skipped by the loop bounds. The (batch, head, query
    block) nest is an scf.forall; the key loop an scf.for carrying m, l and
    the accumulator.
    flash.attention_grad follows FlashAttention-2: D = rowsum(dO ∘ O) first,
    then for each (batch, kv head, key block) a loop over the query heads of
    the group and the query blocks in the band, recomputing P from the saved
    LSE, accumulating dK and dV per key block and dQ (in f32) across key
    blocks.
    FP8 flash.attention quantises P against the row maximum over all keys
    (the op's semantics), so that the loops lowering agrees with the naive
    one: a first loop over the key blocks computes the row maxima, and the
    online-softmax loop starts from them (its rescale factors are then 1).
    Variants, refusals and numerics are those of flash-lower-naive; both
    lowerings build scores, masks and dropout from the same shared code, and
    both serve flash.attention_kvcache through flash-decompose-kvcache and
    varlen flash.attention through the same per-sequence mask_mod rewrite.
    A block-sparse flash.attention goes through the same rewrite as there,
    and its forward walks only the listed key blocks: one query tile per
    sparse query block (the lists' BQ rows, not block-m), and for each
    block its row lists (partial, then full) that block's keys in block-n
    tiles, so that unlisted blocks cost nothing; its gradient walks every
    key block under the rewritten mask.
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", /*default=*/"64",
           "Query rows per tile">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"64",
           "Keys per tile">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def FlashExpandFp8Casts : Pass<"flash-expand-fp8-casts"> {
  let summary = "Expand f8E4M3FN extf / truncf into integer arithmetic for "
                "the CPU";
  let description = [{
    LLVM has no 8-bit float type: the LLVM type converter stores f8E4M3FN as
    i8, and no upstream pattern lowers `arith.extf` / `arith.truncf` on it.
    The CPU lowerings of FP8 flash.attention only convert between
    f8E4M3FN and f32 (or f16 / bf16, through f32); this pass rewrites each
    such scalar conversion into `arith.bitcast` to i8 and integer
    arithmetic on the bit fields, so that FP8 attention runs on the CPU:
    - extf: exponent 0 is subnormal (m · 2^-9), S.1111.111 is NaN,
      anything else (1 + m/8) · 2^(e-7); exact;
    - truncf: round to nearest even at 3 mantissa bits (2^-9 steps below
      2^-6); a result above 448 and a NaN or infinite input give NaN, as
      `arith.truncf` does for a format without infinities.
    Vector conversions and other FP8 formats are left alone (no lowering
    produces them for the CPU).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def FlashLowerToGPU : Pass<"flash-lower-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Generate an NVPTX attention kernel for each flash.attention";
  let description = [{
    Builds one gpu.func per distinct variant, following the recipe of the
    op's `config` (run flash-select-config first): recipe `sm80` is the
    FlashAttention-2 schedule (Q tile in registers; K and V tiles streamed
    through shared memory with cp.async in a multistage pipeline; ldmatrix,
    transposed for V; mma.sync m16n8k16 with f32 accumulation; the online
    softmax in registers with exp2 and log2(e) folded into the scale; P
    re-packed in registers as the A operand of the second matmul; causal and
    window tiles skipped; O and LSE written in the epilogue). Batch, heads,
    lengths and strides are kernel arguments; head dim, dtype and variant are
    compiled in. Each op is replaced by a gpu.launch_func on its buffers.

    Each flash.attention_grad becomes the FlashAttention-2 backward
    (docs/KERNEL_ABI.md, "Backward"): a preprocess kernel (Dsum =
    rowsum(dO ∘ O), zeroed f32 dQ accumulator), the main kernel (one block
    per key block and query head; P recomputed from the saved LSE; dV, dK
    accumulated in registers; dQ by f32 atomics), and a postprocess kernel
    (dQ to the dtype, dK/dV summed over each GQA group). With
    `deterministic`, dQ comes from a separate kernel that walks the key
    blocks of each query block instead of atomics, so two runs give
    bit-identical gradients. grad_bias is written full-size by the main
    kernel and summed over a broadcast bias' size-1 dimensions after the
    launches (linalg.reduce on the host side, like the dtype conversions).

    Each flash.attention_kvcache (recipe `decode`, docs/KVCACHE.md)
    becomes the split-KV decode kernel and, where the config splits the
    keys, the combine of the splits' partial results; with `new_kv`, a
    `kv_append` launch before them writes the new rows into the caches in
    place (the op's updated caches are the cache buffers). Every decode
    kernel comes with its combine, its `kv_append` and its `decode_check`
    (the device-side validation of the lengths and the page table, which
    the runtime launches as a debug option), launched or not, so that an
    artifact serves the whole decode path (docs/KERNEL_ABI.md, "Decode").
    An f8E4M3FN cache (`descale(...)`, sm_89+) gets the FP8-cache decode
    kernel, which converts the codes in registers and applies the
    descales, and a `kv_append` that quantises the new rows as the CPU
    lowerings do, e4m3(clamp(x * (1 / d), -448, 448)) with the IEEE f32
    reciprocal (docs/KVCACHE.md, "FP8 cache"); on an older chip the op is
    an error.

    A varlen flash.attention (cu_seqlens_q / cu_seqlens_k over a packed
    batch) gets the recipe's forward under the varlen tile scheduler: one
    block per (query block, query head, sequence), each block reading its
    sequence's offsets, running the dense schedule on that sequence's rows
    and lengths, and returning early past its end; the launch adds one z
    for the rows no sequence owns (docs/KERNEL_ABI.md, "Varlen"). A varlen
    flash.attention_grad gets the backward's main kernel (one block per key
    block, query head and sequence) and, deterministic, its dQ kernel (per
    query block, head and sequence) under the same scheduler, and the
    dense preprocess and postprocess over the packed rows; its scratch
    (Dsum, dq_accum, the dK / dV slices) is sized by the totals.

    A block-sparse flash.attention (block_sparse(...) / full_blocks(...)
    lists) gets the sm80 or sm90 recipe's forward with the block-sparse
    key-block iterator: each block reads its query block's counts and walks
    the listed key blocks (partial, then full) instead of the band, skipping
    mask_mod in full blocks (docs/KERNEL_ABI.md, "Block-sparse"); the
    lists' block sizes must be multiples of the config's block_m and
    block_n. A block-sparse flash.attention_grad is refused (no backward
    kernel walks the lists yet).

    score_mod and mask_mod regions are inlined into the kernels that
    evaluate scores (forward, backward, dQ); each op with a region gets
    kernels of its own, marked `mods 1` in the artifact. Values a region
    reads from above its op (per-head ALiBi slopes, a document mask's
    sequence ids, scalars) become kernel parameters `capture<i>`: a tensor
    as a flat buffer with the strides of its leading dimensions, read
    through its tensor.extract ops, a scalar as an i32/i64/f32 parameter;
    scalar constants are cloned into the kernel (docs/KERNEL_ABI.md,
    "Values captured by score_mod and mask_mod"). A value of another type
    (f64, vectors), or a tensor read otherwise than by tensor.extract, is
    an error naming it.

    Variants a recipe cannot serve are reported as errors (backward: a
    score_mod that is not additive, D > 128, grad_bias with a dynamic
    [B, Hq, Sq, Sk]).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "The chip the gpu.module is targeted at (nvvm target)">,
    Option<"deterministic", "deterministic", "bool", /*default=*/"false",
           "Backward without float atomics: bit-identical gradients across "
           "runs, at the cost of recomputing S and dP in a dQ kernel">,
    Option<"kernelsOnly", "kernels-only", "bool", /*default=*/"false",
           "The module's host side will not be run: its kernels go to an "
           "artifact that the runtime launches (flashfuse-compile). Allows "
           "kernels with parameters only the runtime makes (the sm90ws "
           "recipe's TMA tensor maps), whose gpu.launch_func gets null "
           "placeholders for them; without it such an op is an error">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FlashExactMathToLLVM : Pass<"flash-exact-math-to-llvm",
                                "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower the math ops that are exact without libdevice";
  let description = [{
    A score_mod / mask_mod region is inlined into the kernels as written,
    so its `math` ops reach convert-gpu-to-nvvm, which maps them to
    libdevice calls (`__nv_fabsf`, `__nv_fmaf`, ...). Those resolve only
    where the PTX serialiser finds a CUDA toolkit to link libdevice from:
    flashfuse-compile on a machine with PyTorch but no toolkit (the
    wheel's on-demand variants) wrote PTX that neither ptxas nor the
    driver could link. The ops below are exact without a library:
    `math.fma` becomes `llvm.intr.fma` (fma.rn, which convert-gpu-to-nvvm
    keeps), `math.absf` and `math.copysign` the sign bit's integer masks
    (convert-gpu-to-nvvm refuses `llvm.intr.fabs` and `copysign` in favour
    of libdevice). Runs before convert-gpu-to-nvvm on float scalars and
    vectors; every other math op (exp, log, tanh, sqrt, floor, ...) is left
    to libdevice.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def FlashGridConstantParams : Pass<"flash-grid-constant-params",
                                   "::mlir::gpu::GPUModuleOp"> {
  let summary = "Pass a kernel's TMA tensor maps by value (__grid_constant__)";
  let description = [{
    A kernel that loads tiles with TMA (the sm90ws recipe) takes its
    CUtensorMaps as its last parameters, `!llvm.ptr` in the gpu.func. The
    copy engine reads a tensor map from a by-value kernel parameter through
    its generic address, as CUDA's `__grid_constant__ const CUtensorMap`
    does; that needs the parameter to be `byval` (128 bytes, 64-byte
    aligned) and marked `nvvm.grid_constant`, so that the NVPTX backend
    declares `.param .align 64 .b8 p[128]` and takes its address with
    `cvta.param` instead of copying it to local memory.

    Runs after convert-gpu-to-nvvm (neither the gpu.func verifier nor its
    conversion carries those argument attributes): on each kernel
    `llvm.func` with `flash.grid_constant_params = N`, marks the last N
    arguments, which must be pointers, and drops the attribute. Kernels
    without the attribute are left as they are. A malformed count (more than
    the arguments, a non-pointer among them) is an error.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def FlashAlignDynamicSharedMemory
    : Pass<"flash-align-dynamic-shared-memory", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Address a kernel's dynamic shared memory through PTX's "
                "extern array, aligned for swizzled tiles";
  let description = [{
    convert-gpu-to-nvvm gives `gpu.dynamic_shared_memory` an internal,
    16-byte aligned, zero-length `llvm.mlir.global` in address space 3
    (`__dynamic_shmem__N`). The NVPTX backend demotes such a global into
    each kernel as a zero-sized static `.shared` variable, which ptxas
    places after the kernel's other static shared memory (its mbarriers):
    the dynamic region in all but name. Its start is then only 16-byte
    aligned, so the kernels round their swizzled tiles up to a 1024-byte
    boundary (the 128-byte swizzle's period, which TMA boxes and wgmma
    descriptors need) at run time: every shared address is that run-time
    base plus an offset, and what is derived from it (tile and descriptor
    addresses) takes registers through the loops, where ptxas spilled them.

    Runs after convert-gpu-to-nvvm, on the kernels (`llvm.func`) that
    flash-lower-to-gpu marked `flash.aligned_dynamic_shared`: their
    references to a dynamic shared memory global (address space 3, a
    zero-length array without initializer) go to one external declaration
    aligned to `alignment` bytes, which the NVPTX backend prints as
    `.extern .shared .align <alignment> .b8 name[]`, PTX's form of the
    dynamic region, placed at that alignment after the static shared
    memory. LLVM then knows the base's low bits, the kernel's rounding
    folds away (its tiles start at the region's start, the slack it asked
    for goes unused) and its shared addresses are link-time constants. The
    mark is dropped; unmarked kernels and other globals are left as they
    are (docs/PERF.md, "The dynamic shared memory declared aligned", says
    which kernels are marked and why). An alignment that is not a power
    of two is an error.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"1024",
           "Bytes to which the marked kernels' dynamic shared memory starts "
           "aligned">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // FLASHFUSE_CONVERSION_PASSES_TD
