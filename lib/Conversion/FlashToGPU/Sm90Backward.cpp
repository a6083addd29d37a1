//===- Sm90Backward.cpp - the sm90 recipe's backward matrix engine --------===//
//
// The backward schedule of BackwardBuilder.cpp on Hopper's warpgroup MMA.
// Each warpgroup (4 warps) owns 64 of the block's keys, so every transposed
// product is one chain of wgmma m64nNk16 with both operands in shared
// memory:
//   Sᵀ  = K Qᵀ,  dPᵀ = V dOᵀ   K-major A and B, issued together;
//   dV += Pᵀ dO, dK += dSᵀ Q   A = Pᵀ (dSᵀ) stored by the warpgroup as a
//                              [key][query] tile (K-major), B N-major;
//   dQ  = dS K                 the dSᵀ tile read M-major, B = K N-major.
// Warpgroup w takes rows 64 (w mod block_m/64) and a slice of 32 or 64
// columns of dQ. Past D + Dv = 256 (KernelSpec::kvColumnGroups) the two
// warpgroups own the same 64 keys instead and split the block's queries
// (KernelSpec::scoresByQueryHalves): each computes Sᵀ and dPᵀ of its 32
// queries (m64n32), stores its columns of the Pᵀ and dSᵀ tiles, and after
// the consumers' barrier keeps one column half of dK and dV from the whole
// tiles (B: its half of the Q and dO tiles); dQ goes out as staged rows
// where they fit (D = 192, Dv = 128), else by red.global (D = 256). Both
// groups computing every score, from registers, took 1.03-1.08x the time
// (docs/PERF.md run 534). Dense batches (KernelSpec::dqTiles) stage the block's dQ
// in shared memory in the accumulator's fragment order and add it to its
// tile of dq_accum with one bulk reduction (cp.reduce.async.bulk), which
// the postprocess reads back in that order: FlashAttention-3's layout.
// Per-thread red.global.add.v2.f32 from registers took 8-11% more time
// (docs/PERF.md, run 122). A packed batch's query blocks do not start on
// fixed tiles, so its dq_accum keeps rows (KernelSpec::stagesDQRows): the
// block stages dQ as rows padded to spread the pair stores over every
// bank, and each row goes out as one bulk reduction of D floats, issued
// by one thread a row. LSE and Dsum of each query block are staged in
// shared memory with its Q tile.
// The accumulators of dK and dV stay in the wgmma register form across the
// query loop. K, V, the Q/dO ring, Pᵀ and dSᵀ live in 128-byte-swizzled
// tiles (Wgmma.h) filled by cp.async or st.shared, each writer fencing its
// generic-proxy writes before the barrier that publishes them to wgmma.
//
// Registers, not tensor-core time, bound this kernel: dK and dV (D
// registers per thread) stay in them for the whole loop, next to Pᵀ and dPᵀ
// in f32. Pᵀ and dSᵀ therefore go through shared memory rather than being
// packed into register A operands, which would have to stay alive until
// their products complete (that layout spilled at every head dim). The
// sm90ws recipe's consumers, at 240 registers with no copies to issue,
// take that form (gradientsFromRegisters): dV += Pᵀ dO and dK += dSᵀ Q
// read the packed Pᵀ and dSᵀ as wgmma's register A operand, as
// FlashAttention-3's backward does; dSᵀ is still stored for dQ, Pᵀ is not,
// and dV is issued without the warpgroup barrier its tile needed (+3-8%
// on the main kernel, docs/PERF.md run 149). Not with query halves, whose
// warpgroups each hold half of the products' reduction.
// Overlap: Sᵀ and dPᵀ are in flight together and P is recomputed while dPᵀ
// finishes; dV runs while dS is computed; dK and dQ together.
//
//===----------------------------------------------------------------------===//
#include "Sm90Backward.h"
#include "BlockSparseQueryIterator.h"
#include "Fragments.h"
#include "Recipes.h"
#include "VarlenScheduler.h"
#include "Wgmma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

void Sm90BackwardBuilder::carveSharedMemory() {
  kElems = s.blockN * s.headDim;
  vElems = s.blockN * s.headDimV;
  qElems = s.blockM * s.headDim;
  doElems = s.blockM * s.headDimV;
  int64_t elements = dsOffset() + s.blockN * s.blockM;
  carveSwizzledTiles(elements);
  Value statOffset = arith::AddIOp::create(b, swizzledPad, cIdx(b, 2 * elements));
  carveStatisticTile(statOffset);
  if (s.stagesDQInQueryTiles())
    // The staged dQ lives in the step's Q and dO tiles: the swizzled tiles
    // seen as f32 (element e of them is float e / 2).
    dqTile = sharedTile(sharedMemoryBytes(), {elements / 2}, swizzledPad,
                        b.getF32Type());
  else if (s.stagesDQ())
    dqTile = sharedTile(
        sharedMemoryBytes(), {s.dqStageBytes() / 4},
        arith::AddIOp::create(b, statOffset, cIdx(b, s.statTileBytes())),
        b.getF32Type());
}

Value Sm90BackwardBuilder::kvHeadIn32Bits() {
  Value group = arith::DivUIOp::create(b, arg.lookup("heads_q"),
                                       arg.lookup("heads_kv"));
  Value head32 = arith::IndexCastUIOp::create(b, b.getI32Type(), head);
  return asUnsignedIndex(arith::DivUIOp::create(b, head32, group));
}

