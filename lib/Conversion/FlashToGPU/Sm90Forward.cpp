//===- Sm90Forward.cpp - the sm90 recipe's forward matrix engine ----------===//
//
// The forward schedule of ForwardBuilder.cpp on Hopper's warpgroup MMA: each
// warpgroup (4 warps) owns 64 query rows, S = Q·Kᵀ is one chain of
// wgmma m64n{block_n}k16 with Q and K read from shared memory, and
// O += P·V a chain of wgmma m64n{Dv}k16 with P straight from registers (the
// accumulator layout packs into the A operand, as with mma.sync) and V read
// N-major. Q, K and V live in 128-byte-swizzled tiles (Wgmma.h) filled by
// cp.async; a proxy fence makes those generic-proxy writes visible to the
// tensor cores' async-proxy reads before the barrier that publishes a tile.
//
// Each wgmma chain is committed and waited for before its results are used;
// the two warpgroups of a block (and the blocks of an SM) overlap one
// another's softmax and matrix work.
//
//===----------------------------------------------------------------------===//
#include "ForwardBuilder.h"
#include "Fragments.h"
#include "Recipes.h"
#include "Wgmma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class Sm90ForwardBuilder : public ForwardBuilder {
public:
  using ForwardBuilder::ForwardBuilder;

private:
  Value tiles;    // the swizzled tiles, one 1-D view in elements
  Value tileAddr; // i64 shared-memory address of `tiles` (1024-aligned)
  Value qDesc;    // this warpgroup's 64 rows of Q, k-step 0
  int64_t qElems = 0, kElems = 0, vElems = 0; // one tile, one stage

  void carveSharedMemory() override;
  Value loadQTile() override;
  Value loadKVBlock(Value block, Value stage) override;
  void publishTiles() override;
  SmallVector<Frags> computeScores(ArrayRef<Frags> qRegs, Value stage) override;
  void accumulateOutput(SmallVector<Value> &acc, const PackedP &packedP,
                        Value stage) override;

  /// Element offsets of the K and V tiles of `stage`.
  Value kOffset(Value stage);
  Value vOffset(Value stage);
  /// i64 shared address of element `offset` of `tiles`.
  Value addressOf(Value offset);
  /// Copies `rows` x `cols` of operand `name` from row `rowStart` into the
  /// swizzled tile at element `offset`.
  void copySwizzled(StringRef name, Value base, Value rowStride, Value rowStart,
                    Value offset, int64_t rows, int64_t cols,
                    SmallVectorImpl<Value> &tokens);
  /// Byte offset of k-step kk inside a K-major swizzled tile of `rows` rows.
  static int64_t kStepBytes(int64_t kk, int64_t rows) {
    return (kk / 4) * rows * wgmma::kSwizzleRowBytes + (kk % 4) * 32;
  }
};

void Sm90ForwardBuilder::carveSharedMemory() {
  qElems = s.blockM * s.headDim;
  kElems = s.blockN * s.headDim;
  vElems = s.blockN * s.headDimV;
  Value raw = sharedMemoryBytes();
  // The swizzle is a function of address bits 4-9: tiles start at 1024-byte
  // boundaries. The dynamic shared memory's start is only 16-byte aligned,
  // so round up inside the kSm90AlignSlack bytes KernelSpec reserves.
  Value addr = memref::ExtractAlignedPointerAsIndexOp::create(b, raw);
  Value align = cIdx(b, wgmma::kSwizzleAtomBytes);
  Value pad = arith::RemUIOp::create(
      b, arith::SubIOp::create(b, align, arith::RemUIOp::create(b, addr, align)),
      align);
  auto wg = gpu::AddressSpaceAttr::get(b.getContext(),
                                       gpu::AddressSpace::Workgroup);
  int64_t total = qElems + s.stages * (kElems + vElems);
  auto ty = MemRefType::get({total}, s.elementType, MemRefLayoutAttrInterface(), wg);
  tiles = memref::ViewOp::create(b, ty, raw, pad, ValueRange{});
  tileAddr = arith::IndexCastOp::create(b, b.getI64Type(),
                                        arith::AddIOp::create(b, addr, pad));
  // Warpgroup w's rows start 64 rows (8 swizzle atoms) into each column
  // block of Q.
  Value wgRows = arith::MulIOp::create(
      b, arith::DivUIOp::create(b, warp, cIdx(b, 4)), cIdx(b, 64 * 64));
  qDesc = wgmma::kMajorDescriptor(b, addressOf(wgRows));
}

Value Sm90ForwardBuilder::addressOf(Value offset) {
  Value bytes = arith::IndexCastOp::create(
      b, b.getI64Type(), arith::MulIOp::create(b, offset, cIdx(b, 2)));
  return arith::AddIOp::create(b, tileAddr, bytes);
}

Value Sm90ForwardBuilder::kOffset(Value stage) {
  return arith::AddIOp::create(
      b, cIdx(b, qElems), arith::MulIOp::create(b, stage, cIdx(b, kElems)));
}

Value Sm90ForwardBuilder::vOffset(Value stage) {
  return arith::AddIOp::create(
      b, cIdx(b, qElems + s.stages * kElems),
      arith::MulIOp::create(b, stage, cIdx(b, vElems)));
}

