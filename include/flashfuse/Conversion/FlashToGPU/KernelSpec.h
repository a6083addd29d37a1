//===- KernelSpec.h - what one generated attention kernel computes -*- C++ -*-===//
//
// A KernelSpec is everything compiled into a kernel: dtype, head dims, tile
// configuration and the variant. Sizes, strides and scalar parameters are
// kernel arguments (docs/KERNEL_ABI.md). Ops with equal specs share a kernel.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_CONVERSION_FLASHTOGPU_KERNELSPEC_H
#define FLASHFUSE_CONVERSION_FLASHTOGPU_KERNELSPEC_H

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "flashfuse/Dialect/Flash/IR/HeadDims.h"
#include "flashfuse/Dialect/Flash/IR/SharedMemory.h"
#include "mlir/IR/Region.h"

#include <string>

namespace mlir::flash {

/// On a kernel gpu.func: how many of its last parameters are TMA tensor maps
/// to be passed by value (flash-grid-constant-params).
constexpr llvm::StringLiteral kGridConstantParamsAttrName =
    "flash.grid_constant_params";

/// On a kernel gpu.func: its dynamic shared memory is to start 1024-byte
/// aligned (flash-align-dynamic-shared-memory).
constexpr llvm::StringLiteral kAlignedDynamicSharedAttrName =
    "flash.aligned_dynamic_shared";

struct KernelSpec {
  /// The kernels of docs/KERNEL_ABI.md: the forward, the four of the
  /// backward (preprocess, the main dK/dV kernel, the deterministic mode's
  /// dQ kernel, postprocess), the four of attention over a KV cache
  /// (the split-KV decode, the combine of its partial results, the append
  /// of new_kv's rows to the cache and the device-side check of the
  /// lengths and the page table), and the block-sparse backward's
  /// transposition of the forward's lists (BlockSparseTranspose.cpp).
  enum class Kind {
    Forward,
    BackwardPreprocess,
    Backward,
    BackwardDQ,
    BackwardPostprocess,
    Decode,
    DecodeCombine,
    KVAppend,
    DecodeCheck,
    BackwardSparseTranspose
  } kind = Kind::Forward;
  /// The schedule the kernel is built with (#flash.config's recipe): sm80
  /// (mma.sync) for every kernel, sm90 (wgmma) for the forward and the main
  /// backward kernel on sm_90a.
  Recipe recipe = Recipe::Sm80;
  Type elementType;          // f16, bf16, or f8E4M3FN (FP8 forwards)
  /// Forward only: f32 when flash.attention's O is f32 (partial results
  /// merged by their LSE, FlashOps.td), written from the f32 accumulators;
  /// null where O has elementType, as in every other kernel.
  Type outputElementType;
  /// The element type the kernel writes O in.
  Type outputType() const {
    return outputElementType ? outputElementType : elementType;
  }
  bool writesF32Output() const { return outputType().isF32(); }
  /// An FP8 forward (docs/KERNEL_ABI.md "FP8 forwards"): e4m3 Q, K and
  /// Vᵀ with descale operands, O in outputElementType (bf16 or f16).
  bool isFp8() const { return isa<Float8E4M3FNType>(elementType); }
  /// Bytes of one Q/K/V element: 1 for e4m3, 2 otherwise.
  int64_t elementBytes() const { return isFp8() ? 1 : 2; }
  int64_t headDim = 0;       // D
  int64_t headDimV = 0;      // Dv
  int64_t blockM = 0, blockN = 0, warps = 0, stages = 0;
  enum class Causal { None, TopLeft, BottomRight } causal = Causal::None;
  bool window = false, softcap = false, bias = false, mask = false,
       dropout = false;
  /// Backward only: dQ without float atomics (a BackwardDQ kernel instead
  /// of the f32 accumulator), so two runs are bit-identical.
  bool deterministic = false;
  /// Backward preprocess, main kernel and postprocess: dq_accum holds the
  /// sm90 engine's dQ tiles in its fragment order rather than rows
  /// (docs/KERNEL_ABI.md "Backward"): each [block_m x D] tile of query
  /// block x contiguous, so that a block adds its dQ with one bulk
  /// reduction. Dense and block-sparse ops of the sm90 recipe with dQ
  /// atomics; a packed batch's blocks do not align with fixed tiles and
  /// keep rows.
  bool dqTiles = false;
  /// dq_accum holds B x Hq x (Sq rounded up to this) x D values, room for
  /// the tiles of every block_m the sm90 backward takes (64, 128).
  static constexpr int64_t kDqAccumRowMultiple = 128;
  /// Compute capability of the chip the kernels are built for (80, 89,
  /// 90): sm_90 has vector float reductions for the dQ accumulation.
  int64_t arch = 80;
  /// Backward only: dBias = dS is written, full-size [B, Hq, Sq, Sk] (a
  /// broadcast bias' sum is taken after the launches).
  bool gradBias = false;
  /// Regions are cloned into the kernel; a kernel with a region is unique
  /// to its op (`uniqueId` tells such kernels apart).
  Region *scoreMod = nullptr, *maskMod = nullptr;
  /// The values the regions read from above their op (ModCaptures.h), each
  /// a parameter of the kernels that inline the regions: the forward, the
  /// backward's main and dQ kernels.
  SmallVector<Value> captures;
  /// This kernel inlines its op's score_mod / mask_mod (the kernels that
  /// evaluate scores: forward, backward, dQ); the manifest's `mods 1`.
  bool inlinesRegions() const {
    return (scoreMod || maskMod) &&
           (kind == Kind::Forward || kind == Kind::Backward ||
            kind == Kind::BackwardDQ);
  }
  /// This kernel inlines the regions and takes `captures` as parameters.
  bool takesCaptures() const { return !captures.empty() && inlinesRegions(); }
  /// Decode, KVAppend, DecodeCheck: rows per page of a paged KV cache, 0
  /// for a contiguous one.
  int64_t pageSize = 0;
  /// Decode: the KV cache holds f8E4M3FN codes (docs/KVCACHE.md "FP8
  /// cache") while Q and O keep elementType (f16/bf16). The kernel copies
  /// the cache as a 16-bit view (two codes a unit, so the K/V tiles are
  /// cacheColumns() wide), converts the codes in registers and takes the
  /// descales as k_descale / v_descale with [B, Hkv] strides.
  /// KVAppend: the cache it writes is such a cache; the kernel quantises
  /// the new rows (elementType) with the descales' reciprocals.
  bool fp8Cache = false;
  /// Decode: each sequence's first cache row comes from `cache_leftpad`
  /// (i32 [B]; the op's operand of that name): keys below it are masked
  /// and the blocks wholly below it not visited (KernelBuilderBase's
  /// keyStart).
  bool leftPad = false;
  /// Decode: ALiBi's bias, -slope * |i + L_b - Sq - j|, added to every
  /// score (KernelBuilderBase::transformScore), its slopes f32
  /// `alibi_slopes` of [Hq] (1) or [B, Hq] (2); 0: none.
  int alibi = 0;
  /// KVAppend: rotary embedding (docs/KVCACHE.md "Rotary") of the new keys
  /// as they are written and of the query into `q_rot`, over the first
  /// `rotaryDim` elements of each row; `rotaryInterleaved` pairs (2e,
  /// 2e + 1), else (e, e + rotaryDim / 2); the query's rows at their own
  /// positions (causal or a window) or all at cache_seqlens[b]. 0: none.
  int64_t rotaryDim = 0;
  bool rotaryInterleaved = false;
  bool rotaryQueryRowsApart = false;
  /// Decode, KVAppend: a contiguous cache holding a pool of `cache_batch`
  /// sequences, sequence b's rows at row cache_batch_idx[b] (clamped into
  /// the pool where read; an append outside it is skipped).
  bool cacheBatchIdx = false;
  /// 16-bit units of a K/V tile row holding `cols` cache elements: half of
  /// them for an FP8 cache, all of them otherwise.
  int64_t cacheColumns(int64_t cols) const {
    return fp8Cache ? cols / 2 : cols;
  }
  /// Forward, backward and backward_dq: a packed batch of variable-length
  /// sequences (the ops' `varlen(...)` operands; docs/KERNEL_ABI.md
  /// "Varlen"): the tile scheduler places each block in its sequence
  /// through cu_seqlens_q / cu_seqlens_k (VarlenScheduler.h). The
  /// preprocess and postprocess of a packed batch are the dense ones.
  bool varlen = false;
  /// Forward: block-sparse lists (flash.attention's `block_sparse(...)`,
  /// docs/KERNEL_ABI.md "Block-sparse"): the key loop walks the blocks the
  /// lists name (BlockSparseIterator.h), [sparseBlockQ, sparseBlockK] the
  /// lists' block sizes (multiples of blockM, blockN); `fullBlocks` when
  /// the full lists are given too. Backward (flash.attention_grad's same
  /// lists): the main kernel walks the transposed lists that the
  /// BackwardSparseTranspose kernel builds (query blocks per key block),
  /// the dQ kernel the forward's; the preprocess and postprocess are the
  /// dense ones.
  bool blockSparse = false, fullBlocks = false;
  int64_t sparseBlockQ = 0, sparseBlockK = 0;
  /// FP8 forward: per-block descales (flash.attention's [B, H, N] descales,
  /// docs/KERNEL_ABI.md "FP8 forwards"), [descaleBlockQ, descaleBlockK]
  /// rows a factor (descale_block_size; multiples of 16 and of blockN), the
  /// descales taking a block stride `<name>_descale_stride_n` too; 0 when
  /// every descale is per tensor or per head.
  int64_t descaleBlockQ = 0, descaleBlockK = 0;
  bool blockDescales() const { return descaleBlockK > 0; }
  int64_t uniqueId = -1;

