//===- Match.h - shared vocabulary of the attention matcher -----*- C++ -*-===//
//
// flash-raise-attention recognises attention in two input forms (linalg on
// tensors, TOSA) with one matcher. The form-specific files turn ops into the
// neutral views declared here (elementwise function, reduction, contraction,
// reshape); everything else (softmax anchor, score analysis, operand layouts,
// rewrite) only sees those views, so each rule is written once.
//
// Index bookkeeping: every tensor on the score path is read at a position
// given as a LinExpr per dimension over the logical attention dimensions
// (b, h, q, k), e.g. a [B*H, Sq, Sk] batch_matmul result is read at
// (b*H + h, q, k).
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_LIB_DIALECT_FLASH_TRANSFORMS_RAISEATTENTION_MATCH_H
#define FLASHFUSE_LIB_DIALECT_FLASH_TRANSFORMS_RAISEATTENTION_MATCH_H

#include "flashfuse/Dialect/Flash/IR/FlashDialect.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Allocator.h"

#include <optional>
#include <string>

namespace mlir::flash::raise {

//===----------------------------------------------------------------------===//
// Failure reporting
//===----------------------------------------------------------------------===//

/// Why a candidate was not rewritten: the matcher step and the reason.
struct Why {
  std::string step;
  std::string reason;
  Operation *at = nullptr;
};

/// Records the first failure; `fail(...)` returns failure() so matchers can
/// `return why.fail("step", "reason")`.
struct Explainer {
  std::optional<Why> why;
  /// Set once a softmax matched: later failures are near-misses.
  bool softmaxFound = false;
  LogicalResult fail(llvm::StringRef step, const llvm::Twine &reason,
                     Operation *at = nullptr) {
    if (!why)
      why = Why{step.str(), reason.str(), at};
    return failure();
  }
};

//===----------------------------------------------------------------------===//
// Linear index expressions over (b, h, q, k)
//===----------------------------------------------------------------------===//

enum LogicalDim : unsigned { kB = 0, kH = 1, kQ = 2, kK = 3, kNumLogical = 4 };

/// c[b]*b + c[h]*h + c[q]*q + c[k]*k + cst.
struct LinExpr {
  int64_t c[kNumLogical] = {0, 0, 0, 0};
  int64_t cst = 0;

