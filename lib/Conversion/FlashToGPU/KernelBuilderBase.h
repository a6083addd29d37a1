//===- KernelBuilderBase.h - what every sm80 kernel builder shares -*- C++ -*-===//
//
// The forward and backward kernels see the same attention: the same
// arguments, the same band of visible keys, the same score pipeline (scale,
// softcap, bias, score_mod), the same masks and the same dropout keep test.
// Those pieces live here, once; the recipes only differ in how fragments
// map to (query row, key) pairs and in their matmul schedules.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_KERNELBUILDERBASE_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_KERNELBUILDERBASE_H

#include "flashfuse/Conversion/FlashToGPU/KernelSpec.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/StringMap.h"

#include <array>

namespace mlir::flash {

class KernelBuilderBase {
protected:
  KernelBuilderBase(gpu::GPUFuncOp func, const KernelSpec &spec);
  virtual ~KernelBuilderBase() = default;

  gpu::GPUFuncOp func;
  const KernelSpec &s;
  ImplicitLocOpBuilder b;

  /// Kernel arguments by ABI name.
  llvm::StringMap<Value> arg;
  /// An integer argument as index.
  Value idx(StringRef name);
  Value i32(Value index);
  /// An i32 constant.
  Value cI32(int64_t v) {
    return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
  }
  Value asIndex(Value v);
  /// A non-negative integer as index, zero-extended: its high word is known
  /// zero, which keeps the 64-bit arithmetic on it in one register.
  Value asUnsignedIndex(Value v);
  /// A block index below 2^31 (a sequence's query or key blocks number
  /// below 2^25), through 32 bits and zero-extended: its high word is known
  /// zero.
  Value narrowBlockIndex(Value v) {
    return asUnsignedIndex(arith::IndexCastOp::create(b, b.getI32Type(), v));
  }

