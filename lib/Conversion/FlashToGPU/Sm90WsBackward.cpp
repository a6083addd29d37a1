//===- Sm90WsBackward.cpp - the warp-specialised Hopper backward ----------===//
//
// The sm90 backward (Sm90Backward.cpp: each consumer warpgroup owns 64 of
// the block's keys, Sᵀ / dPᵀ / dV / dK / dQ on wgmma) fed by a producer
// warpgroup instead of by every thread's cp.async, as the sm90ws forward
// (Sm90WsForward.cpp) feeds the forward's mainloop:
//
//   warpgroup 0, the producer: its first warp walks the block's query
//     blocks ahead of the consumers. Lane 0 issues the TMA copies (the
//     runtime's tensor maps of Q, K, V and dO write the same 128-byte
//     swizzle the wgmma descriptors read): K and V once, then each query
//     block's Q and dO tiles into a ring of `stages` buffers. The 32 lanes
//     copy the block's LSE and Dsum rows beside them (4-byte rows need not
//     be 16-byte aligned, which a bulk copy would need), then arrive on
//     the buffer's "full" mbarrier, whose expected bytes lane 0 armed. A
//     buffer is refilled once its "empty" mbarrier says every consumer
//     thread is done with it. The other three warps leave at once; the
//     warpgroup gives its registers back (setmaxnreg.dec) to
//   warpgroups 1 and 2, the consumers (setmaxnreg.inc): the shared
//     schedule of BackwardBuilder, waiting for "full" where the sm90
//     recipe waits for its cp.async groups, and synchronised among
//     themselves (dS, the dQ tile) by named barrier 3 (1 and 2 are the
//     warpgroups' own). With the registers the producer gave up, dV and
//     dK take Pᵀ and dSᵀ from registers (Sm90Backward.cpp,
//     gradientsFromRegisters).
//
// What moves: the consumers issue no copies (no cp.async address
// arithmetic, no MIO queue slots for the loads: docs/PERF.md, run 135, has
// that queue as the sm90 backward's main stall against cuDNN), and the
// loads run ahead by up to `stages` query blocks. The grid is the sm90
// backward's, one block per key block.
//
// The walk's parts compose as for the sm90 backward: under a block-sparse
// iterator (BlockSparseQueryIterator.h) the producer asks it which query
// block each step fetches (fetchQueryBlock reads the transposed lists and
// records the step in the stage's slot, which the "full" barrier
// publishes to the consumers); under the varlen scheduler
// (VarlenScheduler.h) it re-reads the block's sequence (rereadPlacement)
// and addresses the sequence's rows in the packed tensor maps
// (tensorMapRowStart, tensorMapBatch). The producer reads the block's
// placement afresh in its branch rather than carry it from the entry:
// carried, it spilled at 24 registers.
//
// MLIR has ops for every instruction used here (nvgpu.tma.async.load,
// nvgpu.mbarrier.*, nvvm.setmaxregister, nvvm.barrier with an id); the dQ
// tile's bulk reduction is Sm90Backward.cpp's inline PTX.
//
//===----------------------------------------------------------------------===//
#include "BlockSparseQueryIterator.h"
#include "Recipes.h"
#include "Sm90Backward.h"
#include "VarlenScheduler.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

/// Registers a thread of each role keeps after the reallocation, within
/// the 384 x 168 the block is launched with: 128 * 24 + 256 * 240 = 64512.
constexpr int32_t kProducerRegisters = 24, kConsumerRegisters = 240;
/// The consumers' named barrier: 0 is the block's, 1 and 2 each consumer
/// warpgroup's own (Sm90BackwardBuilder::warpgroupBarrier).
constexpr int32_t kConsumerBarrier = 3;
/// The lanes of the producer warp that copy LSE and Dsum.
constexpr int64_t kStatisticLanes = 32;

class Sm90WsBackwardBuilder : public Sm90BackwardBuilder {
public:
  using Sm90BackwardBuilder::Sm90BackwardBuilder;
  void buildWarpSpecialized();

protected:
  int64_t producerThreads() const { return s.producerWarps() * 32; }
  int64_t consumerThreads() const { return s.warps * 32; }
  int64_t swizzledD() const { return KernelSpec::swizzleWidth(s.headDim); }
  int64_t swizzledDv() const { return KernelSpec::swizzleWidth(s.headDimV); }