  static LinExpr dim(unsigned d) {
    LinExpr e;
    e.c[d] = 1;
    return e;
  }
  static LinExpr constant(int64_t v) {
    LinExpr e;
    e.cst = v;
    return e;
  }
  LinExpr operator+(const LinExpr &o) const;
  LinExpr operator-(const LinExpr &o) const;
  LinExpr operator*(int64_t f) const;
  bool operator==(const LinExpr &o) const;
  bool operator!=(const LinExpr &o) const { return !(*this == o); }
  bool isConstant() const { return !c[0] && !c[1] && !c[2] && !c[3]; }
  bool uses(unsigned d) const { return c[d] != 0; }
  /// The dimension when this is exactly `1 * d`.
  std::optional<unsigned> asDim() const;
  int64_t eval(const int64_t idx[kNumLogical]) const;
};
using LinIndex = llvm::SmallVector<LinExpr, 4>;

/// Extents of (b, h, q, k); needed to simplify div/mod of a mixed-radix index.
struct Extents {
  int64_t e[kNumLogical];
};

/// A tensor of rank <= 4 read at its own position: dim i is logical dim i.
LinIndex identityIndex(unsigned rank);
/// Extents of such a tensor's dims (1 for the missing ones).
Extents extentsOf(llvm::ArrayRef<int64_t> shape);

/// e floordiv m / e mod m when e is a mixed-radix index whose low part stays
/// in [0, m); nullopt otherwise.
std::optional<LinExpr> floorDivBy(const LinExpr &e, int64_t m,
                                  const Extents &ext);
std::optional<LinExpr> modBy(const LinExpr &e, int64_t m, const Extents &ext);

/// Composes an affine map (from loop dims to tensor dims) with the positions
/// of the loop dims; nullopt for non-affine-linear results.
std::optional<LinIndex> applyMap(AffineMap map, llvm::ArrayRef<LinExpr> loops,
                                 const Extents &ext);

/// The loop positions given the result positions through a permutation map.
std::optional<LinIndex> invertPermutation(AffineMap map,
                                          llvm::ArrayRef<LinExpr> result);

/// The source position of a reshape (expand or collapse) read at `result`.
std::optional<LinIndex>
reshapeSourceIndex(llvm::ArrayRef<ReassociationIndices> reassoc, bool expand,
                   llvm::ArrayRef<int64_t> srcShape,
                   llvm::ArrayRef<int64_t> resShape,
                   llvm::ArrayRef<LinExpr> result, const Extents &ext);
/// The result position of a reshape whose source is read at `src`.
std::optional<LinIndex>
reshapeResultIndex(llvm::ArrayRef<ReassociationIndices> reassoc, bool expand,
                   llvm::ArrayRef<int64_t> srcShape,
                   llvm::ArrayRef<int64_t> resShape,
                   llvm::ArrayRef<LinExpr> src, const Extents &ext);

//===----------------------------------------------------------------------===//
// Neutral views of the ops of both input forms
//===----------------------------------------------------------------------===//

/// Scalar operations of elementwise bodies (linalg) and elementwise ops
/// (TOSA). Comparisons carry the arith predicate; casts the target type.
enum class ScalarKind {
  Add, Sub, Mul, Div, Neg, Max, Min, Exp, Tanh, Abs, Log, Sqrt, Rsqrt,
  Select, CmpF, CmpI, And, Or, Xor, Not, Cast,
  /// Passes its only input through (transposes, broadcasts of TOSA).
  Copy,
  /// 1 / x (tosa.reciprocal).
  Recip
};

/// One elementwise op in the neutral form: `inputs[i]` is read at
/// `inputMaps[i]` (loop dims -> input dims), the result at `outputMap`
/// (a permutation). The scalar function is given either by a linalg body
/// (`body`, yielding result 0) or by one ScalarKind over all inputs (TOSA).
struct ElementwiseView {
  Operation *op = nullptr;
  llvm::SmallVector<Value> inputs;
  llvm::SmallVector<AffineMap> inputMaps;
  AffineMap outputMap;
  Block *body = nullptr;
  ScalarKind kind = ScalarKind::Add;
  int64_t predicate = 0; // CmpF / CmpI
  bool castUnsigned = false;
};

enum class ReductionKind { Max, Sum, And };
struct ReductionView {
  Operation *op = nullptr;
  ReductionKind kind;
  Value input;
  unsigned axis = 0;
  /// Whether the result keeps the reduced dimension with size 1.
  bool keepDim = false;
};

/// out[batch..., m, n] = sum_r lhs[...] * rhs[...] over the loop dims of
/// `maps` (lhs, rhs, out).
struct ContractionView {
  Operation *op = nullptr;
  Value lhs, rhs, result;
  llvm::SmallVector<AffineMap, 3> maps;
  llvm::SmallVector<unsigned> batchDims;
  unsigned mDim = 0, nDim = 0, rDim = 0;
};

struct ReshapeView {
  Value source;
  llvm::SmallVector<ReassociationIndices> reassoc;
  bool expand = false; // source rank < result rank
};

/// Matchers of one input form; each returns nullopt when the op is not of
/// that kind in this form.
std::optional<ElementwiseView> linalgElementwise(Operation *op);
std::optional<ReductionView> linalgReduction(Operation *op);
std::optional<ContractionView> linalgContraction(Operation *op);
std::optional<ReshapeView> tensorReshape(Operation *op);
std::optional<Attribute> splatConstant(Value v);

std::optional<ElementwiseView> tosaElementwise(Operation *op);
std::optional<ReductionView> tosaReduction(Operation *op);
std::optional<ContractionView> tosaContraction(Operation *op);
std::optional<ReshapeView> tosaReshape(Operation *op);

/// Both forms.
std::optional<ElementwiseView> matchElementwise(Operation *op);
std::optional<ReductionView> matchReduction(Operation *op);
std::optional<ContractionView> matchContraction(Operation *op);
std::optional<ReshapeView> matchReshape(Operation *op);
/// A dense constant (arith.constant / tosa.const), splat or not.
std::optional<Attribute> denseConstant(Value v);

//===----------------------------------------------------------------------===//
// Scalar expression trees
//===----------------------------------------------------------------------===//

/// The value of a tensor at one logical position, as a tree of scalar ops.
/// Leaves: the raw Q·Kᵀ score, constants, linear functions of (b, h, q, k)
/// and reads of tensors that are not elementwise functions of anything.
struct Expr {
  enum Kind { Score, Const, Index, Read, Op } kind;
  Type type;                 // scalar type in the source IR
  double fval = 0;           // Const (float or integer value)
  bool isFloat = false;      // Const
  LinExpr index;             // Index
  Value tensor;              // Read
  LinIndex at;               // Read
  ScalarKind op = ScalarKind::Add;
  int64_t predicate = 0;
  bool castUnsigned = false;
  llvm::SmallVector<Expr *, 3> operands;