  // Set by readArguments(): thread coordinates (lane = g * 4 + t), the
  // block's batch and query head (blockIdx.z, blockIdx.y), its kv head, and
  // the scalar arguments every kernel reads.
  Value tid, lane, warp, g, t;
  void setThreadCoordinates(Value threadId);
  Value batchIdx, head, headKV, headsQ, seqQ, seqK;
  Value diagOffset;              // key j is on the diagonal of row i at j == i + off
  /// Index of the first key any row sees (the decode's cache_leftpad[b],
  /// at least 0); null where every kernel starts at key 0, so that their
  /// code has no trace of it.
  Value keyStart;
  /// Where set, the copies issued meanwhile (ifRowsBelow's test included)
  /// also zero-fill rows below it, reading nothing there: a left-padded
  /// cache's padding, which the decode's K/V copies skip (RowFloorScope),
  /// so that whatever it holds, NaN included, never meets P = 0 in P·V.
  Value copyRowFloor;
  /// Sets copyRowFloor for the copies issued in its lifetime (none where
  /// `floor` is null).
  struct RowFloorScope {
    RowFloorScope(KernelBuilderBase &builder, Value floor)
        : builder(builder), saved(builder.copyRowFloor) {
      builder.copyRowFloor = floor;
    }
    ~RowFloorScope() { builder.copyRowFloor = saved; }
    KernelBuilderBase &builder;
    Value saved;
  };
  Value windowLeft, windowRight; // i32, -1 = unbounded
  void readArguments();
  /// Fills `arg` from the kernel's parameters (readArguments does it first;
  /// kernels with other parameters, such as decode_combine, alone).
  void bindArguments();
  /// Reads the thread's and the block's coordinates again, opaquely to
  /// LLVM, and makes tid/lane/warp/g/t, head and batchIdx (not headKV)
  /// those. After a kernel's main loop: what follows then derives its
  /// addresses from them instead of keeping values computed before the
  /// loop alive across it (registers the loop needs at 255). A tile
  /// scheduler that derives more from them (VarlenScheduler.h: the
  /// block's sequence) re-derives that too.
  virtual void rereadCoordinates();
  /// %`name` (a 32-bit special register such as "ctaid.x"), read by an
  /// asm LLVM can neither hoist nor merge with another read. ptxas still
  /// may: it merges reads of %ctaid, so a value recomputed from one is
  /// kept out of LLVM's live ranges only, not necessarily out of ptxas's
  /// registers (docs/PERF.md runs 319-320; loadSharedOpaquely is the way
  /// to make ptxas re-read a value).
  Value readSpecialRegisterOpaquely(StringRef name);
  /// The KV head query head `h` reads (GQA: h / (heads_q / heads_kv)).
  Value kvHeadOf(Value h);
  /// A tile of the grid: its block along x (a forward's query block of
  /// block_m rows, a backward's key block of block_n keys), query head,
  /// batch.
  struct GridTile {
    Value block, head, batch;
  };
  /// The tile block (x, y, z) of a grid (gx, gy, gz) takes where the
  /// kernel takes a tile order (KernelSpec::takesTileOrder): entry
  /// x + gx (y + gy z) of the i32 array at `kv_tile_order`, the order the
  /// hardware launches blocks in, (batch << 24) | (head << 16) | block;
  /// the grid's own tile (gridTileBlock(x, gx), y, z) where that address
  /// is 0. The entry is read by a volatile asm, so that LLVM neither keeps
  /// nor hoists it, and each field is clamped into the grid: an entry
  /// outside it gives a wrong tile, never an access outside the operands.
  /// All index.
  GridTile orderedTile(Value x, Value gx, Value y, Value gy, Value z,
                       Value gz);
  /// orderedTile of the block's own coordinates (gpu.block_id, grid_dim).
  GridTile orderedTileOfBlock();
  /// orderedTile of the block's own coordinates, read opaquely
  /// (readSpecialRegisterOpaquely): a tile read again where it is used
  /// rather than held across a loop.
  GridTile rereadOrderedTile();
  /// The block along x that launch position `blockIdX` of `gridDimX`
  /// takes in the grid's own order: its position (a causal forward
  /// launches its query blocks last first).
  virtual Value gridTileBlock(Value blockIdX, Value gridDimX) {
    return blockIdX;
  }
  /// Element `i` of the i32 shared-memory tile `tile`, read by a volatile
  /// load that neither LLVM nor ptxas may hoist or merge with another:
  /// a value written there once is then read where it is used instead of
  /// being held (or spilled) in a register in between.
  Value loadSharedOpaquely(Value tile, int64_t i);

  /// Element offset of (batch, head `h`) in operand `name` (its _stride_b/h);
  /// a packed batch's scheduler (VarlenScheduler.h) puts the block's
  /// sequence there instead.
  virtual Value operandBase(StringRef name, Value h);
  /// Row offset of the block's (batch, query head) slice in the backward's
  /// contiguous [B, Hq, S, ...] buffers: LSE, Dsum and dq_accum (S = Sq),
  /// or with `keys` the dK / dV slices (S = Sk): (b · Hq + h) · S. A
  /// packed batch's scheduler gives head h's rows of [1, Hq, total] from
  /// its sequence's first row instead.
  virtual Value sliceRowStart(bool keys);

  /// The backward kernels' tile-scheduler hooks. readBlockArguments reads
  /// the arguments and places the block (in a dense batch: its batch and
  /// heads from the grid, as readArguments does; in a packed one also its
  /// sequence, whose lengths become seqQ and seqK). exitPastEnd returns
  /// from the kernel when the block's first row `first` (a key with
  /// `keys`, else a query) is at or past its sequence's end: a dense grid
  /// is exact, so nothing is emitted there.
  virtual void readBlockArguments() { readArguments(); }
  virtual void exitPastEnd(Value first, bool keys) {}
  /// Called after the kernel's main loop, before its results are stored:
  /// a packed batch's scheduler reads the block's sequence again there
  /// rather than keep it alive in registers across the loop.
  virtual void enterEpilogue() {}

  /// The dynamic shared memory, as bytes, and a `shape` view of it at byte
  /// `offset` with elements of `elt`.
  Value sharedMemoryBytes();
  Value sharedTile(Value bytes, ArrayRef<int64_t> shape, int64_t offset,
                   Type elt);
  Value sharedTile(Value bytes, ArrayRef<int64_t> shape, Value offset,
                   Type elt);

