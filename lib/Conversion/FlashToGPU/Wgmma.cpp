//===- Wgmma.cpp - warpgroup MMA (sm_90a) on swizzled tiles ---------------===//
#include "Wgmma.h"
#include "Fragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <cassert>
#include <string>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::wgmma;

/// Descriptor fields (PTX ISA, "Matrix Descriptor Format"): start address
/// >> 4 in bits 0-13, leading-dimension byte offset >> 4 in 16-29, stride
/// byte offset >> 4 in 32-45, the swizzle mode in 62-63 (1 = 128 bytes,
/// 2 = 64 bytes, 3 = 32 bytes).
static Value descriptor(ImplicitLocOpBuilder &b, Value addr, int64_t leading,
                        int64_t stride, int64_t rowBytes = swizzle::kRowBytes) {
  assert((rowBytes == swizzle::kRowBytes ||
          rowBytes == swizzle::kNarrowRowBytes ||
          rowBytes == swizzle::kNarrowestRowBytes) &&
         "a 128-, 64- or 32-byte swizzle");
  Type i64 = b.getI64Type();
  auto c = [&](int64_t v) {
    return Value(arith::ConstantIntOp::create(b, i64, v));
  };
  uint64_t mode = rowBytes == swizzle::kRowBytes        ? 1
                  : rowBytes == swizzle::kNarrowRowBytes ? 2
                                                         : 3;
  uint64_t fields = (uint64_t(leading >> 4) << 16) |
                    (uint64_t(stride >> 4) << 32) | (mode << 62);
  Value start = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, addr, c(4)), c(0x3FFF));
  return arith::OrIOp::create(b, start, c(int64_t(fields)));
}

Value wgmma::kMajorDescriptor(ImplicitLocOpBuilder &b, Value addr,
                              int64_t rowBytes) {
  // Swizzled K-major layouts do not use the leading offset; it is 1 by
  // convention. The stride is one 8-row atom.
  return descriptor(b, addr, 16, 8 * rowBytes, rowBytes);
}

Value wgmma::mnMajorDescriptor(ImplicitLocOpBuilder &b, Value addr,
                               int64_t blockBytes) {
  return descriptor(b, addr, blockBytes, swizzle::kAtomBytes);
}

Value wgmma::advance(ImplicitLocOpBuilder &b, Value desc, int64_t bytes) {
  if (bytes == 0)
    return desc;
  return arith::AddIOp::create(
      b, desc, arith::ConstantIntOp::create(b, b.getI64Type(), bytes >> 4));
}

/// The `{$first, ..., $first+count-1}` operand list of an asm string.
static std::string registerList(int64_t first, int64_t count) {
  std::string s = "{";
  for (int64_t i = 0; i < count; ++i)
    s += (i ? ", $" : "$") + std::to_string(first + i);
  return s + "}";
}