  /// Rows of a padded shared-memory tile: mmaDim() + kRowPad elements
  /// (SharedMemory.h says why).
  static constexpr int64_t kRowPad = kPaddedRowExtra;

  /// Columns the mma.sync tiles span for D and Dv (HeadDims.h's mmaWidth).
  int64_t mmaDim() const { return mmaWidth(headDim); }
  int64_t mmaDimV() const { return mmaWidth(headDimV); }

  /// Whether this is a kernel of the sm90ws recipe's own (its forward or
  /// its backward main kernel): the backward's preprocess and postprocess
  /// of an sm90ws op are the sm90 recipe's plain kernels.
  bool warpSpecialized() const {
    return recipe == Recipe::Sm90Ws &&
           (kind == Kind::Forward || kind == Kind::Backward);
  }
  /// Whether the backward main kernel's dV and dK read Pᵀ and dSᵀ as
  /// register A operands (the sm90ws backward, Sm90Backward.cpp): no Pᵀ
  /// tile in shared memory. Not where the warpgroups split the scores by
  /// queries: each then holds half of the reduction's rows.
  bool gradientsFromRegisters() const {
    return warpSpecialized() && kind == Kind::Backward &&
           !scoresByQueryHalves();
  }
  /// Whether the wgmma backward's warpgroups, which share their keys
  /// (kvColumnGroups), split the block's queries for Sᵀ, dPᵀ, P and dS:
  /// group g computes them for queries [g block_m / 2, (g + 1) block_m /
  /// 2) and stores its half of the Pᵀ and dSᵀ tiles, from which dV, dK and
  /// dQ read every query (FlashAttention-3's split for D = 256). Each score
  /// is computed once: both groups computing every score took 1.4x the
  /// useful products and twice the exponentials (docs/PERF.md, run 526).
  bool scoresByQueryHalves() const {
    return kind == Kind::Backward && usesWgmma() && kvColumnGroups() > 1;
  }
  /// The sm90ws recipe's producer warpgroup, which issues the TMA copies,
  /// comes on top of `warps` (the consumer warps that compute): 4 warps
  /// there, 0 in every other kernel.
  int64_t producerWarps() const { return warpSpecialized() ? 4 : 0; }
  int64_t threads() const { return (warps + producerWarps()) * 32; }
  /// Both Hopper recipes compute with wgmma on swizzled tiles.
  bool usesWgmma() const {
    return recipe == Recipe::Sm90 || recipe == Recipe::Sm90Ws;
  }
  /// The backward main kernel of a packed batch on the sm90 engine (dQ
  /// atomics): dq_accum keeps rows (its blocks do not align with fixed
  /// tiles, dqTiles), but the block still stages its dQ in shared memory,
  /// as rows of D + kDqRowPad floats, and adds each of its rows with one
  /// bulk reduction instead of per-thread red.global from registers,
  /// which filled the LSU queue (docs/PERF.md, run 309). So does a dense
  /// kernel whose warpgroups share keys (kvColumnGroups; their dQ pieces
  /// are not the tile's fragment order) where the rows fit beside its tiles
  /// (dqRowsFit: D = 192, Dv = 128; at D = 256 they do not, and dQ goes out
  /// by red.global from registers).
  bool stagesDQRows() const {
    if (kind != Kind::Backward || !usesWgmma() || deterministic)
      return false;
    return varlen || (kvColumnGroups() > 1 && dqRowsFit());
  }
  /// Bytes of dQ staged as rows of D + kDqRowPad floats.
  int64_t dqRowsBytes() const { return 4 * blockM * (headDim + kDqRowPad); }
  /// Whether the staged dQ rows fit beside the wgmma backward's tiles (in
  /// sm_90's shared memory: the wgmma recipes run there only, and
  /// getKernelSpec asks before it sets `arch`).
  bool dqRowsFit() const {
    return wgmmaBackwardTileBytes() + dqRowsBytes() <=
           maxSharedMemoryPerBlock(90);
  }
  /// The wgmma backward's shared memory less its staged dQ: unpadded,
  /// swizzled tiles; Pᵀ (unless from registers), dSᵀ; LSE, Dsum.
  int64_t wgmmaBackwardTileBytes() const {
    return kSwizzleAlignSlack +
           2 * ((blockN + stages * blockM) * (headDim + headDimV) +
                (gradientsFromRegisters() ? 1 : 2) * blockN * blockM) +
           statTileBytes();
  }
  /// Whether the backward main kernel writes grad_k / grad_v itself where
  /// Hq = Hkv (the block's query head is then its kv head's only one),
  /// leaving the postprocess only dQ; with GQA it writes one slice per
  /// query head for the postprocess to sum. The sm90 engine's kernels with
  /// dQ atomics (dense, block-sparse and packed batches), and so their
  /// postprocess, the sm90 recipe's non-deterministic one.
  bool mainWritesKeyGradients() const { return usesWgmma() && !deterministic; }
  /// Whether the backward main kernel stages dQ in shared memory and adds
  /// it with bulk reductions (tiles or rows).
  bool stagesDQ() const { return dqTiles || stagesDQRows(); }
  /// Whether the dQ tile (dqTiles) is staged in the step's own Q and dO
  /// tiles rather than in a buffer of its own: the column groups at D =
  /// 256, whose 64 KiB f32 tile does not fit beside their 210 KiB of tiles.
  /// By the dQ product warpgroup g's products read only the Q and dO
  /// column blocks of its half (dK's and dV's B): it writes its 128 columns
  /// of dQ there (64 D bytes of f32 in each of its Q and its dO blocks,
  /// Dv >= D: getKernelSpec's dqTiles), and hands the buffer to the
  /// producer once their reductions have read them.
  bool stagesDQInQueryTiles() const { return dqTiles && kvColumnGroups() > 1; }
  /// The staged dQ rows' padding in floats: rows D + 8 floats apart (D a
  /// multiple of 16) start 8 or 24 banks apart, so a warp's pair stores of
  /// accumulator rows g and columns 2t hit 32 distinct banks a half-warp.
  static constexpr int64_t kDqRowPad = 8;
  /// Bytes of the staged dQ (stagesDQ), 0 without.
  int64_t dqStageBytes() const {
    return stagesDQInQueryTiles() ? 0
           : dqTiles              ? 4 * blockM * headDim
           : stagesDQRows() ? dqRowsBytes()
                            : 0;
  }
  /// sm90ws loads Q, K and V (and the backward dO) through TMA tensor
  /// maps: kernel parameters `tensormap:<operand>_map`, passed by value
  /// (128 bytes, 64-aligned) as the kernel's last parameters
  /// (docs/KERNEL_ABI.md, "Tensor maps").
  bool usesTensorMaps() const { return warpSpecialized(); }
  /// How many: q, k, v (vt) for a forward, and do for the backward.
  int64_t tensorMapCount() const {
    return !usesTensorMaps() ? 0 : kind == Kind::Backward ? 4 : 3;
  }
  /// A persistent grid (PersistentScheduler.h): about one block per SM,
  /// each walking tiles; the manifest says `grid persistent`. Not at
  /// D = 256, whose consumers need every register the walk's producer
  /// gives up (Sm90WsForward.cpp: the 16-bit causal, bottom-right and f32-O
  /// kernels of 80 keys spill 8-28 bytes at 232, the FP8 ones more; the walk
  /// was worth 0-4% there, runs 108 and 163), nor a block-sparse one, whose
  /// iterator reads its query block from the block's coordinates. A packed
  /// batch's walks units of its longest sequence's query blocks, skipping
  /// those past each sequence's own (PersistentScheduler.h).
  bool persistentGrid() const {
    return recipe == Recipe::Sm90Ws && kind == Kind::Forward && !blockSparse &&
           headDim <= 128;
  }
  /// Whether the sm90ws forward's consumer warpgroups issue their products
  /// in turn (FlashAttention-3's scheduler barriers, Sm90WsForward.h: while
  /// one warpgroup's softmax runs, the others' S and P·V hold the tensor
  /// cores). Where runs 280-282 and 290 (H200) never found it slower,
  /// 2k-16k: the 16-bit D = 128 forward without a causal mask, window or
  /// softcap (two warpgroups, 1.00-1.06x), the e4m3 D = 64 forwards,
  /// top-left causal on two (1.01-1.03x; flash-select-config gives it three
  /// now, which issue best as they come, run 296) or unmasked on three (a
  /// ring, 1.01-1.04x), and the 16-bit D = 64 causal forward of long
  /// sequences on three (a ring; run 294: 1.03-1.09x the same 192-row
  /// kernel without turns from 4k).
  /// Elsewhere it lost or swung both ways (FP8 D = 128 causal 0.92-0.98x,
  /// D = 256 0.95-1.07x, 16-bit D = 64 unmasked on three 0.92-1.02x), so it
  /// is off there, and on the variants that were not timed (bias, mask,
  /// dropout, score or mask functions, f32 O, causal or D = 64 and 256
  /// block-sparse lists, per-block descales).
  bool issuesInTurns() const {
    if (!warpSpecialized() || kind != Kind::Forward || varlen ||
        window || softcap || bias || mask || dropout || scoreMod || maskMod ||
        blockDescales() || writesF32Output())
      return false;
    // Over block-sparse lists, unmasked, at D = 128 and MLA's (192, 128):
    // 1.00-1.01x at 50-25% density, 1.02x at 10% (16k, H100, docs/PERF.md
    // run 522); the outputs are bit-identical.
    if (blockSparse)
      return !isFp8() && warps == 8 && causal == Causal::None &&
             headDimV == 128 && (headDim == 128 || headDim == 192);
    if (isFp8())
      return headDim == 64 &&
             (warps == 12 ? causal == Causal::None : causal == Causal::TopLeft);
    if (warps == 12)
      return headDim == 64 && causal != Causal::None;
    return warps == 8 && headDim == 128 && headDimV == 128 &&
           causal == Causal::None;
  }
  /// Whether the overlapped key loop (Sm90Forward.cpp) waits for the P·V
  /// product only after the softmax that it overlaps, in a basic block of
  /// its own (wgmma::waitGroupThenCopy). ptxas otherwise moves that wait
  /// to the top of the softmax's block, so the product and the softmax run
  /// one after the other (docs/PERF.md runs 361-364). Where the product is
  /// long against the softmax, the 16-bit D = 256 forward (P·V of N = 256
  /// after 80 keys' softmax), that gained 2-7% without a mask and 1-2%
  /// causal from 8k, reaching 700-707 TFLOP/s (runs 363-364, H200);
  /// elsewhere it lost up to 4% (16-bit D = 64 and 128, FP8 D = 64 and
  /// 128) or swung both ways (FP8 D = 256), so those keep ptxas's order.
  bool waitsForOutputAfterSoftmax() const {
    return warpSpecialized() && kind == Kind::Forward && !isFp8() &&
           headDimV == 256;
  }
  /// Whether the sm90ws forward's producer publishes the key block of each
  /// ring stage (and, with mask_mod, whether it is a partial block) in a
  /// table of `stages` i32 after the tiles, so that the consumers take it
  /// from shared memory instead of reading the block-sparse lists again
  /// in their key loop (Sm90WsForward.h, keyTable).
  bool publishesKeyBlocks() const {
    return warpSpecialized() && kind == Kind::Forward && blockSparse;
  }
  /// Whether the kernel takes `kv_tile_order` (docs/KERNEL_ABI.md
  /// "Block-sparse"): the device address of the tile each block takes, in
  /// launch order, or 0 for the grid's own. The sm90ws block-sparse
  /// forward and main backward kernel, one tile a block, whose rows (the
  /// backward's: key blocks' columns) of unequal length make the order the
  /// hardware launches blocks in the schedule (BlockSparseIterator.h,
  /// BlockSparseQueryIterator.h).
  bool takesTileOrder() const {
    return warpSpecialized() && blockSparse &&
           (kind == Kind::Forward || kind == Kind::Backward);
  }
  /// Warps that share each row of the block and split its key blocks
  /// instead: a decode step has few query rows (G · Sq), so its warps take
  /// block_n / keyWarps() keys each of every block and merge their
  /// softmax states at the end (Sm80Decode.cpp). 1 elsewhere.
  /// Every warp where the rows are the products' n (block_m = 8).
  int64_t keyWarps() const {
    if (swapsDecodeOperands())
      return warps;
    return kind == Kind::Decode && blockM < 16 * warps ? 16 * warps / blockM
                                                       : 1;
  }
  /// Decode with block_m = 8: the packed rows are the n (8) of the
  /// mma.sync products instead of their m (16): S^T = K Q^T and
  /// O^T = V^T P^T (Sm80DecodeSwapped.cpp). A decode step's few rows
  /// (G * Sq: 4 for 32 query heads over 8 kv heads, one token) fill half
  /// of an m16 tile, so this halves the products, the exponentials and
  /// O's registers of each key block. The verifier admits it with
  /// swizzled 16-bit tiles and warps splitting the keys.
  bool swapsDecodeOperands() const {
    return kind == Kind::Decode && blockM == 8;
  }
  /// Decode on sm_90 and later: the most splits of a row group that merge
  /// inside one thread-block cluster (merge_splits = 2, docs/KERNEL_ABI.md
  /// "Decode"): the runtime launches clusters of num_splits blocks, each
  /// leaves its partial rows in its own shared memory and the cluster's
  /// blocks merge them over distributed shared memory, so the merge pays
  /// two cluster barriers instead of global stores, a fence, an atomic
  /// and L2 round trips. 8 is the portable cluster size. 0 elsewhere, and
  /// at D = 32, whose kernels run 3 blocks an SM at 168 registers, all of
  /// which the key loop takes: the cluster merge spilled 4 bytes there.
  int64_t clusterMergeSplits() const {
    return kind == Kind::Decode && arch >= 90 && headDimV > 32 ? 8 : 0;
  }
  /// Decode with clusterMergeSplits(): the byte offset in shared memory of
  /// the block's partial rows ([block_m][Dv] O, then [block_m] LSE, f32),
  /// past what mergeKeyWarps still reads while the rows are written.
  int64_t clusterExchangeOffset() const {
    return keyWarps() > 1 ? (keyWarps() * blockM * (headDimV + 2) * 4 + 15) /
                                16 * 16
                          : 0;
  }
  int64_t clusterExchangeBytes() const { return blockM * (headDimV + 1) * 4; }
  /// 16-row m-tiles each warp owns.
  /// 16-row m-tiles each warp owns (one where block_m = 8: the swapped
  /// decode's epilogue sees its rows as the first half of one).
  int64_t mTilesPerWarp() const {
    return swapsDecodeOperands() ? 1 : blockM * keyWarps() / (16 * warps);
  }
  /// Q's A operands take mTilesPerWarp * D / 4 registers per thread; kept
  /// for the whole key loop only while that is at most 32, which leaves the
  /// accumulators and scores room under 255 registers (ptxas reports for
  /// D = 128 with two m-tiles: 64 Q registers spill).
  bool qInRegisters() const { return mTilesPerWarp() * mmaDim() <= 128; }
  /// Whether the kernel's shared-memory tiles use the 128-byte swizzle
  /// (lib/Conversion/FlashToGPU/Swizzle.h) rather than padded rows: every
  /// sm90 kernel, and the sm80 forward where D and Dv are at least 64 and
  /// every thread copies the same number of 16-byte chunks of each tile (no
  /// idle copies to aim at padding). A swizzle row is 64 elements, so the
  /// tiles are swizzleWidth() wide: D = 96 keeps 128 columns, of which the
  /// last 32 are zero-filled and never read (a third more shared memory,
  /// against the padded rows' cp.async wavefronts; D = 32 would double it
  /// and keeps padded rows).
  bool swizzledTiles() const {
    if (usesWgmma())
      return true;
    return (kind == Kind::Forward || kind == Kind::Decode) &&
           sm80ForwardSwizzled(blockM, blockN, threads(), headDim, headDimV,
                               cacheColumns(headDim),
                               cacheColumns(headDimV));
  }
  /// Columns of a swizzled tile holding `cols` columns: whole 64-element
  /// swizzle rows (SharedMemory.h).
  static int64_t swizzleWidth(int64_t cols) { return swizzledColumns(cols); }
  /// Bytes of one swizzle row of a TMA tile whose rows hold `cols` elements
  /// (the box width, the swizzle mode and the wgmma descriptors all follow
  /// it; runtime/lib/tensormap.cpp makes the maps by the same rule): 128,
  /// but for e4m3 rows the widest of 128, 64 and 32 that they are whole
  /// rows of (64: Q and K at D = 64, Vᵀ rows of block_n = 192 keys; 32: Vᵀ
  /// rows of 160 or 224 keys), as wider boxes would read past a row.
  int64_t tmaSwizzleBytes(int64_t cols) const {
    if (!isFp8() || cols % 128 == 0)
      return 128;
    return cols % 64 == 0 ? 64 : 32;
  }
  /// How far (log2 units) a row's running max may lag behind the scores
  /// seen so far (FlashAttention-4's conditional rescaling): a key block
  /// whose max passes m by no more than this keeps m, so alpha is exactly 1
  /// and a warp whose rows all keep theirs skips O's rescale (a vote and a
  /// uniform branch, rescaleUnlessUnit). p = 2^(s - m) then reaches
  /// 2^slack: 256 in 16 bits; FP8's P, already scaled by 2^8, may reach
  /// 256 * 2^0.5 = 362, below e4m3's 448.
  /// On only where it measured 1.00-1.05x (docs/PERF.md runs 424-426, H200):
  /// the sm90ws forwards at Dv = 256, and the causal ones (FP8 top-left
  /// only) whose consumers do not issue in turn. Elsewhere it lost: 1-6%
  /// without a mask at D <= 128, 16-bit and FP8 (the branch splits the
  /// block in which ptxas merges P's byte pairs into its conversions, and
  /// packing P before it did not win that back), 1-4% in the kernels that
  /// issue in turn, 0.5-2% FP8 bottom-right at D <= 128, up to 1.5% with a
  /// window. Off on the variants not timed, and with per-block V descales,
  /// which put a ratio into every factor. 0: m is the exact running max.
  float runningMaxSlackLog2() const {
    if (!warpSpecialized() || kind != Kind::Forward || blockSparse ||
        varlen || window || softcap || bias || mask || dropout || scoreMod ||
        maskMod || blockDescales() || writesF32Output() || issuesInTurns())
      return 0;
    bool pays = headDimV == 256 || causal == Causal::TopLeft ||
                (causal == Causal::BottomRight && !isFp8());
    if (!pays)
      return 0;
    return isFp8() ? 0.5f : 8.0f;
  }
  /// The sm80 forward skips the O rescale of a key block when alpha is 1
  /// for every row of the warp (a vote and a uniform branch). Only at
  /// D = 128 with 128 x 64 tiles: there it removes ptxas's 72-112-byte
  /// spill and is 6-10% faster; at 128 x 32 (D = 128) and at D = 64 it
  /// measured 3-7% slower (run 48, docs/PERF.md).
  bool skipsUnitRescale() const {
    return recipe == Recipe::Sm80 && kind == Kind::Forward &&
           mTilesPerWarp() * headDimV >= 256 && blockN >= 64;
  }
  /// Swizzled tiles start at a 1024-byte boundary, which the dynamic shared
  /// memory's own alignment does not give.
  static constexpr int64_t kSwizzleAlignSlack = flash::kSwizzleAlignSlack;
  /// Padded tiles: rows of mmaDim() (mmaDimV()) columns plus kRowPad.
  int64_t qTileBytes() const { return paddedTileBytes(blockM, headDim); }
  int64_t kStageBytes() const { return paddedTileBytes(blockN, headDim); }
  int64_t vStageBytes() const { return paddedTileBytes(blockN, headDimV); }
  /// The backward's dO tile of block_m rows (Q's is qTileBytes()).
  int64_t doTileBytes() const { return paddedTileBytes(blockM, headDimV); }
  /// Backward: warps that share each 16-key tile and split the columns of
  /// its dK and dV: HeadDims.h's backwardColumnGroups on the sm80 recipe
  /// (1 for D + Dv <= kMaxBackwardDims), wgmmaBackwardColumnGroups on the
  /// wgmma ones (warpgroups w and w + warpgroups / 2 then share keys).
  int64_t kvColumnGroups() const {
    if (recipe == Recipe::Sm80)
      return backwardColumnGroups(headDim, headDimV);
    return usesWgmma() ? wgmmaBackwardColumnGroups(headDim, headDimV) : 1;
  }
  /// Columns of dK (dV) a warp holds: the whole mma width, or a group's.
  int64_t dkGroupColumns() const {
    return backwardGroupColumns(headDim, kvColumnGroups());
  }
  int64_t dvGroupColumns() const {
    return backwardGroupColumns(headDimV, kvColumnGroups());
  }
  /// Backward: block_n keys per block, 16-key tiles per warp (the warps of
  /// one column group split the block's keys).
  int64_t keyTilesPerWarp() const {
    return blockN * kvColumnGroups() / (16 * warps);
  }
  /// Backward dQ product (block_m x D per query block): the warps split its
  /// 16-row slabs and, when there are more warps than slabs, its columns
  /// too, into this many groups of dqGroupColumns() columns each. 0 when the
  /// warps do not divide the tile (getKernelSpec refuses such configs).
  int64_t dqColumnGroups() const {
    int64_t slabs = blockM / 16;
    if (slabs % warps == 0)
      return 1;
    if (warps % slabs != 0 || mmaDim() % (16 * (warps / slabs)) != 0)
      return 0;
    return warps / slabs;
  }
  int64_t dqGroupColumns() const { return mmaDim() / dqColumnGroups(); }
  /// dS of one (key block, query block) pair, [block_n][block_m + pad].
  int64_t dsTileBytes() const { return sm80BackwardDsBytes(blockM, blockN); }
  /// The backward's LSE and Dsum of the Q/dO ring (SharedMemory.h).
  int64_t statTileBytes() const {
    return sm80BackwardStatBytes(blockM, stages, blockSparse) +
           (keepsPlacementShared() ? kPlacementSlotBytes : 0);
  }
  /// Whether a packed batch's block keeps its placement (its sequence's
  /// first rows in Q and K and lengths, its first key, its kv head) in
  /// shared memory, written once at entry and read where a role needs it
  /// (VarlenScheduler.h, SharedPlacementScheduler): the sm90ws backward,
  /// whose consumers run at 240 registers and use the lengths in every
  /// step. Where the band depends on the sequence's lengths (bottom-right,
  /// window) at D = 128, ptxas held them from the prologue through the
  /// query loop to the epilogue and spilled 8-28 bytes; with the slot, 0
  /// (docs/PERF.md, run 319). At D = 64 the producer (block_m = 128:
  /// eight statistic rows a step) spilled 12-32 bytes more holding the
  /// slot's words in its 24 registers than re-reading cu_seqlens, so
  /// there only the consumers read the slot
  /// (SharedPlacementScheduler::producerReadsOffsets), and only in the
  /// kernel without a band, whose consumers held the sequence's query
  /// length, the walk's end and a dQ row's high word through the step
  /// (28/20 bytes; 0 with the slot, run 386). Not for the other kernels,
  /// which spill nothing either way and whose step the slot's reads made
  /// 1% slower without a mask at D = 128 (run 319). The sm90ws D = 128
  /// kernel with softcap keeps it too: its consumers spilled 4-16 bytes
  /// once they zeroed the tail step's Q and dO rows (zeroRowsPast), with
  /// the slot (the query length read again there) none. And the sm90 backward
  /// with softcap at D = 128 (the sm90ws library leaves softcap out),
  /// whose tanh terms live through the step: it spilled 68-140 bytes,
  /// with the slot (and the operands' rows read from it each step) 48-80
  /// (run 325), 60-92 since run 326's tanh, 8 in the causal kernel since;
  /// with its dynamic shared memory declared aligned
  /// (flash-align-dynamic-shared-memory, LowerToGPU.cpp), none. Its other
  /// packed kernels spill nothing. DeepSeek's MLA (D = 192, Dv = 128) under a
  /// top-left causal mask spilled 16 bytes in its consumers too (f16 and
  /// bf16), with the slot none, as under the bottom-right one.
  bool keepsPlacementShared() const {
    if (kind != Kind::Backward || !varlen)
      return false;
    if (warpSpecialized())
      return headDim > 64 ? causal == Causal::BottomRight || window ||
                                softcap ||
                                (headDim > 128 && causal == Causal::TopLeft)
                          : causal == Causal::None && !window;
    return recipe == Recipe::Sm90 && headDim > 64 && softcap;
  }
  /// Whether only the consumers read the placement slot, the producer
  /// re-reading cu_seqlens (at D = 64: see keepsPlacementShared).
  bool onlyConsumersReadPlacement() const {
    return keepsPlacementShared() && headDim <= 64;
  }
  /// The placement slot: [8] i32 after the statistics, 32 bytes so that
  /// the staged dQ stays aligned (SharedPlacementScheduler's words).
  static constexpr int64_t kPlacementSlotBytes = 32;
  int64_t smemBytes() const;
  std::string kindName() const;
  std::string dtypeName() const;
  std::string causalName() const;
  /// A readable symbol name that encodes the spec.
  std::string kernelName() const;
  /// The ABI parameter list, `kind:name` entries in order.
  SmallVector<std::string> params() const;

