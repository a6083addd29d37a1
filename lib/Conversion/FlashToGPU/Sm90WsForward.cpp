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
//   warpgroups 1 and 2, the consumers (setmaxnreg.inc): 64 query rows each,
//     the shared schedule of ForwardBuilder with the waits on "full"
//     instead of cp.async's, and the epilogue, synchronised among
//     themselves by named barrier 1.
//
// Without cp.async address arithmetic in the mainloop and with the copies
// running ahead by up to `stages` blocks regardless of the consumers' phase,
// the consumers keep the tensor cores busier; the registers freed from the
// producer let them hold a 128-key S and O at D = 128 without spilling.
// Ping-pong scheduling between the consumer warpgroups and a persistent
// tile scheduler are the next parts of this recipe (docs/PERF.md).
//
// MLIR has ops for every instruction used here (nvgpu.tma.async.load,
// nvgpu.mbarrier.*, nvvm.setmaxregister, nvvm.barrier with an id); the
// tensor maps reach the kernel as by-value parameters through
// flash-grid-constant-params.
//
//===----------------------------------------------------------------------===//
#include "Fragments.h"
#include "Recipes.h"
#include "Sm90WsForward.h"
#include "Swizzle.h"
#include "Wgmma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

/// Registers a thread of each role keeps after the reallocation: the
/// consumers' share of the 64K-register file with the producer at 24
/// (128 * 24 + 256 * 240 = 64512).
constexpr int32_t kProducerRegisters = 24, kConsumerRegisters = 240;
/// The consumers' named barrier (0 is the whole block's).
constexpr int32_t kConsumerBarrier = 1;
/// The try_wait's suspend-time hint, in ns (the loop retries after it).
constexpr int64_t kWaitHintNs = 0x989680;

} // namespace

void Sm90WsForwardBuilder::syncComputeWarps() {
  NVVM::BarrierOp::create(b, /*res=*/Type(), cI32(kConsumerBarrier),
                          cI32(consumerThreads()),
                          /*reductionOp=*/nullptr,
                          /*reductionPredicate=*/Value());
}

void Sm90WsForwardBuilder::createBarriers() {
  MLIRContext *ctx = b.getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  barriers = nvgpu::MBarrierCreateOp::create(
      b, nvgpu::MBarrierGroupType::get(ctx, wg, 1 + 2 * s.stages));
  Value leader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cIdx(b, 0));
  auto ifLeader = scf::IfOp::create(b, TypeRange{}, leader, false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifLeader.getThenRegion().front());
    // "full" and Q: the producer's arrive.expect_tx, then the bytes;
    // "empty": every consumer thread.
    nvgpu::MBarrierInitOp::create(b, barriers, cIdx(b, 1), cIdx(b, 0),
                                  Value());
    for (int64_t st = 0; st < s.stages; ++st) {
      nvgpu::MBarrierInitOp::create(b, barriers, cIdx(b, 1),
                                    fullBarrier(cIdx(b, st)), Value());
      nvgpu::MBarrierInitOp::create(b, barriers, cIdx(b, consumerThreads()),
                                    emptyBarrier(cIdx(b, st)), Value());
    }
    // The initialisations, visible to the copy engine's completions.
    NVVM::FenceMbarrierInitOp::create(b);
  }
  gpu::BarrierOp::create(b);
}

void Sm90WsForwardBuilder::waitBarrier(Value id, Value round) {
  Value parity = arith::CmpIOp::create(
      b, arith::CmpIPredicate::ne, arith::AndIOp::create(b, round, cIdx(b, 1)),
      cIdx(b, 0));
  nvgpu::MBarrierTryWaitParityOp::create(b, barriers, parity,
                                         cIdx(b, kWaitHintNs), id);
}

