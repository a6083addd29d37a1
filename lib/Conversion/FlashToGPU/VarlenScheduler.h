//===- VarlenScheduler.h - the packed-batch tile scheduler -------*- C++ -*-===//
//
// The tile scheduler of a packed (varlen) batch (docs/KERNEL_ABI.md,
// "Varlen"), as a part any forward engine takes on: VarlenScheduler<E> is
// engine E (Sm80ForwardBuilder, Sm90ForwardBuilder, and with one tile a
// block Sm90WsForwardBuilder) with the block placed in its sequence
// instead of in a batch of equal lengths. Everything else (operand
// producer, mainloop, score pipeline, epilogue) is E's, unchanged.
//
// The grid is (ceil(max_seqlen_q / block_m), Hq, num_seqs): block z reads
// cu_seqlens_q[z], [z + 1] and cu_seqlens_k[z], [z + 1], and its sequence
// becomes the whole attention the engine computes: seq_q and seq_k are the
// sequence's lengths, so the causal / window band (bottom-right by the
// sequence's own lengths), the tails of the last blocks and the rows of a
// fully masked query are the sequence's; every operand's base is the
// sequence's first row, so no copy, store or mask ever reaches another
// sequence's rows (they are past seq_q / seq_k of this one). A block whose
// first query row is past its sequence's length returns at once. A launch
// with grid.z = num_seqs + 1 also writes the rows [cu_seqlens_q[num_seqs],
// seq_q) that no sequence owns, as a sequence without keys (O = 0, LSE =
// +inf; flash-lower-to-gpu does, for flash.attention's contract).
// Offsets outside [0, total] or decreasing are clamped where they are
// read: outside the contract the answer is wrong, but nothing outside the
// operands is read or written.
//
// VarlenBackwardScheduler<E> is the same part for the backward kernels: E
// is the main dK/dV kernel (Sm80/Sm90BackwardBuilder), whose grid is
// (ceil(max_seqlen_k / block_n), Hq, num_seqs) over key blocks, or the
// deterministic dQ kernel (Sm80BackwardDQBuilder), whose grid is
// (ceil(max_seqlen_q / block_m), Hq, num_seqs) over query blocks. The
// block reads its sequence as above, works on it as on a dense batch of
// one (lengths, band, tails, operand bases), and returns at once when its
// first key (query) row is past the sequence's key (query) length. The
// scratch buffers (Dsum, LSE, dq_accum [1, Hq, total_q, ...], the dK / dV
// slices [1, Hq, total_k, ...]) are the dense layouts over the packed
// rows: a sequence's rows are where they are in Q (K), so no padding per
// sequence is needed. The preprocess and postprocess kernels, row by row,
// need no scheduler: the dense ones run over the packed tensors.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_VARLENSCHEDULER_H
#define FLASHFUSE_LIB_CONVERSION_FLASHTOGPU_VARLENSCHEDULER_H

#include "BackwardBuilder.h"
#include "ForwardBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::flash {

/// The engine-independent half: where the block's sequence lies in the
/// packed operands, read from the cu_seqlens buffers.
struct PackedSequence {
  Value startQ, startK; // first packed row of the sequence in Q/O/LSE, K/V
  Value lengthQ, lengthK;
};

/// What the block z = num_seqs (past the last sequence) covers: the query
/// rows no sequence owns, without keys (the forward and the dQ kernel
/// write O = 0 / dQ = 0 for them), or the key rows no sequence owns,
/// without queries (the dK/dV kernel writes dK = dV = 0 for them).
enum class UnownedRows { Queries, Keys };

/// Reads sequence `z`'s rows (z an index, z = num_seqs being the rows past
/// the last offsets, as `unowned` says; numSeqs and the totals i32, as the
/// kernel arguments are): loads of cu_seqlens_q/k[z] and [z + 1], clamped
/// into [0, total] and non-decreasing. The results are index values,
/// sign-extended or, with `zeroExtend`, zero-extended (both are right:
/// every one is non-negative; which keeps fewer registers is the
/// engine's, see VarlenBackwardScheduler::placeSequence).
PackedSequence readPackedSequence(ImplicitLocOpBuilder &b, Value cuQ,
                                  Value cuK, Value z, Value numSeqs,
                                  Value totalQ, Value totalK,
                                  UnownedRows unowned = UnownedRows::Queries,
                                  bool zeroExtend = false);