void Sm90BackwardBuilder::rederiveNonNegatives() {
  headKV = kvHeadIn32Bits();
  headsQ = asUnsignedIndex(arg.lookup("heads_q"));
  // A packed batch's lengths are its sequence's (VarlenScheduler.h).
  if (!s.varlen) {
    seqQ = asUnsignedIndex(arg.lookup("seq_q"));
    seqK = asUnsignedIndex(arg.lookup("seq_k"));
  }
}

void Sm90BackwardBuilder::enterQueryLoop() {
  SmallVector<Value> c = wgmma::pinRegisters(b, {i32(tid), i32(kStart)});
  auto widen = [&](Value v) {
    return zeroExtendsLoopCoordinates() ? asUnsignedIndex(v) : asIndex(v);
  };
  tid = widen(c[0]);
  kStart = widen(c[1]);
  warp = arith::DivUIOp::create(b, tid, cIdx(b, 32));
  lane = arith::RemUIOp::create(b, tid, cIdx(b, 32));
  g = arith::DivUIOp::create(b, lane, cIdx(b, 4));
  t = arith::RemUIOp::create(b, lane, cIdx(b, 4));
  placeWarp();
  // Warpgroup w's keys start 64 rows (8 swizzle atoms) into each column
  // block of K and V; with column groups, w's modulo the key groups.
  wgIdx = arith::DivUIOp::create(b, warp, cIdx(b, 4));
  Value wgRows = arith::MulIOp::create(b, keyGroup(), cIdx(b, 64 * 64));
  kDesc = wgmma::kMajorDescriptor(b, swizzledAddress(wgRows));
  vDesc = wgmma::kMajorDescriptor(
      b, swizzledAddress(arith::AddIOp::create(b, wgRows, cIdx(b, vOffset()))));
}

Value Sm90BackwardBuilder::keyGroup() {
  if (!columnGroup)
    return wgIdx;
  return arith::RemUIOp::create(b, wgIdx,
                                cIdx(b, s.warps / 4 / s.kvColumnGroups()));
}

void Sm90BackwardBuilder::loadKeyValueTiles() {
  SmallVector<Value> kTokens, vTokens;
  copySwizzled(arg.lookup("k"), kBase, idx("k_stride_s"), kStart, seqK,
               cIdx(b, 0), s.blockN, s.headDim, kTokens);
  commitGroup(kTokens);
  copySwizzled(arg.lookup("v"), vBase, idx("v_stride_s"), kStart, seqK,
               cIdx(b, vOffset()), s.blockN, s.headDimV, vTokens);
  commitGroup(vTokens);
}

Value Sm90BackwardBuilder::loadQdOBlock(Value block, Value stage) {
  Value rowStart = arith::MulIOp::create(b, block, cIdx(b, s.blockM));
  SmallVector<Value> qTokens, doTokens;
  copySwizzled(arg.lookup("q"), qBase, idx("q_stride_s"), rowStart, seqQ,
               qOffset(stage), s.blockM, s.headDim, qTokens);
  // LSE and Dsum join Q's group.
  copyRowStatistics(rowStart, stage);
  commitGroup(qTokens);
  copySwizzled(arg.lookup("do"), doBase, idx("do_stride_s"), rowStart, seqQ,
               doOffset(stage), s.blockM, s.headDimV, doTokens);
  return commitGroup(doTokens);
}

SmallVector<Value> Sm90BackwardBuilder::issueProductNT(Value aDesc,
                                                       Value bOffset,
                                                       int64_t depth) {
  // The warp's queries: rows scoreQuery0 on of the block_m-row tile.
  if (scoreQuery0)
    bOffset = arith::AddIOp::create(
        b, bOffset,
        arith::MulIOp::create(
            b, scoreQuery0,
            cIdx(b, swizzle::kRowBytes / s.elementBytes())));
  Value bDesc = wgmma::kMajorDescriptor(b, swizzledAddress(bOffset));
  return wgmma::productKMajor(b, aDesc, s.blockN, bDesc, 8 * nTilesM, depth,
                              s.elementType, swizzle::kRowBytes, s.blockM);
}

SmallVector<BackwardBuilder::Frags>
Sm90BackwardBuilder::computeScoresT(Value stage) {
  wgmma::fence(b);
  SmallVector<Value> sT = issueProductNT(kDesc, qOffset(stage), s.headDim);
  pendingDPT = issueProductNT(vDesc, doOffset(stage), s.headDimV);
  handStagedDQBack();
  // Sᵀ is ready once at most dPᵀ's group is pending.
  wgmma::waitGroup(b, 1);
  return {wgmma::toFragments(b, wgmma::pinRegisters(b, sT))};
}

SmallVector<BackwardBuilder::Frags> Sm90BackwardBuilder::computeDPT(Value) {
  // In flight: dPᵀ, then dV (issued since).
  wgmma::waitGroup(b, 1);
  return {wgmma::toFragments(b, wgmma::pinRegisters(b, pendingDPT))};
}

SmallVector<Value> Sm90BackwardBuilder::packKeyQueryA(ArrayRef<Frags> x) {
  // Query tiles 2kk and 2kk + 1 of the warp's 16 keys form the A operand
  // of k-step kk, as P does in the forward's P·V.
  assert(!scoreQuery0 && "a register A operand takes every query's scores");
  SmallVector<Value> regs;
  for (int64_t kk = 0; kk < nTilesM / 2; ++kk)
    llvm::append_range(regs, accPairToA(b, x[0][2 * kk], x[0][2 * kk + 1],
                                        s.elementType));
  return regs;
}

