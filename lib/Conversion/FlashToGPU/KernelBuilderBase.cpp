//===- KernelBuilderBase.cpp - arguments, band, masks, scores, dropout ----===//
#include "KernelBuilderBase.h"
#include "Fragments.h"
#include "ModCaptures.h"
#include "Recipes.h"
#include "Swizzle.h"
#include "Wgmma.h"

#include "flashfuse/Conversion/Common/Philox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

KernelBuilderBase::KernelBuilderBase(gpu::GPUFuncOp func, const KernelSpec &spec)
    : func(func), s(spec),
      b(func.getLoc(), OpBuilder::atBlockBegin(&func.getBody().front())) {}

Value KernelBuilderBase::idx(StringRef name) {
  return arith::IndexCastOp::create(b, b.getIndexType(), arg.lookup(name));
}

Value KernelBuilderBase::i32(Value index) {
  return arith::IndexCastOp::create(b, b.getI32Type(), index);
}

Value KernelBuilderBase::asIndex(Value v) {
  return arith::IndexCastOp::create(b, b.getIndexType(), v);
}

Value KernelBuilderBase::asUnsignedIndex(Value v) {
  return arith::IndexCastUIOp::create(b, b.getIndexType(), v);
}

void KernelBuilderBase::setThreadCoordinates(Value threadId) {
  tid = threadId;
  Value c32 = cIdx(b, 32);
  lane = arith::RemUIOp::create(b, tid, c32);
  warp = arith::DivUIOp::create(b, tid, c32);
  g = arith::DivUIOp::create(b, lane, cIdx(b, 4));
  t = arith::RemUIOp::create(b, lane, cIdx(b, 4));
}