/// The element offset of head `h`'s first row of `seq` in a packed
/// [1, H, total, D] operand `name` (the rows of K, V, grad_k and grad_v
/// from seq.startK, the others' from seq.startQ) with head and row strides
/// `strideH`, `strideS` (index values).
Value packedOperandBase(ImplicitLocOpBuilder &b, const PackedSequence &seq,
                        StringRef name, Value h, Value strideH, Value strideS);

/// Returns from the kernel when `exit` (i1, uniform over the block) holds;
/// the builder continues in the block where it does not.
void returnIf(ImplicitLocOpBuilder &b, Value exit);

template <class Engine>
class VarlenScheduler : public Engine {
public:
  using Engine::Engine;

protected:
  /// The block's sequence (re-read after the key loop with the block's
  /// coordinates, see rereadCoordinates).
  PackedSequence seq;

  void placeSequence() {
    auto &b = this->b;
    seq = readPackedSequence(b, this->arg.lookup("cu_seqlens_q"),
                             this->arg.lookup("cu_seqlens_k"), this->batchIdx,
                             this->arg.lookup("num_seqs"),
                             this->arg.lookup("seq_q"),
                             this->arg.lookup("seq_k"), UnownedRows::Queries,
                             /*zeroExtend=*/this->s.persistentGrid());
    this->seqQ = seq.lengthQ;
    this->seqK = seq.lengthK;
  }

  void readForwardArguments() override {
    auto &b = this->b;
    this->readArguments();
    if (this->s.persistentGrid()) {
      // The walk places each tile's sequence (placeTileSequence); the
      // copies are the TMA producer's, from no base.
      return;
    }
    placeSequence();
    this->diagOffset =
        this->s.causal == KernelSpec::Causal::BottomRight
            ? Value(arith::SubIOp::create(b, this->seqK, this->seqQ))
            : Value(arith::ConstantIndexOp::create(b, 0));
    this->mStart = this->firstRowOfBlock(
        gpu::BlockIdOp::create(b, gpu::Dimension::x),
        gpu::GridDimOp::create(b, gpu::Dimension::x));
    // The grid covers the longest sequence: the blocks past this one's
    // length have nothing to do.
    returnIf(b, arith::CmpIOp::create(b, arith::CmpIPredicate::sge,
                                      this->mStart, this->seqQ));
    this->qBase = this->operandBase("q", this->head);
    this->kBase = this->operandBase("k", this->headKV);
    this->vBase = this->operandBase("v", this->headKV);
    this->qStrideS = this->idx("q_stride_s");
    this->kStrideS = this->idx("k_stride_s");
    this->vStrideS = this->idx("v_stride_s");
  }

  /// A persistent walk's (the sm90ws forward's, over units of the
  /// longest sequence's query blocks x Hq x sequences): sequence `z`'s own
  /// query blocks, so the walk skips the units past them ...
  Value queryBlocksOfBatch(Value z) override {
    auto &b = this->b;
    PackedSequence in = readPackedSequence(
        b, this->arg.lookup("cu_seqlens_q"), this->arg.lookup("cu_seqlens_k"),
        z, this->arg.lookup("num_seqs"), this->arg.lookup("seq_q"),
        this->arg.lookup("seq_k"));
    return arith::CeilDivUIOp::create(
        b, arith::IndexCastUIOp::create(b, b.getI32Type(), in.lengthQ),
        arith::ConstantIntOp::create(b, b.getI32Type(), this->s.blockM));
  }
  /// ... and each tile's sequence read again where the tile is placed,
  /// rather than kept from the walk's test across the tile.
  void placeTileSequence() override {
    placeSequence();
    if (this->s.causal == KernelSpec::Causal::BottomRight)
      this->diagOffset = arith::SubIOp::create(this->b, this->seqK, this->seqQ);
  }

  /// The sequence's rows of head `h`: [1, H, total, D] operands, their
  /// batch stride unused.
  Value operandBase(StringRef name, Value h) override {
    return packedOperandBase(this->b, seq, name, h,
                             this->idx((name + "_stride_h").str()),
                             this->idx((name + "_stride_s").str()));
  }