Value Sm90BackwardBuilder::keyRowPairIndex(Value twoT, Value col,
                                             int64_t ii, int64_t offset) {
  Value row = arith::AddIOp::create(
      b, warpKey0, arith::AddIOp::create(b, g, cIdx(b, 8 * ii)));
  return arith::AddIOp::create(
      b, cIdx(b, offset),
      arith::AddIOp::create(b, swizzle::offset(b, row, col, s.blockN), twoT));
}

void Sm90BackwardBuilder::storeKeyRowPairs(ArrayRef<Value> tiles,
                                           int64_t offset, Value factor,
                                           bool queryColumns) {
  Value twoT = arith::MulIOp::create(b, t, cIdx(b, 2));
  for (int64_t n = 0; n < int64_t(tiles.size()); ++n)
    for (int64_t ii = 0; ii < 2; ++ii) {
      Value at = keyRowPairIndex(
          twoT, queryColumns ? scoreColumn(8 * n) : cIdx(b, 8 * n), ii,
          offset);
      Value lo = accGet(b, tiles[n], ii, 0);
      Value hi = accGet(b, tiles[n], ii, 1);
      if (factor) {
        lo = arith::MulFOp::create(b, lo, factor);
        hi = arith::MulFOp::create(b, hi, factor);
      }
      storePair(b, lo, hi, s.elementType, swizzledTiles, ValueRange{at});
    }
}

void Sm90BackwardBuilder::storeKeyQueryTile(ArrayRef<Frags> x,
                                            int64_t offset) {
  storeKeyRowPairs(x[0], offset, Value(), /*queryColumns=*/true);
  fenceGenericToAsyncProxy();
}

void Sm90BackwardBuilder::storeKeyQueryTile(ArrayRef<Value> packed,
                                            int64_t offset) {
  // Register 4kk + 2h + ii of the packed A operands holds row g + 8ii of
  // query tile 2kk + h.
  Value twoT = arith::MulIOp::create(b, t, cIdx(b, 2));
  auto pairTy = VectorType::get({2}, s.elementType);
  auto oneI32 = VectorType::get({1}, b.getI32Type());
  for (int64_t n = 0; n < nTilesM; ++n)
    for (int64_t ii = 0; ii < 2; ++ii) {
      Value at = keyRowPairIndex(twoT, cIdx(b, 8 * n), ii, offset);
      Value pair = vector::BitCastOp::create(
          b, pairTy,
          vector::FromElementsOp::create(
              b, oneI32, packed[4 * (n / 2) + 2 * (n % 2) + ii]));
      vector::StoreOp::create(b, pair, swizzledTiles, ValueRange{at},
                              /*nontemporal=*/false, llvm::Align(4));
    }
  fenceGenericToAsyncProxy();
}

void Sm90BackwardBuilder::warpgroupBarrier() {
  Value id = i32(arith::AddIOp::create(b, wgIdx, cIdx(b, 1)));
  NVVM::BarrierOp::create(b, TypeRange{}, id,
                          arith::ConstantIntOp::create(b, b.getI32Type(), 128),
                          NVVM::BarrierReductionAttr(), Value());
}

void Sm90BackwardBuilder::issueKeyQueryProduct(
    SmallVector<Value> &acc, int64_t aOffset, ArrayRef<ColumnPiece> pieces) {
  // A: this warpgroup's 64 keys of the [key][query] tile, K-major (the
  // block's queries are the reduction); B: each piece's columns of
  // [query][n], N-major, its 64-column blocks a tile of block_m rows apart.
  Value aDesc = wgmma::kMajorDescriptor(
      b, swizzledAddress(arith::AddIOp::create(
             b, cIdx(b, aOffset),
             arith::MulIOp::create(b, keyGroup(), cIdx(b, 64 * 64)))));
  SmallVector<Value> bDescs;
  for (const ColumnPiece &piece : pieces)
    bDescs.push_back(wgmma::mnMajorDescriptor(
        b, swizzledAddress(piece.offset), s.blockM * swizzle::kRowBytes));
  // The loop-carried accumulators are in their registers before the fence.
  acc = wgmma::pinRegisters(b, acc);
  wgmma::fence(b);
  // Each piece's accumulators follow the previous piece's in `acc`.
  int64_t first = 0;
  for (auto [piece, bDesc] : llvm::zip(pieces, bDescs)) {
    SmallVector<Value> part(acc.begin() + first,
                            acc.begin() + first + piece.n / 2);
    for (int64_t kk = 0; kk < s.blockM / 16; ++kk)
      part = wgmma::mmaShared(
          b, part, wgmma::advance(b, aDesc, wgmma::kStepBytes(kk, s.blockN)),
          wgmma::advance(b, bDesc, wgmma::mnStepBytes(kk)), piece.n,
          s.elementType, /*accumulate=*/true, /*transposeA=*/false,
          /*transposeB=*/true);
    llvm::copy(part, acc.begin() + first);
    first += piece.n / 2;
  }
  wgmma::commitGroup(b);
}