Value KernelBuilderBase::readSpecialRegisterOpaquely(StringRef name) {
  // A volatile asm: the NVVM intrinsics are pure, so LLVM would reuse the
  // first read and everything derived from it.
  auto read = LLVM::InlineAsmOp::create(
      b, b.getI32Type(), ValueRange{}, ("mov.u32 $0, %" + name + ";").str(),
      "=r", /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  return asUnsignedIndex(read.getResult(0));
}

Value KernelBuilderBase::loadSharedOpaquely(Value tile, int64_t i) {
  // The word's offset is the instruction's immediate: every load of the
  // tile then takes its one base address (at an address of its own per
  // word, ptxas held, and spilled, each across the loops).
  Value address = arith::TruncIOp::create(b, b.getI32Type(),
                                          byteAddress(tile, {cIdx(b, 0)}));
  std::string text =
      "ld.volatile.shared.u32 $0, [$1+" + std::to_string(4 * i) + "];";
  auto load = LLVM::InlineAsmOp::create(
      b, b.getI32Type(), ValueRange{address}, text, "=r,r",
      /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  return load.getResult(0);
}

void KernelBuilderBase::rereadCoordinates() {
  setThreadCoordinates(readSpecialRegisterOpaquely("tid.x"));
  head = readSpecialRegisterOpaquely("ctaid.y");
  batchIdx = readSpecialRegisterOpaquely("ctaid.z");
}

void KernelBuilderBase::bindArguments() {
  for (auto [i, p] : llvm::enumerate(s.params()))
    arg[StringRef(p).split(':').second] = func.getArgument(i);
}

void KernelBuilderBase::readArguments() {
  bindArguments();
  setThreadCoordinates(gpu::ThreadIdOp::create(b, gpu::Dimension::x));

  head = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  batchIdx = gpu::BlockIdOp::create(b, gpu::Dimension::z);
  headsQ = idx("heads_q");
  headKV = kvHeadOf(head);
  seqQ = idx("seq_q");
  seqK = idx("seq_k");
  diagOffset = s.causal == KernelSpec::Causal::BottomRight
                   ? Value(arith::SubIOp::create(b, seqK, seqQ))
                   : cIdx(b, 0);
  windowLeft = arg.lookup("window_left");
  windowRight = arg.lookup("window_right");
  if (s.dropout && arg.count("dropout_p")) {
    // p * 2^16 is exact in f32 (a power-of-two scaling) and below 2^16; the
    // conversion truncates like the CPU lowering's static_cast.
    Value scaled = arith::MulFOp::create(b, arg.lookup("dropout_p"),
                                         cF32(b, 65536.0f));
    dropoutThreshold = arith::FPToUIOp::create(b, b.getI32Type(), scaled);
  }
}

Value KernelBuilderBase::kvHeadOf(Value h) {
  Value group = arith::DivUIOp::create(b, headsQ, idx("heads_kv"));
  return arith::DivUIOp::create(b, h, group);
}

KernelBuilderBase::GridTile KernelBuilderBase::orderedTile(Value x, Value gx,
                                                           Value y, Value gy,
                                                           Value z, Value gz) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto to32 = [&](Value v) -> Value {
    return arith::IndexCastUIOp::create(b, i32, v);
  };
  auto field = [&](Value v, int64_t shift) -> Value {
    return arith::ShLIOp::create(b, to32(v), cI32(shift));
  };
  Value own = arith::OrIOp::create(
      b, to32(gridTileBlock(x, gx)),
      arith::OrIOp::create(b, field(y, 16), field(z, 24)));
  Value position = arith::AddIOp::create(
      b, x,
      arith::MulIOp::create(
          b, gx, arith::AddIOp::create(b, y, arith::MulIOp::create(b, gy, z))));
  Value base = arg.lookup("kv_tile_order");
  Value address = arith::AddIOp::create(
      b, base,
      arith::MulIOp::create(b, arith::IndexCastUIOp::create(b, i64, position),
                            arith::ConstantIntOp::create(b, i64, 4)));
  auto load = LLVM::InlineAsmOp::create(
      b, i32, ValueRange{base, address, own},
      "{\n\t.reg .pred p;\n\tsetp.ne.u64 p, $1, 0;\n\tmov.b32 $0, $3;\n\t"
      "@p ld.global.nc.b32 $0, [$2];\n\t}",
      "=r,l,l,r", /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  Value entry = load.getResult(0);
  auto clamped = [&](int64_t shift, int64_t mask, Value extent) -> Value {
    Value v = arith::ShRUIOp::create(b, entry, cI32(shift));
    if (mask)
      v = arith::AndIOp::create(b, v, cI32(mask));
    return arith::MinUIOp::create(b, asUnsignedIndex(v),
                                  arith::SubIOp::create(b, extent, cIdx(b, 1)));
  };
  return {clamped(0, 0xffff, gx), clamped(16, 0xff, gy), clamped(24, 0, gz)};
}

KernelBuilderBase::GridTile KernelBuilderBase::orderedTileOfBlock() {
  return orderedTile(gpu::BlockIdOp::create(b, gpu::Dimension::x),
                     gpu::GridDimOp::create(b, gpu::Dimension::x),
                     gpu::BlockIdOp::create(b, gpu::Dimension::y),
                     gpu::GridDimOp::create(b, gpu::Dimension::y),
                     gpu::BlockIdOp::create(b, gpu::Dimension::z),
                     gpu::GridDimOp::create(b, gpu::Dimension::z));
}

KernelBuilderBase::GridTile KernelBuilderBase::rereadOrderedTile() {
  // One statement per op: the IR must not depend on the order C++
  // evaluates arguments in.
  Value x = readSpecialRegisterOpaquely("ctaid.x");
  Value gx = readSpecialRegisterOpaquely("nctaid.x");
  Value y = readSpecialRegisterOpaquely("ctaid.y");
  Value gy = readSpecialRegisterOpaquely("nctaid.y");
  Value z = readSpecialRegisterOpaquely("ctaid.z");
  Value gz = readSpecialRegisterOpaquely("nctaid.z");
  return orderedTile(x, gx, y, gy, z, gz);
}

Value KernelBuilderBase::operandBase(StringRef name, Value h) {
  Value bOff = arith::MulIOp::create(b, batchIdx, idx((name + "_stride_b").str()));
  Value hOff = arith::MulIOp::create(b, h, idx((name + "_stride_h").str()));
  return arith::AddIOp::create(b, bOff, hOff);
}

Value KernelBuilderBase::loadDescale(StringRef name, Value h, Value block) {
  std::string prefix = (name + "_descale").str();
  Value at = arith::AddIOp::create(
      b, arith::MulIOp::create(b, batchIdx, idx(prefix + "_stride_b")),
      arith::MulIOp::create(b, h, idx(prefix + "_stride_h")));
  if (block)
    at = arith::AddIOp::create(
        b, at, arith::MulIOp::create(b, block, idx(prefix + "_stride_n")));
  return memref::LoadOp::create(b, arg.lookup(prefix), ValueRange{at});
}

Value KernelBuilderBase::sliceRowStart(bool keys) {
  return arith::MulIOp::create(
      b, arith::AddIOp::create(b, arith::MulIOp::create(b, batchIdx, headsQ), head),
      keys ? seqK : seqQ);
}

Value KernelBuilderBase::sharedMemoryBytes() {
  auto wg = gpu::AddressSpaceAttr::get(b.getContext(),
                                       gpu::AddressSpace::Workgroup);
  auto bytes = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                               MemRefLayoutAttrInterface(), wg);
  return gpu::DynamicSharedMemoryOp::create(b, bytes);
}

Value KernelBuilderBase::sharedTile(Value bytes, ArrayRef<int64_t> shape,
                                    int64_t offset, Type elt) {
  return sharedTile(bytes, shape, cIdx(b, offset), elt);
}

Value KernelBuilderBase::sharedTile(Value bytes, ArrayRef<int64_t> shape,
                                    Value offset, Type elt) {
  auto wg = gpu::AddressSpaceAttr::get(b.getContext(),
                                       gpu::AddressSpace::Workgroup);
  auto ty = MemRefType::get(shape, elt, MemRefLayoutAttrInterface(), wg);
  return memref::ViewOp::create(b, ty, bytes, offset, ValueRange{});
}

void KernelBuilderBase::issueTileCopies(Value gmem, Value base,
                                        Value rowStride, Value rowStart,
                                        Value rowLimit, Value tile,
                                        ValueRange lead, int64_t rows,
                                        int64_t cols,
                                        SmallVectorImpl<Value> &tokens,
                                        RowCheck check, RowAddress rowAddress,
                                        const PagedRows *paged) {
  // The tile spans whole mma steps; columns past `cols` are zero-filled.
  int64_t width = mmaWidth(cols);
  std::optional<int64_t> validCols;
  if (width != cols)
    validCols = cols;
  issueCopies(
      gmem, base, rowStride, rowStart, rowLimit, tile, rows, width, tokens,
      [&](Value r, int64_t rowDelta, Value c) {
        SmallVector<Value> idx(lead.begin(), lead.end());
        idx.push_back(arith::AddIOp::create(b, r, cIdx(b, rowDelta)));
        idx.push_back(c);
        return idx;
      },
      validCols, check, rowAddress, paged);
}

void KernelBuilderBase::issueCopies(
    Value gmem, Value base, Value rowStride, Value rowStart, Value rowLimit,
    Value tile, int64_t rows, int64_t cols, SmallVectorImpl<Value> &tokens,
    function_ref<SmallVector<Value>(Value r, int64_t rowDelta, Value c)>
        dstIndex,
    std::optional<int64_t> validCols, RowCheck check, RowAddress rowAddress,
    const PagedRows *paged) {
  // 16-byte chunks, spread over the block's threads row-major so that a warp
  // reads whole rows: coalesced global reads.
  int64_t chunksPerRow = cols / 8, chunks = rows * chunksPerRow;
  int64_t threads = s.threads();
  bool wholeRowPasses =
      threads % chunksPerRow == 0 && chunks % threads == 0;
  // A pass of whole rows covers threads / chunksPerRow rows; paged rows
  // take the path below only where no pass crosses a page.
  bool pagesHoldPasses =
      paged && wholeRowPasses &&
      paged->pageSize % (threads / chunksPerRow) == 0 &&
      (rows % paged->pageSize == 0 || paged->pageSize % rows == 0);
  if (check == RowCheck::PerChunk || rowAddress || !wholeRowPasses ||
      (paged && !pagesHoldPasses)) {
    // Paged rows chunk by chunk: each chunk's row finds its page.
    auto pagedRow = [&](Value row) -> Value {
      Value pageSize = cIdx(b, paged->pageSize);
      return arith::AddIOp::create(
          b, paged->pageStart(arith::DivUIOp::create(b, row, pageSize)),
          arith::MulIOp::create(b, arith::RemUIOp::create(b, row, pageSize),
                                rowStride));
    };
    issueIndexedCopies(gmem, base, rowStride, rowStart, rowLimit, tile, rows,
                       cols, tokens, dstIndex, validCols,
                       paged ? RowAddress(pagedRow) : rowAddress);
    return;
  }
  // Every pass covers whole rows: a thread's chunks sit in one column,
  // rowsPerPass rows apart. The destination is the thread's row plus a
  // constant, which the layouts add last so that the destinations are one
  // address plus immediates (one register per chunk, hoisted out of the
  // key loop, spilled). The source steps by rowsPerPass rows per pass: one
  // 64-bit add on a raw byte address. Computed per chunk through memref
  // indices (a 64-bit compare, select, multiply and scaling each), the
  // copies of a K/V block were 18% of the sm80 forward's instructions
  // (ncu, run 56); as offsets from one address, LLVM hoists one 64-bit
  // offset per pass out of the key loop, which spills.
  int64_t rowsPerPass = threads / chunksPerRow;
  // Rows are stepped in the copies' units: 16 bits in an e4m3 view.
  int64_t eltBytes =
      isCacheView(gmem) ? 2 : s.elementType.getIntOrFloatBitWidth() / 8;
  Value tidRow = arith::DivUIOp::create(b, tid, cIdx(b, chunksPerRow));
  Value tidCol = arith::MulIOp::create(
      b, arith::RemUIOp::create(b, tid, cIdx(b, chunksPerRow)), cIdx(b, 8));
  auto i32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, b.getI32Type(), v);
  };
  // Columns from validCols on read nothing, from inside the row.
  Value srcCol = tidCol, colValid;
  if (validCols) {
    colValid = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tidCol,
                                     cIdx(b, *validCols));
    srcCol = arith::SelectOp::create(b, colValid, tidCol, cIdx(b, 0));
  }
  Value rowsLeft; // rows of this thread's column left below rowLimit
  Value rowsSkipped; // and below copyRowFloor
  if (check == RowCheck::Checked) {
    rowsLeft = arith::SubIOp::create(
        b, arith::SubIOp::create(b, rowLimit, rowStart), tidRow);
    if (copyRowFloor)
      rowsSkipped = arith::SubIOp::create(
          b, arith::SubIOp::create(b, copyRowFloor, rowStart), tidRow);
  }
  // Paged rows find their address page by page, below.
  Value src = paged ? Value()
                    : copySourceAddress(
                          gmem,
                          ValueRange{arith::AddIOp::create(
                              b, base,
                              arith::AddIOp::create(
                                  b,
                                  arith::MulIOp::create(
                                      b, arith::AddIOp::create(b, rowStart, tidRow),
                                      rowStride),
                                  srcCol))});
  // Rows at or past rowLimit read the buffer's first element (mapped; a
  // kernel parameter, so no register) with src-size 0: the hardware writes
  // zeros and reads nothing.
  Value firstElement = check == RowCheck::Checked
                           ? copySourceAddress(gmem, ValueRange{cIdx(b, 0)})
                           : Value();
  Value passBytes = arith::IndexCastOp::create(
      b, b.getI64Type(),
      arith::MulIOp::create(b, rowStride, cIdx(b, rowsPerPass * eltBytes)));
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  // Paged: the thread's chunk in the first pass of a page, as an element
  // offset from the page's start row.
  Value threadInPage;
  if (paged)
    threadInPage = arith::AddIOp::create(
        b, arith::MulIOp::create(b, tidRow, rowStride), srcCol);
  for (int64_t first = 0; first < chunks; first += threads) {
    int64_t rowDelta = first / chunksPerRow;
    if (paged && rowDelta % paged->pageSize == 0) {
      // A new page: its start from the page table (the same entry for
      // every thread of the pass), then the row within it.
      Value row0 = arith::AddIOp::create(b, rowStart, cIdx(b, rowDelta));
      Value pageSize = cIdx(b, paged->pageSize);
      Value rowInPage = arith::RemUIOp::create(b, row0, pageSize);
      Value pageStart =
          paged->tilePageStart
              ? paged->tilePageStart(rowDelta / paged->pageSize)
              : paged->pageStart(arith::DivUIOp::create(b, row0, pageSize));
      src = copySourceAddress(
          gmem, ValueRange{arith::AddIOp::create(
                    b, pageStart,
                    arith::AddIOp::create(
                        b, arith::MulIOp::create(b, rowInPage, rowStride),
                        threadInPage))});
    } else if (first) {
      src = arith::AddIOp::create(b, src, passBytes);
    }
    Value from = src, valid = colValid;
    if (rowsLeft) {
      Value rowValid = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt,
                                             rowsLeft, cIdx(b, rowDelta));
      if (rowsSkipped)
        rowValid = arith::AndIOp::create(
            b, rowValid,
            arith::CmpIOp::create(b, arith::CmpIPredicate::sle, rowsSkipped,
                                  cIdx(b, rowDelta)));
      valid = valid ? arith::AndIOp::create(b, valid, rowValid) : rowValid;
      from = arith::SelectOp::create(b, rowValid, src, firstElement);
    }
    Value srcBytes =
        valid ? arith::SelectOp::create(b, valid, i32(16), i32(0)) : Value();
    Value dst = byteAddress(tile, dstIndex(tidRow, rowDelta, tidCol));
    NVVM::CpAsyncOp::create(
        b, LLVM::IntToPtrOp::create(b, sharedPtr, dst),
        LLVM::IntToPtrOp::create(b, globalPtr, from), b.getI32IntegerAttr(16),
        NVVM::LoadCacheModifierKindAttr::get(b.getContext(),
                                             NVVM::LoadCacheModifierKind::CG),
        srcBytes);
  }
}