/// Emits one wgmma.mma_async as inline PTX. The N/2 accumulators are
/// outputs tied to inputs; `aOperand` is "$k" for a descriptor or a
/// register list; `extra` are the operands after the accumulators.
static SmallVector<Value> emitMma(ImplicitLocOpBuilder &b, ArrayRef<Value> acc,
                                  ArrayRef<Value> extra,
                                  StringRef extraConstraints, int64_t n,
                                  Type elementType, bool accumulate,
                                  bool registerA, bool transposeA,
                                  bool transposeB) {
  int64_t regs = n / 2;
  Type f32 = b.getF32Type();
  SmallVector<Value> inputs;
  if (acc.empty()) {
    // Without `accumulate` the hardware ignores D's old value.
    Value undef = LLVM::UndefOp::create(b, f32);
    inputs.assign(regs, undef);
  } else {
    assert(int64_t(acc.size()) == regs && "wrong accumulator count");
    inputs.append(acc.begin(), acc.end());
  }
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i)
    constraints += "=f,";
  for (int64_t i = 0; i < regs; ++i)
    constraints += std::to_string(i) + ",";
  constraints += extraConstraints.str();
  inputs.append(extra.begin(), extra.end());

  // Operands after the tied accumulators: A (descriptor or four registers),
  // the B descriptor.
  int64_t next = 2 * regs;
  std::string aOperand = registerA ? registerList(next, 4)
                                   : "$" + std::to_string(next);
  next += registerA ? 4 : 1;
  std::string bOperand = "$" + std::to_string(next);
  bool e4m3 = isa<Float8E4M3FNType>(elementType);
  StringRef ty = e4m3 ? "e4m3" : elementType.isBF16() ? "bf16" : "f16";
  // 8-bit operands are K-major only: their wgmma has no transpose
  // immediates.
  assert((!e4m3 || (!transposeA && !transposeB)) && "e4m3 is K-major only");
  std::string transposes =
      e4m3 ? "" : std::string(registerA ? "" : transposeA ? ", 1" : ", 0") +
                      (transposeB ? ", 1" : ", 0");
  // scale-d is a predicate: 0 makes D = A·B.
  std::string ptx = "{\n.reg .pred p;\nsetp.ne.b32 p, " +
                    std::to_string(accumulate ? 1 : 0) + ", 0;\n" +
                    "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
                    "k" + std::to_string(kStepElements(elementType)) + ".f32." +
                    ty.str() + "." + ty.str() + " " + registerList(0, regs) +
                    ", " + aOperand + ", " + bOperand + ", p, 1, 1" +
                    transposes + ";\n}";
  SmallVector<Type> fields(regs, f32);
  auto resultTy = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
  auto asmOp = LLVM::InlineAsmOp::create(
      b, resultTy, inputs, ptx, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  SmallVector<Value> out;
  for (int64_t i = 0; i < regs; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, asmOp.getResult(0),
                                               ArrayRef<int64_t>{i}));
  return out;
}

SmallVector<Value> wgmma::mmaShared(ImplicitLocOpBuilder &b,
                                    ArrayRef<Value> acc, Value descA,
                                    Value descB, int64_t n, Type elementType,
                                    bool accumulate, bool transposeA,
                                    bool transposeB) {
  return emitMma(b, accumulate ? acc : ArrayRef<Value>{}, {descA, descB},
                 "l,l", n, elementType, accumulate, /*registerA=*/false,
                 transposeA, transposeB);
}

SmallVector<Value> wgmma::mmaRegisterA(ImplicitLocOpBuilder &b,
                                       ArrayRef<Value> acc,
                                       ArrayRef<Value> aRegs, Value descB,
                                       int64_t n, Type elementType,
                                       bool accumulate, bool transposeB) {
  assert(aRegs.size() == 4 && "A takes four registers");
  SmallVector<Value> extra(aRegs.begin(), aRegs.end());
  extra.push_back(descB);
  return emitMma(b, accumulate ? acc : ArrayRef<Value>{}, extra, "r,r,r,r,l",
                 n, elementType, accumulate, /*registerA=*/true,
                 /*transposeA=*/false, transposeB);
}

SmallVector<Value> wgmma::productKMajor(ImplicitLocOpBuilder &b, Value descA,
                                        int64_t aRows, Value descB, int64_t n,
                                        int64_t depth, Type elementType,
                                        int64_t rowBytes, int64_t bRows) {
  SmallVector<Value> acc;
  for (int64_t kk = 0; kk < depth / kStepElements(elementType); ++kk)
    acc = mmaShared(b, acc, advance(b, descA, kStepBytes(kk, aRows, rowBytes)),
                    advance(b, descB, kStepBytes(kk, bRows ? bRows : n,
                                                 rowBytes)),
                    n,
                    elementType,
                    /*accumulate=*/kk > 0, /*transposeA=*/false,
                    /*transposeB=*/false);
  commitGroup(b);
  return acc;
}

