//===- Fp8Verify.cpp - the FP8 rules of the flash ops ---------------------===//
//
// flash.attention takes f8E4M3FN Q, K, V with f32 descale operands, and
// flash.attention_kvcache an f8E4M3FN cache with f32 descales of K and V
// (FlashOps.td states both semantics); every other FP8 combination is
// refused here with the reason, rather than by a type constraint that would
// only list the accepted types. Both ops take descales of the same shapes,
// checked by the one verifyDescale below.
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
/// heads), or, where `blockRows` is given (flash.attention), [B, H,
/// ceil(seq / blockRows)] (per block of the sequence); a constant one must be
/// positive and finite, since a zero or negative factor is always a caller's
/// mistake (a runtime value is checked by the runtime and the Python API).
static LogicalResult verifyDescale(Operation *op, StringRef name, Value d,
                                   int64_t batch, int64_t heads,
                                   StringRef headsName, int64_t seq = 0,
                                   int64_t blockRows = 0) {
  auto type = cast<RankedTensorType>(d.getType());
  SmallVector<int64_t> perHead = {batch, heads};
  SmallVector<int64_t> perBlock;
  if (blockRows)
    perBlock = {batch, heads,
                ShapedType::isDynamic(seq)
                    ? ShapedType::kDynamic
                    : static_cast<int64_t>(llvm::divideCeil(seq, blockRows))};
  bool ok = type.getRank() == 0 ||
            compatibleShape(type.getShape(), perHead) ||
            (blockRows && compatibleShape(type.getShape(), perBlock));
  if (!ok) {
    InFlightDiagnostic diag = op->emitOpError();
    diag << "'" << name << "' must have shape [] (per tensor) or "
         << shapeStr(perHead) << " ([B, " << headsName << "], per head)";
    if (blockRows)
      diag << " or " << shapeStr(perBlock) << " ([B, " << headsName
           << ", ceil(S / " << blockRows << ")], per block)";
    return diag << ", got " << shapeStr(type.getShape());
  }
  DenseFPElementsAttr values;
  if (matchPattern(d, m_Constant(&values)))
    for (APFloat x : values.getValues<APFloat>()) {
      double v = x.convertToDouble();
      if (!(v > 0.0 && std::isfinite(v)))
        return op->emitOpError() << "'" << name
                                 << "' must be positive and finite, got "
                                 << num(v);
    }
  return success();
}

/// `descale_block_size`: [BQ, BK], both positive, and only with a per-block
/// descale.
static LogicalResult verifyDescaleBlocks(AttentionOp op) {
  DenseI64ArrayAttr size = op.getDescaleBlockSizeAttr();
  if (!size)
    return success();
  if (!op.hasBlockDescales())
    return op.emitOpError()
           << "'descale_block_size' is given but no descale is per block "
              "([B, H, N])";
  if (size.size() != 2)
    return op.emitOpError()
           << "'descale_block_size' must have 2 elements [BQ, BK], got "
           << size.size();
  if (size[0] <= 0 || size[1] <= 0)
    return op.emitOpError() << "'descale_block_size' must be positive, got ["
                            << size[0] << ", " << size[1] << "]";
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
    return verifyDescaleBlocks(op);
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
  Operation *o = op.getOperation();
  if (failed(verifyDescaleBlocks(op)))
    return failure();
  auto [bq, bk] = op.getDescaleBlocks();
  if (failed(verifyDescale(o, "q_descale", qd, sz.batch, sz.headsQ, "Hq",
                           sz.seqQ, bq)) ||
      failed(verifyDescale(o, "k_descale", kd, sz.batch, sz.headsKV, "Hkv",
                           sz.seqK, bk)) ||
      failed(verifyDescale(o, "v_descale", vd, sz.batch, sz.headsKV, "Hkv",
                           sz.seqK, bk)))
    return failure();
  return success();
}

LogicalResult verifyKVCacheFp8Types(AttentionKVCacheOp op) {
  std::pair<StringRef, Value> operands[] = {
      {"query", op.getQuery()},         {"key_cache", op.getKeyCache()},
      {"value_cache", op.getValueCache()}, {"key_new", op.getKeyNew()},
      {"value_new", op.getValueNew()}};
  for (auto [name, v] : operands)
    if (v && isa<Float8E5M2Type>(getElementTypeOrSelf(v)))
      return op.emitOpError()
             << "'" << name
             << "' element type f8E5M2 is not supported: an FP8 KV cache is "
                "f8E4M3FN (e4m3's third mantissa bit is what attention "
                "needs; there are no e5m2 kernels)";
  Type qElt = getElementTypeOrSelf(op.getQuery());
  if (isa<Float8E4M3FNType>(qElt))
    return op.emitOpError()
           << "'query' has FP8 element type f8E4M3FN: flash.attention_kvcache "
              "takes an FP8 cache with an f16 or bf16 query (FP8 Q is "
              "flash.attention's descale(...) form)";
  Type kElt = getElementTypeOrSelf(op.getKeyCache()),
       vElt = getElementTypeOrSelf(op.getValueCache());
  bool kFp8 = isa<Float8E4M3FNType>(kElt), vFp8 = isa<Float8E4M3FNType>(vElt);
  bool anyDescale = op.getKDescale() || op.getVDescale();
  if (kFp8 != vFp8)
    return op.emitOpError()
           << "'key_cache' (" << kElt << ") and 'value_cache' (" << vElt
           << ") must both be f8E4M3FN or both in the type of 'query'";
  if (!kFp8) {
    if (anyDescale)
      return op.emitOpError() << "'descale' operands are only for an "
                                 "f8E4M3FN cache, got "
                              << kElt;
    return success();
  }
  if (!op.getKDescale() || !op.getVDescale())
    return op.emitOpError()
           << "an f8E4M3FN cache needs both 'k_descale' and 'v_descale' (the "
              "f32 factors that dequantise it), got "
           << (anyDescale ? "only one" : "none");
  if (!qElt.isF16() && !qElt.isBF16())
    return op.emitOpError() << "'query' element type " << qElt
                            << " must be bf16 or f16 with an f8E4M3FN cache "
                               "(O is in its type)";
  for (auto [name, v] : ArrayRef(operands).drop_front(3))
    if (v && getElementTypeOrSelf(v) != qElt)
      return op.emitOpError()
             << "'" << name << "' element type " << getElementTypeOrSelf(v)
             << " must be the type of 'query' (" << qElt
             << "): new rows are quantised into the f8E4M3FN cache as they "
                "are appended";
  return success();
}

LogicalResult verifyKVCacheFp8Descales(AttentionKVCacheOp op) {
  if (!op.hasFp8Cache())
    return success();
  Operation *o = op.getOperation();
  int64_t b = op.getBatch(), hkv = op.getHeadsKV();
  if (failed(verifyDescale(o, "k_descale", op.getKDescale(), b, hkv, "Hkv")) ||
      failed(verifyDescale(o, "v_descale", op.getVDescale(), b, hkv, "Hkv")))
    return failure();
  return success();
}
} // namespace mlir::flash::detail
