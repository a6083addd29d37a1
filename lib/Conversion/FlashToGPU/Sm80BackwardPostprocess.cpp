//===- Sm80BackwardPostprocess.cpp - gradients into the operands' dtype ---===//
//
// The main backward kernel leaves dQ in an f32 accumulator (atomics) and
// dK, dV as one slice per query head. This kernel writes the results in the
// operands' dtype and layouts: grad_q from dq_accum (not in deterministic
// mode, where the dQ kernel writes grad_q itself), and grad_k / grad_v of
// kv head h as the f32 sum of the slices of its G = Hq / Hkv query heads.
// The sm90 recipe's dense backward (KernelSpec::dqTiles) leaves dQ in
// tiles instead, in its accumulators' order. Its main kernels, dense or
// packed, write grad_k / grad_v themselves without GQA
// (KernelSpec::mainWritesKeyGradients): then only dQ is converted here.
// Block (x, h, b) covers rows [x block_m, (x + 1) block_m) of query head h
// and, when h < Hkv, of kv head h: grid = (ceil(max(Sq, Sk) / block_m), Hq, B).
// Memory-bound: each thread moves 16-byte chunks (8 elements; the rows of
// the gradients are 16-byte aligned, docs/KERNEL_ABI.md), consecutive
// threads consecutive chunks, so global accesses coalesce.
//
//===----------------------------------------------------------------------===//
#include "Fragments.h"
#include "KernelBuilderBase.h"
#include "Recipes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class Sm80BackwardPostprocessBuilder : KernelBuilderBase {
public:
  Sm80BackwardPostprocessBuilder(gpu::GPUFuncOp func, const KernelSpec &spec)
      : KernelBuilderBase(func, spec) {}

  void build() {
    readArguments();
    Value rowStart = arith::MulIOp::create(
        b, gpu::BlockIdOp::create(b, gpu::Dimension::x), cIdx(b, s.blockM));
    Value headsKV = idx("heads_kv");
    Value group = arith::DivUIOp::create(b, headsQ, headsKV);
    int64_t d = s.headDim, rowChunks = d / 8;
    int64_t chunks = s.blockM * rowChunks;
    int64_t steps = llvm::divideCeil(chunks, s.threads());
    auto vecTy = VectorType::get({8}, s.elementType);
    auto f32x8 = VectorType::get({8}, b.getF32Type());
    auto slt = [&](Value x, Value y) {
      return Value(arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y));
    };
    auto load = [&](VectorType ty, StringRef name, Value at) {
      return Value(vector::LoadOp::create(b, ty, arg.lookup(name), ValueRange{at},
                                          /*nontemporal=*/false, llvm::Align(16)));
    };
    // Offset of (slice, row, col) in a contiguous [.., seq, width] buffer
    // (width d unless given: dv's rows are Dv wide).
    auto packed = [&](Value slice, Value seq, Value row, Value col,
                      int64_t width = 0) {
      return Value(arith::AddIOp::create(
          b,
          arith::MulIOp::create(
              b, arith::AddIOp::create(b, arith::MulIOp::create(b, slice, seq), row),
              cIdx(b, width ? width : d)),
          col));
    };
    // Where Dv < D the steps walk D's columns; dV's chunks are those below
    // Dv, the others read a clamped column and store nothing.
    int64_t dv = s.headDimV;
    auto dvAt = [&](Value slice, Value seq, Value row, Value col) {
      if (dv == d)
        return packed(slice, seq, row, col);
      return packed(slice, seq, row,
                    arith::MinUIOp::create(b, col, cIdx(b, dv - 8)), dv);
    };
    Value qSlice = arith::AddIOp::create(
        b, arith::MulIOp::create(b, batchIdx, headsQ), head);
    // Blocks of query heads past Hkv only convert dQ; their dK/dV loads
    // read kv head Hkv - 1 (in range) and are not stored.
    Value kvHead = arith::MinUIOp::create(
        b, head, arith::SubIOp::create(b, headsKV, cIdx(b, 1)));
    Value firstSlice =
        arith::AddIOp::create(b, arith::MulIOp::create(b, batchIdx, headsQ),
                              arith::MulIOp::create(b, kvHead, group));
    Value lastQ = arith::SubIOp::create(b, seqQ, cIdx(b, 1));
    Value lastK = arith::SubIOp::create(b, seqK, cIdx(b, 1));

    // Step k of a thread: the 16-byte chunk (row, 8 columns) of the block
    // it takes (consecutive threads, consecutive chunks); `valid` false past
    // the block's chunks, which then read chunk 0.
    struct Step {
      Value row, col, valid, dq, dk, dv;
    };
    auto placeStep = [&](Step &x, int64_t k) {
      Value e = arith::AddIOp::create(b, tid, cIdx(b, k * s.threads()));
      x.valid = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, e,
                                      cIdx(b, chunks));
      e = arith::SelectOp::create(b, x.valid, e, cIdx(b, 0));
      x.row = arith::AddIOp::create(
          b, rowStart, arith::DivUIOp::create(b, e, cIdx(b, rowChunks)));
      x.col = arith::MulIOp::create(
          b, arith::RemUIOp::create(b, e, cIdx(b, rowChunks)), cIdx(b, 8));
    };
    auto when = [&](Value cond, function_ref<void()> body) {
      auto ifOp = scf::IfOp::create(b, TypeRange{}, cond, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      body();
    };
    auto store = [&](Value v, StringRef name, Value row, Value col) {
      Value at = arith::AddIOp::create(
          b, operandBase(name, head),
          arith::AddIOp::create(
              b, arith::MulIOp::create(b, row, idx((name + "_stride_s").str())),
              col));
      vector::StoreOp::create(b, arith::TruncFOp::create(b, vecTy, v),
                              arg.lookup(name), ValueRange{at},
                              /*nontemporal=*/false, llvm::Align(16));
    };
    // The GQA group's other query-head slices added to `sums` (dK and dV
    // of each step), all steps per slice.
    auto sumOtherSlices = [&](ArrayRef<Step> st, ValueRange sums) {
      auto loop = scf::ForOp::create(b, cIdx(b, 1), group, cIdx(b, 1), sums);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value slice = arith::AddIOp::create(b, firstSlice, loop.getInductionVar());
      SmallVector<Value> next;
      for (int64_t k = 0; k < int64_t(st.size()); ++k) {
        Value kRow = arith::MinSIOp::create(b, st[k].row, lastK);
        for (int64_t w = 0; w < 2; ++w) {
          Value v = load(vecTy, w ? "dv" : "dk",
                         w ? dvAt(slice, seqK, kRow, st[k].col)
                           : packed(slice, seqK, kRow, st[k].col));
          next.push_back(arith::AddFOp::create(
              b, loop.getRegionIterArgs()[2 * k + w],
              arith::ExtFOp::create(b, f32x8, v)));
        }
      }
      scf::YieldOp::create(b, next);
      return loop;
    };
    // A step's rows of grad_k and grad_v (only its columns below Dv).
    auto storeKeyRows = [&](const Step &x, Value dkSum, Value dvSum) {
      store(dkSum, "grad_k", x.row, x.col);
      if (dv == d) {
        store(dvSum, "grad_v", x.row, x.col);
        return;
      }
      when(arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x.col,
                                 cIdx(b, dv)),
           [&] { store(dvSum, "grad_v", x.row, x.col); });
    };
    // grad_k / grad_v where the main kernel wrote them itself without GQA
    // (KernelSpec::mainWritesKeyGradients): only with GQA (G > 1), in kv
    // heads' blocks.
    auto keyGradientsWithGQA = [&] {
      SmallVector<Step> st(steps);
      for (int64_t k = 0; k < steps; ++k)
        placeStep(st[k], k);
      Value isKVHead = arith::AndIOp::create(
          b, slt(head, headsKV),
          arith::CmpIOp::create(b, arith::CmpIPredicate::ne, group, cIdx(b, 1)));
      when(isKVHead, [&] {
        SmallVector<Value> sums;
        for (int64_t k = 0; k < steps; ++k) {
          Value kRow = arith::MinSIOp::create(b, st[k].row, lastK);
          sums.push_back(arith::ExtFOp::create(
              b, f32x8,
              load(vecTy, "dk", packed(firstSlice, seqK, kRow, st[k].col))));
          sums.push_back(arith::ExtFOp::create(
              b, f32x8,
              load(vecTy, "dv", dvAt(firstSlice, seqK, kRow, st[k].col))));
        }
        auto loop = sumOtherSlices(st, sums);
        for (int64_t k = 0; k < steps; ++k)
          when(arith::AndIOp::create(b, st[k].valid, slt(st[k].row, seqK)),
               [&] {
                 storeKeyRows(st[k], loop.getResult(2 * k),
                              loop.getResult(2 * k + 1));
               });
      });
    };
    if (s.dqTiles) {
      // dQ tiles (KernelSpec::dqTiles): block x converts tile x of its
      // slice, in the main kernel's fragment order (Sm90Backward.cpp): 64-byte
      // chunks c = ((w * n8 + n) * 32 + 8 warp + g), the four threads t of
      // one (warp, g) of warpgroup w, each [rows g, g + 8] x [columns 2t,
      // 2t + 1] of 8-column fragment n of w's 64 rows x `cols` slice. A chunk
      // is two 8-column row segments. Consecutive threads take consecutive
      // fragments n of the same rows, so that their 16-byte stores of
      // grad_q cover whole rows (taking consecutive chunks, rows g, wrote
      // 16 bytes per row per warp).
      // Blocks past Sq's last tile have none (nor, for Sq = 0, a tile to
      // clamp to).
      struct TileChunk {
        Value row, col, valid, values;
      };
      if (!s.deterministic)
        when(slt(rowStart, seqQ), [&] {
          SmallVector<TileChunk> tileChunks;
          int64_t rowBlocks = s.blockM / 64;
          int64_t cols = d * rowBlocks / (s.warps / 4), n8 = cols / 8;
          int64_t chunksPerTile = s.blockM * d / 16;
          Value tiles = arith::CeilDivUIOp::create(b, seqQ, cIdx(b, s.blockM));
          Value tile = gpu::BlockIdOp::create(b, gpu::Dimension::x);
          Value tileBase = arith::MulIOp::create(
              b, arith::AddIOp::create(b, arith::MulIOp::create(b, qSlice, tiles), tile),
              cIdx(b, s.blockM * d));
          auto f32x16 = VectorType::get({16}, b.getF32Type());
          for (int64_t first = 0; first < chunksPerTile; first += s.threads()) {
            // j = (w * 32 + 8 warp + g) * n8 + n, chunk c = (w * n8 + n)
            // * 32 + 8 warp + g.
            Value j = arith::AddIOp::create(b, tid, cIdx(b, first));
            Value inTile = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, j,
                                                 cIdx(b, chunksPerTile));
            j = arith::SelectOp::create(b, inTile, j, cIdx(b, 0));
            Value n = arith::RemUIOp::create(b, j, cIdx(b, n8));
            Value rowSlot = arith::RemUIOp::create(
                b, arith::DivUIOp::create(b, j, cIdx(b, n8)), cIdx(b, 32));
            Value w = arith::DivUIOp::create(b, j, cIdx(b, 32 * n8));
            Value c = arith::AddIOp::create(
                b,
                arith::MulIOp::create(
                    b,
                    arith::AddIOp::create(
                        b, arith::MulIOp::create(b, w, cIdx(b, n8)), n),
                    cIdx(b, 32)),
                rowSlot);
            Value warpRow = arith::MulIOp::create(
                b, arith::DivUIOp::create(b, rowSlot, cIdx(b, 8)),
                cIdx(b, 16));
            TileChunk ch;
            ch.row = arith::AddIOp::create(
                b, rowStart,
                arith::AddIOp::create(
                    b,
                    arith::MulIOp::create(
                        b, arith::RemUIOp::create(b, w, cIdx(b, rowBlocks)),
                        cIdx(b, 64)),
                    arith::AddIOp::create(
                        b, warpRow,
                        arith::RemUIOp::create(b, rowSlot, cIdx(b, 8)))));
            ch.col = arith::AddIOp::create(
                b,
                arith::MulIOp::create(
                    b, arith::DivUIOp::create(b, w, cIdx(b, rowBlocks)),
                    cIdx(b, cols)),
                arith::MulIOp::create(b, n, cIdx(b, 8)));
            ch.valid = inTile;
            ch.values = load(
                f32x16, "dq_accum",
                arith::AddIOp::create(b, tileBase,
                                      arith::MulIOp::create(b, c, cIdx(b, 16))));
            tileChunks.push_back(ch);
          }
          // Rows g and g + 8 of a chunk: elements 0, 1 (2, 3) of each
          // thread's four.
          for (TileChunk &ch : tileChunks)
            for (int64_t i = 0; i < 2; ++i) {
              Value row = arith::AddIOp::create(b, ch.row, cIdx(b, 8 * i));
              SmallVector<int64_t> pick;
              for (int64_t t = 0; t < 4; ++t)
                pick.append({4 * t + 2 * i, 4 * t + 2 * i + 1});
              Value seg = vector::ShuffleOp::create(b, ch.values, ch.values, pick);
              when(arith::AndIOp::create(b, ch.valid, slt(row, seqQ)),
                   [&] { store(seg, "grad_q", row, ch.col); });
            }
          });

      keyGradientsWithGQA();
      gpu::ReturnOp::create(b);
      return;
    }

    if (s.mainWritesKeyGradients()) {
      // Rows (a packed batch's) whose main kernel wrote grad_k / grad_v
      // itself without GQA: dQ, every step's load first, then the key
      // gradients where there is a group to sum.
      SmallVector<Step> st(steps);
      for (int64_t k = 0; k < steps; ++k) {
        placeStep(st[k], k);
        st[k].dq = load(f32x8, "dq_accum",
                        packed(qSlice, seqQ,
                               arith::MinSIOp::create(b, st[k].row, lastQ),
                               st[k].col));
      }
      for (Step &x : st)
        when(arith::AndIOp::create(b, x.valid, slt(x.row, seqQ)),
             [&] { store(x.dq, "grad_q", x.row, x.col); });
      keyGradientsWithGQA();
      gpu::ReturnOp::create(b);
      return;
    }

    // Every step's loads first (the steps are unrolled; consecutive threads
    // take consecutive chunks): a thread has all its reads in flight at
    // once, which a memory-bound kernel needs. Loads use clamped rows;
    // the stores are predicated.
    SmallVector<Step> st(steps);
    for (int64_t k = 0; k < steps; ++k) {
      placeStep(st[k], k);
      if (!s.deterministic)
        st[k].dq = load(f32x8, "dq_accum",
                        packed(qSlice, seqQ,
                               arith::MinSIOp::create(b, st[k].row, lastQ),
                               st[k].col));
      Value kRow = arith::MinSIOp::create(b, st[k].row, lastK);
      st[k].dk = arith::ExtFOp::create(
          b, f32x8, load(vecTy, "dk", packed(firstSlice, seqK, kRow, st[k].col)));
      st[k].dv = arith::ExtFOp::create(
          b, f32x8, load(vecTy, "dv", dvAt(firstSlice, seqK, kRow, st[k].col)));
    }
    // GQA: the group's other query-head slices, all steps per slice.
    SmallVector<Value> sums;
    for (Step &x : st)
      sums.append({x.dk, x.dv});
    auto loop = sumOtherSlices(st, sums);

    Value isKVHead = slt(head, headsKV);
    for (int64_t k = 0; k < steps; ++k) {
      if (!s.deterministic)
        when(arith::AndIOp::create(b, st[k].valid, slt(st[k].row, seqQ)), [&] {
          store(st[k].dq, "grad_q", st[k].row, st[k].col);
        });
      Value kvRow = arith::AndIOp::create(
          b, st[k].valid, arith::AndIOp::create(b, isKVHead, slt(st[k].row, seqK)));
      when(kvRow, [&] {
        storeKeyRows(st[k], loop.getResult(2 * k), loop.getResult(2 * k + 1));
      });
    }
    gpu::ReturnOp::create(b);
  }
};

} // namespace

void mlir::flash::buildSm80BackwardPostprocessKernel(gpu::GPUFuncOp func,
                                                     const KernelSpec &spec) {
  Sm80BackwardPostprocessBuilder(func, spec).build();
}
