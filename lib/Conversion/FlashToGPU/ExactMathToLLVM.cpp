//===- ExactMathToLLVM.cpp - math ops PTX computes exactly ----------------===//
//
// flash-exact-math-to-llvm (Passes.td): the math ops of inlined score_mod /
// mask_mod regions that are exact without libdevice (fma, absf, copysign)
// become an LLVM intrinsic or integer ops, so that the kernels need no
// libdevice for them.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHEXACTMATHTOLLVM
#include "flashfuse/Conversion/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;

namespace {

bool isFloatLike(Type t) { return isa<FloatType>(getElementTypeOrSelf(t)); }

/// math.fma as llvm.intr.fma (fma.rn), which convert-gpu-to-nvvm keeps;
/// the fastmath flags are dropped (an fma rounds once either way).
struct FmaToIntrinsic : OpRewritePattern<math::FmaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::FmaOp op,
                                PatternRewriter &rewriter) const override {
    if (!isFloatLike(op.getType()))
      return failure();
    rewriter.replaceOpWithNewOp<LLVM::FMAOp>(op, op.getType(),
                                             op->getOperands());
    return success();
  }
};

/// The integer type of x's bits (an integer vector for a float vector).
Type bitsType(Type t) {
  auto elt = cast<FloatType>(getElementTypeOrSelf(t));
  Type bits = IntegerType::get(t.getContext(), elt.getWidth());
  if (auto vec = dyn_cast<VectorType>(t))
    return vec.clone(bits);
  return bits;
}

/// A constant of x's bit type with every element `value`.
Value bitsConstant(PatternRewriter &rewriter, Location loc, Type bits,
                   const APInt &value) {
  auto elt = cast<IntegerType>(getElementTypeOrSelf(bits));
  TypedAttr attr = rewriter.getIntegerAttr(elt, value);
  if (auto vec = dyn_cast<VectorType>(bits))
    attr = DenseElementsAttr::get(vec, attr);
  return arith::ConstantOp::create(rewriter, loc, bits, attr);
}

/// math.absf and math.copysign as the sign bit's masks: exact for every
/// value (NaNs keep their payload), and plain integer ops on every target;
/// convert-gpu-to-nvvm refuses llvm.intr.fabs / copysign and would call
/// libdevice instead.
struct AbsFToBits : OpRewritePattern<math::AbsFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::AbsFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isFloatLike(op.getType()))
      return failure();
    Location loc = op.getLoc();
    Type bits = bitsType(op.getType());
    unsigned width = getElementTypeOrSelf(bits).getIntOrFloatBitWidth();
    Value x = arith::BitcastOp::create(rewriter, loc, bits, op.getOperand());
    Value magnitude = bitsConstant(rewriter, loc, bits,
                                   APInt::getSignedMaxValue(width));
    Value abs = arith::AndIOp::create(rewriter, loc, x, magnitude);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), abs);
    return success();
  }
};

struct CopySignToBits : OpRewritePattern<math::CopySignOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::CopySignOp op,
                                PatternRewriter &rewriter) const override {
    if (!isFloatLike(op.getType()))
      return failure();
    Location loc = op.getLoc();
    Type bits = bitsType(op.getType());
    unsigned width = getElementTypeOrSelf(bits).getIntOrFloatBitWidth();
    Value mag = arith::BitcastOp::create(rewriter, loc, bits, op.getLhs());
    Value sgn = arith::BitcastOp::create(rewriter, loc, bits, op.getRhs());
    Value magnitude = bitsConstant(rewriter, loc, bits,
                                   APInt::getSignedMaxValue(width));
    Value sign = bitsConstant(rewriter, loc, bits,
                              APInt::getSignMask(width));
    Value r = arith::OrIOp::create(
        rewriter, loc, arith::AndIOp::create(rewriter, loc, mag, magnitude),
        arith::AndIOp::create(rewriter, loc, sgn, sign));
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), r);
    return success();
  }
};

struct FlashExactMathToLLVM
    : flash::impl::FlashExactMathToLLVMBase<FlashExactMathToLLVM> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FmaToIntrinsic, AbsFToBits, CopySignToBits>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