void KernelBuilderBase::issueIndexedCopies(
    Value gmem, Value base, Value rowStride, Value rowStart, Value rowLimit,
    Value tile, int64_t rows, int64_t cols, SmallVectorImpl<Value> &tokens,
    function_ref<SmallVector<Value>(Value r, int64_t rowDelta, Value c)>
        dstIndex,
    std::optional<int64_t> validCols, RowAddress rowAddress) {
  // 16-byte chunks, spread over the block's threads row-major so that a warp
  // reads whole rows: coalesced global reads.
  int64_t chunksPerRow = cols / 8, chunks = rows * chunksPerRow;
  int64_t threads = s.threads();
  // Where every pass covers whole rows, a thread's chunks sit in one column,
  // threads / chunksPerRow rows apart: the destination row is the thread's
  // plus a constant, which the layouts add last so that the destinations
  // are one address plus immediates instead of one register per chunk
  // (hoisted out of the key loop, they spilled).
  bool wholeRows = threads % chunksPerRow == 0;
  Value tidRow = arith::DivUIOp::create(b, tid, cIdx(b, chunksPerRow));
  Value tidCol = arith::MulIOp::create(
      b, arith::RemUIOp::create(b, tid, cIdx(b, chunksPerRow)), cIdx(b, 8));
  for (int64_t first = 0; first < chunks; first += threads) {
    Value r, c, inRange;
    int64_t rowDelta = 0;
    if (wholeRows && first + threads <= chunks) {
      r = tidRow;
      rowDelta = first / chunksPerRow;
      c = tidCol;
      inRange = arith::ConstantIntOp::create(b, b.getI1Type(), 1);
    } else {
      Value chunk = arith::AddIOp::create(b, tid, cIdx(b, first));
      inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, chunk,
                                      cIdx(b, chunks));
      chunk = arith::SelectOp::create(b, inRange, chunk, cIdx(b, 0));
      r = arith::DivUIOp::create(b, chunk, cIdx(b, chunksPerRow));
      c = arith::MulIOp::create(
          b, arith::RemUIOp::create(b, chunk, cIdx(b, chunksPerRow)),
          cIdx(b, 8));
      // A thread with no chunk left (chunks % threads != 0) still issues a
      // copy, with src-size 0, which writes 16 zero bytes: aim it at the
      // row padding, which nothing reads. Unpadded layouts must not leave
      // chunks.
      c = arith::SelectOp::create(b, inRange, c, cIdx(b, cols));
    }
    Value row = arith::AddIOp::create(
        b, rowStart, arith::AddIOp::create(b, r, cIdx(b, rowDelta)));
    Value valid = arith::AndIOp::create(
        b, inRange,
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rowLimit));
    if (copyRowFloor)
      valid = arith::AndIOp::create(
          b, valid,
          arith::CmpIOp::create(b, arith::CmpIPredicate::sge, row,
                                copyRowFloor));
    if (validCols)
      valid = arith::AndIOp::create(
          b, valid,
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, c,
                                cIdx(b, *validCols)));
    // Out-of-range rows read row 0 (always mapped) with src-size 0: the
    // hardware writes zeros and reads nothing.
    Value srcRow = arith::SelectOp::create(b, valid, row, cIdx(b, 0));
    Value src = rowAddress
                    ? Value(arith::AddIOp::create(b, rowAddress(srcRow), c))
                    : Value(arith::AddIOp::create(
                          b, base,
                          arith::AddIOp::create(
                              b, arith::MulIOp::create(b, srcRow, rowStride),
                              c)));
    if (isCacheView(gmem)) {
      // nvgpu's copy wants one element type on both sides: the 16-bit view
      // of an FP8 cache is copied as raw bytes.
      Value srcBytes = arith::SelectOp::create(
          b, valid, arith::ConstantIntOp::create(b, b.getI32Type(), 16),
          arith::ConstantIntOp::create(b, b.getI32Type(), 0));
      Value dst = byteAddress(tile, dstIndex(r, rowDelta, c));
      auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
      auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
      NVVM::CpAsyncOp::create(
          b, LLVM::IntToPtrOp::create(b, sharedPtr, dst),
          LLVM::IntToPtrOp::create(b, globalPtr,
                                   copySourceAddress(gmem, ValueRange{src})),
          b.getI32IntegerAttr(16),
          NVVM::LoadCacheModifierKindAttr::get(
              b.getContext(), NVVM::LoadCacheModifierKind::CG),
          srcBytes);
      continue;
    }
    Value srcElems = arith::SelectOp::create(b, valid, cIdx(b, 8), cIdx(b, 0));
    auto tokTy = nvgpu::DeviceAsyncTokenType::get(b.getContext());
    Value tok = nvgpu::DeviceAsyncCopyOp::create(
        b, tokTy, tile, dstIndex(r, rowDelta, c), gmem, ValueRange{src}, b.getIndexAttr(8),
        srcElems, /*bypassL1=*/b.getUnitAttr());
    tokens.push_back(tok);
  }
}