  /// The epilogue that stores O straight from the fragments (padded tiles,
  /// an f32 O) keeps the coordinates it had before the key loop; the
  /// sequence it needs (O's and LSE's first row, the length) is read again
  /// from the offsets after the loop all the same, through a block index
  /// read opaquely, rather than kept in registers across it (kept, they
  /// spilled 24 bytes in the sm80 f32-O kernel at D = 128). The staged
  /// epilogue re-reads every coordinate itself (rereadCoordinates).
  void writeEpilogue(const typename Engine::SoftmaxState &final) override {
    if (!this->stagesOutput() && this->s.persistentGrid()) {
      placeSequence(); // the tile's, whose batchIdx the walk set
    } else if (!this->stagesOutput()) {
      Value z = this->batchIdx;
      this->batchIdx = this->readSpecialRegisterOpaquely("ctaid.z");
      placeSequence();
      this->batchIdx = z;
    }
    Engine::writeEpilogue(final);
  }

  /// The block's coordinates read afresh, and its sequence from them, so
  /// that the epilogue keeps nothing of the sequence's alive across the
  /// key loop.
  void rereadCoordinates() override {
    Engine::rereadCoordinates();
    placeSequence();
  }

  /// The TMA producer's tensor maps (the sm90ws engine's) are
  /// [1][H][total][D]: the sequence's rows from its first packed row, in
  /// batch 0. Its last tiles read rows of the next sequence (or the maps'
  /// zeros past the total): keys past the sequence's length are masked as
  /// a dense batch's tail is (P = 0), and query rows past it are never
  /// stored.
  Value tensorMapRowStart(bool keys) override {
    return keys ? seq.startK : seq.startQ;
  }
  Value tensorMapBatch() override {
    return arith::ConstantIndexOp::create(this->b, 0);
  }

  /// LSE is [1, Hq, total_q]: head h's rows of the sequence.
  Value lseRowStart() override {
    auto &b = this->b;
    return arith::AddIOp::create(
        b, arith::MulIOp::create(b, this->head, this->idx("seq_q")),
        seq.startQ);
  }
};

template <class Engine>
class VarlenBackwardScheduler : public Engine {
public:
  /// `unowned`: Keys for the dK/dV kernel, Queries for the dQ kernel (the
  /// rows its block z = num_seqs writes).
  VarlenBackwardScheduler(gpu::GPUFuncOp func, const KernelSpec &spec,
                          UnownedRows unowned)
      : Engine(func, spec), unowned(unowned) {}

protected:
  PackedSequence seq;
  UnownedRows unowned;

  /// The block's sequence, from block index z. The wgmma engines take its
  /// offsets and lengths zero-extended: their known-zero high words left
  /// the sm90ws D = 128 kernels 0-12 spill bytes where they had 4-20, and
  /// the sm90 bottom-right one 16 where it had 20; the sm80 engines'
  /// window and dQ kernels spilled 12-16 bytes more that way, so they keep
  /// them sign-extended.
  void placeSequence(Value z) {
    seq = readPackedSequence(this->b, this->arg.lookup("cu_seqlens_q"),
                             this->arg.lookup("cu_seqlens_k"), z,
                             this->arg.lookup("num_seqs"),
                             this->arg.lookup("seq_q"),
                             this->arg.lookup("seq_k"), unowned,
                             /*zeroExtend=*/this->s.usesWgmma());
    this->seqQ = seq.lengthQ;
    this->seqK = seq.lengthK;
  }

  void readBlockArguments() override {
    auto &b = this->b;
    this->readArguments();
    placeSequence(this->batchIdx);
    // Bottom-right causal by the sequence's own lengths.
    if (this->s.causal == KernelSpec::Causal::BottomRight)
      this->diagOffset = arith::SubIOp::create(b, this->seqK, this->seqQ);
  }

  /// The stores after the loop (dK/dV, or the dQ kernel's grad_q) need the
  /// sequence's first row and its length:
  /// read again from the offsets, through a block index read opaquely,
  /// rather than kept in registers across the query loop (kept, the
  /// bottom-right causal kernels spilled more on sm_90a than the dense
  /// ones, whose lengths are kernel parameters). The engine's own
  /// re-derivations first (the sm90ws backward's D = 128 kv head: 4-8
  /// spill bytes fewer in the causal softcap kernel).
  void enterEpilogue() override {
    Engine::enterEpilogue();
    placeSequence(this->readSpecialRegisterOpaquely("ctaid.z"));
  }