void Sm90BackwardBuilder::issueKeyQueryProductFromRegisters(
    SmallVector<Value> &acc, ArrayRef<Value> packed,
    ArrayRef<ColumnPiece> pieces) {
  SmallVector<Value> regs(packed);
  // Written by ordinary instructions: in their registers before the fence.
  SmallVector<Value> both(acc);
  both.append(regs.begin(), regs.end());
  both = wgmma::pinRegisters(b, both);
  acc.assign(both.begin(), both.begin() + acc.size());
  regs.assign(both.begin() + acc.size(), both.end());
  SmallVector<Value> bDescs;
  for (const ColumnPiece &piece : pieces)
    bDescs.push_back(wgmma::mnMajorDescriptor(
        b, swizzledAddress(piece.offset), s.blockM * swizzle::kRowBytes));
  wgmma::fence(b);
  // Each piece's accumulators follow the previous piece's in `acc`.
  int64_t first = 0;
  for (auto [piece, bDesc] : llvm::zip(pieces, bDescs)) {
    SmallVector<Value> part(acc.begin() + first,
                            acc.begin() + first + piece.n / 2);
    for (int64_t kk = 0; kk < nTilesM / 2; ++kk)
      part = wgmma::mmaRegisterA(
          b, part, ArrayRef<Value>(regs).slice(4 * kk, 4),
          wgmma::advance(b, bDesc, wgmma::mnStepBytes(kk)), piece.n,
          s.elementType, /*accumulate=*/true, /*transposeB=*/true);
    llvm::copy(part, acc.begin() + first);
    first += piece.n / 2;
  }
  wgmma::commitGroup(b);
  registerOperandsInFlight.append(regs.begin(), regs.end());
}

void Sm90BackwardBuilder::retireRegisterOperands() {
  if (registerOperandsInFlight.empty())
    return;
  wgmma::pinRegisters(b, registerOperandsInFlight);
  registerOperandsInFlight.clear();
}

bool Sm90BackwardBuilder::interleavesGroupColumns(int64_t width) const {
  return s.kvColumnGroups() > 1 && (width / 2) % 64 != 0;
}

SmallVector<Sm90BackwardBuilder::ColumnPiece>
Sm90BackwardBuilder::groupColumnPieces(Value offset, int64_t width,
                                       int64_t rows) {
  if (!columnGroup)
    return {{offset, width}};
  int64_t blockElems = rows * 64;
  if (!interleavesGroupColumns(width)) {
    // The group's half: whole 64-column blocks, one product.
    int64_t half = width / 2;
    return {{arith::AddIOp::create(
                 b, offset,
                 arith::MulIOp::create(b, columnGroup,
                                       cIdx(b, half / 64 * blockElems))),
             half}};
  }
  // Group g: columns [64 i + 32 g, 64 i + 32 g + 32) of every 64-column
  // block i, each read from a 64-byte offset into its swizzled rows as the
  // K-major k-steps are (a product cannot start mid-block and cross into
  // the next one: the swizzle rows are 128 bytes).
  Value base = arith::AddIOp::create(
      b, offset, arith::MulIOp::create(b, columnGroup, cIdx(b, 32)));
  SmallVector<ColumnPiece> pieces;
  for (int64_t i = 0; i < width / 64; ++i)
    pieces.push_back(
        {arith::AddIOp::create(b, base, cIdx(b, i * blockElems)), 32});
  return pieces;
}

Value Sm90BackwardBuilder::groupTile(Value tile0, int64_t n, int64_t tiles,
                                     int64_t width) {
  if (!interleavesGroupColumns(width))
    return BackwardBuilder::groupTile(tile0, n, tiles, width);
  // Piece n / 4 of the group (groupColumnPieces): block n / 4, the
  // group's 32 columns of it.
  return arith::AddIOp::create(
      b, arith::MulIOp::create(b, columnGroup, cIdx(b, 4)),
      cIdx(b, n / 4 * 8 + n % 4));
}

void Sm90BackwardBuilder::accumulateDV(SmallVector<Value> &dV,
                                       ArrayRef<Frags> pdT, Value stage) {
  if (gradientsFromRegisters()) {
    issueKeyQueryProductFromRegisters(
        dV, packKeyQueryA(pdT),
        groupColumnPieces(doOffset(stage), s.headDimV, s.blockM));
    return;
  }
  // Each warpgroup reads only its own keys' rows of Pᵀ; column groups
  // that split the queries read each other's columns of them.
  storeKeyQueryTile(pdT, pOffset());
  if (scoreQuery0)
    syncComputeWarps();
  else
    warpgroupBarrier();
  issueKeyQueryProduct(
      dV, pOffset(), groupColumnPieces(doOffset(stage), s.headDimV, s.blockM));
}

void Sm90BackwardBuilder::accumulateDK(SmallVector<Value> &dK,
                                       ArrayRef<Frags> dsT, Value stage) {
  // dQ reads every warpgroup's rows of dSᵀ: a block barrier. It also
  // orders the dQ tile's writes of this step after the read of the bulk
  // reduction issued a step ago, which its issuer waits for here.
  // From registers, dK needs none of that and is issued first; the tile is
  // then stored from the (pinned) registers it reads, so that the packed
  // dSᵀ is not held twice.
  if (gradientsFromRegisters()) {
    issueKeyQueryProductFromRegisters(
        dK, packKeyQueryA(dsT),
        groupColumnPieces(qOffset(stage), s.headDim, s.blockM));
    auto packed =
        ArrayRef<Value>(registerOperandsInFlight).take_back(2 * nTilesM);
    // The column groups of the same keys hold the same dSᵀ: the first
    // stores it.
    if (columnGroup) {
      auto ifFirst = scf::IfOp::create(b, TypeRange{}, inFirstColumnGroup(),
                                       /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
      storeKeyQueryTile(packed, dsOffset());
    } else {
      storeKeyQueryTile(packed, dsOffset());
    }
  } else {
    storeKeyQueryTile(dsT, dsOffset());
  }
  // (Query tiles that stage dQ are not read again before the reductions
  // that read them are waited for: handStagedDQBack.)
  if (s.stagesDQ() && !s.stagesDQInQueryTiles())
    NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, b.getUnitAttr());
  syncComputeWarps();
  if (!gradientsFromRegisters())
    issueKeyQueryProduct(
        dK, dsOffset(), groupColumnPieces(qOffset(stage), s.headDim, s.blockM));
}