void Sm90ForwardBuilder::copySwizzled(StringRef name, Value base,
                                      Value rowStride, Value rowStart,
                                      Value offset, int64_t rows, int64_t cols,
                                      SmallVectorImpl<Value> &tokens) {
  Value limit = name == "q" ? seqQ : seqK;
  issueCopies(arg.lookup(name), base, rowStride, rowStart, limit, tiles, rows,
              cols, tokens, [&](Value r, Value c) {
                return SmallVector<Value>{arith::AddIOp::create(
                    b, offset, wgmma::swizzledOffset(b, r, c, rows))};
              });
}

Value Sm90ForwardBuilder::loadQTile() {
  SmallVector<Value> tokens;
  copySwizzled("q", qBase, qStrideS, mStart, cIdx(b, 0), s.blockM, s.headDim,
               tokens);
  return commitGroup(tokens);
}

Value Sm90ForwardBuilder::loadKVBlock(Value block, Value stage) {
  Value rowStart = arith::MulIOp::create(b, block, cIdx(b, s.blockN));
  // K and V of a block form one commit group (see Sm80Forward.cpp).
  SmallVector<Value> tokens;
  copySwizzled("k", kBase, kStrideS, rowStart, kOffset(stage), s.blockN,
               s.headDim, tokens);
  copySwizzled("v", vBase, vStrideS, rowStart, vOffset(stage), s.blockN,
               s.headDimV, tokens);
  return commitGroup(tokens);
}

void Sm90ForwardBuilder::publishTiles() {
  // cp.async writes through the generic proxy, wgmma reads through the
  // async proxy: order them (each writing thread, before the barrier).
  NVVM::FenceProxyOp::create(
      b, NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
}

SmallVector<ForwardBuilder::Frags>
Sm90ForwardBuilder::computeScores(ArrayRef<Frags>, Value stage) {
  Value kDesc = wgmma::kMajorDescriptor(b, addressOf(kOffset(stage)));
  SmallVector<Value> acc;
  wgmma::fence(b);
  for (int64_t kk = 0; kk < nTilesD; ++kk)
    acc = wgmma::mmaShared(
        b, acc, wgmma::advance(b, qDesc, kStepBytes(kk, s.blockM)),
        wgmma::advance(b, kDesc, kStepBytes(kk, s.blockN)), s.blockN,
        s.elementType, /*accumulate=*/kk > 0, /*transposeB=*/false);
  wgmma::commitGroup(b);
  wgmma::waitGroup(b, 0);
  acc = wgmma::pinRegisters(b, acc);
  // The warp's slice: nTilesN m16n8 accumulators of one m-tile.
  SmallVector<Frags> sc(1, Frags(nTilesN));
  for (int64_t n = 0; n < nTilesN; ++n) {
    Value f = accZero(b);
    for (int64_t e = 0; e < 4; ++e)
      f = accSet(b, f, acc[4 * n + e], e / 2, e % 2);
    sc[0][n] = f;
  }
  return sc;
}

void Sm90ForwardBuilder::accumulateOutput(SmallVector<Value> &acc,
                                          const PackedP &packedP, Value stage) {
  // V is [key][dv]: an N-major B operand whose 64-column blocks are a
  // tile of block_n rows apart; k-step kk starts 16 rows (2 atoms) further.
  Value vDesc = wgmma::mnMajorDescriptor(
      b, addressOf(vOffset(stage)), s.blockN * wgmma::kSwizzleRowBytes);
  SmallVector<Value> o;
  for (int64_t n = 0; n < nTilesDv; ++n)
    for (int64_t e = 0; e < 4; ++e)
      o.push_back(accGet(b, acc[n], e / 2, e % 2));
  SmallVector<Value> p;
  for (int64_t n = 0; n < nTilesN; ++n)
    for (int64_t i = 0; i < 2; ++i)
      p.push_back(packedP[0][n][i]);
  // The rescaled O and the packed P are written by ordinary instructions:
  // they must be in their registers before the fence.
  o = wgmma::pinRegisters(b, o);
  p = wgmma::pinRegisters(b, p);
  wgmma::fence(b);
  for (int64_t kk = 0; kk < s.blockN / 16; ++kk) {
    // Key tiles 2kk and 2kk+1 of P form the A operand of k-step kk.
    Value a[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
    o = wgmma::mmaRegisterA(
        b, o, a, wgmma::advance(b, vDesc, kk * 16 * wgmma::kSwizzleRowBytes),
        s.headDimV, s.elementType, /*accumulate=*/true, /*transposeB=*/true);
  }
  wgmma::commitGroup(b);
  wgmma::waitGroup(b, 0);
  o = wgmma::pinRegisters(b, o);
  for (int64_t n = 0; n < nTilesDv; ++n) {
    Value f = acc[n];
    for (int64_t e = 0; e < 4; ++e)
      f = accSet(b, f, o[4 * n + e], e / 2, e % 2);
    acc[n] = f;
  }
}

} // namespace

void mlir::flash::buildSm90ForwardKernel(gpu::GPUFuncOp func,
                                         const KernelSpec &spec) {
  Sm90ForwardBuilder(func, spec).build();
}
