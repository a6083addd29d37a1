//===- Sm90WsForward.cpp - the warp-specialised Hopper forward ------------===//
//
// The sm90ws recipe: the sm90 forward's mainloop (Sm90Forward.cpp: wgmma
// on 128-byte-swizzled tiles, the softmax of block j overlapping the P·V
// product of block j-1) fed by a producer warpgroup instead of by every
// thread's cp.async.
//
//   warpgroup 0, the producer: one thread issues the TMA copies
//     (cp.async.bulk.tensor from the runtime's tensor maps, which write the
//     same 128-byte swizzle the wgmma descriptors read): Q once, then the
//     K and V tiles of each key block of the band into a ring of `stages`
//     buffers. Each buffer has a "full" mbarrier, armed with the bytes
//     to expect and completed by the copy engine, and an "empty" one, which
//     every consumer thread arrives on once its products have read the
//     buffer; the producer waits for it before refilling. Its registers are
//     given back (setmaxnreg.dec) to
//   warpgroups 1 and 2 (and 3 at D = 64 without a mask: 192 rows), the
//     consumers (setmaxnreg.inc): 64 query rows each,
//     the shared schedule of ForwardBuilder with the waits on "full"
//     instead of cp.async's, and the epilogue, synchronised among
//     themselves by named barrier 1.
//
// Without cp.async address arithmetic in the mainloop and with the copies
// running ahead by up to `stages` blocks regardless of the consumers' phase,
// the consumers keep the tensor cores busier; the registers freed from the
// producer let them hold a 128-key S and O at D = 128 without spilling.
//
// The grid is persistent (PersistentScheduler.h): each CTA walks tiles,
// both roles in the same order, the ring's position and the Q barrier's
// phase carried from tile to tile. While the consumers finish a tile (its
// last blocks, its epilogue) the producer already copies the next tile's
// first key blocks and, once the consumers' last S has read it, its Q: O
// is staged in the last key block's V buffer, which the consumers give
// back only after the epilogue, instead of in the Q tile. A packed batch
// walks units of its longest sequence's query blocks over its sequences,
// each sequence's own blocks and no others (VarlenScheduler.h).
//
// MLIR has ops for every instruction used here (nvgpu.tma.async.load,
// nvgpu.mbarrier.*, nvvm.setmaxregister, nvvm.barrier with an id); the
// tensor maps reach the kernel as by-value parameters through
// flash-grid-constant-params.
//
//===----------------------------------------------------------------------===//
#include "BlockSparseIterator.h"
#include "Fragments.h"
#include "Recipes.h"
#include "Sm90WsForward.h"
#include "Swizzle.h"
#include "VarlenScheduler.h"
#include "Wgmma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

/// Registers a producer thread keeps after the reallocation: 40 with the
/// persistent walk (its placement and key range of each tile spill at 24
/// and, in some variants, at 32), 32 beside three consumer warpgroups (at
/// 40 they would get 152, where a D = 64 key loop spills), 24 with one tile
/// a block.
int32_t producerRegisters(const KernelSpec &s) {
  if (!s.persistentGrid())
    return 24;
  return s.warps > 8 ? 32 : 40;
}
/// The register file every block gets whole (one block an SM), and a
/// consumer's ceiling: 255 rounded down to setmaxnreg's multiple of 8.
constexpr int32_t kRegisterFile = 65536, kMaxConsumerRegisters = 240;