void Sm90BackwardBuilder::accumulateDQ(ArrayRef<Frags>, Value qStart,
                                       Value stage) {
  // Warpgroup w: query rows 64 (w mod rowBlocks), the column slice
  // w / rowBlocks of dQ: 64 columns or more, or 32 (half a swizzled column
  // block, read from a 64-byte offset into its rows, as the K-major k-steps
  // are); getKernelSpec checks that the slices cover D.
  int64_t rowBlocks = s.blockM / 64;
  int64_t cols = s.headDim * rowBlocks / (s.warps / 4);
  Value rowBlock = arith::RemUIOp::create(b, wgIdx, cIdx(b, rowBlocks));
  Value colBlock = arith::DivUIOp::create(b, wgIdx, cIdx(b, rowBlocks));
  int64_t blockBytes = s.blockN * swizzle::kRowBytes;
  Value aDesc = wgmma::mnMajorDescriptor(
      b,
      swizzledAddress(arith::AddIOp::create(
          b, cIdx(b, dsOffset()),
          arith::MulIOp::create(b, rowBlock, cIdx(b, s.blockN * 64)))),
      blockBytes);
  Value firstCol = arith::MulIOp::create(b, colBlock, cIdx(b, cols));
  // dQ's columns [col, col + n) of the slice (after a fence), the chain
  // not committed.
  auto chain = [&](Value col, int64_t n) {
    Value bDesc = wgmma::mnMajorDescriptor(
        b,
        swizzledAddress(arith::AddIOp::create(
            b,
            arith::MulIOp::create(b,
                                  arith::DivUIOp::create(b, col, cIdx(b, 64)),
                                  cIdx(b, s.blockN * 64)),
            arith::RemUIOp::create(b, col, cIdx(b, 64)))),
        blockBytes);
    wgmma::fence(b);
    SmallVector<Value> dq;
    for (int64_t kk = 0; kk < s.blockN / 16; ++kk)
      dq = wgmma::mmaShared(b, dq,
                            wgmma::advance(b, aDesc, wgmma::mnStepBytes(kk)),
                            wgmma::advance(b, bDesc, wgmma::mnStepBytes(kk)),
                            n, s.elementType, /*accumulate=*/kk > 0,
                            /*transposeA=*/true, /*transposeB=*/true);
    return dq;
  };
  auto complete = [&]() {
    wgmma::commitGroup(b);
    wgmma::waitGroup(b, 0);
    retireRegisterOperands();
  };
  if (s.kvColumnGroups() > 1) {
    // Warpgroups that share keys: slices of whole 64-column blocks, or
    // (D = 192: 96 columns, two warpgroups) 32 columns of every block, as
    // groupColumnPieces splits; each warp's 16 rows staged as rows
    // (stagesDQRows, whose per-column layout any piece can write); where
    // they do not fit (D = 256), in the tile's fragment order in the step's
    // own query tiles (stagesDQInQueryTiles), or with a narrower dO added
    // to dq_accum's rows by red.global.add.v2.f32 from registers.
    Value warpRow = arith::AddIOp::create(
        b, arith::MulIOp::create(b, rowBlock, cIdx(b, 64)),
        arith::MulIOp::create(b, arith::RemUIOp::create(b, warp, cIdx(b, 4)),
                              cIdx(b, 16)));
    bool halves = cols % 64 != 0;
    assert((!halves || s.warps / 4 == 2 * rowBlocks) &&
           "32-column dQ pieces split the columns between two warpgroups");
    SmallVector<std::pair<Value, int64_t>> pieces;
    for (int64_t c = 0; c < cols; c += halves ? 32 : 64)
      pieces.push_back(
          {halves ? arith::AddIOp::create(
                        b, arith::MulIOp::create(b, colBlock, cIdx(b, 32)),
                        cIdx(b, 2 * c))
                  : arith::AddIOp::create(b, firstCol, cIdx(b, c)),
           halves ? 32 : std::min<int64_t>(64, cols - c)});
    auto emit = [&](ArrayRef<Value> dq, Value col, int64_t piece) {
      SmallVector<Value> frags =
          wgmma::toFragments(b, wgmma::pinRegisters(b, dq));
      if (s.stagesDQInQueryTiles())
        return stageDQInQueryTiles(frags, piece, stage);
      if (!s.stagesDQRows())
        return addToDQAccum(frags, arith::AddIOp::create(b, qStart, warpRow),
                            arith::DivUIOp::create(b, col, cIdx(b, 8)));
      storeDQRows(frags, warpRow, col);
    };
    // Where dK, dV and the whole slice fit in 128 registers a thread
    // (D = 192: 48 + 32 + 48), one group; else (D = 256: 64 + 64 + 64) a
    // piece at a time. (With both groups computing every score, D = 256's
    // whole slice spilled 24-64 bytes; with query halves neither form
    // spills, and they run within 1% of each other, run 534.)
    if ((s.dkGroupColumns() + s.dvGroupColumns() + cols) / 2 <= 128) {
      SmallVector<SmallVector<Value>> dqs;
      for (auto [col, n] : pieces)
        dqs.push_back(chain(col, n));
      complete();
      for (auto [p, dq] : llvm::enumerate(dqs))
        emit(dq, pieces[p].first, p);
    } else {
      for (auto [p, piece] : llvm::enumerate(pieces)) {
        SmallVector<Value> dq = chain(piece.first, piece.second);
        complete();
        emit(dq, piece.first, p);
      }
    }
    if (s.stagesDQInQueryTiles())
      reduceDQFromQueryTiles(qStart, stage, pieces.size());
    else if (s.stagesDQRows())
      fenceGenericToAsyncProxy();
    return;
  }
  SmallVector<Value> dq = chain(firstCol, cols);
  complete();
  if (s.dqTiles) {
    SmallVector<Value> frags =
        wgmma::toFragments(b, wgmma::pinRegisters(b, dq));
    // Fragment order: warpgroup w's region of 64 x cols values is
    // [n][thread of w][4], the 4 being rows g, g + 8 times columns 2t,
    // 2t + 1 of 8-column fragment n: every 16-byte store of a warp covers
    // 512 consecutive bytes (no bank conflicts).
    Value scale = arg.lookup("scale");
    Value region = arith::AddIOp::create(
        b, arith::MulIOp::create(b, wgIdx, cIdx(b, 64 * cols)),
        arith::MulIOp::create(b, arith::RemUIOp::create(b, tid, cIdx(b, 128)),
                              cIdx(b, 4)));
    auto f32x4 = VectorType::get({4}, b.getF32Type());
    for (int64_t n = 0; n < int64_t(frags.size()); ++n) {
      SmallVector<Value> xs;
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t c = 0; c < 2; ++c)
          xs.push_back(
              arith::MulFOp::create(b, accGet(b, frags[n], i, c), scale));
      Value at = arith::AddIOp::create(b, region, cIdx(b, n * 128 * 4));
      vector::StoreOp::create(b, vector::FromElementsOp::create(b, f32x4, xs),
                              dqTile, ValueRange{at});
    }
    // Read by the bulk reduction, through the async proxy, after the
    // step's closing barrier (publishDQ).
    fenceGenericToAsyncProxy();
    return;
  }
  // A packed batch (stagesDQRows): rows of D + kDqRowPad floats.
  assert(s.stagesDQRows() && "the sm90 engine stages dQ in tiles or rows");
  SmallVector<Value> frags = wgmma::toFragments(b, wgmma::pinRegisters(b, dq));
  Value warpRow = arith::AddIOp::create(
      b, arith::MulIOp::create(b, rowBlock, cIdx(b, 64)),
      arith::MulIOp::create(b, arith::RemUIOp::create(b, warp, cIdx(b, 4)),
                            cIdx(b, 16)));
  storeDQRows(frags, warpRow,
              arith::MulIOp::create(b, colBlock, cIdx(b, cols)));
  fenceGenericToAsyncProxy();
}