SmallVector<Value> wgmma::toFragments(ImplicitLocOpBuilder &b,
                                      ArrayRef<Value> regs) {
  SmallVector<Value> frags;
  for (size_t n = 0; n < regs.size() / 4; ++n) {
    Value f = frag::accZero(b);
    for (int64_t e = 0; e < 4; ++e)
      f = frag::accSet(b, f, regs[4 * n + e], e / 2, e % 2);
    frags.push_back(f);
  }
  return frags;
}

SmallVector<Value> wgmma::fromFragments(ImplicitLocOpBuilder &b,
                                        ArrayRef<Value> frags) {
  SmallVector<Value> regs;
  for (Value f : frags)
    for (int64_t e = 0; e < 4; ++e)
      regs.push_back(frag::accGet(b, f, e / 2, e % 2));
  return regs;
}

void wgmma::fence(ImplicitLocOpBuilder &b) { NVVM::WgmmaFenceAlignedOp::create(b); }

void wgmma::commitGroup(ImplicitLocOpBuilder &b) {
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
}

void wgmma::waitGroup(ImplicitLocOpBuilder &b, int64_t pending) {
  NVVM::WgmmaWaitGroupSyncOp::create(b, pending);
}

/// The results of a side-effecting asm `body` over `operands` (one per
/// type of `types`, in a literal struct).
static SmallVector<Value> sideEffectingAsm(ImplicitLocOpBuilder &b,
                                           ArrayRef<Type> types,
                                           ValueRange operands,
                                           StringRef body,
                                           StringRef constraints) {
  auto resultTy = LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  auto asmOp = LLVM::InlineAsmOp::create(
      b, resultTy, operands, body, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
  SmallVector<Value> out;
  for (size_t i = 0; i < types.size(); ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, asmOp.getResult(0),
                                               ArrayRef<int64_t>{int64_t(i)}));
  return out;
}

SmallVector<Value> wgmma::waitGroupThenCopy(ImplicitLocOpBuilder &b,
                                            int64_t pending, Value token,
                                            ArrayRef<Value> values) {
  assert(!values.empty() && token.getType().isInteger(32) &&
         "i32 registers and an i32 token");
  int64_t n = values.size();
  std::string wait =
      "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";\n";
  // The labels are local to the braces' block (as in MLIR's own mbarrier
  // wait loops), so the asm may appear several times in one kernel.
  std::string body = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                     std::to_string(n) +
                     ", -1;\n@p bra.uni FF_WAIT_A;\n" + wait +
                     "bra.uni FF_WAIT_J;\nFF_WAIT_A:\n" + wait + "FF_WAIT_J:\n";
  std::string constraints;
  SmallVector<Type> types;
  for (int64_t i = 0; i < n; ++i) {
    assert(values[i].getType().isInteger(32) && "i32 registers");
    body += "mov.b32 $" + std::to_string(i) + ", $" +
            std::to_string(n + 1 + i) + ";\n";
    constraints += "=r,";
    types.push_back(values[i].getType());
  }
  body += "}";
  constraints += "r";
  for (int64_t i = 0; i < n; ++i)
    constraints += ",r";
  SmallVector<Value> operands{token};
  operands.append(values.begin(), values.end());
  return sideEffectingAsm(b, types, operands, body, constraints);
}

SmallVector<Value> wgmma::pinRegisters(ImplicitLocOpBuilder &b,
                                       ArrayRef<Value> values) {
  if (values.empty())
    return {};
  std::string constraints;
  SmallVector<Type> types;
  for (Value v : values) {
    types.push_back(v.getType());
    constraints += v.getType().isF32() ? "=f," : "=r,";
  }
  for (size_t i = 0; i < values.size(); ++i)
    constraints += std::to_string(i) + (i + 1 < values.size() ? "," : "");
  return sideEffectingAsm(b, types, values, "", constraints);
}