/// What each consumer thread gets of the rest: two consumer warpgroups
/// 128 * 40 + 256 * 232 = 64512 with the walk, 128 * 24 + 256 * 240 with
/// one tile a block (D = 256, whose consumers spill at 232); three
/// 128 * 32 + 384 * 160 with the walk.
int32_t consumerRegisters(int32_t producerRegisters, int64_t consumerThreads) {
  int64_t share = (kRegisterFile - 128 * producerRegisters) / consumerThreads;
  return std::min<int32_t>(kMaxConsumerRegisters, share / 8 * 8);
}
/// The consumers' named barrier (0 is the whole block's).
constexpr int32_t kConsumerBarrier = 1;
/// Consumer warpgroup w's issue turn (ping-pong): named barrier 2 + w,
/// which counts the warpgroup's own 128 threads and the 128 of the one
/// that hands it the turn.
constexpr int32_t kFirstTurnBarrier = 2, kTurnThreads = 256;
/// Consumer warpgroup w's own barrier once it has zeroed a packed batch's
/// V rows past the keys (clearValuesPastKeys): 5 + w, after the turns'.
constexpr int32_t kFirstValuesClearedBarrier = kFirstTurnBarrier + 3;

} // namespace

void Sm90WsForwardBuilder::syncComputeWarps() {
  NVVM::BarrierOp::create(b, /*res=*/Type(), cI32(kConsumerBarrier),
                          cI32(consumerThreads()),
                          /*reductionOp=*/nullptr,
                          /*reductionPredicate=*/Value());
}

Value Sm90WsForwardBuilder::consumerWarpgroup() {
  return to32(arith::DivUIOp::create(b, warp, cIdx(b, 4)));
}

void Sm90WsForwardBuilder::awaitIssueTurn() {
  if (!s.issuesInTurns())
    return;
  Value id =
      arith::AddIOp::create(b, consumerWarpgroup(), cI32(kFirstTurnBarrier));
  NVVM::BarrierOp::create(b, /*res=*/Type(), id, cI32(kTurnThreads),
                          /*reductionOp=*/nullptr,
                          /*reductionPredicate=*/Value());
}

void Sm90WsForwardBuilder::passIssueTurn() {
  if (!s.issuesInTurns())
    return;
  Value w = consumerWarpgroup(), id;
  if (s.warps == 8) {
    // The other warpgroup's barrier: 2 + (1 - w). The ring's form below
    // would serve two warpgroups too, but cost the D = 128 kernels 3-7%
    // from 8k (H200, docs/PERF.md run 298).
    id = arith::SubIOp::create(b, cI32(kFirstTurnBarrier + 1), w);
  } else {
    // The next one's in the ring: 2 + (w + 1) mod n.
    Value next = arith::AddIOp::create(b, w, cI32(1));
    Value wraps = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, next,
                                        cI32(s.warps / 4));
    next = arith::SelectOp::create(b, wraps, cI32(0), next);
    id = arith::AddIOp::create(b, next, cI32(kFirstTurnBarrier));
  }
  NVVM::BarrierArriveOp::create(b, id, cI32(kTurnThreads));
}

void Sm90WsForwardBuilder::createBarriers() {
  // "full" and Q: the producer's arrive.expect_tx, then the bytes; "empty"
  // and Q read: every consumer thread.
  SmallVector<std::pair<int64_t, int64_t>> inits = {
      {0, 1}, {1 + 2 * s.stages, consumerThreads()}};
  int64_t perStage = keysApart() ? 2 : 1;
  for (int64_t half = 0; half < perStage; ++half) {
    int64_t first = 1 + half * (1 + 2 * s.stages);
    for (int64_t st = 0; st < s.stages; ++st) {
      inits.push_back({first + st, 1});
      inits.push_back({first + s.stages + st, consumerThreads()});
    }
  }
  KernelBuilderBase::createBarriers(2 + 2 * perStage * s.stages, inits);
}

void Sm90WsForwardBuilder::copyKeys(Value j, Value stage, Value full) {
  // Step j's keys: the block the iterator names (a dense walk's is j).
  Value row = tensorMapRow(producedKeyStart(j, stage), /*keys=*/true);
  copyTile("k", Value(), row, headKV, kOffset(stage), s.blockN,
           KernelSpec::swizzleWidth(s.headDim), full);
}

void Sm90WsForwardBuilder::copyValues(Value j, Value stage, Value full) {
  Value row = tensorMapRow(producedKeyStart(j, stage), /*keys=*/true);
  copyTile("v", Value(), row, headKV, vOffset(stage), s.blockN,
           KernelSpec::swizzleWidth(s.headDimV), full);
}