void Sm90WsForwardBuilder::copyTile(StringRef op, Value col0, Value row,
                                    Value h, Value offset, int64_t rows,
                                    int64_t cols, Value bar) {
  MLIRContext *ctx = b.getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  // A box of one 128-byte swizzle row x `rows` rows of one (head, batch):
  // the tensor maps are [B][H][rows][cols] (runtime/lib/tensormap.cpp).
  int64_t boxCols = swizzle::kRowBytes / s.elementBytes();
  Type boxElt = s.isFp8() ? Type(b.getI8Type()) : s.elementType;
  auto box = MemRefType::get({1, 1, rows, boxCols}, boxElt,
                             MemRefLayoutAttrInterface(), wg);
  auto mapType = nvgpu::TensorMapDescriptorType::get(
      ctx, box, nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_NONE,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  Value map = UnrealizedConversionCastOp::create(
                  b, mapType, arg.lookup((op + "_map").str()))
                  .getResult(0);
  Value raw = sharedMemoryBytes();
  for (int64_t c = 0; c < cols / boxCols; ++c) {
    Value elem =
        arith::AddIOp::create(b, offset, cIdx(b, c * rows * swizzle::kRowElements));
    Value bytes = arith::AddIOp::create(
        b, swizzledPad, arith::MulIOp::create(b, elem, cIdx(b, 2)));
    Value dst = memref::ViewOp::create(b, box, raw, bytes, ValueRange{});
    Value col = cIdx(b, c * boxCols);
    if (col0)
      col = arith::AddIOp::create(b, col0, col);
    nvgpu::TmaAsyncLoadOp::create(
        b, dst, barriers, map, SmallVector<Value>{col, row, h, batchIdx}, bar,
        /*multicastMask=*/Value(), /*predicate=*/Value());
  }
}

void Sm90WsForwardBuilder::copyKeyBlock(Value j, Value stage, Value full) {
  int64_t d = KernelSpec::swizzleWidth(s.headDim);
  int64_t dv = KernelSpec::swizzleWidth(s.headDimV);
  Value row = arith::MulIOp::create(b, j, cIdx(b, s.blockN));
  copyTile("k", Value(), row, headKV, kOffset(stage), s.blockN, d, full);
  copyTile("v", Value(), row, headKV, vOffset(stage), s.blockN, dv, full);
}

void Sm90WsForwardBuilder::produce(Value nStart, Value nEnd) {
  Value leader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cIdx(b, 0));
  auto ifLeader = scf::IfOp::create(b, TypeRange{}, leader, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifLeader.getThenRegion().front());
  int64_t elt = s.elementType.getIntOrFloatBitWidth() / 8;
  int64_t d = KernelSpec::swizzleWidth(s.headDim);
  int64_t dv = KernelSpec::swizzleWidth(s.headDimV);

  Value qBar = cIdx(b, 0);
  nvgpu::MBarrierArriveExpectTxOp::create(
      b, barriers, cIdx(b, s.blockM * d * elt), qBar, Value());
  copyTile("q", Value(), mStart, head, cIdx(b, 0), s.blockM, d, qBar);

  auto loop = scf::ForOp::create(b, nStart, nEnd, cIdx(b, 1));
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  Value stage = stageOf(j, nStart);
  Value round = roundOf(j, nStart);
  // From the second round on, the buffer's previous block must have been
  // read by every consumer: wait for the empty barrier's (round - 1)-th
  // completion.
  Value refill =
      arith::CmpIOp::create(b, arith::CmpIPredicate::uge, round, cIdx(b, 1));
  auto ifRefill = scf::IfOp::create(b, TypeRange{}, refill, false);
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&ifRefill.getThenRegion().front());
    waitBarrier(emptyBarrier(stage),
                arith::SubIOp::create(b, round, cIdx(b, 1)));
  }
  Value full = fullBarrier(stage);
  nvgpu::MBarrierArriveExpectTxOp::create(
      b, barriers, cIdx(b, s.blockN * (d + dv) * elt), full, Value());
  copyKeyBlock(j, stage, full);
}

void Sm90WsForwardBuilder::acquireFirstBlock(Value nStart) {
  waitBarrier(fullBarrier(cIdx(b, 0)), cIdx(b, 0));
}

void Sm90WsForwardBuilder::acquireBlock(Value j, Value nStart, Value) {
  waitBarrier(fullBarrier(stageOf(j, nStart)), roundOf(j, nStart));
}

void Sm90WsForwardBuilder::releaseBlock(Value block, Value nStart) {
  nvgpu::MBarrierArriveOp::create(
      b, nvgpu::MBarrierTokenType::get(b.getContext()), barriers,
      emptyBarrier(stageOf(block, nStart)));
}

void Sm90WsForwardBuilder::buildWarpSpecialized() {
  mt = s.mTilesPerWarp();
  nTilesN = s.blockN / 8;
  nTilesD = s.mmaDim() / 16;
  nTilesDv = s.mmaDimV() / 8;
  readForwardArguments();
  carveSwizzledQKV();
  auto [nStart, nEnd] = blockKeyRange();
  scoreFactor =
      arith::MulFOp::create(b, scoreScale(), cF32(b, float(M_LOG2E)));
  createBarriers();

  // One branch per role, each ending the kernel: setmaxnreg applies to a
  // warpgroup that takes one side of a uniform branch.
  Block *entry = b.getInsertionBlock();
  Region *body = entry->getParent();
  Block *producer = new Block(), *consumer = new Block();
  body->push_back(producer);
  body->push_back(consumer);
  Value isProducer = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid,
                                           cIdx(b, producerThreads()));
  cf::CondBranchOp::create(b, isProducer, producer, consumer);

  b.setInsertionPointToStart(producer);
  NVVM::SetMaxRegisterOp::create(b, kProducerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  produce(nStart, nEnd);
  gpu::ReturnOp::create(b);

  b.setInsertionPointToStart(consumer);
  NVVM::SetMaxRegisterOp::create(b, kConsumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  shiftToConsumers();
  prepareConsumers();
  qDesc = warpgroupQDescriptor();
  waitBarrier(cIdx(b, 0), cIdx(b, 0)); // Q
  SoftmaxState init;
  for (int64_t n = 0; n < mt * nTilesDv; ++n)
    init.acc.push_back(accZero(b));
  init.rowMax.assign(2 * mt, cF32(b, -INFINITY));
  init.rowSum.assign(2 * mt, cF32(b, 0.0f));
  writeEpilogue(buildKeyLoop({}, nStart, nEnd, init, Value()));
}

void mlir::flash::buildSm90WsForwardKernel(gpu::GPUFuncOp func,
                                           const KernelSpec &spec) {
  Sm90WsForwardBuilder(func, spec).buildWarpSpecialized();
}