void KernelBuilderBase::ifRowsBelow(Value rowStart, int64_t rows,
                                    Value rowLimit,
                                    function_ref<void(RowCheck)> body) {
  Value below = arith::CmpIOp::create(
      b, arith::CmpIPredicate::sle,
      arith::AddIOp::create(b, rowStart, cIdx(b, rows)), rowLimit);
  if (copyRowFloor)
    below = arith::AndIOp::create(
        b, below,
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, rowStart,
                              copyRowFloor));
  auto ifOp = scf::IfOp::create(b, TypeRange{}, below, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body(RowCheck::None);
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  body(RowCheck::Checked);
}

bool KernelBuilderBase::isCacheView(Value gmem) const {
  return (s.fp8Cache || (s.isFp8() && s.recipe == Recipe::Sm80)) &&
         isa<Float8E4M3FNType>(cast<MemRefType>(gmem.getType()).getElementType());
}

Value KernelBuilderBase::copySourceAddress(Value gmem, ValueRange indices) {
  if (!isCacheView(gmem))
    return byteAddress(gmem, indices);
  // A 1-D cache buffer indexed in the tile's 16-bit units.
  Value bytes = arith::AddIOp::create(
      b, memref::ExtractAlignedPointerAsIndexOp::create(b, gmem),
      arith::MulIOp::create(b, indices[0], cIdx(b, 2)));
  return arith::IndexCastOp::create(b, b.getI64Type(), bytes);
}

Value KernelBuilderBase::byteAddress(Value memory, ValueRange indices) {
  auto ty = cast<MemRefType>(memory.getType());
  auto [strides, offset] = ty.getStridesAndOffset();
  Value linear = cIdx(b, 0);
  for (auto [i, stride] : llvm::enumerate(strides))
    linear = arith::AddIOp::create(
        b, linear, arith::MulIOp::create(b, indices[i], cIdx(b, stride)));
  assert(offset == 0 && "kernel buffers and tiles start at their pointer");
  Value bytes = arith::AddIOp::create(
      b, memref::ExtractAlignedPointerAsIndexOp::create(b, memory),
      arith::MulIOp::create(
          b, linear, cIdx(b, ty.getElementTypeBitWidth() / 8)));
  return arith::IndexCastOp::create(b, b.getI64Type(), bytes);
}

void KernelBuilderBase::carveSwizzledTiles(int64_t elements, Type unit) {
  // The swizzle is a function of address bits 4-9: tiles start at 1024-byte
  // boundaries. The dynamic shared memory's start is only 16-byte aligned,
  // so round up.
  Value raw = sharedMemoryBytes();
  Value addr = memref::ExtractAlignedPointerAsIndexOp::create(b, raw);
  Value align = cIdx(b, swizzle::kAtomBytes);
  Value pad = arith::RemUIOp::create(
      b, arith::SubIOp::create(b, align, arith::RemUIOp::create(b, addr, align)),
      align);
  swizzledTiles = sharedTile(raw, {elements}, pad, unit ? unit : s.elementType);
  swizzledPad = pad;
  swizzledBase = arith::IndexCastOp::create(
      b, b.getI64Type(), arith::AddIOp::create(b, addr, pad));
}

Value KernelBuilderBase::swizzledAddress(Value offset) {
  Value bytes = arith::IndexCastOp::create(
      b, b.getI64Type(), arith::MulIOp::create(b, offset, cIdx(b, 2)));
  return arith::AddIOp::create(b, swizzledBase, bytes);
}

void KernelBuilderBase::copySwizzled(Value gmem, Value base, Value rowStride,
                                     Value rowStart, Value rowLimit,
                                     Value offset, int64_t rows, int64_t cols,
                                     SmallVectorImpl<Value> &tokens,
                                     RowCheck check, RowAddress rowAddress,
                                     const PagedRows *paged) {
  int64_t width = KernelSpec::swizzleWidth(cols);
  std::optional<int64_t> validCols;
  if (width != cols)
    validCols = cols;
  issueCopies(gmem, base, rowStride, rowStart, rowLimit, swizzledTiles, rows,
              width, tokens, [&](Value r, int64_t rowDelta, Value c) {
                // A multiple of 8 rows keeps row % 8, so the swizzle.
                if (rowDelta % 8 == 0)
                  return SmallVector<Value>{arith::AddIOp::create(
                      b,
                      arith::AddIOp::create(b, offset,
                                            swizzle::offset(b, r, c, rows)),
                      cIdx(b, rowDelta * swizzle::kRowElements))};
                Value row = arith::AddIOp::create(b, r, cIdx(b, rowDelta));
                return SmallVector<Value>{arith::AddIOp::create(
                    b, offset, swizzle::offset(b, row, c, rows))};
              },
              validCols, check, rowAddress, paged);
}