  bool operator==(const KernelSpec &o) const;
};

/// The spec of step `kind` of the backward launch sequence whose main
/// kernel is `main` (kind Backward): the preprocess, the block-sparse
/// lists' transposition, the dQ kernel and the postprocess.
KernelSpec getBackwardStepSpec(const KernelSpec &main, KernelSpec::Kind kind);
/// Reads the spec of `op` from its types, attributes and `config`. Fails
/// with a diagnostic on `op` for a variant the sm80 recipe does not serve.
FailureOr<KernelSpec> getKernelSpec(AttentionOp op);
/// The spec of the split-KV decode kernel of `op` (kind Decode); the
/// combine kernel is the same spec with kind DecodeCombine.
FailureOr<KernelSpec> getKernelSpec(AttentionKVCacheOp op);
/// The decode_combine kernel that merges the splits of `decode`: it
/// depends on the dtype and Dv only (one warp per output row, 4 rows a
/// block), so every decode variant of a dtype and Dv shares it.
KernelSpec getDecodeCombineSpec(const KernelSpec &decode);
/// The kv_append kernel that writes new_kv's rows into the cache of
/// `decode` (same dtype, head dims, page size and cache dtype: it
/// quantises into an FP8 cache; one warp per new row, block_m rows a
/// block); with `op`'s rotary operands it also rotates (the new keys, and
/// the query into q_rot, one warp per query row after the new rows).
KernelSpec getKVAppendSpec(const KernelSpec &decode,
                           AttentionKVCacheOp op = {});
/// The decode_check kernel that validates the lengths and page table of
/// `decode`'s cache on the device (one block of block_m threads). Its code
/// depends on the page size only; it keeps the decode's dtype and head
/// dims so that it is found by the decode's variant key.
KernelSpec getDecodeCheckSpec(const KernelSpec &decode);
/// The spec of the main backward kernel of `op` (kind Backward); the other
/// backward kernels are the same spec with another kind (the preprocess
/// and postprocess without the block-sparse lists: they are row by row).
FailureOr<KernelSpec> getKernelSpec(AttentionGradOp op, bool deterministic);

} // namespace mlir::flash

#endif