Value Sm90WsForwardBuilder::producedKeyStart(Value j, Value stage) {
  if (!keyTable)
    return keyStartAt(j);
  // The producer thread's own store (publishKeyBlock), read back.
  Value entry = memref::LoadOp::create(b, keyTable, ValueRange{stage});
  return arith::MulIOp::create(b, entryBlock(entry), cIdx(b, s.blockN));
}

void Sm90WsForwardBuilder::publishKeyBlock(Value j, Value stage) {
  Value entry = to32(keyBlockAt(j));
  if (s.maskMod)
    entry = arith::SelectOp::create(
        b, appliesMaskMod(j),
        arith::OrIOp::create(b, entry, cI32(int32_t(0x80000000u))), entry);
  memref::StoreOp::create(b, entry, keyTable, ValueRange{stage});
}

Value Sm90WsForwardBuilder::entryBlock(Value entry) {
  if (s.maskMod)
    entry = arith::AndIOp::create(b, entry, cI32(0x7fffffff));
  return asUnsignedIndex(entry);
}

Value Sm90WsForwardBuilder::scoredKeyStart(Value position) {
  if (!keyTable)
    return keyStartAt(position);
  assert(acquiredEntry && "the step's block is acquired before it is scored");
  return arith::MulIOp::create(b, entryBlock(acquiredEntry), cIdx(b, s.blockN));
}

Value Sm90WsForwardBuilder::scoredMaskModApplies(Value position) {
  if (!keyTable)
    return appliesMaskMod(position);
  assert(acquiredEntry && "the step's block is acquired before it is scored");
  return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, acquiredEntry,
                               cI32(0));
}

void Sm90WsForwardBuilder::placeTile(
    const PersistentTileScheduler::Tile &tile) {
  head = tile.head;
  batchIdx = tile.batch;
  // In 32 bits, as the scheduler's (PersistentScheduler.cpp).
  Value group = arith::DivUIOp::create(b, arg.lookup("heads_q"),
                                       arg.lookup("heads_kv"));
  headKV = arith::IndexCastUIOp::create(
      b, b.getIndexType(),
      arith::DivUIOp::create(
          b, arith::IndexCastUIOp::create(b, b.getI32Type(), head), group));
  mStart = arith::MulIOp::create(b, tile.queryBlock, cIdx(b, s.blockM));
  placeTileSequence();
}

void Sm90WsForwardBuilder::produce() {
  Value leader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cIdx(b, 0));
  auto ifLeader = scf::IfOp::create(b, TypeRange{}, leader, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifLeader.getThenRegion().front());
  walkTiles([&](Value count) { return produceTile(count); });
}

Value Sm90WsForwardBuilder::produceTile(Value count) {
  auto [nStart, nEnd] = blockKeyRange();
  Value start32 = to32(nStart), end32 = to32(nEnd);
  int64_t d = KernelSpec::swizzleWidth(s.headDim);
  auto copyQ = [&] {
    Value qBar = cIdx(b, 0);
    nvgpu::MBarrierArriveExpectTxOp::create(
        b, barriers, cIdx(b, s.blockM * d * s.elementBytes()), qBar, Value());
    copyTile("q", Value(), tensorMapRow(mStart, /*keys=*/false), head,
             cIdx(b, 0), s.blockM, d, qBar);
  };
  if (s.blockSparse && !s.persistentGrid()) {
    // One tile a block, whose key blocks each wait for the lists' reads
    // (the counts, then the entry): Q goes out before them (run 212).
    copyQ();
    produceKeyBlocks(start32, end32, start32);
    return arith::SubIOp::create(b, end32, start32);
  }
  // Blocks nStart .. nStart + stages - 2 take buffers the previous tile's
  // key loop gives back (never the one its epilogue holds): they go first,
  // while the consumers still work on that tile.
  Value early = arith::MinUIOp::create(
      b, arith::AddIOp::create(b, start32, cI32(s.stages - 1)), end32);
  produceKeyBlocks(start32, early, start32);

  // Q, once every consumer is done with the previous tile's.
  Value notFirst =
      arith::CmpIOp::create(b, arith::CmpIPredicate::uge, count, cI32(1));
  auto ifNotFirst = scf::IfOp::create(b, TypeRange{}, notFirst, false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifNotFirst.getThenRegion().front());
    waitBarrier(qEmptyBarrier(),
                asUnsignedIndex(arith::SubIOp::create(b, count, cI32(1))));
  }
  copyQ();

  produceKeyBlocks(early, end32, start32);
  return arith::SubIOp::create(b, end32, start32);
}