void KernelBuilderBase::fenceGenericToAsyncProxy() {
  NVVM::FenceProxyOp::create(
      b, NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
}

void KernelBuilderBase::zeroRowsPast(
    Value valid, int64_t rows, ArrayRef<int64_t> widths, bool unrolled,
    function_ref<RowZeroing()> place, function_ref<void()> publish) {
  // The unrolled form works in 32 bits throughout.
  Value tail = unrolled ? arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                                i32(valid), cI32(rows))
                        : arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                                valid, cIdx(b, rows));
  auto ifTail = scf::IfOp::create(b, TypeRange{}, tail, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifTail.getThenRegion().front());
  // A tile is width / 64 boxes of `rows` rows of 128 bytes (copyTile); a
  // row's 128 bytes stay in place under the swizzle, so zeroing whole rows
  // needs no swizzled address. 16 bytes a store.
  int64_t box = swizzle::kRowBytes / s.elementBytes(), chunk = 8;
  auto zerosOf = [&] {
    return arith::ConstantOp::create(
        b, DenseElementsAttr::get(VectorType::get({chunk}, s.elementType),
                                  b.getZeroAttr(s.elementType)));
  };
  if (!unrolled) {
    // A loop over each tile's tail chunks, `threads` threads from `thread`.
    SmallVector<Value> chunks;
    for (int64_t width : widths)
      chunks.push_back(arith::MulIOp::create(
          b, arith::SubIOp::create(b, cIdx(b, rows), valid),
          cIdx(b, width / chunk)));
    RowZeroing at = place();
    Value zeros = zerosOf();
    for (auto [k, width] : llvm::enumerate(widths)) {
      int64_t chunksPerRow = width / chunk;
      auto loop =
          scf::ForOp::create(b, at.thread, chunks[k], cIdx(b, at.threads));
      OpBuilder::InsertionGuard gl(b);
      b.setInsertionPointToStart(loop.getBody());
      Value c = loop.getInductionVar();
      Value row = arith::AddIOp::create(
          b, valid, arith::DivUIOp::create(b, c, cIdx(b, chunksPerRow)));
      Value col = arith::MulIOp::create(
          b, arith::RemUIOp::create(b, c, cIdx(b, chunksPerRow)),
          cIdx(b, chunk));
      // Element (row, col) of box col / 64.
      Value elem = arith::AddIOp::create(
          b, at.offsets[k],
          arith::AddIOp::create(
              b,
              arith::MulIOp::create(
                  b, arith::DivUIOp::create(b, col, cIdx(b, box)),
                  cIdx(b, rows * box)),
              arith::AddIOp::create(
                  b, arith::MulIOp::create(b, row, cIdx(b, box)),
                  arith::RemUIOp::create(b, col, cIdx(b, box)))));
      vector::StoreOp::create(b, zeros, swizzledTiles, ValueRange{elem},
                              /*nontemporal=*/false, llvm::Align(16));
    }
    fenceGenericToAsyncProxy();
    publish();
    return;
  }
  // Every chunk of each tile, unrolled, stored where its row is past
  // `valid`, in 32 bits: no loop state to hold (a loop held an induction
  // variable and a bound that the backward's consumers, at their register
  // cap, spilled), and no 64-bit pairs.
  RowZeroing at = place();
  Value zeros = zerosOf();
  Value thread32 = i32(at.thread), valid32 = i32(valid);
  // Element (row, col) of box col / 64, from the tile's start.
  auto elementAt = [&](Value row, Value col) -> Value {
    return arith::AddIOp::create(
        b,
        arith::MulIOp::create(b, arith::DivUIOp::create(b, col, cI32(box)),
                              cI32(rows * box)),
        arith::AddIOp::create(b, arith::MulIOp::create(b, row, cI32(box)),
                              arith::RemUIOp::create(b, col, cI32(box))));
  };
  for (auto [k, width] : llvm::enumerate(widths)) {
    // Each pass of the threads covers whole rows, rowsPerPass of them (the
    // threads past rowsPerPass whole rows idle), so a thread's column is
    // the same in every pass and its row and element move by constants:
    // one address, immediate offsets, and the row test against a uniform
    // bound.
    int64_t chunksPerRow = width / chunk;
    int64_t rowsPerPass = at.threads / chunksPerRow;
    int64_t active = rowsPerPass * chunksPerRow;
    Value row0 = arith::DivUIOp::create(b, thread32, cI32(chunksPerRow));
    Value col0 = arith::MulIOp::create(
        b, arith::RemUIOp::create(b, thread32, cI32(chunksPerRow)),
        cI32(chunk));
    Value elem0 = elementAt(row0, col0);
    for (int64_t passRows = 0; passRows < rows; passRows += rowsPerPass) {
      Value past = arith::CmpIOp::create(
          b, arith::CmpIPredicate::sge, row0,
          arith::SubIOp::create(b, valid32, cI32(passRows)));
      if (active < at.threads)
        past = arith::AndIOp::create(
            b, past,
            arith::CmpIOp::create(b, arith::CmpIPredicate::ult, thread32,
                                  cI32(active)));
      if (passRows + rowsPerPass > rows)
        past = arith::AndIOp::create(
            b, past,
            arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row0,
                                  cI32(rows - passRows)));
      auto ifPast = scf::IfOp::create(b, TypeRange{}, past, false);
      OpBuilder::InsertionGuard gp(b);
      b.setInsertionPointToStart(&ifPast.getThenRegion().front());
      // The pass's constant added after the widening, so that it folds
      // into the store's address.
      Value elem = arith::AddIOp::create(b, asUnsignedIndex(elem0),
                                         cIdx(b, passRows * box));
      elem = arith::AddIOp::create(b, at.offsets[k], elem);
      vector::StoreOp::create(b, zeros, swizzledTiles, ValueRange{elem},
                              /*nontemporal=*/false, llvm::Align(16));
    }
  }
  fenceGenericToAsyncProxy();
  publish();
}

/// The try_wait's suspend-time hint, in ns (the loop retries after it).
static constexpr int64_t kWaitHintNs = 0x989680;

std::pair<Block *, Block *>
KernelBuilderBase::branchByRole(int64_t producerThreads) {
  Region *body = b.getInsertionBlock()->getParent();
  Block *producer = new Block(), *consumer = new Block();
  body->push_back(producer);
  body->push_back(consumer);
  Value isProducer = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid,
                                           cIdx(b, producerThreads));
  cf::CondBranchOp::create(b, isProducer, producer, consumer);
  return {producer, consumer};
}

void KernelBuilderBase::createBarriers(
    int64_t count, ArrayRef<std::pair<int64_t, int64_t>> inits) {
  MLIRContext *ctx = b.getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  barriers = nvgpu::MBarrierCreateOp::create(
      b, nvgpu::MBarrierGroupType::get(ctx, wg, count));
  Value leader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cIdx(b, 0));
  auto ifLeader = scf::IfOp::create(b, TypeRange{}, leader, false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifLeader.getThenRegion().front());
    for (auto [id, arrivals] : inits)
      nvgpu::MBarrierInitOp::create(b, barriers, cIdx(b, arrivals),
                                    cIdx(b, id), Value());
    // The initialisations, visible to the copy engine's completions.
    NVVM::FenceMbarrierInitOp::create(b);
  }
  gpu::BarrierOp::create(b);
}

void KernelBuilderBase::waitBarrier(Value id, Value round) {
  Value parity = arith::CmpIOp::create(
      b, arith::CmpIPredicate::ne, arith::AndIOp::create(b, round, cIdx(b, 1)),
      cIdx(b, 0));
  nvgpu::MBarrierTryWaitParityOp::create(b, barriers, parity,
                                         cIdx(b, kWaitHintNs), id);
}