  // The mbarriers: [0] K and V landed; [1, 1 + stages) the Q/dO buffer
  // full (its tiles, LSE and Dsum); [1 + stages, 1 + 2 stages) empty.
  Value fullBarrier(Value stage) {
    return arith::AddIOp::create(b, stage, cIdx(b, 1));
  }
  Value emptyBarrier(Value stage) {
    return arith::AddIOp::create(b, stage, cIdx(b, 1 + s.stages));
  }
  void createBarriers();
  /// The producer warp's walk over query blocks [mFirst, mEnd).
  void produce(Value mFirst, Value mEnd);
  /// The producer warp's copies of the LSE and Dsum rows of the query
  /// block at `rowStart` into ring buffer `stage` (rows past Sq as 0, as
  /// the sm90 recipe's zero-filled copies).
  void copyRowStatisticsByWarp(Value rowStart, Value stage);

  /// A consumer thread's number from its `threadId`, in 32 bits and
  /// zero-extended: an index difference's two words were live through the
  /// loop and spilled in the bottom-right causal kernels.
  Value consumerThreadId(Value threadId) {
    Value tid32 = arith::IndexCastUIOp::create(b, b.getI32Type(), threadId);
    return asUnsignedIndex(
        arith::SubIOp::create(b, tid32, cI32(producerThreads())));
  }
  bool zeroExtendsLoopCoordinates() const override { return true; }
  /// The consumer thread's number read afresh (opaquely), for code off the
  /// hot path: derived from the kernel's `tid`, its arithmetic merged with
  /// the schedule's and kept values alive that then spilled.
  Value freshConsumerThread() {
    return consumerThreadId(readSpecialRegisterOpaquely("tid.x"));
  }
  /// The packed D = 64 kernel whose consumers read their placement from
  /// the slot (KernelSpec::keepsPlacementShared) while its producer reads
  /// cu_seqlens: its consumers still held the query loop's end and spilled
  /// it (4/4 bytes), and its producer spilled 12/32 around the 64-bit kv
  /// head division. Counted in 32 bits, and the kv head divided so, it
  /// spills nothing. The other kernels, which spill nothing either way,
  /// keep their code.
  bool narrowsForSharedPlacement() const {
    return s.onlyConsumersReadPlacement();
  }
  bool countsQueryBlocksIn32Bits() const override {
    return narrowsForSharedPlacement();
  }
  /// Only where the consumers are short of registers (D = 128); at D = 64
  /// they are not, and the changed prologue made the producer spill 8/32.
  bool rederives() const { return s.headDim > 64; }
  /// And where the block's tile comes from its order: a loaded entry's
  /// fields, unlike %ctaid, cannot be read again by ptxas for free, and
  /// held through the loop the D = 64 kernel spilled 28/40 bytes.
  bool rederivesInEpilogue() const override {
    return rederives() || s.takesTileOrder();
  }
  void awaitQueryBlock(Value i, Value rel, Value stage) override;
  /// The step's position in the walk (awaitQueryBlock's `rel`), for
  /// handStagedDQBack.
  Value stepRel;
  void handStagedDQBack() override;
  void releaseQueryBlock(Value stage, Value dqStart) override;
  void syncComputeWarps() override;
};

void Sm90WsBackwardBuilder::createBarriers() {
  // K/V: lane 0's arrive.expect_tx, then the bytes. "full": that and the
  // statistic lanes' arrivals; "empty": every consumer thread.
  SmallVector<std::pair<int64_t, int64_t>> inits = {{0, 1}};
  for (int64_t st = 0; st < s.stages; ++st) {
    inits.push_back({1 + st, 1 + kStatisticLanes});
    inits.push_back({1 + s.stages + st, consumerThreads()});
  }
  KernelBuilderBase::createBarriers(1 + 2 * s.stages, inits);
}

void Sm90WsBackwardBuilder::syncComputeWarps() {
  NVVM::BarrierOp::create(b, /*res=*/Type(), cI32(kConsumerBarrier),
                          cI32(consumerThreads()),
                          /*reductionOp=*/nullptr,
                          /*reductionPredicate=*/Value());
}

