//===- Fp8Verify.cpp - the FP8 rules of the flash ops ---------------------===//
//
// flash.attention takes f8E4M3FN Q, K, V with f32 descale operands
// (FlashOps.td states the semantics); every other FP8 combination is refused
// here with the reason, rather than by a type constraint that would only
// list the accepted types.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "VerifierUtils.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::detail;

static bool isFp8Type(Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); }

LogicalResult mlir::flash::detail::refuseFp8(
    Operation *op, ArrayRef<std::pair<StringRef, Value>> operands,
    StringRef why) {
  for (auto [name, v] : operands)
    if (v && isFp8Type(getElementTypeOrSelf(v)))
      return op->emitOpError() << "'" << name << "' has FP8 element type "
                               << getElementTypeOrSelf(v) << ": " << why;
  return success();
}

/// A descale is [] (per tensor) or [B, H] (per head, H the operand's own
/// heads); a constant one must be positive and finite, since a zero or
/// negative factor is always a caller's mistake (a runtime value is checked
/// by the runtime and the Python API).
static LogicalResult verifyDescale(AttentionOp op, StringRef name, Value d,
                                   int64_t batch, int64_t heads,
                                   StringRef headsName) {
  auto type = cast<RankedTensorType>(d.getType());
  SmallVector<int64_t> perHead = {batch, heads};
  if (type.getRank() != 0 && !compatibleShape(type.getShape(), perHead))
    return op.emitOpError() << "'" << name
                            << "' must have shape [] (per tensor) or "
                            << shapeStr(perHead) << " ([B, " << headsName
                            << "], per head), got " << shapeStr(type.getShape());
  DenseFPElementsAttr values;
  if (matchPattern(d, m_Constant(&values)))
    for (APFloat x : values.getValues<APFloat>()) {
      double v = x.convertToDouble();
      if (!(v > 0.0 && std::isfinite(v)))
        return op.emitOpError() << "'" << name
                                << "' must be positive and finite, got "
                                << num(v);
    }
  return success();
}

namespace mlir::flash::detail {
LogicalResult verifyAttentionFp8(AttentionOp op, const AttentionSizes &sz) {
  Type elt = getElementTypeOrSelf(op.getQuery());
  Value qd = op.getQDescale(), kd = op.getKDescale(), vd = op.getVDescale();
  bool anyDescale = qd || kd || vd;
  if (isa<Float8E5M2Type>(elt))
    return op.emitOpError()
           << "'query' element type f8E5M2 is not supported: FP8 attention "
              "takes f8E4M3FN (e4m3's third mantissa bit is what attention "
              "needs; there are no e5m2 kernels)";
  if (!isa<Float8E4M3FNType>(elt)) {
    if (anyDescale)
      return op.emitOpError() << "'descale' operands are only for f8E4M3FN "
                                 "Q, K and V, got "
                              << elt;
    return success();
  }
  if (!qd || !kd || !vd)
    return op.emitOpError()
           << "f8E4M3FN Q, K and V need all three of 'q_descale', "
              "'k_descale' and 'v_descale' (the f32 factors that dequantise "
              "them), got "
           << (anyDescale ? "only some" : "none");
  Type outElt = getElementTypeOrSelf(op.getOutput());
  if (!outElt.isBF16() && !outElt.isF16())
    return op.emitOpError() << "'output' element type " << outElt
                            << " must be bf16 or f16 for f8E4M3FN inputs";
  if (op.isVarlen())
    return op.emitOpError() << "varlen with FP8 operands is not supported yet "
                               "(the descales would be per sequence)";
  if (cast<AttentionVariantInterface>(op.getOperation()).hasDropout())
    return op.emitOpError()
           << "dropout with FP8 operands is not supported (FP8 attention is "
              "for inference)";
  if (failed(verifyDescale(op, "q_descale", qd, sz.batch, sz.headsQ, "Hq")) ||
      failed(verifyDescale(op, "k_descale", kd, sz.batch, sz.headsKV, "Hkv")) ||
      failed(verifyDescale(op, "v_descale", vd, sz.batch, sz.headsKV, "Hkv")))
    return failure();
  return success();
}
} // namespace mlir::flash::detail