  /// The coordinates and the sequence afresh (as readBlockArguments).
  void rereadPlacement() override {
    this->rereadCoordinates();
    placeSequence(this->batchIdx);
    if (this->s.causal == KernelSpec::Causal::BottomRight)
      this->diagOffset =
          arith::SubIOp::create(this->b, this->seqK, this->seqQ);
  }

  /// The tensor maps (the sm90ws backward's) are [1][H][total][D]: the
  /// sequence's rows from its first packed row, in batch 0. A tile may
  /// read rows of the next sequence past this one's end; the masks of the
  /// tails give them P = 0, as the zeros of a dense batch's tail.
  Value tensorMapRowStart(bool keys) override {
    return keys ? seq.startK : seq.startQ;
  }
  Value tensorMapBatch() override {
    return arith::ConstantIndexOp::create(this->b, 0);
  }

  /// The grid covers the longest sequence: the blocks past this one's
  /// length have nothing to do. A key block of a sequence without queries
  /// is not past it: it writes dK = dV = 0.
  void exitPastEnd(Value first, bool keys) override {
    returnIf(this->b,
             arith::CmpIOp::create(this->b, arith::CmpIPredicate::sge, first,
                                   keys ? this->seqK : this->seqQ));
  }

  Value operandBase(StringRef name, Value h) override {
    return packedOperandBase(this->b, seq, name, h,
                             this->idx((name + "_stride_h").str()),
                             this->idx((name + "_stride_s").str()));
  }

  /// Head h's rows of [1, Hq, total, ...] scratch, from the sequence's
  /// first row (the totals are the seq_q / seq_k arguments).
  Value sliceRowStart(bool keys) override {
    auto &b = this->b;
    return arith::AddIOp::create(
        b,
        arith::MulIOp::create(b, this->head,
                              this->idx(keys ? "seq_k" : "seq_q")),
        keys ? seq.startK : seq.startQ);
  }
};

/// VarlenBackwardScheduler<E> with the block's placement kept in shared
/// memory (KernelSpec::keepsPlacementShared; E a BackwardBuilder): its
/// sequence is read from cu_seqlens once at entry and, with the block's
/// first key and kv head, written to the engine's placementSlot by thread
/// 0; every role reads it back by volatile loads where it needs it: the
/// producer's placement, each step of the consumers' query loop (the
/// lengths, the band, the dQ rows, the key block the products address,
/// and where the block copies them itself, the Q and dO rows) and the
/// epilogue. Nothing of it then lives in a register from the prologue
/// through the loop to the epilogue, where ptxas held (and spilled) it,
/// and nothing reads global memory again for it. The sm90ws engines
/// (roles, warp-specialised) and the sm90 one (one role) alike.
template <class Engine>
class SharedPlacementScheduler : public VarlenBackwardScheduler<Engine> {
  using Base = VarlenBackwardScheduler<Engine>;

public:
  using Base::Base;

protected:
  /// The slot's words.
  enum Word { StartQ, StartK, LengthQ, LengthK, KeyStart, HeadKV };

  /// The slot is written before the barrier that publishes the mbarriers'
  /// initialisation (KernelBuilderBase::createBarriers), which every role
  /// passes before it reads it.
  void carveSharedMemory() override {
    Engine::carveSharedMemory();
    auto &b = this->b;
    Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, this->tid,
                                        arith::ConstantIndexOp::create(b, 0));
    auto ifFirst = scf::IfOp::create(b, TypeRange{}, first, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
    auto i32 = [&](Value v) -> Value {
      return arith::IndexCastOp::create(b, b.getI32Type(), v);
    };
    // The kv head in 32 bits (the heads are i32 parameters): the entry's
    // index division takes a 64-bit path whose operands ptxas spilled.
    Value group = arith::DivUIOp::create(b, this->arg.lookup("heads_q"),
                                         this->arg.lookup("heads_kv"));
    const PackedSequence &q = this->seq;
    SmallVector<Value> words = {
        i32(q.startQ),  i32(q.startK),       i32(q.lengthQ),
        i32(q.lengthK), i32(this->kStart),
        arith::DivUIOp::create(b, i32(this->head), group)};
    for (auto [i, v] : llvm::enumerate(words))
      memref::StoreOp::create(
          b, v, this->placementSlot,
          ValueRange{arith::ConstantIndexOp::create(b, int64_t(i))});
    // Without roles there is no mbarrier-init barrier: one of its own
    // before the first read (the walk's range, right after).
    if (!this->s.warpSpecialized()) {
      b.setInsertionPointAfter(ifFirst);
      gpu::BarrierOp::create(b);
    }
  }

