//===- Sm80Decode.cpp - split-KV attention over a KV cache ----------------===//
//
// Flash-Decoding (docs/KVCACHE.md, docs/KERNEL_ABI.md "Decode"): the
// forward's mma.sync engine (Sm80Forward.h) and its online softmax, under
// three parts of its own:
//   - tile scheduler: one block per (m-block, split) x kv head x batch. The
//     G = Hq / Hkv query heads of the kv head and the Sq query positions are
//     packed into the block's rows (packed row r = head hkv·G + r % G,
//     position r / G), so a decode step's handful of query rows fill an
//     m16 tile and each K/V tile is read once for the whole group. The
//     sequence's key blocks (its own length, from cache_seqlens) are
//     shared out evenly between the splits.
//   - operand producer: Q rows gathered by (head, position); K/V rows of a
//     contiguous cache stream like the forward's, those of a paged cache go
//     through the page table chunk by chunk.
//   - epilogue: with one split, O and LSE as the forward writes them; with
//     several, each split's O normalised by its own row sum, in f32, and its
//     LSE, for decode_combine (DecodeCombine.cpp) to merge.
// The band (causal / window) is the op's: bottom-right by each sequence's
// own length, so diagOffset = L_b - Sq.
//
//===----------------------------------------------------------------------===//
#include "Recipes.h"
#include "Sm80Forward.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class Sm80DecodeBuilder : public Sm80ForwardBuilder {
public:
  using Sm80ForwardBuilder::Sm80ForwardBuilder;

private:
  Value group;       // G = Hq / Hkv
  Value numSplits;   // splits of the key sequence (grid.x / m-blocks)
  Value split;       // this block's split
  Value packedStart; // first packed row of the block
  Value packedRows;  // G * Sq
  Value qStrideH;

  void readForwardArguments() override;
  std::pair<Value, Value> blockKeyRange() override;
  Value rowOf(int64_t m, int64_t i) override;
  Value loadQTile() override;
  Value loadKVBlock(Value block, Value stage) override;
  void writeEpilogue(const SoftmaxState &final) override;

  /// Packed row of fragment row (m, i), index.
  Value packedRowOf(int64_t m, int64_t i);
  /// Element offset of row `row` (index) of this kv head's keys ("k") or
  /// values ("v") in a paged cache: through the page table, its entry
  /// clamped into [0, num_pages).
  Value pagedRowAddress(StringRef operand, Value row);
};

void Sm80DecodeBuilder::readForwardArguments() {
  readArguments();
  // readArguments placed the block as the forward's grid does; the decode
  // grid is (m-block x split, kv head, batch).
  group = arith::DivUIOp::create(b, headsQ, idx("heads_kv"));
  headKV = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  head = arith::MulIOp::create(b, headKV, group);
  numSplits = idx("num_splits");
  Value x = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  split = arith::RemUIOp::create(b, x, numSplits);
  packedStart = arith::MulIOp::create(
      b, arith::DivUIOp::create(b, x, numSplits), cIdx(b, s.blockM));
  packedRows = arith::MulIOp::create(b, group, seqQ);
  mStart = arith::DivUIOp::create(b, packedStart, group);

  // L_b = cache_seqlens[b] + seq_new, clamped into [0, capacity]: lengths
  // outside the contract give a wrong answer, never a read outside the
  // cache (docs/KVCACHE.md).
  Value cached = memref::LoadOp::create(b, arg.lookup("cache_seqlens"),
                                        ValueRange{batchIdx});
  Value len = asIndex(arith::AddIOp::create(b, cached, arg.lookup("seq_new")));
  len = arith::MaxSIOp::create(b, len, cIdx(b, 0));
  seqK = arith::MinSIOp::create(b, len, idx("seq_k"));
  diagOffset = arith::SubIOp::create(b, seqK, seqQ);

  qBase = operandBase("q", head);
  qStrideS = idx("q_stride_s");
  qStrideH = idx("q_stride_h");
  kStrideS = idx("k_stride_s");
  vStrideS = idx("v_stride_s");
  if (s.pageSize) { // rows located through the page table
    kBase = arith::MulIOp::create(b, headKV, idx("k_stride_h"));
    vBase = arith::MulIOp::create(b, headKV, idx("v_stride_h"));
  } else {
    kBase = operandBase("k", headKV);
    vBase = operandBase("v", headKV);
  }
}

