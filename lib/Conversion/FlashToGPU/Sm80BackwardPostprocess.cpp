//===- Sm80BackwardPostprocess.cpp - gradients into the operands' dtype ---===//
//
// The main backward kernel leaves dQ in an f32 accumulator (atomics) and
// dK, dV as one slice per query head. This kernel writes the results in the
// operands' dtype and layouts: grad_q from dq_accum (not in deterministic
// mode, where the dQ kernel writes grad_q itself), and grad_k / grad_v of
// kv head h as the f32 sum of the slices of its G = Hq / Hkv query heads.
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
    int64_t d = s.headDim;
    auto loop = scf::ForOp::create(b, tid, cIdx(b, s.blockM * d / 8),
                                   cIdx(b, s.threads()));
    b.setInsertionPointToStart(loop.getBody());
    Value e = loop.getInductionVar();
    Value row = arith::AddIOp::create(
        b, rowStart, arith::DivUIOp::create(b, e, cIdx(b, d / 8)));
    Value col = arith::MulIOp::create(
        b, arith::RemUIOp::create(b, e, cIdx(b, d / 8)), cIdx(b, 8));
    auto vecTy = VectorType::get({8}, s.elementType);
    auto f32x8 = VectorType::get({8}, b.getF32Type());
    auto load = [&](Type ty, StringRef name, Value at) {
      return Value(vector::LoadOp::create(b, cast<VectorType>(ty),
                                          arg.lookup(name), ValueRange{at},
                                          /*nontemporal=*/false, llvm::Align(16)));
    };
    auto store = [&](Value v, StringRef name, Value at) {
      vector::StoreOp::create(b, arith::TruncFOp::create(b, vecTy, v),
                              arg.lookup(name), ValueRange{at},
                              /*nontemporal=*/false, llvm::Align(16));
    };
    auto when = [&](Value cond, function_ref<void()> body) {
      auto ifOp = scf::IfOp::create(b, TypeRange{}, cond, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      body();
    };
    auto slt = [&](Value x, Value y) {
      return Value(arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y));
    };
    auto at = [&](Value base, StringRef strideName) {
      return Value(arith::AddIOp::create(
          b, base,
          arith::AddIOp::create(b, arith::MulIOp::create(b, row, idx(strideName)), col)));
    };
    // Offset of (slice, row, col) in a contiguous [.., seq, d] buffer.
    auto packed = [&](Value slice, Value seq) {
      return Value(arith::AddIOp::create(
          b,
          arith::MulIOp::create(
              b, arith::AddIOp::create(b, arith::MulIOp::create(b, slice, seq), row),
              cIdx(b, d)),
          col));
    };
    if (!s.deterministic)
      when(slt(row, seqQ), [&] {
        Value slice = arith::AddIOp::create(
            b, arith::MulIOp::create(b, batchIdx, headsQ), head);
        store(load(f32x8, "dq_accum", packed(slice, seqQ)), "grad_q",
              at(operandBase("grad_q", head), "grad_q_stride_s"));
      });
    Value kvRow = arith::AndIOp::create(b, slt(head, headsKV), slt(row, seqK));
    when(kvRow, [&] {
      // The group's first query-head slice.
      Value first =
          arith::AddIOp::create(b, arith::MulIOp::create(b, batchIdx, headsQ),
                                arith::MulIOp::create(b, head, group));
      for (StringRef name : {"dk", "dv"}) {
        Value zero = arith::ConstantOp::create(
            b, f32x8, DenseElementsAttr::get(f32x8, b.getF32FloatAttr(0.0f)));
        auto sum = scf::ForOp::create(b, cIdx(b, 0), group, cIdx(b, 1),
                                      ValueRange{zero});
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(sum.getBody());
          Value slice = arith::AddIOp::create(b, first, sum.getInductionVar());
          Value v = load(vecTy, name, packed(slice, seqK));
          scf::YieldOp::create(
              b, ValueRange{arith::AddFOp::create(
                     b, sum.getRegionIterArgs()[0],
                     arith::ExtFOp::create(b, f32x8, v))});
        }
        std::string out = name == "dk" ? "grad_k" : "grad_v";
        store(sum.getResult(0), out,
              at(operandBase(out, head), out + "_stride_s"));
      }
    });
    b.setInsertionPointAfter(loop);
    gpu::ReturnOp::create(b);
  }
};

} // namespace

void mlir::flash::buildSm80BackwardPostprocessKernel(gpu::GPUFuncOp func,
                                                     const KernelSpec &spec) {
  Sm80BackwardPostprocessBuilder(func, spec).build();
}