void Sm90WsForwardBuilder::produceKeyBlocks(Value from, Value to,
                                            Value nStart) {
  int64_t d = KernelSpec::swizzleWidth(s.headDim);
  int64_t dv = KernelSpec::swizzleWidth(s.headDimV);
  OpBuilder::InsertionGuard g(b);
  // In 32 bits, as walkTiles' ring position.
  auto loop = scf::ForOp::create(b, from, to, cI32(1));
  b.setInsertionPointToStart(loop.getBody());
  Value j32 = loop.getInductionVar();
  Value j = asUnsignedIndex(j32);
  Value position = arith::AddIOp::create(
      b, arith::SubIOp::create(b, j32, nStart), ring32);
  Value stage = asUnsignedIndex(arith::RemUIOp::create(b, position, cI32(s.stages)));
  Value round = arith::DivUIOp::create(b, position, cI32(s.stages));
  // From the second round on, the buffer's previous K (then V) tile must
  // have been read by every consumer: wait for its empty barrier's
  // (round - 1)-th completion.
  Value refill =
      arith::CmpIOp::create(b, arith::CmpIPredicate::uge, round, cI32(1));
  auto refillAfter = [&](Value empty) {
    auto ifRefill = scf::IfOp::create(b, TypeRange{}, refill, false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifRefill.getThenRegion().front());
    waitBarrier(empty, asUnsignedIndex(arith::SubIOp::create(b, round, cI32(1))));
  };
  auto expect = [&](Value full, int64_t columns) {
    nvgpu::MBarrierArriveExpectTxOp::create(
        b, barriers, cIdx(b, s.blockN * columns * s.elementBytes()), full,
        Value());
  };
  refillAfter(keysEmptyBarrier(stage));
  if (keyTable)
    publishKeyBlock(j, stage);
  Value keysFull = keysFullBarrier(stage);
  if (!keysApart()) {
    expect(keysFull, d + dv);
    copyKeys(j, stage, keysFull);
    copyValues(j, stage, keysFull);
    return;
  }
  expect(keysFull, d);
  copyKeys(j, stage, keysFull);
  refillAfter(valuesEmptyBarrier(stage));
  Value valuesFull = valuesFullBarrier(stage);
  expect(valuesFull, dv);
  copyValues(j, stage, valuesFull);
}

Value Sm90WsForwardBuilder::to32(Value v) {
  return arith::IndexCastUIOp::create(b, b.getI32Type(), v);
}

void Sm90WsForwardBuilder::walkTiles(function_ref<Value(Value)> tileBody) {
  if (!s.persistentGrid()) {
    // One tile, the block's (readForwardArguments placed it).
    ring32 = cI32(0);
    tileBody(cI32(0));
    ring32 = Value();
    return;
  }
  // Carried in 32 bits (the producer's registers).
  SmallVector<Value> start = {cI32(0), cI32(0)};
  scheduler->forEachTile(
      start, [&](const PersistentTileScheduler::Tile &tile,
                 ValueRange carried) -> SmallVector<Value> {
        placeTile(tile);
        ring32 = carried[0];
        ringBase = asUnsignedIndex(ring32);
        Value count = carried[1];
        Value blocks = tileBody(count);
        return {arith::AddIOp::create(b, ring32, blocks),
                arith::AddIOp::create(b, count, cI32(1))};
      });
  ringBase = ring32 = Value();
}