void KernelBuilderBase::copyTile(StringRef op, Value col0, Value row, Value h,
                                 Value offset, int64_t rows, int64_t cols,
                                 Value bar) {
  MLIRContext *ctx = b.getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  // A box of one swizzle row x `rows` rows of one (head, batch): the
  // tensor maps are [B][H][rows][cols] (runtime/lib/tensormap.cpp).
  int64_t rowBytes = s.tmaSwizzleBytes(cols);
  int64_t boxCols = rowBytes / s.elementBytes();
  Type boxElt = s.isFp8() ? Type(b.getI8Type()) : s.elementType;
  auto box = MemRefType::get({1, 1, rows, boxCols}, boxElt,
                             MemRefLayoutAttrInterface(), wg);
  auto swizzleKind =
      rowBytes == swizzle::kRowBytes         ? nvgpu::TensorMapSwizzleKind::SWIZZLE_128B
      : rowBytes == swizzle::kNarrowRowBytes ? nvgpu::TensorMapSwizzleKind::SWIZZLE_64B
                                             : nvgpu::TensorMapSwizzleKind::SWIZZLE_32B;
  auto mapType = nvgpu::TensorMapDescriptorType::get(
      ctx, box, swizzleKind,
      nvgpu::TensorMapL2PromoKind::L2PROMO_NONE,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  Value map = UnrealizedConversionCastOp::create(
                  b, mapType, arg.lookup((op + "_map").str()))
                  .getResult(0);
  Value raw = sharedMemoryBytes();
  for (int64_t c = 0; c < cols / boxCols; ++c) {
    Value elem =
        arith::AddIOp::create(b, offset, cIdx(b, c * rows * rowBytes / 2));
    Value bytes = arith::AddIOp::create(
        b, swizzledPad, arith::MulIOp::create(b, elem, cIdx(b, 2)));
    Value dst = memref::ViewOp::create(b, box, raw, bytes, ValueRange{});
    Value col = cIdx(b, c * boxCols);
    if (col0)
      col = arith::AddIOp::create(b, col0, col);
    nvgpu::TmaAsyncLoadOp::create(
        b, dst, barriers, map, SmallVector<Value>{col, row, h, tensorMapBatch()},
        bar,
        /*multicastMask=*/Value(), /*predicate=*/Value());
  }
}

Value KernelBuilderBase::tensorMapRow(Value row, bool keys) {
  if (Value first = tensorMapRowStart(keys))
    return arith::AddIOp::create(b, row, first);
  return row;
}

Value KernelBuilderBase::commitGroup(ArrayRef<Value> tokens) {
  auto tokTy = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  return nvgpu::DeviceAsyncCreateGroupOp::create(b, tokTy, tokens);
}

Value KernelBuilderBase::copyTileAsync(Value gmem, Value base, Value rowStride,
                                       Value rowStart, Value rowLimit,
                                       Value tile, ValueRange lead,
                                       int64_t rows, int64_t cols) {
  SmallVector<Value> tokens;
  issueTileCopies(gmem, base, rowStride, rowStart, rowLimit, tile, lead, rows,
                  cols, tokens);
  return commitGroup(tokens);
}

std::pair<Value, Value> KernelBuilderBase::keyBlockRange(Value rowStart,
                                                         int64_t rows,
                                                         int64_t blockN) {
  // Keys any row of [rowStart, rowStart + rows) may see: [lo, hi).
  Value zero = cIdx(b, 0);
  Value hi = seqK;
  Value rowEnd = arith::AddIOp::create(b, rowStart, cIdx(b, rows));
  Value diagEnd = arith::AddIOp::create(b, rowEnd, diagOffset); // exclusive
  if (s.causal != KernelSpec::Causal::None)
    hi = arith::MinSIOp::create(b, hi, diagEnd);
  Value lo = zero;
  if (s.window) {
    Value wr = asIndex(windowRight), wl = asIndex(windowLeft);
    Value wrBound = arith::AddIOp::create(b, diagEnd, wr);
    Value hasRight = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, wr, zero);
    hi = arith::SelectOp::create(b, hasRight,
                                 arith::MinSIOp::create(b, hi, wrBound), hi);
    Value loBound = arith::SubIOp::create(
        b, arith::AddIOp::create(b, rowStart, diagOffset), wl);
    Value hasLeft = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, wl, zero);
    lo = arith::SelectOp::create(b, hasLeft,
                                 arith::MaxSIOp::create(b, loBound, zero), zero);
  }
  if (keyStart)
    lo = arith::MaxSIOp::create(b, lo, keyStart);
  hi = arith::MaxSIOp::create(b, hi, zero);
  Value bn = cIdx(b, blockN);
  Value nEnd = arith::CeilDivUIOp::create(b, hi, bn);
  Value nStart = arith::DivUIOp::create(b, lo, bn);
  nStart = arith::MinUIOp::create(b, nStart, nEnd);
  return {nStart, nEnd};
}

std::pair<Value, Value> KernelBuilderBase::queryBlockRange(Value colStart,
                                                           int64_t cols,
                                                           int64_t blockM) {
  // Row i sees key j only if j <= i + off (causal), j <= i + off + wr and
  // j >= i + off - wl (window): the rows seeing some key of the block are
  // [colStart - off (- wr), colEnd - 1 - off + wl].
  Value zero = cIdx(b, 0);
  Value lo = zero, hi = seqQ;
  Value firstDiagRow = arith::SubIOp::create(b, colStart, diagOffset);
  if (s.causal != KernelSpec::Causal::None)
    lo = arith::MaxSIOp::create(b, lo, firstDiagRow);
  if (s.window) {
    Value wr = asIndex(windowRight), wl = asIndex(windowLeft);
    Value hasRight = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, wr, zero);
    lo = arith::SelectOp::create(
        b, hasRight,
        arith::MaxSIOp::create(b, lo, arith::SubIOp::create(b, firstDiagRow, wr)),
        lo);
    Value hasLeft = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, wl, zero);
    Value lastRow = arith::AddIOp::create(
        b, arith::SubIOp::create(b, colStart, diagOffset),
        arith::AddIOp::create(b, wl, cIdx(b, cols))); // exclusive
    hi = arith::SelectOp::create(b, hasLeft, arith::MinSIOp::create(b, hi, lastRow),
                                 hi);
  }
  hi = arith::MaxSIOp::create(b, hi, zero);
  Value bm = cIdx(b, blockM);
  Value mEnd = arith::CeilDivUIOp::create(b, hi, bm);
  Value mStart = arith::DivUIOp::create(b, lo, bm);
  mStart = arith::MinUIOp::create(b, mStart, mEnd);
  return {mStart, mEnd};
}

Value KernelBuilderBase::tileNeedsMask(Value rowStart, int64_t rows,
                                       Value colStart, int64_t cols,
                                       bool rowTail, bool elementMasks) {
  if (s.window || (elementMasks && (s.mask || s.maskMod)))
    return arith::ConstantIntOp::create(b, b.getI1Type(), 1);
  Value colEnd = arith::AddIOp::create(b, colStart, cIdx(b, cols));
  Value need = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, colEnd, seqK);
  if (keyStart) // the tile starts below the first key
    need = arith::OrIOp::create(
        b, need,
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, colStart, keyStart));
  if (rowTail)
    need = arith::OrIOp::create(
        b, need,
        arith::CmpIOp::create(b, arith::CmpIPredicate::sgt,
                              arith::AddIOp::create(b, rowStart, cIdx(b, rows)),
                              seqQ));
  if (s.causal != KernelSpec::Causal::None) {
    // Some key of the tile is past the diagonal of its first row.
    Value firstDiag = arith::AddIOp::create(b, rowStart, diagOffset);
    need = arith::OrIOp::create(
        b, need,
        arith::CmpIOp::create(b, arith::CmpIPredicate::sgt,
                              arith::SubIOp::create(b, colEnd, cIdx(b, 1)),
                              firstDiag));
  }
  return need;
}

Value KernelBuilderBase::softcapTanh(Value raw) {
  // tanh(raw · scale / cap): scale times the cap's reciprocal is one
  // factor, hoisted with the division out of the loops (one division a
  // kernel, one multiply a score, and one register fewer held).
  Value scaleOverCap = arith::MulFOp::create(
      b, scoreScale(),
      arith::DivFOp::create(b, cF32(b, 1.0f), arg.lookup("softcap")));
  return tanhApprox(b, arith::MulFOp::create(b, raw, scaleOverCap));
}

Value KernelBuilderBase::alibiSlopeOf(Value qHead) {
  Value at = qHead;
  if (s.alibi == 2)
    at = arith::AddIOp::create(b, arith::MulIOp::create(b, batchIdx, headsQ),
                               qHead);
  return memref::LoadOp::create(b, arg.lookup("alibi_slopes"), ValueRange{at});
}

void KernelBuilderBase::readTileAlibiSlope() {
  if (!s.alibi)
    return;
  alibiSlope = alibiSlopeOf(head);
  alibiSlopeLog2 = arith::MulFOp::create(b, alibiSlope, cF32(b, float(M_LOG2E)));
}

