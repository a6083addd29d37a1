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

/// The integer view of a float type's values (an integer vector for a
/// float vector) and its sign-bit masks.
struct SignBits {
  PatternRewriter &rewriter;
  Location loc;
  IntegerType elt;
  Type bits;

  SignBits(PatternRewriter &rewriter, Location loc, Type floatType)
      : rewriter(rewriter), loc(loc),
        elt(IntegerType::get(floatType.getContext(),
                             getElementTypeOrSelf(floatType)
                                 .getIntOrFloatBitWidth())),
        bits(elt) {
    if (auto vec = dyn_cast<VectorType>(floatType))
      bits = vec.clone(elt);
  }

  Value asBits(Value x) {
    return arith::BitcastOp::create(rewriter, loc, bits, x);
  }

  /// Every bit but the sign (`sign` false), or the sign bit alone.
  Value mask(bool sign) {
    unsigned width = elt.getWidth();
    TypedAttr attr = rewriter.getIntegerAttr(
        elt, sign ? APInt::getSignMask(width) : APInt::getSignedMaxValue(width));
    if (auto vec = dyn_cast<VectorType>(bits))
      attr = DenseElementsAttr::get(vec, attr);
    return arith::ConstantOp::create(rewriter, loc, bits, attr);
  }

  /// x's bits and'ed with mask(sign); one statement per op, so that the
  /// IR does not depend on the order arguments are evaluated in.
  Value keep(Value x, bool sign) {
    Value xBits = asBits(x);
    Value m = mask(sign);
    return arith::AndIOp::create(rewriter, loc, xBits, m);
  }
};

/// math.absf and math.copysign as the sign bit's masks: exact for every
/// value (NaNs keep their payload), and plain integer ops on every target;
/// convert-gpu-to-nvvm refuses llvm.intr.fabs / copysign and would call
/// libdevice instead. (ptxas still sees abs.f32: LLVM folds the mask.)
struct AbsFToBits : OpRewritePattern<math::AbsFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::AbsFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isFloatLike(op.getType()))
      return failure();
    SignBits bits(rewriter, op.getLoc(), op.getType());
    Value abs = bits.keep(op.getOperand(), /*sign=*/false);
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
    SignBits bits(rewriter, op.getLoc(), op.getType());
    Value mag = bits.keep(op.getLhs(), /*sign=*/false);
    Value sgn = bits.keep(op.getRhs(), /*sign=*/true);
    Value r = arith::OrIOp::create(rewriter, op.getLoc(), mag, sgn);
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