void Sm90WsBackwardBuilder::copyRowStatisticsByWarp(Value rowStart,
                                                    Value stage) {
  // Value i of [lse | delta] (2 block_m of them) is lane i mod 32's; with
  // block_m a multiple of 32 each pass reads one of the two rows. Rows in
  // 32 bits (rowStart is i32).
  const StringRef stats[] = {"lse", "delta"};
  Value lane32 = i32(tid), seqQ32 = i32(seqQ);
  for (int64_t first = 0; first < 2 * s.blockM; first += kStatisticLanes) {
    int64_t which = first / s.blockM;
    Value q = arith::AddIOp::create(
        b, rowStart, arith::AddIOp::create(b, lane32, cI32(first % s.blockM)));
    Value valid =
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, q, seqQ32);
    Value src = arith::AddIOp::create(
        b, rowBaseLse,
        asIndex(arith::SelectOp::create(b, valid, q, cI32(0))));
    Value x = memref::LoadOp::create(b, arg.lookup(stats[which]),
                                     ValueRange{src});
    x = arith::SelectOp::create(b, valid, x, cF32(b, 0.0f));
    Value dst = arith::AddIOp::create(
        b, arith::MulIOp::create(b, stage, cIdx(b, 2 * s.blockM)),
        arith::AddIOp::create(b, tid, cIdx(b, first)));
    memref::StoreOp::create(b, x, statTile, ValueRange{dst});
  }
}

void Sm90WsBackwardBuilder::produce(Value mFirst, Value mEnd) {
  Value leader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cIdx(b, 0));
  auto whenLeader = [&](function_ref<void()> fn) {
    auto ifLeader = scf::IfOp::create(b, TypeRange{}, leader, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifLeader.getThenRegion().front());
    fn();
  };
  int64_t elt = s.elementBytes();
  whenLeader([&] {
    Value kv = cIdx(b, 0);
    nvgpu::MBarrierArriveExpectTxOp::create(
        b, barriers, cIdx(b, s.blockN * (swizzledD() + swizzledDv()) * elt),
        kv, Value());
    Value keyRow = tensorMapRow(kStart, /*keys=*/true);
    copyTile("k", Value(), keyRow, headKV, cIdx(b, 0), s.blockN, swizzledD(),
             kv);
    copyTile("v", Value(), keyRow, headKV, cIdx(b, vOffset()), s.blockN,
             swizzledDv(), kv);
  });

  // In 32 bits, from 0: the producer runs in 24 registers.
  OpBuilder::InsertionGuard g(b);
  Value count = i32(arith::SubIOp::create(b, mEnd, mFirst));
  Value firstRow = i32(arith::MulIOp::create(b, mFirst, cIdx(b, s.blockM)));
  auto loop = scf::ForOp::create(b, cI32(0), count, cI32(1));
  b.setInsertionPointToStart(loop.getBody());
  Value rel = loop.getInductionVar();
  Value stage = asIndex(arith::RemUIOp::create(b, rel, cI32(s.stages)));
  Value round = arith::DivUIOp::create(b, rel, cI32(s.stages));
  // From the second round on, the buffer's previous block must have been
  // read by every consumer: wait for the empty barrier's (round - 1)-th
  // completion.
  Value refill =
      arith::CmpIOp::create(b, arith::CmpIPredicate::uge, round, cI32(1));
  auto ifRefill = scf::IfOp::create(b, TypeRange{}, refill, false);
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifRefill.getThenRegion().front());
    waitBarrier(emptyBarrier(stage),
                asIndex(arith::SubIOp::create(b, round, cI32(1))));
  }
  // A dense walk's block is its position (in 32 bits from firstRow); an
  // iterator's is read from its lists and recorded for the consumers in
  // the stage's slot, published by this step's "full" barrier.
  Value position = arith::AddIOp::create(b, mFirst, asIndex(rel));
  Value block = fetchQueryBlock(position, stage);
  Value rowStart =
      block == position
          ? Value(arith::AddIOp::create(
                b, firstRow, arith::MulIOp::create(b, rel, cI32(s.blockM))))
          : i32(arith::MulIOp::create(b, block, cIdx(b, s.blockM)));
  Value full = fullBarrier(stage);
  whenLeader([&] {
    nvgpu::MBarrierArriveExpectTxOp::create(
        b, barriers, cIdx(b, s.blockM * (swizzledD() + swizzledDv()) * elt),
        full, Value());
    Value row = tensorMapRow(asIndex(rowStart), /*keys=*/false);
    copyTile("q", Value(), row, head, qOffset(stage), s.blockM, swizzledD(),
             full);
    copyTile("do", Value(), row, head, doOffset(stage), s.blockM,
             swizzledDv(), full);
  });
  copyRowStatisticsByWarp(rowStart, stage);
  nvgpu::MBarrierArriveOp::create(
      b, nvgpu::MBarrierTokenType::get(b.getContext()), barriers, full);
}

