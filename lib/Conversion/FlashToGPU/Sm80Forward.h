//===- Sm80Forward.h - the sm80 recipe's forward matrix engine -*- C++ -*-===//
//
// The mma.sync engine of the forward schedule (ForwardBuilder): ldmatrix +
// mma.sync m16n8k16 on swizzled or padded tiles filled by cp.async. The
// forward kernel is this class as it is; the split-KV decode kernel
// (Sm80Decode.cpp) is this engine under another tile scheduler, operand
// producer and epilogue.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SM80FORWARD_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_SM80FORWARD_H

#include "ForwardBuilder.h"
#include "Fragments.h"

namespace mlir::flash {

class Sm80ForwardBuilder : public ForwardBuilder {
public:
  using ForwardBuilder::ForwardBuilder;

protected:
  // Padded rows: [block_m][D + pad], [stages][block_n][D + pad] (and Dv).
  Value sQ, sK, sV;

  enum class Operand { Q, K, V };
  /// Starts the copies of the Q tile or of stage `stage`'s K or V tile from
  /// row `rowStart`, in the kernel's layout. Rows from `rowLimit` (Sq for
  /// Q, Sk for K and V unless given) are zero-filled; `rowAddress` locates
  /// rows that are not one stride apart, `paged` the rows of a paged cache.
  void copyOperand(Operand op, Value stage, Value rowStart,
                   SmallVectorImpl<Value> &tokens,
                   RowCheck check = RowCheck::PerChunk,
                   RowAddress rowAddress = nullptr, Value rowLimit = Value(),
                   const PagedRows *paged = nullptr);
  /// ldmatrix.x4 of the 16 x 16 block at stored (row0, col0) of the Q tile
  /// or of stage `stage`'s K or V tile, in the kernel's layout.
  frag::Regs loadBlock(Operand op, Value stage, frag::X4 pattern, Value row0,
                 int64_t col0);

  /// Stored row `row` of a K/V tile as this warp sees it (its keys start
  /// at warpKeyOffset where warps split the keys).
  Value keyRow(int64_t row);

  void carveSharedMemory() override;
  Value loadQTile() override;
  Value loadKVBlock(Value block, Value stage) override;
  bool keepsQInRegisters() override { return s.qInRegisters(); }
  Frags loadQOperand(int64_t m, int64_t kk) override;
  SmallVector<Frags> computeScores(ArrayRef<Frags> qRegs, Value stage) override;
  /// computeScores' parts: the B operands of key tiles 2p and 2p + 1 at
  /// k-step kk (ldmatrix of K's rows), and one mma of the A and B operands
  /// into accumulator c (m16n8k16 of the element type). The FP8 forward
  /// (Sm80Fp8Forward.cpp) reads them from its byte tiles into m16n8k32 e4m3.
  virtual frag::Regs loadKeyOperands(Value stage, int64_t p, int64_t kk);
  virtual Value mmaStep(ArrayRef<Value> a, ArrayRef<Value> bOp, Value c);
  void accumulateOutput(SmallVector<Value> &acc, const PackedP &packedP,
                        Value stage) override;
};

} // namespace mlir::flash

#endif