Value Sm90WsForwardBuilder::consumeTile(Value count) {
  auto [nStart, nEnd] = blockKeyRange();
  prepareTile(nStart, nEnd);
  waitBarrier(cIdx(b, 0), asUnsignedIndex(count)); // Q
  SoftmaxState init;
  for (int64_t n = 0; n < mt * nTilesDv; ++n)
    init.acc.push_back(accZero(b));
  init.rowMax.assign(2 * mt, cF32(b, -INFINITY));
  init.rowSum.assign(2 * mt, cF32(b, 0.0f));
  SoftmaxState final = buildKeyLoop({}, nStart, nEnd, init, Value());

  // The key loop gave back every buffer but the last block's.
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, nStart, nEnd);
  Value last = arith::SubIOp::create(b, nEnd, cIdx(b, 1));
  auto when = [&](Value cond, function_ref<void()> fn) {
    if (!cond)
      return fn();
    auto ifOp = scf::IfOp::create(b, TypeRange{}, cond, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    fn();
  };
  auto arrive = [&](Value bar) {
    nvgpu::MBarrierArriveOp::create(
        b, nvgpu::MBarrierTokenType::get(b.getContext()), barriers, bar);
  };
  auto releaseQ = [&] { arrive(qEmptyBarrier()); };
  auto releaseLast = [&] { releaseBlock(last, nStart); };
  Value none = arith::XOrIOp::create(
      b, any, arith::ConstantIntOp::create(b, b.getI1Type(), 1));
  if (!stagesOutput()) {
    releaseQ();
    when(any, releaseLast);
    writeEpilogue(final);
  } else if (stagesOutputInV()) {
    // O goes through the last block's V buffer, the Q tile where the tile
    // saw no key block (and holds no buffer).
    outputStagingOffset = arith::SelectOp::create(
        b, any, vOffset(stageOf(last, nStart)), cIdx(b, 0));
    when(any, releaseQ);
    writeEpilogue(final);
    outputStagingOffset = Value();
    // The staging's generic-proxy stores before the copy engine's refill.
    fenceGenericToAsyncProxy();
    when(none, releaseQ);
    when(any, releaseLast);
  } else {
    when(any, releaseLast);
    writeEpilogue(final);
    fenceGenericToAsyncProxy();
    releaseQ();
  }
  return to32(arith::SubIOp::create(b, nEnd, nStart));
}

void Sm90WsForwardBuilder::acquireFirstBlock(Value nStart) {
  acquireBlock(nStart, nStart, Value());
}

void Sm90WsForwardBuilder::acquireBlock(Value j, Value nStart, Value) {
  Value stage = stageOf(j, nStart);
  waitBarrier(keysFullBarrier(stage), roundOf(j, nStart));
  if (keyTable)
    acquiredEntry = memref::LoadOp::create(b, keyTable, ValueRange{stage});
}

void Sm90WsForwardBuilder::acquireValues(Value block, Value nStart) {
  if (keysApart())
    waitBarrier(valuesFullBarrier(stageOf(block, nStart)),
                roundOf(block, nStart));
}

void Sm90WsForwardBuilder::clearValuesPastKeys(Value lastBlock,
                                               Value nStart) {
  if (!s.varlen)
    return;
  // Rows [valid, block_n) of the block's V tile, valid = Sk - its first key
  // (at least 1: the block is in the band). Each warpgroup's 128 threads
  // zero them all, then pass its own barrier.
  Value valid = arith::SubIOp::create(b, seqK, keyStartAt(lastBlock));
  zeroRowsPast(
      valid, s.blockN, {s.headDimV}, /*unrolled=*/false,
      [&] {
        Value lane = arith::RemUIOp::create(b, tid, cIdx(b, 128));
        return RowZeroing{lane, 128, {vOffset(stageOf(lastBlock, nStart))}};
      },
      [&] {
        Value id = arith::AddIOp::create(b, consumerWarpgroup(),
                                         cI32(kFirstValuesClearedBarrier));
        NVVM::BarrierOp::create(b, /*res=*/Type(), id, cI32(128),
                                /*reductionOp=*/nullptr,
                                /*reductionPredicate=*/Value());
      });
}