void Sm90WsBackwardBuilder::awaitQueryBlock(Value i, Value rel, Value stage) {
  stepRel = rel;
  waitBarrier(fullBarrier(stage),
              arith::DivUIOp::create(b, rel, cIdx(b, s.stages)));
  // A packed batch's last query block: Q and dO rows past the sequence are
  // the next one's. dS and P are 0 there (the row tail's mask, LSE and Dsum
  // 0), but 0 · NaN is not 0. The consumers zero them between them.
  if (!s.varlen)
    return;
  Value valid = asIndex(arith::SubIOp::create(
      b, i32(queryLengthAgain()),
      arith::MulIOp::create(b, i32(i), cI32(s.blockM))));
  // Made before the branch, as ptxas allocates this step best (in the
  // branch, the kernels at the consumers' cap spilled 4-8 bytes). dO's
  // tile a constant past Q's where the two are the same size, so that one
  // address serves both tiles' stores.
  Value q = qOffset(stage);
  Value dO = qElems == doElems
                 ? arith::AddIOp::create(b, q, cIdx(b, s.stages * qElems))
                       .getResult()
                 : doOffset(stage);
  zeroRowsPast(
      valid, s.blockM, {swizzledD(), swizzledDv()}, /*unrolled=*/true,
      [&] { return RowZeroing{tid, consumerThreads(), {q, dO}}; },
      [&] { syncComputeWarps(); });
}

void Sm90WsBackwardBuilder::handStagedDQBack() {
  if (!s.stagesDQInQueryTiles())
    return;
  // The reduction threads' arrivals for the previous step's buffer, held
  // back from its release: once their reductions have read the dQ staged
  // there. Waited for here, with this step's first products in flight,
  // the reads have had the step's start to finish; waited for at the
  // release, they would hold the warpgroup at its end. The producer needs
  // the buffer only for the step after this one.
  Value previous = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, stepRel,
                                         cIdx(b, 0));
  auto ifBack = scf::IfOp::create(
      b, TypeRange{}, arith::AndIOp::create(b, previous, reducesStagedDQ()),
      false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifBack.getThenRegion().front());
  NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, b.getUnitAttr());
  Value stage = arith::RemUIOp::create(
      b, arith::SubIOp::create(b, stepRel, cIdx(b, 1)), cIdx(b, s.stages));
  nvgpu::MBarrierArriveOp::create(
      b, nvgpu::MBarrierTokenType::get(b.getContext()), barriers,
      emptyBarrier(stage));
}

void Sm90WsBackwardBuilder::releaseQueryBlock(Value stage, Value dqStart) {
  // The step's products are done with the buffer (finishQueryBlock waited
  // for dV and dK): hand it to the producer before the closing barrier,
  // which orders the next step's dS stores after every warpgroup's dQ
  // product and the dQ tile's stores before its reduction. Where the
  // buffer stages dQ, its reduction threads arrive in the next step
  // (handStagedDQBack).
  auto arrive = [&] {
    nvgpu::MBarrierArriveOp::create(
        b, nvgpu::MBarrierTokenType::get(b.getContext()), barriers,
        emptyBarrier(stage));
  };
  if (s.stagesDQInQueryTiles()) {
    Value others = arith::XOrIOp::create(b, reducesStagedDQ(),
                                         arith::ConstantIntOp::create(b, 1, 1));
    auto ifOthers = scf::IfOp::create(b, TypeRange{}, others, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOthers.getThenRegion().front());
    arrive();
  } else {
    arrive();
  }
  syncComputeWarps();
  if (s.stagesDQ())
    publishDQ(dqStart);
}