Value KernelBuilderBase::alibiDiagonal(Value row) {
  return arith::AddIOp::create(
      b, row, arith::SubIOp::create(b, i32(seqK), i32(seqQ)));
}

Value KernelBuilderBase::alibiLog2Bias(Value rowF, Value colF, Value addend) {
  Value dist = math::AbsFOp::create(b, arith::SubFOp::create(b, rowF, colF));
  Value negSlope = arith::NegFOp::create(b, alibiSlopeLog2);
  if (!addend)
    return arith::MulFOp::create(b, dist, negSlope);
  return LLVM::FMAOp::create(b, dist, negSlope, addend);
}

Value KernelBuilderBase::transformScore(Value raw, Value row, Value col,
                                        Value *tanhOut, Value rowSlope) {
  Value alibiSlope = rowSlope ? rowSlope : this->alibiSlope;
  Value v;
  if (s.softcap) {
    Value th = softcapTanh(raw);
    if (tanhOut)
      *tanhOut = th;
    v = arith::MulFOp::create(b, arg.lookup("softcap"), th);
  } else {
    v = arith::MulFOp::create(b, raw, scoreScale());
  }
  if (s.bias)
    v = arith::AddFOp::create(
        b, v,
        memref::LoadOp::create(b, arg.lookup("bias"),
                               ValueRange{broadcastOperandOffset("bias", row, col)}));
  if (s.scoreMod) {
    auto [q, k] = regionIndices(row, col);
    v = inlineRegion(s.scoreMod, {v, batchIdx, head, q, k});
  }
  if (s.alibi) {
    // -slope * |row + Sk - Sq - col|, flash-attn's distance from the
    // bottom-right diagonal whatever the causal alignment (seqK: a decode's
    // L_b), exact in i32 and converted once.
    Value d = arith::SubIOp::create(b, alibiDiagonal(row), col);
    Value dist = arith::MaxSIOp::create(
        b, d,
        arith::SubIOp::create(
            b, arith::ConstantIntOp::create(b, b.getI32Type(), 0), d));
    v = arith::SubFOp::create(
        b, v,
        arith::MulFOp::create(
            b, alibiSlope,
            arith::SIToFPOp::create(b, b.getF32Type(), dist)));
  }
  return v;
}

KernelBuilderBase::RowBand KernelBuilderBase::rowBand(Value row,
                                                     Value colBase) {
  // Element (row, colBase + c) is inside the band iff lo <= c < hi. Written
  // per row so that a fragment, whose c = 8n + j is a compile-time constant
  // per element, tests each element with two compares against immediates.
  Type i32Ty = b.getI32Type();
  auto ci = [&](int64_t v) {
    return Value(arith::ConstantIntOp::create(b, i32Ty, v));
  };
  Value one = ci(1);
  Value hi = arith::SubIOp::create(b, i32(seqK), colBase);
  Value lo = ci(0);
  Value diag = arith::SubIOp::create(
      b, arith::AddIOp::create(b, row, i32(diagOffset)), colBase);
  if (s.causal != KernelSpec::Causal::None)
    hi = arith::MinSIOp::create(b, hi, arith::AddIOp::create(b, diag, one));
  if (s.window) {
    Value zero = ci(0);
    Value hasRight =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, windowRight, zero);
    Value rightHi = arith::AddIOp::create(
        b, arith::AddIOp::create(b, diag, windowRight), one);
    hi = arith::SelectOp::create(b, hasRight,
                                 arith::MinSIOp::create(b, hi, rightHi), hi);
    Value hasLeft =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, windowLeft, zero);
    lo = arith::SelectOp::create(b, hasLeft,
                                 arith::SubIOp::create(b, diag, windowLeft), lo);
  }
  if (keyStart)
    lo = arith::MaxSIOp::create(
        b, lo, arith::SubIOp::create(b, i32(keyStart), colBase));
  return {lo, hi};
}

Value KernelBuilderBase::RowBand::contains(ImplicitLocOpBuilder &b,
                                           Value c) const {
  return arith::AndIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::sle, lo, c),
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, c, hi));
}

Value KernelBuilderBase::operandMaskPredicate(Value row, Value col) {
  Value ok = arith::ConstantIntOp::create(b, b.getI1Type(), 1);
  if (s.mask) {
    Value m = memref::LoadOp::create(
        b, arg.lookup("mask"), ValueRange{broadcastOperandOffset("mask", row, col)});
    ok = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, m,
                               arith::ConstantIntOp::create(b, b.getI8Type(), 0));
  }
  if (s.maskMod) {
    auto [q, k] = regionIndices(row, col);
    ok = arith::AndIOp::create(
        b, ok, inlineRegion(s.maskMod, {batchIdx, head, q, k}));
  }
  return ok;
}

Value KernelBuilderBase::elementMaskPredicate(Value row, Value col,
                                              Value maskModApplies,
                                              Value elementKeep) {
  // The band relative to column 0, then the element operands.
  Value zero = arith::ConstantIntOp::create(b, b.getI32Type(), 0);
  Value ok = rowBand(row, zero).contains(b, col);
  if (elementKeep)
    return arith::AndIOp::create(b, ok, elementKeep);
  if (s.mask || s.maskMod) {
    Value keep = operandMaskPredicate(row, col);
    if (maskModApplies)
      keep = arith::OrIOp::create(
          b, keep,
          arith::XOrIOp::create(
              b, maskModApplies,
              arith::ConstantIntOp::create(b, b.getI1Type(), 1)));
    ok = arith::AndIOp::create(b, ok, keep);
  }
  return ok;
}

std::array<Value, 8> KernelBuilderBase::dropoutOctetFactors(Value row,
                                                           Value col) {
  Value h = i32(head);
  Value batch = i32(batchIdx);
  auto keep = buildDropoutOctetKeep(
      b, b.getLoc(), arg.lookup("seed"),
      dropoutCounter(b, b.getLoc(), col, row, h, batch), dropoutThreshold);
  Value kept = dropoutKeptFactor();
  std::array<Value, 8> factors;
  for (int e = 0; e < 8; ++e)
    factors[e] = arith::SelectOp::create(b, keep[e], kept, cF32(b, 0.0f));
  return factors;
}

std::array<Value, 4> KernelBuilderBase::dropoutOctetWords(Value row,
                                                         Value col) {
  Value h = i32(head);
  Value batch = i32(batchIdx);
  return buildDropoutOctetWords(
      b, b.getLoc(), arg.lookup("seed"),
      dropoutCounter(b, b.getLoc(), col, row, h, batch));
}

Value KernelBuilderBase::dropoutKeptFactor() {
  Value one = cF32(b, 1.0f);
  return arith::DivFOp::create(
      b, one, arith::SubFOp::create(b, one, arg.lookup("dropout_p")));
}

Value KernelBuilderBase::dropoutHalfFactor(Value word, bool high,
                                           Value thresholdHigh, Value kept) {
  Value keep =
      buildDropoutHalfKeep(b, b.getLoc(), word, high, thresholdHigh);
  return arith::SelectOp::create(b, keep, kept, cF32(b, 0.0f));
}