std::pair<Value, Value> Sm80DecodeBuilder::blockKeyRange() {
  // The band of the block's positions [mStart, mStart + block_m) (a
  // superset of its packed rows' positions; the masks are exact), then
  // this split's share: ceil(blocks / splits) consecutive blocks.
  auto [first, end] = keyBlockRange(mStart, s.blockM, s.blockN);
  Value perSplit = arith::CeilDivUIOp::create(
      b, arith::SubIOp::create(b, end, first), numSplits);
  Value start = arith::AddIOp::create(
      b, first, arith::MulIOp::create(b, split, perSplit));
  Value stop = arith::MinUIOp::create(
      b, end, arith::AddIOp::create(b, start, perSplit));
  return {arith::MinUIOp::create(b, start, stop), stop};
}

Value Sm80DecodeBuilder::packedRowOf(int64_t m, int64_t i) {
  return arith::AddIOp::create(
      b,
      arith::AddIOp::create(b, packedStart,
                            arith::MulIOp::create(b, warp, cIdx(b, 16 * mt))),
      arith::AddIOp::create(b, g, cIdx(b, 16 * m + 8 * i)));
}

Value Sm80DecodeBuilder::rowOf(int64_t m, int64_t i) {
  return i32(arith::DivUIOp::create(b, packedRowOf(m, i), group));
}

Value Sm80DecodeBuilder::loadQTile() {
  // Packed row r is Q[b, head + r % G, r / G]: no single row stride.
  SmallVector<Value> tokens;
  copyOperand(
      Operand::Q, Value(), packedStart, tokens, RowCheck::PerChunk,
      [&](Value r) {
        Value inGroup = arith::RemUIOp::create(b, r, group);
        Value position = arith::DivUIOp::create(b, r, group);
        return arith::AddIOp::create(
            b, qBase,
            arith::AddIOp::create(
                b, arith::MulIOp::create(b, inGroup, qStrideH),
                arith::MulIOp::create(b, position, qStrideS)));
      },
      packedRows);
  return commitGroup(tokens);
}

Value Sm80DecodeBuilder::pagedRowAddress(StringRef operand, Value row) {
  Value pageSize = cIdx(b, s.pageSize);
  Value entry = arith::AddIOp::create(
      b, arith::MulIOp::create(b, batchIdx, idx("block_table_stride")),
      arith::DivUIOp::create(b, row, pageSize));
  Value page = asIndex(memref::LoadOp::create(b, arg.lookup("block_table"),
                                              ValueRange{entry}));
  Value lastPage = arith::SubIOp::create(b, idx("num_pages"), cIdx(b, 1));
  page = arith::MaxSIOp::create(
      b, arith::MinSIOp::create(b, page, lastPage), cIdx(b, 0));
  bool isKey = operand == "k";
  return arith::AddIOp::create(
      b, isKey ? kBase : vBase,
      arith::AddIOp::create(
          b, arith::MulIOp::create(b, page, idx(operand.str() + "_stride_b")),
          arith::MulIOp::create(b, arith::RemUIOp::create(b, row, pageSize),
                                isKey ? kStrideS : vStrideS)));
}

Value Sm80DecodeBuilder::loadKVBlock(Value block, Value stage) {
  if (!s.pageSize)
    return Sm80ForwardBuilder::loadKVBlock(block, stage);
  // Rows of one block may lie on several pages: each chunk finds its own.
  Value rowStart = arith::MulIOp::create(b, block, cIdx(b, s.blockN));
  SmallVector<Value> tokens;
  copyOperand(Operand::K, stage, rowStart, tokens, RowCheck::PerChunk,
              [&](Value row) { return pagedRowAddress("k", row); });
  copyOperand(Operand::V, stage, rowStart, tokens, RowCheck::PerChunk,
              [&](Value row) { return pagedRowAddress("v", row); });
  return commitGroup(tokens);
}