  /// How tile copies treat rows at or past their rowLimit. PerChunk
  /// computes each chunk's source from its row through memref indices and
  /// checks it (any layout). The others need passes that cover whole rows
  /// and step a raw source address by a fixed number of rows per pass:
  /// Checked tests each pass's row, None (a tile known to lie below
  /// rowLimit: every key block but the last of a sequence) tests nothing;
  /// ifRowsBelow chooses between the two at run time with one uniform
  /// branch, shared by the tiles of the same rows (K and V: each with its
  /// own branch, LLVM hoists the checked path's row arithmetic, common to
  /// both, above the first).
  enum class RowCheck { PerChunk, None, Checked };
  /// Where a tile's global row starts, as an element offset, for operands
  /// whose rows are not one stride apart (a paged KV cache's rows go
  /// through its page table; decode's packed query rows interleave heads
  /// and positions). Copies given one compute each chunk's source from its
  /// row (the PerChunk path); `base` and `rowStride` are then unused.
  using RowAddress = function_ref<Value(Value row)>;
  /// The rows of a paged KV cache: rows [p * pageSize, (p + 1) * pageSize)
  /// of the sequence are one row stride apart from element `pageStart(p)`
  /// (p an index value: the page's place in the sequence; the callback
  /// reads the page table and clamps what it reads). Where every pass of
  /// the copies stays inside one page (pageSize a multiple of the rows a
  /// pass covers, and the tile's rows a multiple or a divisor of a page),
  /// the copies look each page up once per thread, a warp-uniform load,
  /// rather than once per 16-byte chunk; otherwise chunk by chunk.
  struct PagedRows {
    int64_t pageSize;
    function_ref<Value(Value page)> pageStart;
    /// Optional, for the once-per-page path: the start of the j-th page
    /// under the tile's rows (rows rowStart + j * pageSize on; j = 0 where
    /// a page holds the tile), where the caller shares pages between
    /// copies (a decode block's K and V rows lie on the same pages).
    function_ref<Value(int64_t j)> tilePageStart = nullptr;
  };
  /// Emits body(RowCheck::None) where rows [rowStart, rowStart + rows) all
  /// lie below rowLimit (and at or past copyRowFloor where set),
  /// body(RowCheck::Checked) where not.
  void ifRowsBelow(Value rowStart, int64_t rows, Value rowLimit,
                   function_ref<void(RowCheck)> body);

