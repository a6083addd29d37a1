//===- BlockSparseTranspose.cpp - the backward's transposed lists ---------===//
//
// backward_sparse_transpose (docs/KERNEL_ABI.md "Block-sparse backward"):
// the main backward kernel owns a key block and walks the query blocks
// whose rows list it, so before it runs this kernel turns the forward's
// lists (key blocks per query block, as flash.attention_grad takes them)
// into transposed ones (query blocks per key block), FlexAttention's
// q_num_blocks / q_indices, each forward pair into a pair of its own.
//
// One thread per (key block kb, head h, batch b) of the transposed pair:
// it scans rows qb = 0, 1, ... of (b, h)'s forward lists and appends qb to
// its row when some entry of qb's row names kb. The warp's 32 threads are
// 32 consecutive key blocks of one (b, h), so each entry load is one
// broadcast read of an L1-resident line, and the loops are warp-uniform.
// What comes out needs no sort and no atomics: each row is strictly
// increasing in qb, whatever order the forward rows list their blocks in,
// and a query block appears at most once (a block listed twice in a
// forward row is transposed once). Entries past a row's count (clamped
// into [0, slots]) and indices outside [0, KB) are never matched, so
// nothing is read or written out of bounds. A broadcast pair (stride 0 in
// the batch or head dimension) is transposed by the threads of batch 0
// (head 0) only; the others exit.
//
//===----------------------------------------------------------------------===//
#include "Fragments.h"
#include "KernelBuilderBase.h"
#include "Recipes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class BlockSparseTransposeBuilder : protected KernelBuilderBase {
public:
  BlockSparseTransposeBuilder(gpu::GPUFuncOp func, const KernelSpec &spec)
      : KernelBuilderBase(func, spec) {}
  void build();

private:
  Value batch, headQ, keyBlock, queryBlocks;
  /// Transposes the forward pair `prefix` ("" or "full_") into its
  /// transposed pair, for this thread's (batch, head, key block).
  void transposePair(StringRef prefix);
  Value load(StringRef list, Value at) {
    return arith::IndexCastOp::create(
        b, b.getIndexType(),
        memref::LoadOp::create(b, arg.lookup(list), ValueRange{at}));
  }
  /// batch · stride_b + head · stride_h of list `name`.
  Value sliceStart(StringRef name) {
    Value atB = arith::MulIOp::create(b, batch, idx((name + "_stride_b").str()));
    Value atH = arith::MulIOp::create(b, headQ, idx((name + "_stride_h").str()));
    return arith::AddIOp::create(b, atB, atH);
  }
};

void BlockSparseTransposeBuilder::build() {
  bindArguments();
  Value tidX = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  headQ = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  batch = gpu::BlockIdOp::create(b, gpu::Dimension::z);
  keyBlock = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::x),
                            cIdx(b, s.threads())),
      tidX);
  queryBlocks = arith::CeilDivUIOp::create(b, idx("seq_q"),
                                           cIdx(b, s.sparseBlockQ));
  Value keyBlocks = arith::CeilDivUIOp::create(b, idx("seq_k"),
                                               cIdx(b, s.sparseBlockK));
  auto ifKey = scf::IfOp::create(
      b, TypeRange{},
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, keyBlock, keyBlocks),
      false);
  b.setInsertionPointToStart(&ifKey.getThenRegion().front());
  transposePair("");
  if (s.fullBlocks)
    transposePair("full_");
  b.setInsertionPointAfter(ifKey);
  gpu::ReturnOp::create(b);
}

void BlockSparseTransposeBuilder::transposePair(StringRef prefix) {
  OpBuilder::InsertionGuard guard(b);
  std::string in = (prefix + "kv_").str(), out = (prefix + "q_").str();
  Value zero = cIdx(b, 0);
  // Only batch 0 (head 0) transposes a pair that broadcasts the batch (the
  // heads): the one row every (b, h) reads.
  auto ownsDim = [&](Value coord, StringRef dim) -> Value {
    Value stride = arith::IndexCastOp::create(
        b, b.getIndexType(), arg.lookup(in + "num_blocks_stride_" + dim.str()));
    return arith::OrIOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, coord, zero),
        arith::CmpIOp::create(b, arith::CmpIPredicate::ne, stride, zero));
  };
  Value owns =
      arith::AndIOp::create(b, ownsDim(batch, "b"), ownsDim(headQ, "h"));
  auto ifOwns = scf::IfOp::create(b, TypeRange{}, owns, false);
  b.setInsertionPointToStart(&ifOwns.getThenRegion().front());

  Value slots = idx(in + "slots");
  Value outSlots = idx(out + "slots");
  Value numStart = sliceStart(in + "num_blocks");
  Value idxStart = sliceStart(in + "indices");
  Value outRow = arith::AddIOp::create(
      b, sliceStart(out + "indices"),
      arith::MulIOp::create(b, keyBlock, outSlots));
  Value one = cIdx(b, 1);
  auto rows = scf::ForOp::create(b, zero, queryBlocks, one, ValueRange{zero});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(rows.getBody());
    Value qb = rows.getInductionVar();
    Value count = rows.getRegionIterArgs()[0];
    Value n = load(in + "num_blocks", arith::AddIOp::create(b, numStart, qb));
    n = arith::MinSIOp::create(b, arith::MaxSIOp::create(b, n, zero), slots);
    Value rowStart =
        arith::AddIOp::create(b, idxStart, arith::MulIOp::create(b, qb, slots));
    Value no = arith::ConstantIntOp::create(b, b.getI1Type(), 0);
    auto entries = scf::ForOp::create(b, zero, n, one, ValueRange{no});
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(entries.getBody());
      Value listed = load(in + "indices",
                          arith::AddIOp::create(b, rowStart,
                                                entries.getInductionVar()));
      Value match = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, listed,
                                          keyBlock);
      scf::YieldOp::create(
          b, ValueRange{arith::OrIOp::create(
                 b, entries.getRegionIterArgs()[0], match)});
    }
    Value found = entries.getResult(0);
    // count < QB <= slots of the transposed row; checked all the same, so
    // that a wrong q_slots argument cannot write past the row.
    Value fits =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, count, outSlots);
    Value append = arith::AndIOp::create(b, found, fits);
    auto ifFound = scf::IfOp::create(b, TypeRange{}, append, false);
    {
      OpBuilder::InsertionGuard g3(b);
      b.setInsertionPointToStart(&ifFound.getThenRegion().front());
      memref::StoreOp::create(
          b, arith::IndexCastOp::create(b, b.getI32Type(), qb),
          arg.lookup(out + "indices"),
          ValueRange{arith::AddIOp::create(b, outRow, count)});
    }
    Value next = arith::AddIOp::create(
        b, count,
        arith::IndexCastOp::create(
            b, b.getIndexType(),
            arith::ExtUIOp::create(b, b.getI32Type(), append)));
    scf::YieldOp::create(b, ValueRange{next});
  }
  Value countAt = arith::AddIOp::create(b, sliceStart(out + "num_blocks"),
                                        keyBlock);
  memref::StoreOp::create(
      b, arith::IndexCastOp::create(b, b.getI32Type(), rows.getResult(0)),
      arg.lookup(out + "num_blocks"), ValueRange{countAt});
}

} // namespace

void mlir::flash::buildBlockSparseTransposeKernel(gpu::GPUFuncOp func,
                                                  const KernelSpec &spec) {
  BlockSparseTransposeBuilder(func, spec).build();
}