void Sm90WsBackwardBuilder::buildWarpSpecialized() {
  setUp();
  createBarriers();

  auto [producer, consumer] = branchByRole(producerThreads());

  b.setInsertionPointToStart(consumer);
  NVVM::SetMaxRegisterOp::create(b, kConsumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  // The consumers number their warps from 0 (the schedule's key layout).
  setThreadCoordinates(
      rederives() ? consumerThreadId(tid)
                  : arith::SubIOp::create(b, tid, cIdx(b, producerThreads())));
  Value entryHeadKV = headKV, entryHeadsQ = headsQ, entrySeqQ = seqQ,
        entrySeqK = seqK;
  if (rederives())
    rederiveNonNegatives();
  placeWarp();
  auto [mFirst, mEnd] = blockQueryRange();
  Value scoreFactor = scoreFactorLog2();
  waitBarrier(cIdx(b, 0), cIdx(b, 0)); // K and V
  // A packed batch's last key block: K and V rows past the sequence's keys
  // are the next sequence's; dS and P are 0 in their columns, and 0 · NaN
  // is not. Zeroed once, by the consumers between them.
  if (s.varlen) {
    // The thread made before the branch (see awaitQueryBlock).
    Value thread = freshConsumerThread();
    zeroRowsPast(
        arith::SubIOp::create(b, seqK, kStart), s.blockN,
        {swizzledD(), swizzledDv()}, /*unrolled=*/true,
        [&] {
          return RowZeroing{
              thread, consumerThreads(), {cIdx(b, 0), cIdx(b, vOffset())}};
        },
        [&] { syncComputeWarps(); });
  }
  writeGradients(walkQueryBlocks(mFirst, mEnd, scoreFactor));
  gpu::ReturnOp::create(b);
  // The producer's branch sees the entry's values, not the consumers'.
  headKV = entryHeadKV;
  headsQ = entryHeadsQ;
  seqQ = entrySeqQ;
  seqK = entrySeqK;

  b.setInsertionPointToStart(producer);
  NVVM::SetMaxRegisterOp::create(b, kProducerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  // The block's placement read afresh, rather than carried from the entry
  // into the producer's 24 registers (they spilled there); the coordinates
  // are the block's own again (the consumers' were shifted).
  rereadPlacement();
  auto ifFirstWarp = scf::IfOp::create(
      b, TypeRange{},
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid,
                            cIdx(b, kStatisticLanes)),
      false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifFirstWarp.getThenRegion().front());
    // An ordered block's tile is its order's entry, read again here.
    GridTile tile;
    if (s.takesTileOrder()) {
      tile = rereadOrderedTile();
      head = tile.head;
      batchIdx = tile.batch;
    }
    headKV = narrowsForSharedPlacement()
                 ? kvHeadIn32Bits()
                 : Value(arith::DivUIOp::create(
                       b, head,
                       arith::DivUIOp::create(b, headsQ, idx("heads_kv"))));
    kStart = arith::MulIOp::create(
        b, tile.block ? tile.block : readSpecialRegisterOpaquely("ctaid.x"),
        cIdx(b, s.blockN));
    rowBaseLse = sliceRowStart(/*keys=*/false);
    auto [first, end] = blockQueryRange();
    produce(first, end);
  }
  gpu::ReturnOp::create(b);
}

} // namespace

void mlir::flash::buildSm90WsBackwardKernel(gpu::GPUFuncOp func,
                                            const KernelSpec &spec) {
  if (spec.keepsPlacementShared())
    SharedPlacementScheduler<Sm90WsBackwardBuilder>(func, spec,
                                                    UnownedRows::Keys)
        .buildWarpSpecialized();
  else if (spec.varlen)
    VarlenBackwardScheduler<Sm90WsBackwardBuilder>(func, spec,
                                                   UnownedRows::Keys)
        .buildWarpSpecialized();
  else if (spec.blockSparse)
    BlockSparseQueryIterator<Sm90WsBackwardBuilder>(func, spec)
        .buildWarpSpecialized();
  else
    Sm90WsBackwardBuilder(func, spec).buildWarpSpecialized();
}