  /// cp.async `rows` x `cols` elements starting at global row `rowStart` of
  /// `gmem` (row pitch `rowStride`, element offset `base`) into
  /// `tile[lead..]`; rows at or past `rowLimit` are zero-filled, and so are
  /// the columns from `cols` to mmaWidth(cols) (HeadDims.h). Appends the
  /// copies' tokens to `tokens`; nothing is committed.
  void issueTileCopies(Value gmem, Value base, Value rowStride,
                       Value rowStart, Value rowLimit, Value tile,
                       ValueRange lead, int64_t rows, int64_t cols,
                       SmallVectorImpl<Value> &tokens,
                       RowCheck check = RowCheck::PerChunk,
                       RowAddress rowAddress = nullptr,
                       const PagedRows *paged = nullptr);
  /// The same with the destination index of row r + rowDelta, column c
  /// (r, c index values, c a multiple of 8, rowDelta a constant) given by
  /// `dstIndex`: other layouts, such as the swizzled tiles. The constant
  /// row offset is separate so that a layout can add it last, where LLVM
  /// folds it into the copy's immediate. `rows * cols / 8` must then be a
  /// multiple of the block's threads.
  /// Columns from `validCols` on (when set) are zero-filled, not read.
  /// Only layouts whose passes do not cover whole rows (issueScattered-
  /// Copies) leave tokens; the commit group that follows covers every copy.
  void issueCopies(
      Value gmem, Value base, Value rowStride, Value rowStart, Value rowLimit,
      Value tile, int64_t rows, int64_t cols, SmallVectorImpl<Value> &tokens,
      function_ref<SmallVector<Value>(Value r, int64_t rowDelta, Value c)>
          dstIndex,
      std::optional<int64_t> validCols = std::nullopt,
      RowCheck check = RowCheck::PerChunk, RowAddress rowAddress = nullptr,
      const PagedRows *paged = nullptr);
  /// issueCopies chunk by chunk through memref indices and
  /// nvgpu.device_async_copy, each chunk's row checked (RowCheck::PerChunk;
  /// any layout).
  void issueIndexedCopies(
      Value gmem, Value base, Value rowStride, Value rowStart, Value rowLimit,
      Value tile, int64_t rows, int64_t cols, SmallVectorImpl<Value> &tokens,
      function_ref<SmallVector<Value>(Value r, int64_t rowDelta, Value c)>
          dstIndex,
      std::optional<int64_t> validCols, RowAddress rowAddress = nullptr);
  /// The i64 address of memory[indices] (static strides, no offset: kernel
  /// arguments and shared-memory tiles), for the raw NVVM ops.
  Value byteAddress(Value memory, ValueRange indices);
  /// Whether `gmem` is an e4m3 operand that the copies read as a 16-bit
  /// view, two e4m3 codes a unit: an FP8 KV cache (KernelSpec::fp8Cache),
  /// or Q and K of the sm80 recipe's FP8 forward.
  bool isCacheView(Value gmem) const;
  /// The address of a copy's source: byteAddress, except that indices into
  /// an e4m3 operand's 16-bit view count its units (the tile's elements).
  Value copySourceAddress(Value gmem, ValueRange indices);
  /// The 128-byte-swizzled tiles (Swizzle.h), `elements`
  /// 16-bit elements in one 1-D view `swizzledTiles` from the first
  /// 1024-byte boundary of the dynamic shared memory (KernelSpec reserves
  /// kSwizzleAlignSlack bytes for the rounding). The view's element type is
  /// `unit`, or the operands' when null.
  void carveSwizzledTiles(int64_t elements, Type unit = Type());
  Value swizzledTiles;
  Value swizzledBase; // i64 shared-memory address of swizzledTiles
  Value swizzledPad;  // byte offset of swizzledTiles in the dynamic smem
  /// i64 shared-memory address of element `offset` (index) of swizzledTiles.
  Value swizzledAddress(Value offset);
  /// issueCopies of `rows` x `cols` elements into the swizzled tile of
  /// `rows` rows at element `offset` of swizzledTiles; the tile is
  /// KernelSpec::swizzleWidth(cols) wide, its columns past `cols`
  /// zero-filled.
  void copySwizzled(Value gmem, Value base, Value rowStride, Value rowStart,
                    Value rowLimit, Value offset, int64_t rows, int64_t cols,
                    SmallVectorImpl<Value> &tokens,
                    RowCheck check = RowCheck::PerChunk,
                    RowAddress rowAddress = nullptr,
                    const PagedRows *paged = nullptr);
  /// fence.proxy.async: cp.async and st.shared write through the generic
  /// proxy, wgmma reads through the async proxy; each writing thread orders
  /// its writes before the barrier that publishes them.
  void fenceGenericToAsyncProxy();
  /// Where zeroRowsPast's stores go: `threads` threads from `thread`, and
  /// each tile's first element in swizzledTiles. Asked for in its branch,
  /// so a caller may make them there (the forward: the common path pays
  /// nothing) or before it and only pass them on (the backward, whose
  /// consumers ptxas allocates without spills only so).
  struct RowZeroing {
    Value thread;
    int64_t threads;
    SmallVector<Value, 2> offsets;
  };
  /// Where `valid` < `rows`: zeroes rows [valid, rows) of tiles of `rows`
  /// rows as copyTile writes them (`widths[k]` columns in boxes of 128-byte
  /// rows, from `place().offsets[k]`), 16 bytes a store, the threads taking
  /// every threads-th chunk: `unrolled` over the whole tile, each store
  /// predicated by its row (no loop state: for code at a register cap),
  /// else in a loop over the tail's chunks. Each thread fences its stores
  /// for wgmma's async proxy, then `publish` (the callers' barrier) runs in
  /// the same branch. A packed batch's tensor maps span every sequence's
  /// rows, so a tail tile holds the next sequence's rows where a dense map
  /// gives zeros, and a NaN or Inf there would reach this sequence through
  /// 0 · NaN.
  void zeroRowsPast(Value valid, int64_t rows, ArrayRef<int64_t> widths,
                    bool unrolled, function_ref<RowZeroing()> place,
                    function_ref<void()> publish);
  /// A barrier among the warps that compute (the forward's epilogue,
  /// before O overwrites the Q tile; the backward's dS tile): the whole
  /// block's, except where a producer warpgroup takes no part
  /// (Sm90WsForward.cpp, Sm90WsBackward.cpp).
  virtual void syncComputeWarps() { gpu::BarrierOp::create(b); }
  /// Ends the current block with a uniform branch on tid < `producerThreads`
  /// into two new blocks of the kernel, (producer, consumer), each to end
  /// the kernel: setmaxnreg applies to a warpgroup that takes one side of
  /// a uniform branch.
  std::pair<Block *, Block *> branchByRole(int64_t producerThreads);
  /// The TMA recipes' mbarriers (an nvgpu.mbarrier.group; each recipe
  /// lays out its own).
  Value barriers;
  /// Creates `barriers`, `count` mbarriers, thread 0 initialising each
  /// (id, expected arrivals) of `inits` in order and fencing the
  /// initialisations for the copy engine; then a block barrier.
  void createBarriers(int64_t count,
                      ArrayRef<std::pair<int64_t, int64_t>> inits);
  /// Waits until barrier `id` of `barriers` has completed the phase of
  /// parity `round` (0, 1, 0, ...: the round-th completion).
  void waitBarrier(Value id, Value round);
  /// One TMA copy per swizzle row (KernelSpec::tmaSwizzleBytes: 128 bytes,
  /// or 64 or 32 where e4m3 rows are not whole wider ones) of a `rows` x `cols` tile (elements) through
  /// tensor map `<op>_map` ([B][H][rows][cols] of the operand), from row
  /// `row` and column `col0` (null: 0) of (head `h`, batchIdx), into the
  /// swizzled tiles at `offset` (16-bit units, as swizzledAddress counts),
  /// completing on barrier `bar`.
  void copyTile(StringRef op, Value col0, Value row, Value h, Value offset,
                int64_t rows, int64_t cols, Value bar);
  /// Where copyTile finds the block's rows in a tensor map: the first row
  /// of its query (key, with `keys`) sequence among the map's rows (null:
  /// 0) and its batch coordinate. A packed batch's maps are [1][H][total]:
  /// its scheduler gives the sequence's first packed row and batch 0.
  virtual Value tensorMapRowStart(bool keys) { return Value(); }
  virtual Value tensorMapBatch() { return batchIdx; }
  /// Row `row` of the block's query (key, with `keys`) sequence as a row
  /// of the tensor map: offset by tensorMapRowStart where it has one.
  Value tensorMapRow(Value row, bool keys);
  /// The block's placement read afresh where a branch should not carry it
  /// (the sm90ws producer's few registers): the coordinates, and a packed
  /// batch's sequence.
  virtual void rereadPlacement() { rereadCoordinates(); }
  /// cp.async.commit_group of the copies issued so far; its token.
  Value commitGroup(ArrayRef<Value> tokens);
  /// issueTileCopies of one tile as a commit group of its own.
  Value copyTileAsync(Value gmem, Value base, Value rowStride, Value rowStart,
                      Value rowLimit, Value tile, ValueRange lead, int64_t rows,
                      int64_t cols);

