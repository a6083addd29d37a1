//===- Sm90Fp8Forward.cpp - the FP8 (e4m3) Hopper forward -----------------===//
//
// The sm90ws schedule (Sm90WsForward.cpp: a TMA producer warpgroup, two
// wgmma consumer warpgroups, the softmax of block j overlapping P·V of block
// j-1) on e4m3 operands, with docs/FP8.md's semantics:
//
//   S  = Q8 · K8ᵀ                    wgmma m64n{block_n}k32 e4m3, f32 acc
//   p  = exp2(S · scale·qd·kd·log2 e − m + 8)      (256 · the softmax's p)
//   P8 = e4m3(p)                     cvt.rn.satfinite, in registers
//   O += P8 · V8                     wgmma m64n{Dv}k32 e4m3, P8 from registers
//   O  = v_descale · O / l,  LSE = (m + log2 l − 8) · ln 2
//
// Per-block descales (KernelSpec::blockDescales): a warp's 16 rows share
// one q_descale (BQ is a multiple of 16), a key block one k_descale and one
// v_descale (BK a multiple of block_n). k_descale goes into each block's
// score factor; O is kept in units of the current block's v_descale,
// rescaled by dv(j - 1) / dv(j) with the softmax's alpha, and the last
// block's applied in the epilogue.
//
// The shared-memory tiles hold bytes in the 16-bit tiles' geometry: a Q or
// K row of D e4m3 elements is D / 128 swizzle rows, as a 16-bit row of D / 2
// elements is; at D = 64 a row is 64 bytes, one row of the 64-byte swizzle
// (KernelSpec::tmaSwizzleBytes: the TMA box, the tensor map's swizzle and
// the S product's descriptors follow it). The second product reads its B
// operand K-major only (8-bit wgmma has no transpose), so V arrives
// transposed: the runtime's Vᵀ
// [B][Hkv][Dv][Sk] (docs/KERNEL_ABI.md "FP8 forwards"), loaded as Dv rows of
// block_n = 128 keys, one swizzle row each.
//
// P's layout: the k32 A fragment of wgmma's register operand, which
// e4m3ProbabilityOperands (Fragments.h) builds from each thread's own
// accumulator pairs: Vᵀ's keys come permuted within groups of 32 to match
// (fp8_vt_layout.h), and the tensor map spans them to a whole group.
//
//===----------------------------------------------------------------------===//
#include "Fp8Descales.h"
#include "Fragments.h"
#include "Recipes.h"
#include "Sm90WsForward.h"
#include "Wgmma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::flash;
using namespace mlir::flash::frag;

namespace {

class Sm90Fp8ForwardBuilder : public Fp8Descales<Sm90WsForwardBuilder> {
public:
  using Fp8Descales<Sm90WsForwardBuilder>::Fp8Descales;

protected:
  void readForwardArguments() override {
    // The producer's TMA copies and the epilogue's stores address the
    // operands themselves: no Q/K/V bases or strides here.
    readArguments();
    mStart = firstRowOfBlock(gpu::BlockIdOp::create(b, gpu::Dimension::x),
                             gpu::GridDimOp::create(b, gpu::Dimension::x));
  }

  /// Tiles in 16-bit units (swizzledAddress's): block_m x D / 2 for Q,
  /// block_n x D / 2 per K stage, Dv x block_n / 2 per Vᵀ stage.
  void carveSwizzledQKV() override {
    qElems = s.blockM * s.headDim / 2;
    kElems = s.blockN * s.headDim / 2;
    vElems = s.headDimV * s.blockN / 2;
    carveSwizzledTiles(qElems + s.stages * (kElems + vElems));
  }

  // K is copied as the 16-bit forward's (rows of D bytes); Vᵀ is not.
  void copyValues(Value j, Value stage, Value full) override {
    // Vᵀ: Dv rows from row 0, block_n keys from the block's first.
    copyTile("vt", keyStartAt(j), cIdx(b, 0), headKV, vOffset(stage),
             s.headDimV, s.blockN, full);
  }

  void prepareTile(Value nStart, Value nEnd) override {
    prepareDescales(nStart, nEnd);
  }

  SmallVector<Value> issueScores(Value stage) override {
    // Q and K rows of D bytes: 128-byte swizzle rows, or at D = 64 whole
    // rows of the 64-byte swizzle (warpgroupQDescriptor's too).
    int64_t rowBytes = s.tmaSwizzleBytes(s.headDim);
    Value kDesc = wgmma::kMajorDescriptor(b, swizzledAddress(kOffset(stage)),
                                          rowBytes);
    return wgmma::productKMajor(b, qDesc, s.blockM, kDesc, s.blockN,
                                s.headDim, s.elementType, rowBytes);
  }

  SmallVector<Value> issueOutput(ArrayRef<Value> o, ArrayRef<Value> p,
                                 Value stage) override {
    // Vᵀ is K-major: Dv rows of block_n keys, k-step kk 32 keys further,
    // in swizzle rows of copyTile's width.
    int64_t rowBytes = s.tmaSwizzleBytes(s.blockN);
    Value vDesc = wgmma::kMajorDescriptor(b, swizzledAddress(vOffset(stage)),
                                          rowBytes);
    SmallVector<Value> acc(o);
    for (int64_t kk = 0; kk < s.blockN / 32; ++kk) {
      Value a[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
      acc = wgmma::mmaRegisterA(
          b, acc, a,
          wgmma::advance(b, vDesc,
                         wgmma::kStepBytes(kk, s.headDimV, rowBytes)),
          s.headDimV, s.elementType, /*accumulate=*/true,
          /*transposeB=*/false);
    }
    wgmma::commitGroup(b);
    return acc;
  }

  SmallVector<Value> packedRegisters(const PackedP &p) override {
    return e4m3ProbabilityOperands(b, p[0]);
  }
};

} // namespace

void mlir::flash::buildSm90Fp8ForwardKernel(gpu::GPUFuncOp func,
                                            const KernelSpec &spec) {
  Sm90Fp8ForwardBuilder(func, spec).buildWarpSpecialized();
}
