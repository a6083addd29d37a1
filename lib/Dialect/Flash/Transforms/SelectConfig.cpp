//===- SelectConfig.cpp - kernel recipe and tiles for each attention op ---===//
//
// Gives every flash.attention and flash.attention_grad without a `config`
// the recipe and tiling its GPU kernel is built with. The target comes from
// the `target` option (a GPU known by name) or else from the nearest
// enclosing op carrying `flash.target = #flash.target<...>`, normally the
// module. Everything the kernel builders need to agree on is decided here,
// from one table, so that the lowerings never guess.
//
//===----------------------------------------------------------------------===//
#include "flashfuse/Dialect/Flash/IR/HeadDims.h"
#include "flashfuse/Dialect/Flash/IR/KVCacheKernels.h"
#include "flashfuse/Dialect/Flash/IR/SharedMemory.h"
#include "flashfuse/Dialect/Flash/Transforms/Passes.h"
#include "flashfuse/decode_splits.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::flash {
#define GEN_PASS_DEF_FLASHSELECTCONFIG
#include "flashfuse/Dialect/Flash/Transforms/Passes.h.inc"
} // namespace mlir::flash

using namespace mlir;
using namespace mlir::flash;

namespace {

/// The module attribute naming the target when no option is given.
constexpr StringLiteral kTargetAttrName = "flash.target";

struct TargetDesc {
  StringRef name;
  int64_t arch, sms, smemPerBlock, regsPerSm;
};

/// GPUs known by name. `smemPerBlock` is the opt-in maximum of shared memory
/// one block may use (SharedMemory.h): 163 KiB on sm_80, 99 KiB on sm_89,
/// 227 KiB on sm_90.
constexpr TargetDesc kNamedTargets[] = {
    {"a100", 80, 108, maxSharedMemoryPerBlock(80), 65536},
    {"l4", 89, 58, maxSharedMemoryPerBlock(89), 65536},
    {"h100", 90, 132, maxSharedMemoryPerBlock(90), 65536},
    {"h200", 90, 132, maxSharedMemoryPerBlock(90), 65536},
};

//===----------------------------------------------------------------------===//
// The sm80 tile table (FlashAttention-2 schedule)
//===----------------------------------------------------------------------===//
//
// Every warp owns a slab of query rows and runs mma.sync m16n8k16 over it, so
// block_m is a multiple of 16 * warps; the O accumulator (block_m x Dv, f32)
// and the S tile (block_m x block_n, f32) live in registers, spread over the
// 32 * warps threads; K and V tiles stream through `stages` shared-memory
// buffers filled by cp.async. D and Dv are compiled in: any multiples of 8
// from 8 to 256 with Dv <= D (O is staged through the Q tile; the P·V
// product and O use Dv, S = Q Kᵀ uses D).
//
// Each row serves the head dims above the previous row's up to its own:
// D = 40 takes the row of 64, D = 80 that of 96, D = 112 that of 128, D =
// 160 and D = 192 (Dv = 128) that of 256. The kernels' tiles are as wide as
// the head dim needs, not the row's: whole k16 steps (HeadDims.h's mmaWidth,
// an odd multiple of 8 such as 40 zero-fills its last 8 columns) on padded
// rows (the backward, and forwards below 64 columns), whole 64-column
// swizzle rows in forwards from 64 on (D = 80 and 112 span 128, D = 160
// and 192 span 192), so a row's shared-memory budget covers every head dim
// it serves. Where its registers did not (ptxas spills), the rules in
// selectSm80 and kBwdFallbacks adjust the tiles; compile-ptxas-headdims.mlir
// assembles the new head dims. These tiles are reasoned from the measured
// rows and ptxas, not timed.

struct TileRow {
  int64_t headDim;             // the largest D the row serves
  int64_t fwdBlockM, fwdBlockN; // flash.attention
  int64_t bwdBlockM, bwdBlockN; // flash.attention_grad
  int64_t bwdWarps;
};

// Four warps (128 threads) for the forward (the backward's are per row) and a
// two-deep K/V pipeline for every row: two
// stages already overlap the next tile's cp.async with this tile's math, and
// more warps would split block_m into slabs thinner than two m16 fragments.
constexpr int64_t kSm80Warps = 4;
constexpr int64_t kSm80Stages = 2;

constexpr TileRow kSm80Tiles[] = {
    // D <= 128, forward: 128 query rows give each warp 32 rows (two m16
    // fragments), so every K/V tile loaded to shared memory is used twice as
    // often as with 64 rows; with 64-key tiles the per-thread accumulators
    // are 128*Dv/128 + 128*64/128 <= 192 f32 registers, under the 255 cap.
    // Backward: each block also holds dK and dV (block_n x D each, f32)
    // and the dP tile next to S. Half of its time at 64x64 went to the dQ
    // atomics (one red.add per element per key block; docs/PERF.md), so
    // the measured rows take 128 keys per block, halving them. D = 64:
    // 32 keys per warp (two m16 tiles: each ldmatrix'd Q/dO fragment feeds
    // twice the mmas) with 32 query rows, so that S, dP, dK and dV fit in
    // 255 registers; D = 128: 16 keys per warp over 8 warps, as dK and dV
    // alone take 128 registers. D = 32, 96 keep the unmeasured 64x64.
    // D = 96 forwards take 128 x 64 too: on the swizzled tiles (128
    // columns, the last 32 unused) it assembles without spills (padded rows
    // spilled) and is 0.83-0.97x FA2 against 0.70-0.88x at 128 x 32 (run
    // 54). D = 128 takes 128 x 64 where two such blocks fit per SM (below),
    // as FlashAttention-2 does on sm80/sm90: with the swizzled tiles and
    // the O rescale skipped where alpha is 1 (KernelSpec::
    // skipsUnitRescale) it assembles without spills and is 6-10% faster
    // than 128 x 32 (runs 47-48, docs/PERF.md); the window variant still
    // spills 116-136 bytes there and keeps 128 x 32, as dropout keeps
    // 32 keys (below).
    // D = 32 forward: 128 x 32 rather than 128 x 64 (run 41, H200): causal
    // 0.92-0.95x FA2 -> 1.03-1.04x (the diagonal blocks mask half as many
    // keys), non-causal 1.11-1.16x -> 1.05-1.10x; and no 8-byte spill of
    // ptxas 13.0 for the causal variant on sm_80.
    {32, 128, 32, 64, 64, 4},
    {64, 128, 64, 32, 128, 4},
    {96, 128, 64, 64, 64, 4},
    {128, 128, 64, 64, 128, 8},
    // D = 256: at 128 rows the O accumulator alone would be 256 registers per
    // thread, past the cap, so 64 rows; 32-key tiles keep the S tile small
    // and the two K/V stages at 2 * 32 * 512 * 2 bytes = 64 KiB.
    // Backward, D + Dv <= 320 (HeadDims.h's kMaxBackwardDims; wider ones
    // take kGroupedBwdTiles): dK and dV of 16 keys per warp take up to 160
    // registers, so
    // 16 query rows keep Sᵀ and dPᵀ at 8 each; 64 keys on 4 warps split dQ
    // into four column groups (D / 4, a multiple of 16 for D a multiple of
    // 64: D = 192, Dv = 128 assembles without spills on sm_80; sm_90a
    // spills 8 bytes in the plain variant). 32 query rows spilled 56-104
    // bytes (ptxas 13.0).
    {256, 64, 32, 16, 64, 4},
};

/// The smallest block_n the fallback goes to: one k16 step of the second
/// matmul, below which mma.sync has nothing to chew on.
constexpr int64_t kMinBlockN = 16;

/// The backward's dQ product splits block_m x D between the warps by 16-row
/// slabs and, with more warps than slabs, by column groups that must be
/// multiples of 16 (KernelSpec::dqColumnGroups). Where a row's tiles cannot
/// split a head dim so, the backward takes the first of these whose dQ
/// splits and whose registers hold D + Dv (mma widths, at most maxDims);
/// each keeps one 16-key tile per warp. Assembled without spills (ptxas
/// 13.0, sm_80 and sm_90a) where noted; 16 x 32 on sm_90a spills 12 bytes
/// in D = 160's causal variants, and 64 x 64 spilled 64-76 bytes at
/// D = 112, 32 x 32 104-224 at D = 160.
struct BwdTile {
  int64_t blockM, blockN, warps, maxDims;
};
constexpr BwdTile kBwdFallbacks[] = {
    {64, 64, 4, 192},  // D = 96's tile: D = 40 and 48 (the row of 64's
                       // 32 x 128 would split dQ into 24 columns)
    {16, 32, 2, 320},  // one slab, two column groups: D = 160
    {32, 32, 2, 320},  // two slabs, no column groups: any D (D = 112)
};

/// Backward tiles past kMaxBackwardDims, where two warps own each 16-key
/// tile and split its dK and dV columns (HeadDims.h's backwardColumnGroups;
/// block_n = 16 * warps / 2): 16 query rows keep Sᵀ and dPᵀ at 8 registers
/// each next to at most 128 of dK and dV. The first whose dQ splits and
/// whose shared memory the target holds: D = 256 takes 64 keys on 8 warps
/// (dQ in 32-column groups), D = 192 (Dv = 192 or 160) 32 keys on 4, the
/// others (D = 176, 208, ...) 16 keys on 2 warps over 32 query rows.
constexpr BwdTile kGroupedBwdTiles[] = {
    {16, 64, 8, 2 * kMaxBackwardDims},
    {16, 32, 4, 2 * kMaxBackwardDims},
    {16, 16, 2, 2 * kMaxBackwardDims},
    {32, 16, 2, 2 * kMaxBackwardDims},
};

/// Whether block_m query rows on `warps` warps split the dQ product of a
/// head dim `d` (KernelSpec::dqColumnGroups).
bool dqSplits(int64_t blockM, int64_t warps, int64_t d) {
  int64_t slabs = blockM / 16;
  return slabs % warps == 0 ||
         (warps % slabs == 0 && mmaWidth(d) % (16 * (warps / slabs)) == 0);
}

/// Shared memory of the sm80 backward's main kernel (SharedMemory.h, the
/// figure its builder lays out). The deterministic mode's dQ kernel fits
/// its own key tiles to the chip (getBackwardStepSpec).
int64_t sm80BackwardSharedMemory(int64_t blockM, int64_t blockN,
                                 int64_t stages, int64_t d, int64_t dv,
                                 bool blockSparse) {
  return sm80BackwardBytes(blockM, blockN, stages, d, dv, /*dsTile=*/true,
                           blockSparse);
}

std::string knownTargetNames() {
  return llvm::join(llvm::map_range(kNamedTargets,
                                    [](const TargetDesc &t) {
                                      return t.name.str();
                                    }),
                    ", ");
}

std::optional<TargetDesc> lookupNamedTarget(StringRef name) {
  for (const TargetDesc &t : kNamedTargets)
    if (t.name == name)
      return t;
  return std::nullopt;
}

TargetDesc fromAttr(TargetAttr attr) {
  return {attr.getName(), attr.getArch(), attr.getSms(),
          attr.getSmemPerBlock(), attr.getRegsPerSm()};
}

/// Why tiles of block_m x block_n cannot walk `iface`'s block-sparse lists,
/// or "" (no lists, or both tile sizes divide the lists' [BQ, BK]: a
/// thread block's rows lie in one sparse query block and its keys tile the
/// sparse key blocks; KernelSpec.cpp's setBlockSparse).
std::string sparseBlocksRefusal(AttentionVariantInterface iface,
                                int64_t blockM, int64_t blockN) {
  BlockSparseOperands lists = iface.getBlockSparse();
  if (!lists || (lists.blockQ % blockM == 0 && lists.blockK % blockN == 0))
    return "";
  return "its " + std::to_string(blockM) + " x " + std::to_string(blockN) +
         " tiles do not divide the lists' sparse blocks [BQ, BK] = [" +
         std::to_string(lists.blockQ) + ", " + std::to_string(lists.blockK) +
         "]";
}

/// Chooses the sm80 config of one op for `target`, or reports why none
/// exists. `isGrad` selects the backward columns of the table.
FailureOr<KernelConfigAttr> selectSm80(Operation *op,
                                       AttentionVariantInterface iface,
                                       const TargetDesc &target, bool isGrad) {
  auto fail = [&]() {
    return op->emitError() << "no kernel config for target '" << target.name
                           << "': ";
  };
  // Every arch from sm_80 on runs the FA2 schedule: mma.sync, ldmatrix and
  // cp.async exist on sm_80, sm_86, sm_89 and sm_90 alike. sm_90 forwards
  // the sm90 recipe serves never get here (unless recipe=sm80 asks).
  if (target.arch < 80) {
    fail() << "the sm80 recipe needs sm_80 or newer, target is sm_"
           << target.arch;
    return failure();
  }
  Type elt = getElementTypeOrSelf(iface.getQKV()[0]);
  if (!elt.isF16() && !elt.isBF16()) {
    fail() << "the sm80 recipe needs f16 or bf16 inputs for its tensor cores, "
              "got "
           << elt << " (lower f32 attention with flash-lower-to-loops)";
    return failure();
  }
  AttentionSizes sz = iface.getSizes();
  if (ShapedType::isDynamic(sz.d) || ShapedType::isDynamic(sz.dv)) {
    auto diag = fail() << "the sm80 recipe compiles the head dim in, but ";
    diag << (ShapedType::isDynamic(sz.d) ? "D" : "Dv") << " is dynamic";
    return failure();
  }
  // Rows of 16-byte chunks and whole k8 halves of the mma steps.
  for (auto [name, d] : {std::pair<StringRef, int64_t>{"D", sz.d}, {"Dv", sz.dv}})
    if (!isServedHeadDim(d)) {
      fail() << "the sm80 recipe serves head dims that are multiples of 8 "
                "from 8 to 256, got "
             << name << " = " << d;
      return failure();
    }
  if (sz.dv > sz.d) {
    fail() << "the sm80 recipe needs Dv <= D (O is staged through the Q "
              "tile), got D = "
           << sz.d << ", Dv = " << sz.dv;
    return failure();
  }
  const TileRow *row = llvm::find_if(
      kSm80Tiles, [&](const TileRow &r) { return r.headDim >= sz.d; });

  int64_t blockM = isGrad ? row->bwdBlockM : row->fwdBlockM;
  int64_t blockN = isGrad ? row->bwdBlockN : row->fwdBlockN;
  // Dropout's keep test is a Philox4x32-10 per probability, whose state
  // and key words come on top of the scores and accumulators: at two m16
  // tiles per warp ptxas (13.0, sm_80) spills 20-148 bytes for every D;
  // one tile per warp (64 rows) assembles without spills for all of them.
  // A mask operand's per-element loads weigh the same way (8-164 bytes of
  // spill at 128 rows on sm_80/sm_90a for D = 64-128, none at 64).
  if (!isGrad && (iface.hasDropout() || iface.getMaskOperand()))
    blockM = std::min<int64_t>(blockM, 16 * kSm80Warps);
  // D = 96 and 128 at 64 keys have no register to spare: per-element
  // score work spills there (ptxas 13.0, sm_90a: a window 116-136 bytes,
  // a mask operand 120-164, a bias 8-24, dropout 60 at 64 x 64); 32 keys
  // assemble without spills. score_mod/mask_mod regions count as such work.
  // Every D past 64 takes the same 128-column (or wider) swizzled tiles
  // and is treated alike.
  bool hasWindow = iface.getWindowLeftSize() || iface.getWindowRightSize();
  bool perElementScores = hasWindow || iface.getBiasOperand() ||
                          iface.getMaskOperand() || iface.hasDropout() ||
                          !iface.getScoreModRegion().empty() ||
                          !iface.getMaskModRegion().empty();
  if (!isGrad && sz.d > 64 && perElementScores)
    blockN = std::min<int64_t>(blockN, 32);
  int64_t warps = isGrad ? row->bwdWarps : kSm80Warps;
  // Backward variants with more per-element work (softcap's tanh kept for
  // the chain rule, dBias, Philox) spill 176-532 bytes at the rows above
  // for D = 64 and 128 on sm_80 (ptxas 13.0); half the query rows remove
  // that (D = 128 with dBias keeps 44 bytes). For plain and causal ops the
  // rows above stay: 16 x 128 at D = 64 was 13-18% slower on the H200,
  // 32 x 128 (8 warps) at D = 128 3-4% slower (docs/PERF.md, run 42).
  bool heavyGrad = isGrad && (iface.getSoftcapValue().has_value() ||
                              iface.getBiasOperand() || iface.hasDropout());
  if (heavyGrad && (row->headDim == 64 || row->headDim == 128))
    blockM /= 2;
  int64_t columnGroups = isGrad ? backwardColumnGroups(sz.d, sz.dv) : 1;
  bool blockSparse = static_cast<bool>(iface.getBlockSparse());
  if (isGrad && columnGroups == 1 && !dqSplits(blockM, warps, sz.d)) {
    const BwdTile *t = llvm::find_if(kBwdFallbacks, [&](const BwdTile &t) {
      return mmaWidth(sz.d) + mmaWidth(sz.dv) <= t.maxDims &&
             dqSplits(t.blockM, t.warps, sz.d);
    });
    // The last fallback splits every head dim.
    blockM = t->blockM;
    blockN = t->blockN;
    warps = t->warps;
  }
  // Forward. The row of 128's 64 keys assemble without spills at D = 128
  // because its O rescale is skipped where no row maximum moved
  // (KernelSpec::skipsUnitRescale, Dv = 128 only); D = 112 spilled 44-96
  // bytes there (sm_90a) and none at 32 keys. D <= 16 (one k16 step)
  // takes 64 keys: at 32 the causal variants spilled 16 bytes (sm_90a).
  if (!isGrad && row->headDim == 128 && sz.dv != 128)
    blockN = std::min<int64_t>(blockN, 32);
  if (!isGrad && mmaWidth(sz.d) == 16)
    blockN = 64;
  // The backward's warps each own whole 16-key tiles of block_n.
  int64_t minBlockN = isGrad ? 16 * warps : kMinBlockN;
  int64_t stages = kSm80Stages;
  if (columnGroups > 1) {
    // 16 keys per warp and column group, exactly: more would double dK and
    // dV in registers.
    const BwdTile *t = llvm::find_if(kGroupedBwdTiles, [&](const BwdTile &t) {
      return dqSplits(t.blockM, t.warps, sz.d) &&
             sm80BackwardSharedMemory(t.blockM, t.blockN, stages, sz.d, sz.dv,
                                      blockSparse) <= target.smemPerBlock;
    });
    if (t == std::end(kGroupedBwdTiles))
      t = &kGroupedBwdTiles[std::size(kGroupedBwdTiles) - 1];
    blockM = t->blockM;
    blockN = t->blockN;
    warps = t->warps;
    minBlockN = blockN;
  }
  // Block-sparse lists: a block's rows lie in one sparse query block and
  // its keys tile the sparse key blocks (sparseBlocksRefusal), so both
  // tiles shrink until they divide [BQ, BK] (FlexAttention's BlockMask of
  // 64, or 128 x 64). Halving keeps a divisor one, so the shared-memory
  // fitting below keeps them dividing. The forward's rows stay whole
  // 16-row slabs of its four warps; the backward's keys stay whole 16-key
  // tiles of its warps, which drop to four where its key tile must shrink
  // below 16 * 8.
  if (BlockSparseOperands lists = iface.getBlockSparse()) {
    if (isGrad && columnGroups == 1 && lists.blockK % blockN != 0 &&
        warps > kSm80Warps && lists.blockK % (16 * kSm80Warps) == 0 &&
        dqSplits(blockM, kSm80Warps, sz.d)) {
      warps = kSm80Warps;
      minBlockN = 16 * warps;
      // D = 128's 64 x 64 on four warps spilled 12-16 bytes on sm_90a
      // (ptxas 13.0; none on sm_80), 32 x 64 none on either.
      if (row->headDim == 128 && dqSplits(32, warps, sz.d))
        blockM = std::min<int64_t>(blockM, 32);
    }
    while (lists.blockK % blockN != 0 && blockN % 2 == 0 &&
           blockN / 2 >= minBlockN)
      blockN /= 2;
    while (lists.blockQ % blockM != 0 && blockM % 2 == 0 &&
           (isGrad ? blockM > 16 && dqSplits(blockM / 2, warps, sz.d)
                   : blockM / 2 >= 16 * warps))
      blockM /= 2;
    if (std::string why = sparseBlocksRefusal(iface, blockM, blockN);
        !why.empty()) {
      fail() << "the sm80 recipe cannot walk these lists: " << why
             << " (its smallest tiles are " << (isGrad ? 16 : 16 * warps)
             << " query rows and " << minBlockN << " keys)";
      return failure();
    }
  }
  // D = 136-160 forwards (the row of 256, on 192-column tiles) take a
  // third K/V stage: at two, ptxas 13.0 spilled 24-28 bytes in D = 160's
  // bottom-right causal variant (at 168 registers), at three none (sm_80
  // and sm_90a); 97 KiB of shared memory.
  if (!isGrad && row->headDim == 256 && mmaWidth(sz.d) <= 160)
    stages = 3;
  auto smem = [&] {
    return isGrad ? sm80BackwardSharedMemory(blockM, blockN, stages, sz.d,
                                             sz.dv, blockSparse)
                  : sm80ForwardBytes(blockM, blockN, stages, sz.d, sz.dv,
                                     32 * warps);
  };
  // Too little shared memory: narrower K/V tiles first, since a shallower
  // pipeline exposes the full global-memory latency of every tile; keeping
  // block_m keeps the K/V traffic per query row unchanged.
  // Where such a row's tile does not fit, four warps let block_n shrink
  // (the backward's warps each keep whole 16-key tiles).
  if (isGrad && columnGroups == 1 && smem() > target.smemPerBlock &&
      warps > kSm80Warps) {
    warps = kSm80Warps;
    minBlockN = 16 * warps;
  }
  while (smem() > target.smemPerBlock && blockN > minBlockN)
    blockN /= 2;
  // The backward then takes fewer query rows a ring stage, keeping the
  // ring two deep (its K/V tiles, read once per block, are what block_n
  // sets): D = 128 on sm_89 takes 32 x 64 (74 KiB) rather than one stage
  // of 64 x 64; 64 x 64 at two stages is 112 KiB, past its 99 KiB.
  while (isGrad && smem() > target.smemPerBlock && blockM > 16 &&
         dqSplits(blockM / 2, warps, sz.d))
    blockM /= 2;
  // The forward's registers (up to 255 per thread, 4 warps) allow two blocks
  // per SM; shared memory should not allow only one. Where the target's
  // per-block maximum (about its per-SM capacity) cannot hold two blocks,
  // block_n halves down to 32: D = 128's 128 x 64 (97 KiB) stays on
  // H100/H200 (227 KiB) and is 128 x 32 (65 KiB) on the A100 (163 KiB).
  while (!isGrad && 2 * smem() > target.smemPerBlock && blockN > 32)
    blockN /= 2;
  if (smem() > target.smemPerBlock)
    stages = 1;
  if (smem() > target.smemPerBlock) {
    fail() << "the sm80 recipe needs " << smem()
           << " bytes of shared memory per block at its smallest tiles "
              "(block_m = "
           << blockM << ", block_n = " << blockN << ", stages = " << stages
           << ", D = " << sz.d << "), the target has " << target.smemPerBlock;
    return failure();
  }
  return KernelConfigAttr::get(op->getContext(), Recipe::Sm80, blockM, blockN,
                               warps, stages);
}

//===----------------------------------------------------------------------===//
// The sm90 recipe (wgmma on 128-byte-swizzled tiles)
//===----------------------------------------------------------------------===//
//
// Two warpgroups (8 warps) of 64 rows each.
// Forward: 128 query rows, so that each K/V tile feeds 128 rows, and three
// K/V stages: the key loop then overlaps the softmax of block j with the
// P·V product of block j-1 (Sm90Forward.cpp). Measured on an H200
// (docs/PERF.md, run 26): D = 64 takes 64-key tiles (124 registers: two
// blocks per SM), D = 128 takes 128-key tiles (214 registers, one block per
// SM, 225 KiB of shared memory). D = 256 (run 41): O alone is 128 registers
// per thread and a K/V stage 2 * 256 * 2 bytes per key, so three stages
// allow only 32-48 keys; two stages of 80 keys (FlashAttention-3's tile for
// this head dim; 252 registers, 225 KiB) were fastest, 1.12-1.46x FA2,
// against 1.00-1.25x at 128 x 32 with three stages.
// Backward: 128 keys (64 per warpgroup, whose dK and dV stay in registers:
// 2 * D / 2 each) and a two-deep Q/dO ring. The query block is Sᵀ's and
// dPᵀ's N: 128 at D = 64; 64 at D = 128, where dK and dV already take 128
// registers (FlashAttention-3's tiles for these head dims). Measured on an
// H200 (docs/PERF.md, run 35): 128 query rows at D = 64 are 8% faster than
// 64 for plain and causal ops, but the softcap (tanh kept for the chain
// rule), bias+dBias and dropout (Philox) variants spill 176-472 bytes there
// and none (dropout 60) at 64 rows, which they take.

// At D = 256 the dropout forward (Philox registers on top of 128 for O)
// spills 52 bytes at 128 x 80 and none at 128 x 48 with three stages. Its
// backward (D + Dv past 256, HeadDims.h's wgmmaBackwardColumnGroups) puts
// both consumer warpgroups on the same 64 keys, each keeping one column
// half of dK and dV (the registers of D = 128) and recomputing Sᵀ and dPᵀ:
// 64 x 64 tiles, two Q/dO stages, 202 KiB; the sm90ws recipe only, whose
// consumers take Pᵀ and dSᵀ from registers.
//
// D = 192 with Dv = 128 (DeepSeek-V2/V3's multi-head latent attention in its
// prefill form: 128 columns without and 64 with the rotary embedding in Q
// and K, 128 in V): S = Q Kᵀ takes three swizzle rows of D, P·V and O two of
// Dv. O and S hold what they hold at D = 128, Q and K are 1.5x as wide:
// two stages of 128 keys (209 KiB, 252-255 registers over the variants),
// 1.03-1.11x three stages of 64 (H100, docs/PERF.md runs 516-517). With a
// mask or bias tensor or dropout they spill there (176 bytes with a mask,
// 4 with dropout), so those variants keep three stages of 64 keys (169
// KiB, 225-254 registers).
struct Sm90Tile {
  int64_t headDim, headDimV, fwdBlockN, fwdStages;
  // Forwards reading a mask or bias tensor, and dropout forwards.
  int64_t fwdOperandBlockN, fwdOperandStages;
  int64_t fwdDropoutBlockN, fwdDropoutStages;
  int64_t bwdBlockM, bwdBlockMHeavy; // 0: no sm90 backward for this D
};
constexpr Sm90Tile kSm90Tiles[] = {
    {64, 64, 64, 3, 64, 3, 64, 3, 128, 64},
    {128, 128, 128, 3, 128, 3, 128, 3, 64, 64},
    {192, 128, 128, 2, 64, 3, 64, 3, 64, 64},
    {256, 256, 80, 2, 80, 2, 48, 3, 64, 64}};
constexpr int64_t kSm90Warps = 8, kSm90BlockM = 128;
constexpr int64_t kSm90BwdBlockN = 128, kSm90BwdStages = 2;

const Sm90Tile *sm90Tile(AttentionSizes sz) {
  for (const Sm90Tile &t : kSm90Tiles)
    if (t.headDim == sz.d && t.headDimV == sz.dv)
      return &t;
  return nullptr;
}

/// The (D, Dv) pairs of `tiles`, for refusals: "(64, 64), (128, 128), ...".
template <typename Tile, size_t N>
std::string headDimPairs(const Tile (&tiles)[N],
                         bool (*served)(const Tile &) = nullptr) {
  std::string out;
  for (const Tile &t : tiles) {
    if (served && !served(t))
      continue;
    out += (out.empty() ? "(" : ", (") + std::to_string(t.headDim) + ", " +
           std::to_string(t.headDimV) + ")";
  }
  return out;
}

/// A block-sparse forward's key tile: its sparse key blocks must be whole
/// numbers of tiles (the key-block iterator walks tiles of a listed
/// block; KernelSpec.cpp). D = 256's 80 keys do not divide 128-key blocks;
/// the widest multiple of 16 keys below `blockN` that divides them serves
/// (64 there, within 6% of 80 on dense ops: H100, run 163).
int64_t keysTilingSparseBlocks(AttentionVariantInterface iface,
                               int64_t blockN) {
  BlockSparseOperands lists = iface.getBlockSparse();
  if (!lists)
    return blockN;
  for (int64_t n = blockN; n >= 16; n -= 16)
    if (lists.blockK % n == 0)
      return n;
  return blockN; // none: flash-lower-to-gpu names the sizes
}

/// The sm90 config of a forward (`isGrad` false) or backward op, whose head
/// dim kSm90Tiles must hold.
KernelConfigAttr sm90Config(AttentionVariantInterface iface, bool isGrad) {
  MLIRContext *ctx = iface->getContext();
  AttentionSizes sz = iface.getSizes();
  int64_t d = sz.d;
  const Sm90Tile *t = sm90Tile(iface.getSizes());
  if (isGrad) {
    // Variants whose per-element work holds more registers (see above).
    bool heavy = iface.getSoftcapValue().has_value() ||
                 iface.getBiasOperand() || iface.hasDropout();
    int64_t blockM = heavy ? t->bwdBlockMHeavy : t->bwdBlockM;
    // Sparse query blocks of 64 rows take the heavy variants' 64-row steps
    // (each step's rows must lie in one query block).
    BlockSparseOperands lists = iface.getBlockSparse();
    if (lists && lists.blockQ % blockM != 0)
      blockM = std::min(blockM, t->bwdBlockMHeavy);
    return KernelConfigAttr::get(
        ctx, Recipe::Sm90, blockM,
        kSm90BwdBlockN / wgmmaBackwardColumnGroups(sz.d, sz.dv), kSm90Warps,
        kSm90BwdStages);
  }
  int64_t blockN = t->fwdBlockN, stages = t->fwdStages;
  if (iface.hasDropout()) {
    blockN = t->fwdDropoutBlockN;
    stages = t->fwdDropoutStages;
  } else if (iface.getMaskOperand() || iface.getBiasOperand()) {
    blockN = t->fwdOperandBlockN;
    stages = t->fwdOperandStages;
  }
  // A mask with the softcap (Gemma-2's padded batches) spilled 36 bytes at
  // D = 128 on three stages (255 registers); two keep its 128 keys and
  // spill none.
  if (iface.getMaskOperand() && iface.getSoftcapValue().has_value() &&
      d == 128 && !iface.hasDropout())
    stages = 2;
  return KernelConfigAttr::get(ctx, Recipe::Sm90, kSm90BlockM,
                               keysTilingSparseBlocks(iface, blockN),
                               kSm90Warps, stages);
}

/// Shared memory of an sm90 config (KernelSpec::smemBytes; the backward's
/// with its dS tile, D = Dv).
int64_t sm90SharedMemory(KernelConfigAttr c, AttentionSizes sz, bool isGrad) {
  int64_t m = c.getBlockM(), n = c.getBlockN(), st = c.getStages();
  if (isGrad)
    return 1024 + 2 * ((n + st * m) * 2 * sz.d + 2 * n * m) + 8 * st * m;
  return 1024 + 2 * (m * sz.d + st * n * (sz.d + sz.dv));
}

/// Shared memory of the mma.sync FP8 forward (KernelSpec::smemBytes): Q and
/// K rows of D e4m3 codes and Vᵀ rows of 128 keys, each at least one
/// 128-byte swizzle row.
int64_t fp8MmaSyncSharedMemory(int64_t d, int64_t stages) {
  int64_t row = std::max<int64_t>(d, 128);
  return 1024 + 128 * row + stages * (128 * row + d * 128);
}

/// The stages of the mma.sync FP8 forward on `target`: three where they
/// fit, else two (0: not even two fit).
int64_t fp8MmaSyncStages(int64_t d, const TargetDesc &target) {
  for (int64_t stages : {3, 2})
    if (fp8MmaSyncSharedMemory(d, stages) <= target.smemPerBlock)
      return stages;
  return 0;
}

/// Why no kernel serves an FP8 op on `target` with `recipe`, or "" for
/// other ops and for the FP8 forwards fp8Config serves. FP8 tensor cores
/// exist from sm_89: wgmma e4m3 on sm_90 (the sm90ws recipe,
/// Sm90Fp8Forward.cpp), mma.sync m16n8k32 e4m3 from sm_89 (the sm80
/// recipe, Sm80Fp8Forward.cpp; what sm_89 gets, and sm_90 with
/// recipe=sm80).
std::string fp8Refusal(AttentionVariantInterface iface,
                       const TargetDesc &target, StringRef recipe) {
  if (!isa<Float8E4M3FNType>(getElementTypeOrSelf(iface.getQKV()[0])))
    return "";
  if (target.arch < 89)
    return "FP8 (f8E4M3FN) attention needs FP8 tensor cores (sm_89 or "
           "newer), target is sm_" +
           std::to_string(target.arch);
  bool wgmma = target.arch == 90 && recipe != "sm80";
  if (target.arch == 90 && recipe == "sm90")
    return "the sm90 recipe has no FP8 kernel; FP8 forwards take the sm90ws "
           "recipe (recipe=auto or sm90ws), or the mma.sync one of sm80";
  if (target.arch != 90 && (recipe == "sm90" || recipe == "sm90ws"))
    return "the " + recipe.str() + " recipe needs sm_90 (wgmma), target is "
           "sm_" + std::to_string(target.arch) +
           "; FP8 there takes the mma.sync kernel (recipe=auto or sm80)";
  AttentionSizes sz = iface.getSizes();
  auto fwd = dyn_cast<AttentionOp>(iface.getOperation());
  if (!wgmma) {
    // Per-block descales need no more registers here than the causal
    // mask's work: the mma.sync kernel serves them at both head dims.
    if (sz.d != sz.dv || (sz.d != 64 && sz.d != 128))
      return "the mma.sync FP8 forward serves D = Dv in {64, 128}, got D = " +
             std::to_string(sz.d) + ", Dv = " + std::to_string(sz.dv);
    if (fp8MmaSyncStages(sz.d, target) == 0)
      return "the mma.sync FP8 forward needs " +
             std::to_string(fp8MmaSyncSharedMemory(sz.d, 2)) +
             " bytes of shared memory, the target has " +
             std::to_string(target.smemPerBlock);
  } else {
    if (sz.d != sz.dv || (sz.d != 64 && sz.d != 128 && sz.d != 256))
      return "the FP8 forward serves D = Dv in {64, 128, 256} (Q and K rows "
             "of whole 128- or 64-byte swizzle rows), got D = " +
             std::to_string(sz.d) + ", Dv = " + std::to_string(sz.dv);
    // Causal masks, windows and the softcap are what the GPU check covers
    // (scripts/kernels/check_fp8.py: the score pipeline is the sm90ws
    // recipe's); the rest waits for a check of its own.
    if ((iface.getWindowLeftSize() || iface.getWindowRightSize() ||
         iface.getSoftcapValue()) &&
        sz.d == 256)
      return "the FP8 forward serves a window or softcap at D = 64 and 128 "
             "only (at D = 256 its consumer warpgroups spill), got D = " +
             std::to_string(sz.d);
    // Per-block descales load a k and two v factors per key block; with
    // the causal mask's work the D = 256 consumers spill 12/16 bytes.
    if (fwd && fwd.hasBlockDescales() && sz.d == 256 && iface.isCausal())
      return "the FP8 forward serves per-block descales at D = 256 without "
             "a causal mask only (with one its consumer warpgroups spill)";
  }
  if (iface.getBiasOperand() || iface.getMaskOperand() ||
      !iface.getScoreModRegion().empty() || !iface.getMaskModRegion().empty())
    return "the FP8 forward does not serve a bias, mask, score_mod or "
           "mask_mod yet";
  return "";
}

/// Whether every block of a forward is a whole band with no mask work: no
/// causal or window mask, and no block-sparse lists (whose 128 x 128
/// blocks the wider tiles of the sm90ws and FP8 forwards do not divide).
bool unmaskedForward(AttentionVariantInterface iface) {
  return !iface.isCausal() && !iface.getWindowLeftSize() &&
         !iface.getWindowRightSize() && !iface.getBlockSparse();
}

/// A top-left causal mask and nothing on top of it (no window, block-sparse
/// lists or softcap): the causal variant the 192-row D = 64 tiles were
/// timed on (fp8Config, longCausalForward). Bottom-right kernels spill on
/// those tiles.
bool plainTopLeftCausal(AttentionVariantInterface iface) {
  return iface.isCausal() && !iface.isBottomRightAligned() &&
         !iface.getWindowLeftSize() && !iface.getWindowRightSize() &&
         !iface.getBlockSparse() && !iface.getSoftcapValue();
}

/// The FP8 forward's config: on sm_89 (or with recipe=sm80) the mma.sync
/// kernel's, below; on sm_90 the sm90ws recipe's, 128 query rows (64 per
/// consumer warpgroup) and K / Vᵀ tiles of 128 keys, one 128-byte swizzle
/// row of Vᵀ. Four stages at D = 64 (72 KiB), three at D = 128 (112 KiB);
/// two at D = 256, where three would need 235 KiB of shared memory. D = 64
/// unmasked takes three consumer warpgroups (192 rows), as the 16-bit
/// forward does and for its reason (sm90WsConfig): H100, runs 178-179,
/// 1.05-1.12x the 128-row kernel at 2k-16k (three or five stages: 1-6%
/// slower than four); causal, 12% slower at 2k and 4-5% faster from 8k,
/// so masked forwards keep 128 rows.
///
/// Blocks of 192 keys, two stages (Vᵀ in three 64-byte swizzle rows), at
/// D = 128 and at D = 64 under a causal mask: each block's fixed work (O's
/// rescale, the row statistics' shuffles, the barriers) spreads over 1.5x
/// the keys, and S, O and P still fit 240 registers (256 keys spill 240
/// bytes). H200, run 220: D = 128 1.03-1.04x the 128-key kernel without a
/// mask, 1.04-1.08x causal; D = 64 causal 1.09-1.17x; D = 64 unmasked on
/// two warpgroups 0.84-0.87x the three above. A window keeps 128 keys (a
/// narrow band wastes more of a wide block; not measured), so do block
/// descales whose key blocks 192 does not divide. Blocks of 224 keys (Vᵀ
/// in seven 32-byte swizzle rows, FlashAttention-3's FP8 D = 128 tile)
/// measured 0.96-0.99x the 192 ones without a mask and 0.92-0.99x causal
/// (H200, run 422; the causal kernels spill 4-48 bytes): not taken.
KernelConfigAttr fp8Config(AttentionVariantInterface iface,
                           const TargetDesc &target, StringRef recipe) {
  int64_t d = iface.getSizes().d;
  // mma.sync (sm_89, or sm_90 with recipe=sm80): 16 rows a warp, 8 warps,
  // Vᵀ rows of 128 keys; as many stages as fit (fp8Refusal checked two do).
  if (target.arch != 90 || recipe == "sm80")
    return KernelConfigAttr::get(iface->getContext(), Recipe::Sm80,
                                 /*blockM=*/128, /*blockN=*/128, /*warps=*/8,
                                 fp8MmaSyncStages(d, target));
  auto op = dyn_cast<AttentionOp>(iface.getOperation());
  bool window = iface.getWindowLeftSize() || iface.getWindowRightSize();
  // D = 64 causal takes the same 192 rows on three warpgroups, which there
  // issue as they come: H200, run 296, 1.01x the 128 x 192 kernel below
  // (two warpgroups in turn) at 2k and 1.10-1.11x at 4k-16k (in a ring of
  // turns 0.97x and 1.06-1.07x); on blocks of 160 keys (Vᵀ in five 32-byte
  // swizzle rows), 1.04-1.05x those of 128 at 2k-16k (run 422), where
  // unmasked they tie (0.99-1.01x) and keep 128. Top-left only: the
  // bottom-right kernel spills 12 bytes on that tile (the 16-bit one 8,
  // longCausalForward; 16 with 160 keys). Not with a window, a softcap or
  // per-block descales (not timed).
  bool plainCausal =
      plainTopLeftCausal(iface) && !(op && op.hasBlockDescales());
  if (d == 64 && (unmaskedForward(iface) || plainCausal))
    return KernelConfigAttr::get(iface->getContext(), Recipe::Sm90Ws,
                                 /*blockM=*/192,
                                 /*blockN=*/plainCausal ? 160 : 128,
                                 /*warps=*/12, /*stages=*/4);
  bool keyBlocksDivide =
      !op || !op.hasBlockDescales() || op.getDescaleBlocks()[1] % 192 == 0;
  if ((d == 64 || d == 128) && !window && !iface.getBlockSparse() &&
      keyBlocksDivide)
    return KernelConfigAttr::get(iface->getContext(), Recipe::Sm90Ws,
                                 /*blockM=*/128, /*blockN=*/192, /*warps=*/8,
                                 /*stages=*/2);
  return KernelConfigAttr::get(iface->getContext(), Recipe::Sm90Ws,
                               /*blockM=*/128, /*blockN=*/128, /*warps=*/8,
                               /*stages=*/d == 64 ? 4 : d == 128 ? 3 : 2);
}

/// Why the sm90 recipe (`warpSpecialized`: the sm90ws backward, its
/// engine) cannot serve an op on `target`, or "" if it can.
std::string sm90Refusal(AttentionVariantInterface iface,
                        const TargetDesc &target, bool isGrad,
                        bool warpSpecialized = false) {
  // wgmma is an sm_90a instruction: later architectures do not run it.
  if (target.arch != 90)
    return "wgmma needs sm_90, target is sm_" + std::to_string(target.arch);
  Type elt = getElementTypeOrSelf(iface.getQKV()[0]);
  if (!elt.isF16() && !elt.isBF16())
    return "it needs f16 or bf16 inputs";
  AttentionSizes sz = iface.getSizes();
  // Other head dims (80, 96, 160, ...) fall back to the sm80 recipe: the
  // wgmma schedule's tiles are whole 64-column swizzle rows, and the
  // backward's warpgroup splits and dQ slices are written for D = Dv.
  const Sm90Tile *t = sm90Tile(sz);
  if (isGrad && (!t || t->bwdBlockM == 0))
    return "its backward serves (D, Dv) in {" +
           headDimPairs<Sm90Tile>(kSm90Tiles,
                                  [](const Sm90Tile &t) {
                                    return t.bwdBlockM != 0;
                                  }) +
           "}, got D = " + std::to_string(sz.d) +
           ", Dv = " + std::to_string(sz.dv);
  if (!t)
    return "it serves (D, Dv) in {" + headDimPairs(kSm90Tiles) +
           "}, got D = " + std::to_string(sz.d) +
           ", Dv = " + std::to_string(sz.dv);
  if (isGrad && wgmmaBackwardColumnGroups(sz.d, sz.dv) > 1 &&
      !warpSpecialized)
    return "its backward at D = " + std::to_string(sz.d) + ", Dv = " +
           std::to_string(sz.dv) +
           " shares each key between two warpgroups, which takes the "
           "sm90ws recipe's registers (--recipe=sm90ws or auto-tma)";
  KernelConfigAttr config = sm90Config(iface, isGrad);
  int64_t smem = sm90SharedMemory(config, sz, isGrad);
  if (smem > target.smemPerBlock)
    return "it needs " + std::to_string(smem) +
           " bytes of shared memory, the target has " +
           std::to_string(target.smemPerBlock);
  return sparseBlocksRefusal(iface, config.getBlockM(), config.getBlockN());
}

//===----------------------------------------------------------------------===//
// The sm90ws recipe (a TMA producer warpgroup, two wgmma consumers)
//===----------------------------------------------------------------------===//
//
// A forward recipe: 128 query rows (64 per consumer warpgroup); three K/V
// stages of 128 keys at D = 64 and 128, two of 80 at D = 256 (192 rows on
// three consumer warpgroups for D = 64 without a mask: below). Measured on
// an H200 (docs/PERF.md, runs 93 and 95, bf16, S = 2k and 8k): at D = 128
// three stages of 128 keys were 13-23% faster than two (and than two of
// 176 keys, before K and V were given back apart); at D = 64 four stages of 128, two of 192 and four of 64 keys
// were no faster than three of 128. Two stages hold whole blocks too few
// to copy ahead unless K and V are given back apart (Sm90WsForward.h,
// keysApart); with that, D = 256's two stages of 80 keys (FlashAttention-3's
// tile) are 1.12-1.21x the three of 48 it had before (H100, run 163;
// 13-16% slower without it, run 95); 64 keys were within 6% of 80 either
// way, 5-6% behind at 16k. D = 192 with Dv = 128 (DeepSeek's MLA prefill,
// as in the sm90 recipe above): two stages of 128 keys, K and V apart (209
// KiB), 0.97-1.14x cuDNN (H100, docs/PERF.md run 517, bf16, 2k-16k) and
// whole 128-key blocks under block-sparse lists. FlashAttention-3's tile
// for the pair, 112 keys, timed 4-8% slower in run 516 and 0.96-1.05x as
// fast in run 517; 96 keys 2-5% slower (run 516).
struct Sm90WsTile {
  int64_t headDim, headDimV, blockN, stages;
};
constexpr Sm90WsTile kSm90WsTiles[] = {
    {64, 64, 128, 3}, {128, 128, 128, 3}, {192, 128, 128, 2}, {256, 256, 80, 2}};

const Sm90WsTile *sm90WsTile(AttentionSizes sz) {
  for (const Sm90WsTile &t : kSm90WsTiles)
    if (t.headDim == sz.d && t.headDimV == sz.dv)
      return &t;
  return nullptr;
}

KernelConfigAttr sm90WsConfig(AttentionVariantInterface iface);

/// Why the sm90ws forward cannot serve `iface` on `target`, or "".
std::string sm90WsRefusal(AttentionVariantInterface iface,
                          const TargetDesc &target) {
  if (target.arch != 90)
    return "wgmma and TMA need sm_90, target is sm_" +
           std::to_string(target.arch);
  Type elt = getElementTypeOrSelf(iface.getQKV()[0]);
  if (!elt.isF16() && !elt.isBF16())
    return "it needs f16 or bf16 inputs";
  AttentionSizes sz = iface.getSizes();
  if (!sm90WsTile(sz))
    return "it serves (D, Dv) in {" + headDimPairs(kSm90WsTiles) +
           "}, got D = " + std::to_string(sz.d) +
           ", Dv = " + std::to_string(sz.dv);
  if (iface.getBiasOperand() || iface.getMaskOperand() || iface.hasDropout())
    return "it does not serve bias, mask or dropout yet";
  KernelConfigAttr config = sm90WsConfig(iface);
  return sparseBlocksRefusal(iface, config.getBlockM(), config.getBlockN());
}

/// Why the sm90ws backward cannot serve `iface` (a gradient op the sm90
/// backward serves) on `target`, or "": it walks dense bands and
/// block-sparse lists with any score_mod / mask_mod, and leaves the
/// per-element operands and dropout to the sm90 recipe (KernelSpec.cpp
/// says why). Packed batches take it too: with dV and dK from registers
/// its varlen kernels make a packed training step 1.03-1.04x faster than
/// the sm90 ones (docs/PERF.md, run 152), though they spill 0-44 bytes at
/// the consumers' 240 registers (run 143: no faster before).
std::string sm90WsBackwardRefusal(AttentionGradOp grad,
                                  const TargetDesc &target,
                                  bool deterministic) {
  if (target.arch != 90)
    return "wgmma and TMA need sm_90, target is sm_" +
           std::to_string(target.arch);
  if (deterministic)
    return "it has no deterministic mode (dQ kernel) yet";
  auto iface = cast<AttentionVariantInterface>(grad.getOperation());
  if (iface.getBiasOperand() || iface.getMaskOperand() || iface.hasDropout())
    return "it does not serve bias, mask or dropout yet";
  AttentionSizes sz = iface.getSizes();
  // Packed batches stage their dQ as rows (KernelSpec::stagesDQRows),
  // which fit beside MLA's tiles but not D = 256's.
  if (wgmmaBackwardColumnGroups(sz.d, sz.dv) > 1 &&
      (iface.getBlockSparse() ||
       (grad.isVarlen() && sz.d + sz.dv > kMaxBackwardDims)))
    return "its warpgroups that share keys (D + Dv past 256) walk dense "
           "batches, and packed ones up to D + Dv = 320";
  return "";
}

/// The sm90ws backward (Sm90WsBackward.cpp) is the sm90 backward's engine
/// fed by the producer warpgroup: the sm90 backward's tiles.
KernelConfigAttr sm90WsBackwardConfig(AttentionVariantInterface iface) {
  KernelConfigAttr c = sm90Config(iface, /*isGrad=*/true);
  return KernelConfigAttr::get(iface->getContext(), Recipe::Sm90Ws,
                               c.getBlockM(), c.getBlockN(), c.getWarps(),
                               c.getStages());
}

/// The query and key lengths from which a D = 64 causal forward takes the
/// unmasked one's 192 rows on three consumer warpgroups, which there issue
/// their products in turn (KernelSpec::issuesInTurns). H200, run 294,
/// bf16 / f16 against the 128-row kernel: 1.03-1.06x at 4k, 1.06-1.09x at
/// 8k, 1.07-1.08x at 16k, but 0.92-0.94x at 2k, where 2048 rows are 10.7
/// tiles of 192 and the diagonal tiles mask more of their keys. Top-left
/// only: the bottom-right kernel on this tile spills 8 bytes. Both
/// lengths must be static: a kernel of dynamic lengths serves short ones
/// too (the package keeps these kernels in an artifact of their own and
/// takes them from this length on, python/flashfuse/_kernels.py).
constexpr int64_t kLongCausalMinLength = 4096;

bool longCausalForward(AttentionVariantInterface iface) {
  // O in the inputs' type: an f32 O keeps its own kernels (not timed).
  auto fwd = dyn_cast<AttentionOp>(iface.getOperation());
  if (!fwd || getElementTypeOrSelf(fwd->getResult(0).getType()) !=
                  getElementTypeOrSelf(iface.getQKV()[0]))
    return false;
  AttentionSizes sz = iface.getSizes();
  return plainTopLeftCausal(iface) && sz.seqQ >= kLongCausalMinLength &&
         sz.seqK >= kLongCausalMinLength;
}

KernelConfigAttr sm90WsConfig(AttentionVariantInterface iface) {
  MLIRContext *ctx = iface->getContext();
  AttentionSizes sz = iface.getSizes();
  int64_t d = sz.d;
  // A score_mod or mask_mod, inlined into the consumers, takes the plain
  // tile: on the wider ones below their consumers spilled 60-176 bytes
  // (ALiBi over captured slopes, a document mask over captured ids; on
  // the 128 x 128 tile 0-36 dense and none over a document mask's derived
  // lists, which on the 176-key tile spilled, so that flashfuse-compile
  // fell back to the dense walk; it now gives mask_mod ops this tile
  // under its default recipe on sm_90).
  bool regions = !iface.getScoreModRegion().empty() ||
                 !iface.getMaskModRegion().empty();
  if (regions) {
    const Sm90WsTile *t = sm90WsTile(sz);
    return KernelConfigAttr::get(ctx, Recipe::Sm90Ws, /*blockM=*/128,
                                 keysTilingSparseBlocks(iface, t->blockN),
                                 /*warps=*/8, t->stages);
  }
  // D = 64 unmasked: three consumer warpgroups (192 query rows) and four
  // stages of 128 keys. There the softmax is most of a block's work, and a
  // third warpgroup's products and exponentials hide the other two's
  // latencies, as FlashAttention-3 does at D = 64 (H100, runs 158-159,
  // bf16/f16, S = 2k-16k: 1.08-1.23x the 128-row kernel, 1.06-1.17x cuDNN;
  // three stages spilled 8-16 bytes at the 160 registers a consumer gets,
  // two were 0-6% slower). Causal, the 192-row diagonal tiles mask more
  // work: 15% slower at 2k, at most 5% faster from 8k, so masked forwards
  // keep 128 rows, except causal ones of long sequences (longCausalForward).
  if (d == 64 && sz.dv == 64 &&
      (unmaskedForward(iface) || longCausalForward(iface)))
    return KernelConfigAttr::get(ctx, Recipe::Sm90Ws, /*blockM=*/192,
                                 /*blockN=*/128, /*warps=*/12, /*stages=*/4);
  // D = 128 unmasked, without a softcap: two stages of 176 keys, K and V
  // apart (FlashAttention-3's non-causal tile): 1.00-1.09x three stages of
  // 128 at 2k and 1.03-1.08x from 4k (H100, runs 162 and 165, bf16). Causal
  // it lost 11% at 2k; with a softcap its consumers spill 40 bytes.
  if (d == 128 && sz.dv == 128 && unmaskedForward(iface) &&
      !iface.getSoftcapValue())
    return KernelConfigAttr::get(ctx, Recipe::Sm90Ws, /*blockM=*/128,
                                 /*blockN=*/176, /*warps=*/8, /*stages=*/2);
  const Sm90WsTile *t = sm90WsTile(sz);
  return KernelConfigAttr::get(ctx, Recipe::Sm90Ws, /*blockM=*/128,
                               keysTilingSparseBlocks(iface, t->blockN),
                               /*warps=*/8, t->stages);
}

//===----------------------------------------------------------------------===//
// The decode recipe (flash.attention_kvcache)
//===----------------------------------------------------------------------===//
//
// The sm80 forward's engine over packed query rows (Sm80Decode.cpp): the G·Sq
// rows of a decode step (G = Hq / Hkv) in 16-row slabs, four warps. Decoding
// is bound by the bytes in flight, not by arithmetic, so where the rows fill
// fewer slabs than there are warps, the warps split every key block instead
// and merge at the end (KernelSpec::keyWarps): block_m = 16 for up to 16
// packed rows (and when Sq or the heads are dynamic), 32 for up to 32, else
// 64 (rows split). Blocks of 128 keys two stages deep (three at D <= 64):
// each warp streams 32 keys of 64 KiB blocks, one block in flight while one
// is consumed; on the
// H100 they read 2.8-3.0 TB/s at B = 16 and 64 (0.97-1.0x SDPA), 128 x 3
// and 64 x 3-4 within 3% (run 74, docs/PERF.md). Smaller targets fall back
// to 64 keys, then two stages. Past D = 128 the 16-row key-split tile takes
// 64 keys a block on sm_90 contiguous caches, 64 rows of 32 keys elsewhere
// (the former spilled paged and with ALiBi). The keys are split between
// blocks by the one rule of runtime/include/flashfuse/decode_splits.h, from
// the static sizes (1 where any is dynamic: the runtime applies the same rule
// to the sizes it launches with).

constexpr int64_t kDecodeWarps = 4;

FailureOr<KernelConfigAttr> selectDecode(AttentionKVCacheOp op,
                                         const TargetDesc &target) {
  Type elt = getElementTypeOrSelf(op.getQuery().getType());
  if (!elt.isF16() && !elt.isBF16())
    return op.emitError() << "no kernel config: the decode recipe needs f16 "
                             "or bf16 inputs, got "
                          << elt;
  int64_t d = op.getHeadDim(), dv = op.getHeadDimV();
  // The FP8 cache's K/V tiles are at most the 16-bit ones (half the bytes
  // of a row, in whole 128-byte swizzle rows), so the 16-bit tiles below
  // fit its shared memory too.
  if (op.hasFp8Cache()) {
    if (target.arch < 89)
      return op.emitError() << kFp8CacheNeedsSm89;
    if (std::string why = fp8CacheKernelGap(d, dv);
        !why.empty())
      return op.emitError() << why;
  }
  if (!isDecodeHeadDim(d, dv))
    return op.emitError()
           << "no kernel config: the decode recipe serves D = Dv, a multiple "
              "of 16 from 32 to 256, got D = "
           << d << ", Dv = " << dv;
  if (op.hasRotary())
    if (std::string why = rotaryKernelGap(2 * op.getRotaryPairs());
        !why.empty())
      return op.emitError() << why;
  int64_t batch = op.getBatch(), headsQ = op.getHeadsQ(),
          headsKV = op.getHeadsKV(), seqQ = op.getSeqQ(),
          capacity = op.getCapacity();
  bool packedKnown = !ShapedType::isDynamic(headsQ) &&
                     !ShapedType::isDynamic(headsKV) &&
                     !ShapedType::isDynamic(seqQ);
  int64_t packed = packedKnown ? headsQ / headsKV * seqQ : 1;
  int64_t blockM = packed > 32 ? 64 : packed > 16 ? 32 : 16;
  // At most 8 packed rows (a decode step of GQA groups up to 8): the rows
  // as the products' n (KernelSpec::swapsDecodeOperands), half the
  // products and exponentials of the m16 tile, 1.004-1.015x its GB/s on an
  // H200 (docs/PERF.md run 354); measured on sm_90 only, so there. With
  // 16-bit caches of D = Dv up to 128 whose 8-row Q tile 128 threads copy
  // evenly (80 to 128).
  bool fp8 = op.hasFp8Cache();
  bool fewRows = packedKnown && packed <= 8 && !fp8 && d == dv && d > 64 &&
                 d <= 128 && target.arch >= 90;
  if (fewRows)
    blockM = 8;
  SmallVector<std::pair<int64_t, int64_t>> tiles = {{128, 2}, {64, 3}, {64, 2},
                                                    {32, 2}};
  // D <= 64: a block is half the bytes, so three stages in the same memory
  // (and at two, ptxas spilled the paged D = 64 kernels at 128 registers).
  if (d <= 64)
    tiles.insert(tiles.begin(), {128, 3});
  // Paged caches at D = 128 take the contiguous tiles too: their copies
  // look a page up once per pass of rows (Sm80Decode.cpp), and 128-key
  // blocks read 0.5-6% more than 64-key blocks three deep on the H100
  // (run 89; with a lookup per 16-byte chunk they took 254 registers and
  // were slower, run 76). D = 96 keeps 64 keys: at 128 its paged kernels
  // spilled 4-16 bytes.
  else if (op.isPaged() && d != 128)
    tiles.erase(tiles.begin());
  // Past 128 columns (D = 256 measured; 144-240 take its tiles untimed):
  // 64 rows of 32 keys, the 16-row key-split tile spilled on the paged
  // D = 256 variants. With a softcap (Gemma-2's decoding step), three
  // stages spilled 4 bytes contiguous on sm_90 (255 registers); two do not
  // on sm_80, sm_89 or sm_90. So with ALiBi, whose three-stage kernels
  // spilled 48-72 bytes on sm_90 (decode-alibi-ptxas.mlir).
  // On sm_90, contiguous 16-bit caches of up to 16 packed rows (GQA groups
  // of 1-8 at Sq <= 2: Gemma's steps) take the 16-row key-split tile
  // instead, 64 keys three deep (two with a softcap; 255 registers, no
  // spill, with windows and left padding too): the 64-row tile computes 64
  // rows for a group's 2 and streams the slowest of all (docs/PERF.md run
  // 565). It spilled paged (8-32 bytes at pages of 16 rows) and with ALiBi
  // (4-32 bytes), which keep 64 x 32.
  bool keySplitWide = d > 128 && !op.isPaged() && !fp8 && !op.hasAlibi() &&
                      packed <= 16 && target.arch >= 90;
  if (keySplitWide) {
    blockM = 16;
    tiles = {{64, 3}, {64, 2}};
  } else if (d > 128) {
    blockM = 64;
    tiles = {{32, 3}, {32, 2}};
  }
  if (d > 128 && (op.getSoftcap() || op.hasAlibi()))
    tiles.erase(tiles.begin());
  // An FP8 cache: a block of 256 keys is the bytes of a 16-bit block of
  // 128 at D <= 128, and keeps as many in flight. At 128 keys its smaller
  // tiles let three blocks share an SM, which capped the kernel at 168
  // registers and spilled 8-52 bytes at D = 128.
  if (fp8 && d > 64 && d <= 128)
    tiles.insert(tiles.begin(), {256, 2});
  // KernelSpec::keyWarps: every warp at 8 rows.
  int64_t keyWarps =
      fewRows ? kDecodeWarps : 16 * kDecodeWarps / std::min<int64_t>(blockM, 64);
  auto smem = [&](int64_t blockN, int64_t stages) {
    int64_t merge = keyWarps > 1 ? keyWarps * blockM * (dv + 2) * 4 : 0;
    // FP8: KernelSpec::smemBytes's, K/V rows of D / 2 16-bit units in
    // whole 128-byte swizzle rows.
    auto rowUnits = [](int64_t units) { return (units + 63) / 64 * 64; };
    int64_t tilesBytes =
        fp8 ? 1024 + 2 * (blockM * rowUnits(d) +
                          stages * blockN * (rowUnits(d / 2) + rowUnits(dv / 2)))
            : sm80ForwardBytes(blockM, blockN, stages, d, dv,
                               32 * kDecodeWarps);
    return std::max(tilesBytes, merge);
  };
  auto fit = llvm::find_if(tiles, [&](auto t) {
    return smem(t.first, t.second) <= target.smemPerBlock &&
           t.first % (16 * keyWarps) == 0;
  });
  if (fit == tiles.end())
    return op.emitError() << "no kernel config for target '" << target.name
                          << "': the decode recipe needs "
                          << smem(tiles.back().first, tiles.back().second)
                          << " bytes of shared memory, the target has "
                          << target.smemPerBlock;
  auto [blockN, stages] = *fit;
  // A grid of several waves of one block an SM (decode_splits.h): 16-bit
  // D = 128 at 16 packed rows takes 64-key blocks two deep where two fit
  // an SM (the opt-in maximum a block stands for the SM's capacity, as in
  // the split count below), as the Python package does at launch; at 8
  // rows three deep (gen_suite.py's DECODE_ROWS8_WAVES_TILES).
  int64_t wavesStages = blockM == 8 ? 3 : 2;
  if (!fp8 && d == 128 && blockM <= 16 && packedKnown &&
      !ShapedType::isDynamic(batch) &&
      smem(blockN, stages) * 2 > target.smemPerBlock &&
      smem(64, wavesStages) * 2 <= target.smemPerBlock &&
      flashfuse_decode_grid_of_waves(batch * headsKV *
                                         ((packed + blockM - 1) / blockM),
                                     target.sms)) {
    blockN = 64;
    stages = wavesStages;
  }
  int64_t splits = 1;
  if (packedKnown && !ShapedType::isDynamic(batch) &&
      !ShapedType::isDynamic(capacity))
    splits = flashfuse_decode_num_splits(
        batch, headsKV, (packed + blockM - 1) / blockM,
        (capacity + blockN - 1) / blockN, target.sms,
        flashfuse_decode_blocks_per_sm(target.smemPerBlock,
                                       smem(blockN, stages), dv));
  return KernelConfigAttr::get(op.getContext(), Recipe::Decode, blockM,
                               blockN, kDecodeWarps, stages, splits);
}

struct FlashSelectConfig
    : flash::impl::FlashSelectConfigBase<FlashSelectConfig> {
  using FlashSelectConfigBase::FlashSelectConfigBase;

  void runOnOperation() override {
    std::optional<TargetDesc> named;
    if (!target.empty()) {
      named = lookupNamedTarget(target);
      if (!named) {
        getOperation()->emitError()
            << "unknown target '" << target << "'; known targets are "
            << knownTargetNames();
        return signalPassFailure();
      }
    }

    bool failedAny = false;
    getOperation()->walk([&](Operation *op) {
      if (auto kv = dyn_cast<AttentionKVCacheOp>(op)) {
        if (kv.getConfigAttr())
          return;
        std::optional<TargetDesc> desc = named;
        FailureOr<KernelConfigAttr> config =
            desc || succeeded(findTarget(op, desc))
                ? selectDecode(kv, *desc)
                : FailureOr<KernelConfigAttr>(failure());
        if (failed(config)) {
          failedAny = true;
          return;
        }
        op->setAttr("config", *config);
        return;
      }
      // A packed forward or gradient takes the dense op's config: the
      // varlen tile scheduler places blocks in sequences, the tiles are the
      // same.
      auto iface = dyn_cast<AttentionVariantInterface>(op);
      // A config already there was chosen by a person or a tuner: keep it.
      if (!iface || iface.getKernelConfig())
        return;
      std::optional<TargetDesc> desc = named;
      if (!desc && failed(findTarget(op, desc))) {
        failedAny = true;
        return;
      }
      if (recipe != "auto" && recipe != "auto-tma" && recipe != "sm80" &&
          recipe != "sm90" && recipe != "sm90ws") {
        op->emitError() << "unknown recipe '" << recipe
                        << "'; expected auto, auto-tma, sm80, sm90 or sm90ws";
        failedAny = true;
        return;
      }
      bool isGrad = isa<AttentionGradOp>(op);
      if (std::string why = fp8Refusal(iface, *desc, recipe); !why.empty()) {
        op->emitError() << "no kernel config for target '" << desc->name
                        << "': " << why;
        failedAny = true;
        return;
      }
      // FP8 forwards (the verifier refuses FP8 in flash.attention_grad).
      if (isa<Float8E4M3FNType>(getElementTypeOrSelf(iface.getQKV()[0]))) {
        op->setAttr("config", fp8Config(iface, *desc, recipe));
        return;
      }
      // With sm90ws or auto-tma, a backward op the sm90ws backward serves
      // (the sm90 backward's variants less those sm90WsBackwardRefusal
      // names) takes it; the others take what auto gives them.
      if ((recipe == "sm90ws" || recipe == "auto-tma") && isGrad &&
          sm90Refusal(iface, *desc, /*isGrad=*/true, /*warpSpecialized=*/true)
              .empty() &&
          sm90WsBackwardRefusal(cast<AttentionGradOp>(op), *desc,
                                deterministic)
              .empty()) {
        op->setAttr("config", sm90WsBackwardConfig(iface));
        return;
      }
      if (recipe == "sm90ws" && !isGrad) {
        std::string why = sm90WsRefusal(iface, *desc);
        if (!why.empty()) {
          op->emitError() << "no kernel config for target '" << desc->name
                          << "': the sm90ws recipe cannot serve this op: "
                          << why;
          failedAny = true;
          return;
        }
        op->setAttr("config", sm90WsConfig(iface));
        return;
      }
      // auto-tma: the forwards the sm90ws recipe serves take it. Not auto's
      // default: its tensor maps need the runtime, and it is 1.05-1.30x the
      // sm90 forward from 1-2k keys but 0.58-0.87x at 256-512 (docs/PERF.md
      // runs 96, 103), while a kernel serves every length.
      if (recipe == "auto-tma" && !isGrad &&
          sm90WsRefusal(iface, *desc).empty()) {
        op->setAttr("config", sm90WsConfig(iface));
        return;
      }
      if (recipe != "sm80") {
        std::string why = sm90Refusal(iface, *desc, isGrad);
        if (why.empty()) {
          op->setAttr("config", sm90Config(iface, isGrad));
          return;
        }
        if (recipe == "sm90") {
          op->emitError() << "no kernel config for target '" << desc->name
                          << "': the sm90 recipe cannot serve this op: " << why;
          failedAny = true;
          return;
        }
      }
      FailureOr<KernelConfigAttr> config =
          selectSm80(op, iface, *desc, isGrad);
      if (failed(config)) {
        failedAny = true;
        return;
      }
      op->setAttr("config", *config);
    });
    if (failedAny)
      signalPassFailure();
  }

  /// The nearest enclosing `flash.target`; an error on `op` when there is
  /// none or it is not a #flash.target. Reading an ancestor's attribute is
  /// safe here: nothing in this pass writes one.
  LogicalResult findTarget(Operation *op, std::optional<TargetDesc> &desc) {
    for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
      Attribute attr = p->getAttr(kTargetAttrName);
      if (!attr)
        continue;
      if (auto t = dyn_cast<TargetAttr>(attr)) {
        desc = fromAttr(t);
        return success();
      }
      return op->emitError() << "'" << kTargetAttrName << "' on '"
                             << p->getName()
                             << "' must be a #flash.target<...>, got "
                             << attr;
    }
    return op->emitError() << "no target: pass target=<" << knownTargetNames()
                           << "> to flash-select-config or set '"
                           << kTargetAttrName
                           << " = #flash.target<...>' on the module";
  }
};

} // namespace