void Sm90BackwardBuilder::storeDQRows(ArrayRef<Value> frags, Value warpRow,
                                      Value col) {
  // The pair of rows g, g + 8 and columns 8n + 2t, 2t + 1 of each 8-column
  // fragment n, from column `col` on, times the scale.
  Value scale = arg.lookup("scale");
  int64_t pitch = s.headDim + KernelSpec::kDqRowPad;
  Value first = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, arith::AddIOp::create(b, warpRow, g),
                            cIdx(b, pitch)),
      arith::AddIOp::create(b, col, arith::MulIOp::create(b, t, cIdx(b, 2))));
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  for (int64_t n = 0; n < int64_t(frags.size()); ++n)
    for (int64_t i = 0; i < 2; ++i) {
      SmallVector<Value> xs;
      for (int64_t c = 0; c < 2; ++c)
        xs.push_back(arith::MulFOp::create(b, accGet(b, frags[n], i, c), scale));
      Value at = arith::AddIOp::create(b, first, cIdx(b, 8 * i * pitch + 8 * n));
      vector::StoreOp::create(b, vector::FromElementsOp::create(b, f32x2, xs),
                              dqTile, ValueRange{at});
    }
}

/// dst += the `bytes` at src (shared::cta), f32 adds as one bulk
/// reduction of the thread's current bulk group. No NVVM op covers the
/// non-tensor bulk reduction (nvvm.cp.async.bulk.tensor.reduce needs a
/// tensor map): inline PTX.
static void bulkReduceAddF32(ImplicitLocOpBuilder &b, Value dst, Value src,
                             Value bytes) {
  NVVM::InlinePtxOp::create(
      b, TypeRange{}, ValueRange{dst, src, bytes}, ValueRange{},
      "{ .reg .u64 ga; cvta.to.global.u64 ga, $0; "
      "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 "
      "[ga], [$1], $2; }",
      /*predicate=*/Value());
}

void Sm90BackwardBuilder::publishDQRows(Value qStart) {
  // Thread r of the computing warps adds staged row r to row qStart + r of
  // its sequence (rows past the sequence's end are not its own: the next
  // sequence's, or past the buffer), one bulk reduction of D floats each.
  int64_t pitch = s.headDim + KernelSpec::kDqRowPad;
  Value bytes =
      arith::ConstantIntOp::create(b, b.getI32Type(), 4 * s.headDim);
  for (int64_t first = 0; first < s.blockM; first += 32 * s.warps) {
    Value r = arith::AddIOp::create(b, tid, cIdx(b, first));
    Value row = arith::AddIOp::create(b, qStart, r);
    Value mine = arith::AndIOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, r,
                              cIdx(b, s.blockM)),
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, seqQ));
    auto ifMine = scf::IfOp::create(b, TypeRange{}, mine, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifMine.getThenRegion().front());
    Value dst = byteAddress(
        arg.lookup("dq_accum"),
        {arith::MulIOp::create(b, arith::AddIOp::create(b, rowBaseLse, row),
                               cIdx(b, s.headDim))});
    Value src = arith::TruncIOp::create(
        b, b.getI32Type(),
        byteAddress(dqTile, {arith::MulIOp::create(b, r, cIdx(b, pitch))}));
    bulkReduceAddF32(b, dst, src, bytes);
    NVVM::CpAsyncBulkCommitGroupOp::create(b);
  }
}