  /// Blocks of `blockN` keys that some row of [rowStart, rowStart + rows)
  /// may see under the causal/window band: [first, end).
  std::pair<Value, Value> keyBlockRange(Value rowStart, int64_t rows,
                                        int64_t blockN);
  /// Blocks of `blockM` query rows that may see some key of
  /// [colStart, colStart + cols): [first, end).
  std::pair<Value, Value> queryBlockRange(Value colStart, int64_t cols,
                                          int64_t blockM);
  /// Whether the tile rows x cols may hold a masked element: past Sk (and
  /// past Sq with `rowTail`), across the causal diagonal, any window or,
  /// with `elementMasks`, an element mask (mask operand, mask_mod).
  Value tileNeedsMask(Value rowStart, int64_t rows, Value colStart,
                      int64_t cols, bool rowTail, bool elementMasks = true);

  /// No softcap, bias, score_mod or ALiBi: the score is scale * q·k, so
  /// scale and log2(e) fold into the exponent's FFMA (FlashAttention-2's
  /// trick).
  bool isPlainScore() const {
    return !s.softcap && !s.bias && !s.scoreMod && !s.alibi;
  }
  /// ALiBi over the scaled product alone (no softcap, bias or score_mod),
  /// with the tile's slope read (readTileAlibiSlope): the score goes to the
  /// log2 domain in fused multiply-adds with its bias (alibiLog2Bias),
  /// where transformScore would scale, convert and multiply apart.
  bool isAlibiOnlyScore() const {
    return alibiSlopeLog2 && !s.softcap && !s.bias && !s.scoreMod;
  }
  /// ALiBi's slope (alibiSlopeOf(head)) of the tile being computed, and it
  /// times log2(e): read once a tile, before its key or query loop
  /// (readTileAlibiSlope); null without ALiBi or where rows of one tile
  /// have slopes of their own (decode's packed GQA rows).
  Value alibiSlope, alibiSlopeLog2;
  virtual void readTileAlibiSlope();
  /// `addend` (null: none) + log2(e) * ALiBi's bias of (row, col), -slope *
  /// |row + Sk - Sq - col|, from the distance's two ends in f32 (rowF =
  /// row + Sk - Sq, colF = col: integers below 2^24, so exact; a row's or
  /// a column's conversion is shared by its scores): one FADD and one FFMA
  /// (FMUL without an addend) a score, |.| an operand modifier.
  Value alibiLog2Bias(Value rowF, Value colF, Value addend);
  /// row + Sk - Sq (i32 row): the diagonal's column on row `row`.
  Value alibiDiagonal(Value row);
  /// The factor of the raw dot products: the `scale` argument, or what a
  /// recipe set in `scaleOverride` (the FP8 forward's scale · q_descale ·
  /// k_descale).
  Value scaleOverride;
  /// Descale `name` ("q", "k", "v") of batch entry batchIdx and head `h`:
  /// `<name>_descale` at b * stride_b + h * stride_h (per tensor: strides
  /// 0), as the FP8 forward and the FP8-cache decode take them; with
  /// `block` (an FP8 forward with per-block descales) + block * stride_n.
  Value loadDescale(StringRef name, Value h, Value block = Value());
  Value scoreScale() {
    return scaleOverride ? scaleOverride : arg.lookup("scale");
  }
  /// The score of one element from its raw dot product (natural domain):
  /// scale, softcap, bias, score_mod, ALiBi. `row`, `col` are i32. With
  /// softcap, `*tanhOut` (when given) receives tanh(scale * raw / softcap),
  /// which the backward's chain rule needs. With KernelSpec::alibi,
  /// `rowSlope` is the row's slope (alibiSlopeOf), or null for the tile's
  /// (alibiSlope).
  Value transformScore(Value raw, Value row, Value col, Value *tanhOut = nullptr,
                       Value rowSlope = Value());
  /// ALiBi's slope (f32) of query head `qHead` (index) of batch entry
  /// batchIdx: `alibi_slopes`[qHead] or [batchIdx, qHead] (KernelSpec::alibi
  /// 1 or 2). A load: kernels read it once per row, before the key loop.
  Value alibiSlopeOf(Value qHead);
  /// tanh(scale · raw / softcap), softcap's term of transformScore.
  Value softcapTanh(Value raw);
  /// i1: key `col` is visible to query `row` (i32 both, col < Sk checked).
  /// `maskModApplies` (i1, null: true) gates the element masks: false in
  /// a full block of a block-sparse walk, which only the band masks.
  /// `elementKeep` (i1), where given, is the element masks' keep bit,
  /// gated already, that the caller evaluated before.
  Value elementMaskPredicate(Value row, Value col,
                             Value maskModApplies = Value(),
                             Value elementKeep = Value());
  /// The columns [colBase + lo, colBase + hi) that query `row` may see under
  /// the key-length tail, the causal diagonal and the window (i32 all).
  struct RowBand {
    Value lo, hi;
    Value contains(ImplicitLocOpBuilder &b, Value c) const;
  };
  RowBand rowBand(Value row, Value colBase);
  /// i1: the mask operand's and the mask_mod region's keep bit at (row, col).
  Value operandMaskPredicate(Value row, Value col);
  /// f32: the dropout factors of the octet {row, row + 8} x {col, col + 1,
  /// col + 8, col + 9} that (row, col) belongs to (i32 both), one Philox
  /// draw for the eight by the keep test of Conversion/Common/Philox.h:
  /// element 4 h + 2 i + j is (row + 8 i, col + 8 h + j)'s (of the octet's
  /// first row and column), 1 / (1 - p) when kept, 0 when dropped.
  std::array<Value, 8> dropoutOctetFactors(Value row, Value col);
  /// The same octet's four Philox words (Philox.h's
  /// buildDropoutOctetWords), for a caller that shares them between lanes.
  std::array<Value, 4> dropoutOctetWords(Value row, Value col);
  /// f32: 1 / (1 - p), the factor of a kept probability.
  Value dropoutKeptFactor();
  /// f32: the factor of one half of an octet word, `kept` (1 / (1 - p))
  /// or 0, against `thresholdHigh` (Philox.h's dropoutThresholdHigh).
  Value dropoutHalfFactor(Value word, bool high, Value thresholdHigh,
                          Value kept);
  Value dropoutThreshold; // i32 p * 2^16, set by readArguments() when s.dropout