void Sm80DecodeBuilder::writeEpilogue(const SoftmaxState &final) {
  Value single = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, numSplits,
                                       cIdx(b, 1));
  Value isLeader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t, cIdx(b, 0));
  Value out = arg.lookup("o"), lse = arg.lookup("lse");
  Value outPartial = arg.lookup("o_partial");
  Value lsePartial = arg.lookup("lse_partial");
  Value batch = idx("batch");
  Value twoT = arith::MulIOp::create(b, t, cIdx(b, 2));
  Value negInf = cF32(b, -INFINITY);
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  for (int64_t m = 0; m < mt; ++m)
    for (int64_t i = 0; i < 2; ++i) {
      // A split that saw no key has LSE -inf (weight 0 in the combine).
      auto [inv, rowLse] = finalRowStatistics(final, m, i, -INFINITY);
      SmallVector<Value> values;
      for (int64_t n = 0; n < nTilesDv; ++n)
        for (int64_t j = 0; j < 2; ++j)
          values.push_back(arith::MulFOp::create(
              b, accGet(b, final.acc[m * nTilesDv + n], i, j), inv));
      Value r = packedRowOf(m, i);
      Value valid =
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, r, packedRows);
      auto ifValid = scf::IfOp::create(b, TypeRange{}, valid, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifValid.getThenRegion().front());
      Value h = arith::AddIOp::create(b, head,
                                      arith::RemUIOp::create(b, r, group));
      Value position = arith::DivUIOp::create(b, r, group);
      // Row (b, h, position) of [B, Hq, Sq]: LSE's index, and of the
      // partial buffers within a split.
      Value statRow = arith::AddIOp::create(
          b,
          arith::MulIOp::create(
              b,
              arith::AddIOp::create(b, arith::MulIOp::create(b, batchIdx, headsQ),
                                    h),
              seqQ),
          position);
      auto ifSingle = scf::IfOp::create(b, TypeRange{}, single, true);
      {
        // One split: O in the dtype and layout of Q, LSE +inf for a row
        // with no key (the op's contract).
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(&ifSingle.getThenRegion().front());
        Value oRow = arith::AddIOp::create(
            b, operandBase("o", h),
            arith::MulIOp::create(b, position, idx("o_stride_s")));
        for (int64_t n = 0; n < nTilesDv; ++n)
          storePair(b, values[2 * n], values[2 * n + 1], s.elementType, out,
                    ValueRange{arith::AddIOp::create(
                        b, oRow, arith::AddIOp::create(b, twoT, cIdx(b, 8 * n)))});
        auto ifLead = scf::IfOp::create(b, TypeRange{}, isLeader, false);
        b.setInsertionPointToStart(&ifLead.getThenRegion().front());
        Value empty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ,
                                            rowLse, negInf);
        memref::StoreOp::create(
            b, arith::SelectOp::create(b, empty, cF32(b, INFINITY), rowLse),
            lse, ValueRange{statRow});
      }
      {
        // Several: split-major [splits][B * Hq * Sq] rows of Dv f32.
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(&ifSingle.getElseRegion().front());
        Value partialRow = arith::AddIOp::create(
            b,
            arith::MulIOp::create(
                b, split,
                arith::MulIOp::create(
                    b, arith::MulIOp::create(b, batch, headsQ), seqQ)),
            statRow);
        Value oRow =
            arith::MulIOp::create(b, partialRow, cIdx(b, s.headDimV));
        for (int64_t n = 0; n < nTilesDv; ++n) {
          Value pair = vector::FromElementsOp::create(
              b, f32x2, ValueRange{values[2 * n], values[2 * n + 1]});
          vector::StoreOp::create(
              b, pair, outPartial,
              ValueRange{arith::AddIOp::create(
                  b, oRow, arith::AddIOp::create(b, twoT, cIdx(b, 8 * n)))},
              /*nontemporal=*/false, llvm::MaybeAlign(8));
        }
        auto ifLead = scf::IfOp::create(b, TypeRange{}, isLeader, false);
        b.setInsertionPointToStart(&ifLead.getThenRegion().front());
        memref::StoreOp::create(b, rowLse, lsePartial, ValueRange{partialRow});
      }
    }
  gpu::ReturnOp::create(b);
}

} // namespace

void mlir::flash::buildSm80DecodeKernel(gpu::GPUFuncOp func,
                                        const KernelSpec &spec) {
  Sm80DecodeBuilder(func, spec).build();
}