Value Sm90BackwardBuilder::dqAccumTile(Value qStart) {
  Value tiles = arith::CeilDivUIOp::create(b, seqQ, cIdx(b, s.blockM));
  Value slice = arith::AddIOp::create(
      b, arith::MulIOp::create(b, batchIdx, headsQ), head);
  Value tile = arith::AddIOp::create(
      b, arith::MulIOp::create(b, slice, tiles),
      arith::DivUIOp::create(b, qStart, cIdx(b, s.blockM)));
  return arith::MulIOp::create(b, tile, cIdx(b, s.blockM * s.headDim));
}

Value Sm90BackwardBuilder::reducesStagedDQ() {
  return arith::CmpIOp::create(
      b, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, tid, cIdx(b, 128)), cIdx(b, 0));
}

Value Sm90BackwardBuilder::stagedDQPiece(int64_t piece, Value stage) {
  // The warpgroup's column half of the stage's Q tile (piece 0) or dO tile
  // (piece 1), as the dK and dV products' B read it; element e of the
  // 16-bit tiles is float e / 2 of dqTile.
  Value half =
      piece == 0
          ? groupColumnPieces(qOffset(stage), s.headDim, s.blockM)[0].offset
          : groupColumnPieces(doOffset(stage), s.headDimV, s.blockM)[0].offset;
  return arith::DivUIOp::create(b, half, cIdx(b, 2));
}

void Sm90BackwardBuilder::stageDQInQueryTiles(ArrayRef<Value> frags,
                                              int64_t piece, Value stage) {
  // 64 rows x 64 columns of f32 a piece, as much as the warpgroup's Q (or
  // dO) column blocks hold in 16 bits at D = Dv = 256: the tile's
  // fragment order (accumulateDQ's dqTiles path; Sm80BackwardPostprocess
  // reads it) puts fragment 8 piece + n of warpgroup w at float w 64 cols
  // + (8 piece + n) 512 + 4 thread, so each piece is a contiguous 16 KiB.
  assert(s.headDim == 256 && s.headDimV >= s.headDim && piece < 2 &&
         "dQ staged in the query tiles: one 64-column piece in each of a "
         "warpgroup's Q and dO halves (D = 256)");
  Value region = arith::AddIOp::create(
      b, stagedDQPiece(piece, stage),
      arith::MulIOp::create(b, arith::RemUIOp::create(b, tid, cIdx(b, 128)),
                            cIdx(b, 4)));
  Value scale = arg.lookup("scale");
  auto f32x4 = VectorType::get({4}, b.getF32Type());
  for (int64_t n = 0; n < int64_t(frags.size()); ++n) {
    SmallVector<Value> xs;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t c = 0; c < 2; ++c)
        xs.push_back(arith::MulFOp::create(b, accGet(b, frags[n], i, c), scale));
    Value at = arith::AddIOp::create(b, region, cIdx(b, n * 128 * 4));
    vector::StoreOp::create(b, vector::FromElementsOp::create(b, f32x4, xs),
                            dqTile, ValueRange{at});
  }
}

void Sm90BackwardBuilder::reduceDQFromQueryTiles(Value qStart, Value stage,
                                                 int64_t pieces) {
  // The warpgroup's stores, through the async proxy, before its thread
  // issues the reductions that read them.
  fenceGenericToAsyncProxy();
  warpgroupBarrier();
  auto ifFirst = scf::IfOp::create(b, TypeRange{}, reducesStagedDQ(), false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
  int64_t cols = s.headDim / (s.warps / 4), pieceFloats = 64 * 64;
  Value slice = arith::AddIOp::create(
      b, dqAccumTile(qStart), arith::MulIOp::create(b, wgIdx, cIdx(b, 64 * cols)));
  Value bytes = arith::ConstantIntOp::create(b, b.getI32Type(), 4 * pieceFloats);
  for (int64_t p = 0; p < pieces; ++p) {
    Value dst = byteAddress(
        arg.lookup("dq_accum"),
        {arith::AddIOp::create(b, slice, cIdx(b, p * pieceFloats))});
    Value src = arith::TruncIOp::create(
        b, b.getI32Type(), byteAddress(dqTile, {stagedDQPiece(p, stage)}));
    bulkReduceAddF32(b, dst, src, bytes);
  }
  NVVM::CpAsyncBulkCommitGroupOp::create(b);
}

void Sm90BackwardBuilder::publishDQ(Value qStart) {
  if (s.stagesDQRows())
    return publishDQRows(qStart);
  // Staged in the query tiles, dQ went out in accumulateDQ.
  if (!s.dqTiles || s.stagesDQInQueryTiles())
    return;
  // Thread 0 adds the block's tile to tile qStart / block_m of its
  // (batch, head) in dq_accum: ceil(Sq / block_m) tiles of block_m x D per
  // slice.
  Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cIdx(b, 0));
  // A block-sparse walk may visit the block past the last row (a sparse
  // block's second kernel block where Sq ends inside the first, an index
  // out of range): its dQ is zero and its tile is not the slice's.
  if (s.blockSparse)
    first = arith::AndIOp::create(
        b, first,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, qStart, seqQ));
  auto ifFirst = scf::IfOp::create(b, TypeRange{}, first, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
  Value dst = byteAddress(arg.lookup("dq_accum"), {dqAccumTile(qStart)});
  Value src = arith::TruncIOp::create(b, b.getI32Type(),
                                      byteAddress(dqTile, {cIdx(b, 0)}));
  Value bytes =
      arith::ConstantIntOp::create(b, b.getI32Type(), 4 * s.blockM * s.headDim);
  bulkReduceAddF32(b, dst, src, bytes);
  NVVM::CpAsyncBulkCommitGroupOp::create(b);
}