  /// Backward: P of one element recomputed from its raw dot product and the
  /// row's saved −LSE·log2(e) (`negLseLog2`); `scoreFactor` = scale·log2(e).
  /// With `masked`, elements outside the band/mask or past Sq are 0. With
  /// softcap, `*tanhOut` receives the tanh the chain rule needs.
  /// `maskModApplies` and `elementKeep` as for elementMaskPredicate.
  Value recomputeProbability(Value raw, Value query, Value key,
                             Value negLseLog2, Value scoreFactor, bool masked,
                             Value *tanhOut, Value maskModApplies = Value(),
                             Value elementKeep = Value());
  /// Backward: dS of one element (gradient of the score fed to the softmax,
  /// before softcap's chain rule) from P, dP = dO·v, the row's Dsum and the
  /// dropout factor `z` (null without dropout).
  Value scoreGradient(Value p, Value dp, Value dsum, Value z);
  /// Softcap's chain-rule factor d(cap·tanh(x / cap)) / dx = 1 − tanh² from
  /// the tanh that recomputeProbability gave; null without softcap.
  Value softcapSlope(Value tanhV);
  /// dS times softcap's slope (no-op without softcap): the gradient of the
  /// raw, unscaled dot product, up to the factor `scale`.
  Value rawScoreGradient(Value ds, Value slope);

  /// Offset of element (batch, head, row, col) of the bias or mask operand,
  /// clamped into range so that loads for masked-out elements stay inside.
  Value broadcastOperandOffset(StringRef prefix, Value row, Value col);
  /// Clones a score_mod / mask_mod body with its block arguments bound.
  Value inlineRegion(Region *region, ArrayRef<Value> args);
  /// The q_idx and kv_idx a region sees for element (row, col), i32: in a
  /// forward with captured values, clamped into [0, Sq) x [0, Sk).
  std::pair<Value, Value> regionIndices(Value row, Value col);
};

} // namespace mlir::flash

#endif