Value KernelBuilderBase::recomputeProbability(Value raw, Value query,
                                              Value key, Value negLseLog2,
                                              Value scoreFactor, bool masked,
                                              Value *tanhOut,
                                              Value maskModApplies,
                                              Value elementKeep) {
  // A fully masked row has LSE = +inf: the exponent is -inf and P = 0.
  Value e;
  if (isPlainScore()) {
    e = LLVM::FMAOp::create(b, raw, scoreFactor, negLseLog2);
  } else if (isAlibiOnlyScore()) {
    Type f32 = b.getF32Type();
    e = LLVM::FMAOp::create(
        b, raw, scoreFactor,
        alibiLog2Bias(arith::SIToFPOp::create(b, f32, alibiDiagonal(query)),
                      arith::SIToFPOp::create(b, f32, key), negLseLog2));
  } else if (s.softcap && !s.bias && !s.scoreMod && !s.alibi) {
    // Softcap alone: cap · log2(e) is one hoisted factor of the tanh, one
    // multiply a score fewer and one constant fewer held across the step
    // (the sm90 D = 128 backwards are at the 255-register cap). Not in the
    // forward: there the sm80 D = 128 kernel on sm_90a spilled 8 bytes.
    Value th = softcapTanh(raw);
    if (tanhOut)
      *tanhOut = th;
    e = LLVM::FMAOp::create(
        b, th,
        arith::MulFOp::create(b, arg.lookup("softcap"),
                              cF32(b, float(M_LOG2E))),
        negLseLog2);
  } else {
    Value sc = transformScore(raw, query, key, tanhOut);
    e = LLVM::FMAOp::create(b, sc, cF32(b, float(M_LOG2E)), negLseLog2);
  }
  Value p = exp2Approx(b, e);
  if (!masked)
    return p;
  Value ok = arith::AndIOp::create(
      b, elementMaskPredicate(query, key, maskModApplies, elementKeep),
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, query, i32(seqQ)));
  return arith::SelectOp::create(b, ok, p, cF32(b, 0.0f));
}

Value KernelBuilderBase::scoreGradient(Value p, Value dp, Value dsum, Value z) {
  // O used P ∘ Z, so the gradient reaching P is dP ∘ Z; the softmax's
  // Jacobian then gives dS = P (dP ∘ Z − Dsum), Dsum = Σ P (dP ∘ Z).
  if (z)
    dp = arith::MulFOp::create(b, dp, z);
  return arith::MulFOp::create(b, p, arith::SubFOp::create(b, dp, dsum));
}

Value KernelBuilderBase::softcapSlope(Value tanhV) {
  if (!s.softcap)
    return Value();
  return arith::SubFOp::create(b, cF32(b, 1.0f),
                               arith::MulFOp::create(b, tanhV, tanhV));
}

Value KernelBuilderBase::rawScoreGradient(Value ds, Value slope) {
  return s.softcap ? arith::MulFOp::create(b, ds, slope).getResult() : ds;
}

Value KernelBuilderBase::broadcastOperandOffset(StringRef prefix, Value row,
                                                Value col) {
  Type i32Ty = b.getI32Type();
  Value one = arith::ConstantIntOp::create(b, i32Ty, 1);
  Value r = arith::MinSIOp::create(b, row, arith::SubIOp::create(b, i32(seqQ), one));
  Value c = arith::MinSIOp::create(b, col, arith::SubIOp::create(b, i32(seqK), one));
  auto term = [&](Value x, StringRef dim) {
    return Value(arith::MulIOp::create(b, x, idx((prefix + "_stride_" + dim).str())));
  };
  Value off = arith::AddIOp::create(b, term(batchIdx, "b"), term(head, "h"));
  off = arith::AddIOp::create(b, off, term(asIndex(r), "q"));
  return arith::AddIOp::create(b, off, term(asIndex(c), "k"));
}

/// How a kernel keeps a region's reads of captured tensors inside them at a
/// tile's padding rows and keys (past Sq or Sk: masked, or never stored),
/// where the region is evaluated too. Either way costs registers in
/// kernels at the 255 cap, and ptxas spilled least (sm_90a, the h100
/// configs, ALiBi slopes and document ids: mod-captures-ptxas.mlir) with
/// the indices clamped in the forwards (sm90 recipe 0 bytes, sm80 0-8;
/// with the offsets clamped 12-64 and 8-32) and the offsets clamped in
/// the backwards (sm90 0-12, sm80 0-24; with the indices clamped, sm90
/// 8-108).
static bool clampsRegionIndices(const KernelSpec &s) {
  return !s.captures.empty() && s.kind == KernelSpec::Kind::Forward;
}

std::pair<Value, Value> KernelBuilderBase::regionIndices(Value row,
                                                        Value col) {
  if (clampsRegionIndices(s)) {
    Value one = arith::ConstantIntOp::create(b, b.getI32Type(), 1);
    row = arith::MinSIOp::create(b, row, arith::SubIOp::create(b, i32(seqQ), one));
    col = arith::MinSIOp::create(b, col, arith::SubIOp::create(b, i32(seqK), one));
  }
  return {asIndex(row), asIndex(col)};
}

Value KernelBuilderBase::inlineRegion(Region *region, ArrayRef<Value> args) {
  IRMapping map;
  Block &body = region->front();
  for (auto [blockArg, v] : llvm::zip(body.getArguments(), args))
    map.map(blockArg, v);
  SmallVector<Operation *> placeholders =
      mapModCaptures(b, b.getLoc(), region, s.captures, arg, map);
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  lowerCapturedTensorReads(placeholders,
                           /*clampToBuffer=*/!clampsRegionIndices(s));
  return map.lookup(body.getTerminator()->getOperand(0));
}

SmallVector<Type> mlir::flash::getKernelArgumentTypes(MLIRContext *ctx,
                                                      const KernelSpec &spec) {
  Builder b(ctx);
  auto memref1d = [&](Type t) {
    return MemRefType::get({ShapedType::kDynamic}, t);
  };
  SmallVector<Type> types;
  for (const std::string &p : spec.params()) {
    StringRef kind = StringRef(p).split(':').first;
    StringRef name = StringRef(p).split(':').second;
    if (kind == "memref") {
      Type elt = spec.elementType;
      // An FP8 cache's decode reads its e4m3 codes (Q and O stay 16-bit).
      if (spec.fp8Cache && (name == "k" || name == "v"))
        elt = Float8E4M3FNType::get(ctx);
      else if (Type captured = captureBufferElementType(spec.captures, name))
        elt = captured;
      else if (llvm::is_contained({"lse", "bias", "delta", "dq_accum", "dbias",
                              "o_partial", "lse_partial", "q_descale",
                              "k_descale", "v_descale", "alibi_slopes"},
                             name))
        elt = b.getF32Type();
      else if (name == "o")
        elt = spec.outputType(); // f32 for an f32-output forward
      else if (name == "mask")
        elt = b.getI8Type();
      else if (name == "cache_seqlens" || name == "cache_leftpad" ||
               name == "cache_batch_idx" ||
               name == "block_table" ||
               name == "check_status" || name == "split_arrivals" ||
               name == "cu_seqlens_q" ||
               name == "cu_seqlens_k" || name.ends_with("_num_blocks") ||
               name.ends_with("_indices"))
        elt = b.getI32Type();
      types.push_back(memref1d(elt));
    } else if (kind == "tensormap") {
      // The address of a CUtensorMap parameter (flash-grid-constant-params
      // makes it a by-value kernel parameter).
      types.push_back(LLVM::LLVMPointerType::get(ctx));
    } else if (kind == "i32") {
      types.push_back(b.getI32Type());
    } else if (kind == "i64") {
      types.push_back(b.getI64Type());
    } else {
      types.push_back(b.getF32Type());
    }
  }
  return types;
}