void Sm90BackwardBuilder::drainDQ() {
  // The last reduction done (not only read) before the block ends.
  if (s.stagesDQ())
    NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, UnitAttr());
}

void Sm90BackwardBuilder::finishQueryBlock(SmallVector<Value> &dK,
                                           SmallVector<Value> &dV) {
  // dV and dK (already waited for with dQ unless in deterministic mode).
  wgmma::waitGroup(b, 0);
  retireRegisterOperands();
  SmallVector<Value> both(dK);
  both.append(dV.begin(), dV.end());
  both = wgmma::pinRegisters(b, both);
  dK.assign(both.begin(), both.begin() + dK.size());
  dV.assign(both.begin() + dK.size(), both.end());
}

void Sm90BackwardBuilder::copyStagedGradient(const GradientRows &dst,
                                             int64_t offset, int64_t width) {
  // Chunk i of the warpgroup's rows x width / 8 chunks is row i / (width /
  // 8), chunk i mod (width / 8): a warp's 32 lanes cover whole rows.
  int64_t rows = s.blockN / (s.warps / 4), chunks = width / 8;
  Value firstRow = arith::MulIOp::create(b, wgIdx, cIdx(b, rows));
  Value lane128 = arith::RemUIOp::create(b, tid, cIdx(b, 128));
  auto vecTy = VectorType::get({8}, s.elementType);
  for (int64_t k = 0; k < rows * chunks / 128; ++k) {
    Value i = arith::AddIOp::create(b, lane128, cIdx(b, 128 * k));
    Value row = arith::AddIOp::create(
        b, firstRow, arith::DivUIOp::create(b, i, cIdx(b, chunks)));
    Value col = arith::MulIOp::create(
        b, arith::RemUIOp::create(b, i, cIdx(b, chunks)), cIdx(b, 8));
    Value key = arith::AddIOp::create(b, kStart, row);
    auto ifRow = scf::IfOp::create(
        b, TypeRange{},
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, key, seqK), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifRow.getThenRegion().front());
    Value v = vector::LoadOp::create(
        b, vecTy, swizzledTiles,
        ValueRange{arith::AddIOp::create(
            b, cIdx(b, offset), swizzle::offset(b, row, col, s.blockN))});
    vector::StoreOp::create(
        b, v, dst.memref,
        ValueRange{arith::AddIOp::create(b, gradientRowStart(dst, key), col)},
        /*nontemporal=*/false, llvm::Align(16));
  }
}

void Sm90BackwardBuilder::storeGradients(ArrayRef<Value> dK,
                                         ArrayRef<Value> dV, Value direct) {
  // Staged in dense walks at D = 128, where it made the main kernel
  // 1.01-1.08x faster (short walks gain most). At D = 64 it cost 2.5% at
  // 8k keys non-causal for 4% at 2k causal, and the block-sparse training
  // step was 4-6% slower with it (its kernels spilled more; docs/PERF.md
  // runs 154 and 156), so those store the accumulators directly. Packed
  // batches stage them too (their walks vary in length from block to
  // block; docs/PERF.md run 315).
  if (!gradientsFromRegisters() || columnGroup || s.headDim < 128 ||
      s.blockSparse)
    return BackwardBuilder::storeGradients(dK, dV, direct);
  // Every product that reads K and V (the last step's dQ included) has
  // completed before the walk's closing barrier; a block no query sees
  // waited for the tiles to land. Each warpgroup stages and copies its own
  // rows, so its own barrier orders the two.
  wgIdx = arith::DivUIOp::create(b, warp, cIdx(b, 4));
  storeKeyRowPairs(wgmma::toFragments(b, dK), 0, arg.lookup("scale"));
  storeKeyRowPairs(wgmma::toFragments(b, dV), vOffset(), Value());
  warpgroupBarrier();
  copyStagedGradient(gradientRows("dk", direct, s.headDim), 0, s.headDim);
  copyStagedGradient(gradientRows("dv", direct, s.headDimV), vOffset(),
                     s.headDimV);
}

void mlir::flash::buildSm90BackwardKernel(gpu::GPUFuncOp func,
                                          const KernelSpec &spec) {
  if (spec.keepsPlacementShared())
    SharedPlacementScheduler<Sm90BackwardBuilder>(func, spec,
                                                  UnownedRows::Keys)
        .build();
  else if (spec.varlen)
    VarlenBackwardScheduler<Sm90BackwardBuilder>(func, spec, UnownedRows::Keys)
        .build();
  else if (spec.blockSparse)
    BlockSparseQueryIterator<Sm90BackwardBuilder>(func, spec).build();
  else
    Sm90BackwardBuilder(func, spec).build();
}