  /// Word `w` of the slot, zero-extended (every word is non-negative; the
  /// wgmma engines take the sequence so, see placeSequence).
  Value slotWord(Word w) {
    return arith::IndexCastUIOp::create(
        this->b, this->b.getIndexType(),
        this->loadSharedOpaquely(this->placementSlot, w));
  }

  /// The sequence (and the lengths, the bottom-right band's offset).
  void readSequence() {
    this->seq = {slotWord(StartQ), slotWord(StartK), slotWord(LengthQ),
                 slotWord(LengthK)};
    this->seqQ = this->seq.lengthQ;
    this->seqK = this->seq.lengthK;
    if (this->s.causal == KernelSpec::Causal::BottomRight)
      this->diagOffset =
          arith::SubIOp::create(this->b, this->seqK, this->seqQ);
  }

  /// Whether the producer (the role that calls rereadPlacement) reads its
  /// placement from cu_seqlens, as without the slot, while the consumers
  /// read the slot: at D = 64 (block_m = 128, eight statistic rows a step)
  /// the producer's 24 registers spilled 12-32 bytes holding the slot's
  /// words, and held nothing re-reading the offsets.
  bool producerReadsOffsets() const {
    return this->s.onlyConsumersReadPlacement();
  }

  void rereadPlacement() override {
    if (producerReadsOffsets()) {
      placedFromOffsets = true;
      Base::rereadPlacement();
      return;
    }
    this->rereadCoordinates();
    readSequence();
    this->kStart = slotWord(KeyStart);
  }

  /// Each role's walk (the consumers' and the producer's prologue): from
  /// the slot's first key, which the role keeps (ptxas merged the
  /// producer's opaque re-read of ctaid.x with the entry's and spilled the
  /// product for both roles), its bounds in 32 bits as the base's; a role
  /// placed from the offsets walks from its own first key.
  std::pair<Value, Value> blockQueryRange() override {
    if (placedFromOffsets)
      return Base::blockQueryRange();
    auto [first, end] = this->queryBlockRange(slotWord(KeyStart),
                                              this->s.blockN, this->s.blockM);
    return {this->narrowBlockIndex(first), this->narrowBlockIndex(end)};
  }

  Value queryLengthAgain() override { return slotWord(LengthQ); }

  void enterEpilogue() override {
    readSequence();
    this->kStart = slotWord(KeyStart);
    this->headKV = slotWord(HeadKV);
  }

  /// Each step reads the placement afresh (and the LSE rows' start derived
  /// from it) before the engine takes its loop-local coordinates;
  /// leaveQueryLoop puts the prologue's values back for whatever follows
  /// the loop.
  void enterQueryLoop() override {
    outer = {this->seq,        this->seqQ,  this->seqK, this->diagOffset,
             this->rowBaseLse, this->qBase, this->doBase};
    readSequence();
    this->rowBaseLse = this->sliceRowStart(/*keys=*/false);
    this->qBase = this->operandBase("q", this->head);
    this->doBase = this->operandBase("do", this->head);
    this->kStart = slotWord(KeyStart);
    Engine::enterQueryLoop();
  }
  void leaveQueryLoop() override {
    Engine::leaveQueryLoop();
    std::tie(this->seq, this->seqQ, this->seqK, this->diagOffset,
             this->rowBaseLse, this->qBase, this->doBase) = outer;
  }

private:
  std::tuple<PackedSequence, Value, Value, Value, Value, Value, Value> outer;
  /// Set once rereadPlacement took the offsets (producerReadsOffsets).
  bool placedFromOffsets = false;
};

} // namespace mlir::flash

#endif