void Sm90WsForwardBuilder::releaseKeys(Value block, Value nStart) {
  if (!keysApart())
    return;
  nvgpu::MBarrierArriveOp::create(
      b, nvgpu::MBarrierTokenType::get(b.getContext()), barriers,
      keysEmptyBarrier(stageOf(block, nStart)));
}

void Sm90WsForwardBuilder::releaseBlock(Value block, Value nStart) {
  nvgpu::MBarrierArriveOp::create(
      b, nvgpu::MBarrierTokenType::get(b.getContext()), barriers,
      valuesEmptyBarrier(stageOf(block, nStart)));
}

void Sm90WsForwardBuilder::buildWarpSpecialized() {
  mt = s.mTilesPerWarp();
  nTilesN = s.blockN / 8;
  nTilesD = s.mmaDim() / 16;
  nTilesDv = s.mmaDimV() / 8;
  readForwardArguments();
  carveSwizzledQKV();
  if (s.publishesKeyBlocks()) // after the 16-bit tiles (KernelSpec::smemBytes)
    keyTable = sharedTile(
        sharedMemoryBytes(), {s.stages},
        arith::AddIOp::create(
            b, swizzledPad,
            cIdx(b, 2 * (qElems + s.stages * (kElems + vElems)))),
        b.getI32Type());
  // A packed batch's walk: units of its longest sequence's query blocks
  // over its sequences, each sequence's own blocks walked (VarlenScheduler).
  scheduler = std::make_unique<PersistentTileScheduler>(
      b, s.blockM, s.causal != KernelSpec::Causal::None,
      s.varlen ? idx("max_seqlen_q") : seqQ, headsQ,
      idx(s.varlen ? "num_seqs" : "batch"),
      [this](StringRef name) { return readSpecialRegisterOpaquely(name); });
  if (s.varlen)
    scheduler->withPackedBlocks(
        [this](Value batch) { return queryBlocksOfBatch(batch); });
  scoreFactor =
      arith::MulFOp::create(b, scoreScale(), cF32(b, float(M_LOG2E)));
  createBarriers();

  auto [producer, consumer] = branchByRole(producerThreads());

  b.setInsertionPointToStart(producer);
  NVVM::SetMaxRegisterOp::create(b, producerRegisters(s),
                                 NVVM::SetMaxRegisterAction::decrease);
  produce();
  gpu::ReturnOp::create(b);

  b.setInsertionPointToStart(consumer);
  NVVM::SetMaxRegisterOp::create(
      b, consumerRegisters(producerRegisters(s), consumerThreads()),
      NVVM::SetMaxRegisterAction::increase);
  shiftToConsumers();
  qDesc = warpgroupQDescriptor();
  if (s.issuesInTurns()) {
    // Warpgroup 0 issues first: it hands itself the first turn.
    Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                        consumerWarpgroup(), cI32(0));
    auto ifOp = scf::IfOp::create(b, TypeRange{}, first, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    NVVM::BarrierArriveOp::create(b, cI32(kFirstTurnBarrier),
                                  cI32(kTurnThreads));
  }
  walkTiles([&](Value count) { return consumeTile(count); });
  gpu::ReturnOp::create(b);
}

void mlir::flash::buildSm90WsForwardKernel(gpu::GPUFuncOp func,
                                           const KernelSpec &spec) {
  if (spec.blockSparse)
    BlockSparseIterator<Sm90WsForwardBuilder>(func, spec)
        .buildWarpSpecialized();
  else if (spec.varlen)
    VarlenScheduler<Sm90WsForwardBuilder>(func, spec).buildWarpSpecialized();
  else
    Sm90WsForwardBuilder(func, spec).buildWarpSpecialized();
}