  /// Whether the tree reads the Q·Kᵀ scores (directly or through a tensor
  /// computed from them).
  bool hasScore = false;
};

/// Owns the nodes of one match and builds trees from IR.
class ExprBuilder {
public:
  ExprBuilder(Value score, LinIndex scoreAt, Extents ext)
      : score(score), scoreAt(std::move(scoreAt)), ext(ext) {}

  /// The tree of `v` read at `at`; values in `stops` are leaves (Read).
  /// Fails (with `why`) on reads of the score at another position, index
  /// maps that are not linear and trees over the size budget.
  FailureOr<Expr *> build(Value v, llvm::ArrayRef<LinExpr> at,
                          Explainer &why);
  llvm::DenseSet<Value> stops;

  Expr *constant(double v, Type t);
  Expr *op(ScalarKind k, llvm::ArrayRef<Expr *> ops, Type t);

private:
  FailureOr<Expr *> buildBody(const ElementwiseView &ew, Value scalar,
                              llvm::ArrayRef<LinExpr> loops,
                              llvm::DenseMap<Value, Expr *> &memo,
                              Explainer &why);
  Expr *make(Expr::Kind k, Type t);

  Value score;
  LinIndex scoreAt;
  Extents ext;
  llvm::SpecificBumpPtrAllocator<Expr> alloc;
  unsigned budget = 2048;
};

/// Structural equality of two trees.
bool sameExpr(const Expr *a, const Expr *b);
/// Strips casts between float types (f32 upcasts of f16 models).
const Expr *stripFloatCasts(const Expr *e);
/// True for a constant <= -6e4 (float16 lowest and beyond, -inf included):
/// such an additive value zeroes the probability like -inf does.
bool isMaskingConstant(const Expr *e);
bool isConstant(const Expr *e, double v);
/// Whether the tree reads logical dim `d` (through an index or a read).
bool exprUsesDim(const Expr *e, unsigned d);

//===----------------------------------------------------------------------===//
// Steps of the match
//===----------------------------------------------------------------------===//

/// The softmax found at an anchor: P = softmax(X) along `axis`.
struct SoftmaxMatch {
  Value input;  // X
  Value output; // P
  unsigned axis;
  Operation *anchor;
};
/// linalg.softmax, or max/sub/exp/sum/div in either form, anchored at a max
/// reduction or a linalg.softmax.
FailureOr<SoftmaxMatch> matchSoftmax(Operation *anchor, Explainer &why);

/// A rank-4 logical view [B, H, S, D] of an attention operand.
struct OperandView {
  Value base;             // the tensor the op will read (before splitting)
  int64_t perm[4];        // base dim of logical (B, H, S, D); -1: absent
  int64_t bhMerged = -1;  // base dim holding b*H + h when B, H are merged
  int64_t kvGroups = 1;   // GQA: each base head serves kvGroups query heads
  double scale = 1.0;     // constant factor peeled off the operand
  /// Heads repeated in the base itself (headGroupsOf): the op reads every
  /// headStride-th head of perm[1] only, a strided view of the base.
  int64_t headStride = 1;
};

/// Roles of the dims of a contraction operand.
enum class Role { B, H, BH, S, D };

/// Walks up from a contraction operand through transposes, reshapes of the
/// batch dims, constant scalings and (K/V) head broadcasts.
/// `allowTranspose` is off for Q: its layout is the output's, and the
/// output must keep the layout the model had.
FailureOr<OperandView> traceOperand(Value v, llvm::ArrayRef<Role> roles,
                                    bool allowTranspose, bool allowGqa,
                                    Explainer &why);

/// The largest g such that `t` holds the same values at indices i and j of
/// `dim` whenever i / g == j / g, proven through elementwise ops, full
/// slices, concatenations and reshapes (HeadGroups.cpp); 1 when unknown.
int64_t headGroupsOf(Value t, unsigned dim);

/// The classified parts of the score expression.
struct ScoreParts {
  double scale = 1.0;
  std::optional<double> softcap;
  /// Additive terms independent of the score (bias).
  llvm::SmallVector<Expr *> biasTerms;
  /// Function of the scaled (and softcapped) score, when not the identity;
  /// its Score leaves stand for that value.
  Expr *residual = nullptr;
  /// Keep-conditions (i1 trees); all must hold.
  llvm::SmallVector<Expr *> keep;
};
/// Splits the softmax input's tree into scale, softcap, bias, masks and a
/// residual score_mod.
LogicalResult decomposeScore(Expr *x, ExprBuilder &b, ScoreParts &parts,
                             Explainer &why);

/// Masks as attributes where they are bands of k - q.
struct MaskAttrs {
  std::optional<bool> causalBottomRight; // set: causal with that alignment
  std::optional<int64_t> windowLeft, windowRight;
  /// Conditions that are not bands (kept as a mask_mod region or operand).
  llvm::SmallVector<Expr *> rest;
};
LogicalResult analyzeMasks(llvm::ArrayRef<Expr *> keep, const Extents &ext,
                           MaskAttrs &out, Explainer &why);

/// Emits `e` as scalar ops at `b`'s insertion point; Score leaves become
/// `scoreArg`, index leaves use `idx` (b, h, q, k). Floats are f32.
Value emitExpr(OpBuilder &b, Location loc, const Expr *e, Value scoreArg,
               llvm::ArrayRef<Value> idx, llvm::DenseMap<const Expr *, Value> &memo);

//===----------------------------------------------------------------------===//
// The whole match
//===----------------------------------------------------------------------===//

/// Everything the rewrite needs, found by matchAttention.
struct AttentionMatch {
  SoftmaxMatch softmax;
  ContractionView qk, pv;
  OperandView q, k, v;
  int64_t batch = 1, headsQ = 1, headsKV = 1, seqQ = 0, seqK = 0;
  Extents ext;
  ScoreParts parts;
  MaskAttrs masks;
  std::optional<double> dropoutP;
  /// The value the op replaces: the P·V result, or its cast to Q's type.
  Value output;
  /// Roles of the dims of the P·V result, which the output must take.
  llvm::SmallVector<Role> outRoles;
  /// Why a bias term shaped like ALiBi (slope * position) stayed in
  /// score_mod instead of becoming the op's alibi operand; empty otherwise.
  std::string alibiNote;
  std::unique_ptr<ExprBuilder> builder; // owns the trees in parts/masks
};

FailureOr<std::unique_ptr<AttentionMatch>> matchAttention(Operation *anchor,
                                                          Explainer &why);
/// Replaces the matched subgraph by one flash.attention; returns it.
/// Ops it erases are added to `erased`.
FailureOr<Operation *> rewriteAttention(AttentionMatch &m,
                                        llvm::DenseSet<Operation *> &erased,
                                        Explainer &why);

/// Q, K and V of a match as the rank-4 operands of a flash op built at the
/// P·V op (expand_shape views, never copies), the permutation of each
/// (null when the identity) and the output type in Q's layout.
struct RaisedOperands {
  Value q, k, v;
  llvm::SmallVector<int64_t> qPerm, kPerm, vPerm;
  RankedTensorType outputType;
};
FailureOr<RaisedOperands> buildRaisedOperands(OpBuilder &b,
                                              const AttentionMatch &m,
                                              Explainer &why);
/// Replaces the match's output by `out` (the op's O, typed
/// RaisedOperands::outputType), collapsed back to the P·V result's shape,
/// and erases what is left dead (recorded in `erased`).
void replaceAttentionOutput(OpBuilder &b, AttentionMatch &m, Value out,
                            llvm::DenseSet<Operation *> &erased);

/// A bias term that the op's `alibi(...)` operand computes
/// (AlibiBias.cpp): the op adds -slope * |diagonal(i) - j| with
/// slope = factor * slopes[...], read where the model reads it.
struct AlibiBias {
  const Expr *slopes = nullptr; // the slope: a float tree of (b, h) alone
  double factor = 1.0;
};
/// Where the op the match becomes puts ALiBi's diagonal, and which keys its
/// rows see relative to it.
struct AlibiDiagonal {
  /// Sk - Sq of the dense op; unknown for the KV-cache op (per sequence).
  std::optional<int64_t> offset;
  /// Row i sees no key past j = i + keysEnd (the masks' bound); unknown
  /// where only j < Sk is known.
  std::optional<int64_t> keysEnd;
  /// No visible key lies past the diagonal (causal masks, a decode row):
  /// a bias linear in j then differs from the op's by a function of the
  /// row, which the softmax cancels (O equal, the LSE not).
  bool keysUpToDiagonal = false;
};
AlibiDiagonal denseAlibiDiagonal(const AttentionMatch &m);
/// Matches a bias term as ALiBi: factor * slope[b, h] * P with P linear in
/// (i, j), or |P|. Fails with `why` empty when the term is no slope times a
/// key position, with `why` saying what differs when it is one the op's
/// ALiBi cannot compute here.
FailureOr<AlibiBias> matchAlibiBias(const Expr *term, const AttentionMatch &m,
                                    const AlibiDiagonal &diag,
                                    std::string &why);
/// The op's slopes operand, f32 [Hq] or [B, Hq] (where the slope reads b):
/// the model's tensor itself where the term reads it as the op does, else
/// computed by a tensor.generate of the slope's tree.
Value buildAlibiSlopes(OpBuilder &b, Location loc, const AlibiBias &a,
                       const AttentionMatch &m);

/// The key length of a decode step's mask: key j of sequence b is kept iff
/// j < L_b (and, when `causal`, j <= i + L_b - Sq), where
/// L_b = lin(b) + sum(factor * term) and each term is a scalar tree that
/// reads only b (e.g. the cache position a model reads from a tensor).
struct KVCacheLength {
  LinExpr lin;
  llvm::SmallVector<std::pair<const Expr *, int64_t>> terms;
  bool causal = false;
  /// The step's bias, when it is ALiBi (its only bias term).
  std::optional<AlibiBias> alibi;
};
/// Whether a matched attention is a decode step over a KV cache: a few
/// queries over more keys whose only mask is a length mask (KVCacheMatch.cpp).
/// Fails without a reason when the attention is no decode step at all, with
/// one in `why` when it looks like one but flash.attention_kvcache cannot
/// express it.
LogicalResult matchKVCacheLength(const AttentionMatch &m, KVCacheLength &out,
                                 Explainer &why);
/// Replaces the matched subgraph by one flash.attention_kvcache over the
/// cache K/V already hold (KVCacheRewrite.cpp); returns it.
FailureOr<Operation *>
rewriteAttentionKVCache(AttentionMatch &m, const KVCacheLength &len,
                        llvm::DenseSet<Operation *> &erased, Explainer &why);
/// Replaces a tm_tensor.attention (torch-mlir's own attention op) by one
/// flash.attention of the same semantics (TMTensorAttention.cpp); returns
/// it, or fails with the reason in `why`, leaving the IR unchanged.
FailureOr<Operation *> raiseTMTensorAttention(Operation *op, Explainer &why);

/// Erases `root` and the ops feeding it that are left without users, and
/// records them in `erased` (checked before an op is touched, so roots
/// erased by an earlier call are skipped).
void eraseDead(Operation *root, llvm::DenseSet<Operation *> &erased);

/// An f32 attention whose Q, K, V are up-casts from one 16-bit type and
/// whose output only reaches (through reshapes) a down-cast to it, rebuilt
/// on the 16-bit values (NarrowUpcast.cpp); returns the op now in place.
Operation *narrowUpcastAttention(flash::AttentionOp op);

/// One tensor dequantised from FP8: `x.to(bf16) * scale` as torch-mlir
/// exports it, an arith.extf from f8E4M3FN (or f8E5M2) and an arith.mulf by
/// a scale, fused in one linalg.generic or an up-cast generic then a mul
/// generic (Fp8Dequant.cpp).
/// Fp8Dequant::scaleDims' entry for a scale dimension that follows the
/// block index of a per-block dequantise.
constexpr int64_t kFp8ScaleBlockDim = -2;
struct Fp8Dequant {
  /// The FP8 tensor and the scale tensor.
  Value f8, scale;
  /// For each scale dimension the dimension of the dequantised tensor it
  /// follows (-1: read at 0, a broadcast or size-1 dimension;
  /// kFp8ScaleBlockDim: the block index below).
  llvm::SmallVector<int64_t> scaleDims;
  /// A dequantise of blocks of rows (`x8.view(.., N, rows, ..) * scale`,
  /// then viewed back: a tensor.expand_shape that splits dimension
  /// `blockDim` of `f8` into N blocks of `blockRows`, the generic, and the
  /// tensor.collapse_shape that merges them again); 0 otherwise.
  int64_t blockRows = 0, blockDim = -1;
  /// The dequantise's generics, the one producing the value first.
  llvm::SmallVector<Operation *> ops;
};
/// Matches `v` as a dequantise. Fails with `why` empty when `v` is not one
/// at all, with `why` set when it is one a descale cannot express.
FailureOr<Fp8Dequant> matchFp8Dequant(Value v, std::string &why);
/// Fails with `why` unless `d` dequantises f8E4M3FN; `name` is the
/// operand's in the message, `takes` says who takes e4m3 ("FP8 attention
/// takes").
LogicalResult checkFp8Source(const Fp8Dequant &d, llvm::StringRef name,
                             llvm::StringRef takes, std::string &why);
/// Whether the scale of `d` can be a descale operand: it must follow only
/// logical B and H of the dequantised operand (layout `perm`: B at
/// dimension perm[0], H at perm[1]), or with `blockRows` given also the
/// blocks of rows of a per-block dequantise along S (perm[2]), and, when
/// constant, be positive and finite. Sets `perHead` when it follows B, H
/// or the blocks, and `*blockRows` to the rows of a block it follows (0
/// where none); fails with `why`.
LogicalResult checkFp8Scale(const Fp8Dequant &d, llvm::ArrayRef<int64_t> perm,
                            llvm::StringRef name, bool &perHead,
                            std::string &why, int64_t *blockRows = nullptr);
/// The descale operand for `d`: tensor<f32> (per tensor), tensor<BxHxf32>
/// (per head, H = `heads`) or, where the scale follows blocks of
/// `blockRows` of the `seq` rows, tensor<BxHxNxf32> (N = seq / blockRows),
/// read from the scale in f32.
Value buildFp8Descale(OpBuilder &b, Location loc, const Fp8Dequant &d,
                      bool perHead, llvm::ArrayRef<int64_t> perm,
                      int64_t batch, int64_t heads, int64_t blockRows = 0,
                      int64_t seq = 0);
/// Erases the dequantise's generics (and their tensor.empty inits) that
/// are left without users, stopping at the first still used.
void eraseFp8DequantIfUnused(const Fp8Dequant &d);

/// A 16-bit attention whose Q, K, V are each dequantised from f8E4M3FN
/// (extf, mulf by a per-tensor or per-head scale), rebuilt as FP8
/// flash.attention with the scales as descale operands (Fp8Dequant.cpp).
/// Returns the op now in place; when some operand is a dequantise but the
/// op cannot be rebuilt, `whyNot` says why (empty otherwise).
Operation *raiseFp8Dequant(flash::AttentionOp op, std::string &whyNot);

/// A decode step (flash.attention_kvcache) whose K and V caches are each
/// dequantised from f8E4M3FN right before it, rebuilt on the e4m3 caches
/// with the scales as k_descale / v_descale (KVCacheFp8.cpp). Returns the
/// op now in place; when a cache is a dequantise but the op cannot absorb
/// it, `whyNot` says why (empty otherwise).
Operation *raiseFp8KVCache(flash::AttentionKVCacheOp op, std::string &whyNot);

} // namespace mlir::flash::raise

#endif
