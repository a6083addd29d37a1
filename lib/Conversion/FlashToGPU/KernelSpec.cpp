//===- KernelSpec.cpp - the compiled-in part of an attention kernel -------===//
#include "flashfuse/Conversion/FlashToGPU/KernelSpec.h"
#include "ModCaptures.h"
#include "flashfuse/Conversion/Common/ScorePipeline.h"
#include "flashfuse/Dialect/Flash/IR/KVCacheKernels.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::flash;

std::string KernelSpec::dtypeName() const {
  if (isFp8())
    return "e4m3";
  return elementType.isBF16() ? "bf16" : "f16";
}

std::string KernelSpec::causalName() const {
  switch (causal) {
  case Causal::None:
    return "none";
  case Causal::TopLeft:
    return "top_left";
  case Causal::BottomRight:
    return "bottom_right";
  }
  llvm_unreachable("unknown causal alignment");
}

std::string KernelSpec::kindName() const {
  switch (kind) {
  case Kind::Forward:
    return "forward";
  case Kind::BackwardPreprocess:
    return "backward_preprocess";
  case Kind::Backward:
    return "backward";
  case Kind::BackwardDQ:
    return "backward_dq";
  case Kind::BackwardPostprocess:
    return "backward_postprocess";
  case Kind::Decode:
    return "decode";
  case Kind::DecodeCombine:
    return "decode_combine";
  case Kind::KVAppend:
    return "kv_append";
  case Kind::DecodeCheck:
    return "decode_check";
  case Kind::BackwardSparseTranspose:
    return "backward_sparse_transpose";
  }
  llvm_unreachable("unknown kernel kind");
}

int64_t KernelSpec::smemBytes() const {
  if (kind == Kind::Decode &&
      (keyWarps() > 1 || clusterMergeSplits() > 0)) {
    // The tiles, reused after the key loop to merge the warps' key slices:
    // [slices][block_m][Dv] partial O and [slices][block_m] (max, sum);
    // then, past those, the partial rows a cluster merges.
    KernelSpec tiles = *this;
    tiles.kind = Kind::Forward;
    int64_t reuse = keyWarps() > 1 ? keyWarps() * blockM * (headDimV + 2) * 4
                                   : 0;
    if (clusterMergeSplits() > 0)
      reuse = clusterExchangeOffset() + clusterExchangeBytes();
    return std::max(tiles.smemBytes(), reuse);
  }
  switch (kind) {
  case Kind::Forward:
  case Kind::Decode: // the forward's tiles: packed query rows, K/V ring
    if (isFp8() && recipe == Recipe::Sm80) {
      // Q and K rows of D bytes and Vᵀ rows of block_n bytes, each in the
      // 16-bit units of the 128-byte swizzle (a 64-byte row takes a whole
      // swizzle row).
      int64_t d = swizzleWidth(headDim / 2);
      return kSwizzleAlignSlack +
             2 * (blockM * d +
                  stages * (blockN * d + headDimV * swizzleWidth(blockN / 2)));
    }
    if (isFp8()) // one byte an element; Vᵀ tiles of Dv rows x block_n keys
      return kSwizzleAlignSlack + blockM * headDim +
             stages * blockN * (headDim + headDimV);
    if (fp8Cache) { // 16-bit Q rows; K/V rows of D / 2 16-bit units
      int64_t d = swizzleWidth(headDim);
      int64_t dk = swizzleWidth(cacheColumns(headDim));
      int64_t dv = swizzleWidth(cacheColumns(headDimV));
      return kSwizzleAlignSlack + 2 * (blockM * d + stages * blockN * (dk + dv));
    }
    if (!usesWgmma()) // swizzled or padded, as flash-select-config counts
      return sm80ForwardBytes(blockM, blockN, stages, headDim, headDimV,
                              threads());
    // wgmma: swizzled tiles, and the stages' published key blocks.
    return kSwizzleAlignSlack +
           2 * (blockM * swizzleWidth(headDim) +
                stages * blockN *
                    (swizzleWidth(headDim) + swizzleWidth(headDimV))) +
           (publishesKeyBlocks() ? 4 * stages : 0);
  case Kind::Backward:
    if (usesWgmma()) // the tiles, and the staged f32 dQ
      return wgmmaBackwardTileBytes() + dqStageBytes();
    return sm80BackwardBytes(blockM, blockN, stages, headDim, headDimV,
                             /*dsTile=*/!deterministic, blockSparse);
  case Kind::BackwardDQ:
    return sm80BackwardDQBytes(blockM, blockN, stages, headDim, headDimV);
  case Kind::BackwardPreprocess:
  case Kind::BackwardPostprocess:
  case Kind::DecodeCombine:
  case Kind::KVAppend:
  case Kind::BackwardSparseTranspose:
    return 0;
  case Kind::DecodeCheck: // the block's lowest faulty entry (i64)
    return 8;
  }
  llvm_unreachable("unknown kernel kind");
}

std::string KernelSpec::kernelName() const {
  static const char *prefix[] = {"flash_fwd",      "flash_bwd_pre",
                                 "flash_bwd",      "flash_bwd_dq",
                                 "flash_bwd_post", "flash_decode",
                                 "flash_decode_combine", "flash_kv_append",
                                 "flash_decode_check",
                                 "flash_bwd_bs_transpose"};
  bool isDecode = kind == Kind::Decode || kind == Kind::DecodeCombine ||
                  kind == Kind::KVAppend || kind == Kind::DecodeCheck;
  std::string name = std::string(prefix[int(kind)]) + "_" +
                     (isDecode ? "" : stringifyRecipe(recipe).str() + "_") +
                     dtypeName() +
                     // An FP8 forward's O dtype tells its kernels apart.
                     (isFp8() ? (outputType().isBF16() ? "_bf16" : "_f16") : "") +
                     // An FP8 cache's decode kernels read e4m3 K/V.
                     (fp8Cache ? "_kvf8" : "") +
                     "_d" + std::to_string(headDim);
  if (headDimV != headDim)
    name += "_dv" + std::to_string(headDimV);
  name += "_m" + std::to_string(blockM) + "n" + std::to_string(blockN) + "w" +
          std::to_string(warps) + "s" + std::to_string(stages);
  if (causal == Causal::TopLeft)
    name += "_causal";
  if (causal == Causal::BottomRight)
    name += "_causalbr";
  if (window)
    name += "_window";
  if (softcap)
    name += "_softcap";
  if (bias)
    name += "_bias";
  if (gradBias)
    name += "_dbias";
  if (mask)
    name += "_mask";
  if (dropout)
    name += "_dropout";
  if (writesF32Output())
    name += "_of32";
  if (deterministic)
    name += "_det";
  // The sm90 recipe's preprocess and postprocess of dQ in rows (a packed
  // batch's) are told apart from the default, tiled ones.
  if ((kind == Kind::BackwardPreprocess || kind == Kind::BackwardPostprocess) &&
      recipe == Recipe::Sm90 && !deterministic && !dqTiles)
    name += "_dqrows";
  if (pageSize)
    name += "_page" + std::to_string(pageSize);
  if (leftPad)
    name += "_leftpad";
  if (alibi)
    name += alibi == 2 ? "_alibib" : "_alibi";
  if (cacheBatchIdx)
    name += "_bidx";
  if (rotaryDim)
    name += "_rotary" + std::to_string(rotaryDim) +
            (rotaryInterleaved ? "i" : "") +
            (rotaryQueryRowsApart ? "" : "_qsamepos");
  if (varlen)
    name += "_varlen";
  if (blockSparse)
    name += "_bs" + std::to_string(sparseBlockQ) + "x" +
            std::to_string(sparseBlockK) + (fullBlocks ? "f" : "");
  if (blockDescales())
    name += "_ds" + std::to_string(descaleBlockQ) + "x" +
            std::to_string(descaleBlockK);
  if (uniqueId >= 0)
    name += "_mod" + std::to_string(uniqueId);
  return name;
}

SmallVector<std::string> KernelSpec::params() const {
  SmallVector<std::string> p;
  auto memrefs = [&](std::initializer_list<const char *> names) {
    for (const char *n : names)
      p.push_back(std::string("memref:") + n);
  };
  auto strides = [&](std::initializer_list<const char *> operands) {
    for (const char *t : operands)
      for (const char *d : {"b", "h", "s"})
        p.push_back(std::string("i64:") + t + "_stride_" + d);
  };
  auto sizes = [&] {
    for (const char *n : {"batch", "heads_q", "heads_kv", "seq_q", "seq_k"})
      p.push_back(std::string("i32:") + n);
  };
  // The variant's operands and scalars, shared by forward, backward and dQ.
  auto biasMaskStrides = [&] {
    if (bias)
      for (const char *d : {"b", "h", "q", "k"})
        p.push_back(std::string("i64:bias_stride_") + d);
    if (mask)
      for (const char *d : {"b", "h", "q", "k"})
        p.push_back(std::string("i64:mask_stride_") + d);
  };
  auto biasMask = [&] {
    if (bias)
      memrefs({"bias"});
    if (mask)
      memrefs({"mask"});
  };
  // ALiBi's slopes, f32 [Hq] or [B, Hq] (KernelSpec::alibi).
  auto alibiSlopes = [&] {
    if (alibi)
      memrefs({"alibi_slopes"});
  };
  auto scalars = [&] {
    p.append({"f32:scale", "i32:window_left", "i32:window_right",
              "f32:softcap", "f32:dropout_p", "i64:seed"});
  };
  // Block-sparse: each list pair of `family` ("kv": the forward's key
  // blocks per query block; "q": the transposed query blocks per key
  // block), its batch and head strides (0 where it broadcasts) and its
  // slots per row (the indices' row stride).
  auto sparseLists = [&](StringRef family) {
    for (const char *prefix : {"", "full_"}) {
      if (*prefix && !fullBlocks)
        continue;
      std::string pre = prefix + family.str();
      p.append({"memref:" + pre + "_num_blocks", "memref:" + pre + "_indices",
                "i64:" + pre + "_num_blocks_stride_b",
                "i64:" + pre + "_num_blocks_stride_h",
                "i64:" + pre + "_indices_stride_b",
                "i64:" + pre + "_indices_stride_h", "i32:" + pre + "_slots"});
    }
  };
  // docs/KERNEL_ABI.md "Decode": an FP8 cache's descales, f32, element
  // (b, hkv) at b * stride_b + hkv * stride_h ([B, Hkv]: Hkv and 1; per
  // tensor: 0 and 0), read by its decode and kv_append kernels. Last, so
  // that the 16-bit kernels' parameters stay as they were.
  auto cacheDescales = [&] {
    if (!fp8Cache)
      return;
    memrefs({"k_descale", "v_descale"});
    for (const char *t : {"k", "v"})
      for (const char *d : {"b", "h"})
        p.push_back(std::string("i64:") + t + "_descale_stride_" + d);
  };
  // docs/KERNEL_ABI.md "Decode": a pool's indices (i32 [B]) and its size
  // Bc, read by the decode, kv_append and decode_check kernels. Last of
  // all.
  auto poolIndices = [&] {
    if (cacheBatchIdx)
      p.append({"memref:cache_batch_idx", "i32:cache_batch"});
  };
  switch (kind) {
  case Kind::Forward:
    if (isFp8()) {
      // docs/KERNEL_ABI.md "FP8 forwards": Vᵀ, the descales and their
      // [B, H] strides; no bias, mask, dropout or varlen (getKernelSpec).
      memrefs({"q", "k", "vt", "o", "lse", "q_descale", "k_descale",
               "v_descale"});
      sizes();
      for (const char *t : {"q", "k"})
        for (const char *d : {"b", "h", "s"})
          p.push_back(std::string("i64:") + t + "_stride_" + d);
      for (const char *d : {"b", "h", "d"})
        p.push_back(std::string("i64:vt_stride_") + d);
      strides({"o"});
      // Per-block descales add each one's block stride (0 for one that
      // is per tensor or per head).
      for (const char *t : {"q", "k", "v"})
        for (const char *d : {"b", "h", "n"})
          if (*d != 'n' || blockDescales())
            p.push_back(std::string("i64:") + t + "_descale_stride_" + d);
      appendCaptureParams(captures, p);
      scalars();
      // The mma.sync engine (sm_89) copies the tiles itself.
      if (usesTensorMaps())
        p.append({"tensormap:q_map", "tensormap:k_map", "tensormap:vt_map"});
      break;
    }
    memrefs({"q", "k", "v", "o", "lse"});
    biasMask();
    alibiSlopes();
    // A packed batch: the sequences' offsets, how many there are and the
    // longest query sequence (the runtime's grid bound).
    if (varlen)
      memrefs({"cu_seqlens_q", "cu_seqlens_k"});
    sizes();
    if (varlen)
      p.append({"i32:num_seqs", "i32:max_seqlen_q"});
    strides({"q", "k", "v", "o"});
    biasMaskStrides();
    appendCaptureParams(captures, p);
    scalars();
    if (blockSparse)
      sparseLists("kv");
    if (takesTileOrder())
      p.push_back("i64:kv_tile_order");
    // Last, so that they stay the kernel's trailing parameters through the
    // memref expansion (flash-grid-constant-params marks them by position).
    if (usesTensorMaps())
      p.append({"tensormap:q_map", "tensormap:k_map", "tensormap:v_map"});
    break;
  case Kind::BackwardPreprocess:
    memrefs({"o", "do", "delta"});
    if (!deterministic)
      memrefs({"dq_accum"});
    sizes();
    strides({"o", "do"});
    break;
  case Kind::Backward:
    memrefs({"q", "k", "v", "do", "lse", "delta"});
    if (!deterministic)
      memrefs({"dq_accum"});
    memrefs({"dk", "dv"});
    // The sm90 engine writes dK/dV straight into grad_k/grad_v where
    // Hq = Hkv (the slices only with GQA).
    if (mainWritesKeyGradients())
      memrefs({"grad_k", "grad_v"});
    biasMask();
    alibiSlopes();
    if (gradBias)
      memrefs({"dbias"});
    // A packed batch, as for the forward; the grid walks key blocks, so its
    // bound is the longest key sequence.
    if (varlen)
      memrefs({"cu_seqlens_q", "cu_seqlens_k"});
    sizes();
    if (varlen)
      p.append({"i32:num_seqs", "i32:max_seqlen_k"});
    strides({"q", "k", "v", "do"});
    if (mainWritesKeyGradients())
      strides({"grad_k", "grad_v"});
    biasMaskStrides();
    appendCaptureParams(captures, p);
    scalars();
    // The transposed lists (docs/KERNEL_ABI.md "Block-sparse backward").
    if (blockSparse)
      sparseLists("q");
    if (takesTileOrder())
      p.push_back("i64:kv_tile_order");
    // The sm90ws backward's, last as the forward's.
    if (usesTensorMaps())
      p.append({"tensormap:q_map", "tensormap:k_map", "tensormap:v_map",
                "tensormap:do_map"});
    break;
  case Kind::BackwardDQ:
    memrefs({"q", "k", "v", "do", "lse", "delta", "grad_q"});
    biasMask();
    alibiSlopes();
    if (varlen)
      memrefs({"cu_seqlens_q", "cu_seqlens_k"});
    sizes();
    if (varlen)
      p.append({"i32:num_seqs", "i32:max_seqlen_q"});
    strides({"q", "k", "v", "do", "grad_q"});
    biasMaskStrides();
    appendCaptureParams(captures, p);
    scalars();
    // The forward's lists: the dQ kernel walks key blocks per query block.
    if (blockSparse)
      sparseLists("kv");
    break;
  case Kind::BackwardSparseTranspose:
    // The forward's lists in, the transposed ones out; the sizes give QB
    // and KB (and the runtime the grid).
    sparseLists("kv");
    sparseLists("q");
    p.append({"i32:batch", "i32:heads_q", "i32:seq_q", "i32:seq_k"});
    break;
  case Kind::BackwardPostprocess:
    if (!deterministic)
      memrefs({"dq_accum", "grad_q"});
    memrefs({"dk", "dv", "grad_k", "grad_v"});
    sizes();
    if (!deterministic)
      strides({"grad_q"});
    strides({"grad_k", "grad_v"});
    break;
  case Kind::Decode:
    memrefs({"q", "k", "v", "o", "lse", "o_partial", "lse_partial",
             "split_arrivals", "cache_seqlens"});
    if (pageSize)
      memrefs({"block_table"});
    if (leftPad)
      memrefs({"cache_leftpad"});
    alibiSlopes();
    sizes();
    p.push_back("i32:seq_new");
    strides({"q", "k", "v", "o"});
    if (pageSize)
      p.append({"i32:num_pages", "i64:block_table_stride"});
    p.append({"i32:num_splits", "i32:merge_splits", "f32:scale",
              "i32:window_left", "i32:window_right", "f32:softcap"});
    cacheDescales();
    poolIndices();
    break;
  case Kind::DecodeCombine:
    memrefs({"o", "lse", "o_partial", "lse_partial"});
    p.append({"i32:batch", "i32:heads_q", "i32:seq_q", "i32:num_splits"});
    strides({"o"});
    break;
  case Kind::KVAppend:
    memrefs({"k", "v", "k_new", "v_new", "cache_seqlens"});
    if (pageSize)
      memrefs({"block_table"});
    p.append({"i32:batch", "i32:heads_kv", "i32:seq_k", "i32:seq_new"});
    strides({"k", "v", "k_new", "v_new"});
    if (pageSize)
      p.append({"i32:num_pages", "i64:block_table_stride"});
    cacheDescales();
    // docs/KERNEL_ABI.md "Decode": the rotary tables [seq_rotary,
    // rotaryDim / 2] (contiguous rows) and the query it rotates into
    // q_rot, each with its [B, H, S] strides. Last, as the descales.
    if (rotaryDim) {
      memrefs({"q", "q_rot", "rotary_cos", "rotary_sin"});
      p.append({"i32:heads_q", "i32:seq_q", "i32:seq_rotary"});
      strides({"q", "q_rot"});
    }
    poolIndices();
    break;
  case Kind::DecodeCheck:
    memrefs({"cache_seqlens"});
    if (pageSize)
      memrefs({"block_table"});
    memrefs({"check_status"});
    p.append({"i32:batch", "i32:seq_k", "i32:seq_new"});
    if (pageSize)
      p.append({"i32:num_pages", "i64:block_table_stride"});
    poolIndices();
    break;
  }
  return p;
}

bool KernelSpec::operator==(const KernelSpec &o) const {
  return kind == o.kind && recipe == o.recipe && elementType == o.elementType &&
         headDim == o.headDim && headDimV == o.headDimV &&
         blockM == o.blockM && blockN == o.blockN && warps == o.warps &&
         stages == o.stages && causal == o.causal && window == o.window &&
         softcap == o.softcap && bias == o.bias && mask == o.mask &&
         dropout == o.dropout && deterministic == o.deterministic &&
         gradBias == o.gradBias && uniqueId == o.uniqueId &&
         pageSize == o.pageSize && fp8Cache == o.fp8Cache &&
         leftPad == o.leftPad && alibi == o.alibi &&
         rotaryDim == o.rotaryDim && rotaryInterleaved == o.rotaryInterleaved &&
         rotaryQueryRowsApart == o.rotaryQueryRowsApart &&
         cacheBatchIdx == o.cacheBatchIdx &&
         outputType() == o.outputType() &&
         varlen == o.varlen && dqTiles == o.dqTiles &&
         blockSparse == o.blockSparse &&
         fullBlocks == o.fullBlocks && sparseBlockQ == o.sparseBlockQ &&
         sparseBlockK == o.sparseBlockK && descaleBlockQ == o.descaleBlockQ &&
         descaleBlockK == o.descaleBlockK;
}

KernelSpec mlir::flash::getBackwardStepSpec(const KernelSpec &main,
                                            KernelSpec::Kind kind) {
  using Kind = KernelSpec::Kind;
  KernelSpec s = main;
  s.kind = kind;
  // The dQ kernel's warps own 16-row slabs of the query block like the
  // forward's; the main kernel may run more warps than block_m has slabs.
  if (kind == Kind::BackwardDQ) {
    s.warps = std::min(s.warps, s.blockM / 16);
    // Its ring of K/V tiles of the main kernel's block_n keys comes on top
    // of the Q and dO tiles, which flash-select-config did not fit to the
    // chip (the config is the main kernel's): where they do not fit,
    // narrower key tiles, the ring's depth kept as the forward's fallback
    // does. D = 128 at 64 x 128 takes 174 KiB, past sm_80's 163 KiB.
    while (s.smemBytes() > maxSharedMemoryPerBlock(s.arch) && s.blockN > 16)
      s.blockN /= 2;
  }
  // The preprocess and postprocess are row by row: a block-sparse op
  // shares the dense ones.
  if (kind == Kind::BackwardPreprocess || kind == Kind::BackwardPostprocess) {
    s.blockSparse = s.fullBlocks = false;
    s.sparseBlockQ = s.sparseBlockK = 0;
    // Nor do they read scores: an ALiBi op shares them too.
    s.alibi = 0;
    // The sm90ws backward reads and writes the sm90 one's buffers (dQ in
    // the same tiles): it shares that recipe's kernels.
    if (s.recipe == Recipe::Sm90Ws)
      s.recipe = Recipe::Sm90;
  }
  if (kind == Kind::BackwardSparseTranspose) {
    // One thread per key block (BlockSparseTranspose.cpp). Its code depends
    // on the lists only; it keeps the variant (dtype, head dims, flags) so
    // that it is found by the backward's variant key, but not the regions
    // nor the deterministic mode, which it does not read.
    s.warps = 4;
    s.deterministic = false;
    s.gradBias = false;
    s.alibi = 0;
    s.scoreMod = s.maskMod = nullptr;
    s.captures.clear();
    s.uniqueId = -1;
  }
  return s;
}

/// A kernel of the decode's launch (its combine, K/V append or table
/// check) of `kind` and `warps` warps: the decode's element type, head
/// dims, page size and arch.
static KernelSpec besideDecode(const KernelSpec &decode, KernelSpec::Kind kind,
                               int64_t warps) {
  KernelSpec s;
  s.kind = kind;
  s.recipe = Recipe::Decode;
  s.elementType = decode.elementType;
  s.headDim = decode.headDim;
  s.headDimV = decode.headDimV;
  s.pageSize = decode.pageSize;
  s.warps = warps;
  s.arch = decode.arch;
  return s;
}

KernelSpec mlir::flash::getDecodeCombineSpec(const KernelSpec &decode) {
  // It reads the partial rows of Dv only, from no cache.
  KernelSpec s = besideDecode(decode, KernelSpec::Kind::DecodeCombine, 4);
  s.headDim = decode.headDimV;
  s.pageSize = 0;
  s.blockM = s.warps; // rows per block
  return s;
}

KernelSpec mlir::flash::getKVAppendSpec(const KernelSpec &decode,
                                        AttentionKVCacheOp op) {
  KernelSpec s = besideDecode(decode, KernelSpec::Kind::KVAppend, 4);
  s.fp8Cache = decode.fp8Cache;
  s.cacheBatchIdx = decode.cacheBatchIdx;
  s.blockM = s.warps; // new rows per block, a warp each
  if (op && op.hasRotary()) {
    s.rotaryDim = 2 * op.getRotaryPairs();
    s.rotaryInterleaved = op.getRotaryInterleaved();
    s.rotaryQueryRowsApart = op.rotatesQueryRowsApart();
  }
  return s;
}

KernelSpec mlir::flash::getDecodeCheckSpec(const KernelSpec &decode) {
  KernelSpec s = besideDecode(decode, KernelSpec::Kind::DecodeCheck, 8);
  s.cacheBatchIdx = decode.cacheBatchIdx; // checks the pool's rows too
  s.blockM = s.threads(); // table entries checked per pass
  return s;
}

/// What flash.attention and flash.attention_grad share: dtype, head dims,
/// layouts, tiles and the variant.
static FailureOr<KernelSpec> getVariantSpec(Operation *op, Value query,
                                            Value bias, Value mask,
                                            Region &scoreMod, Region &maskMod) {
  auto iface = cast<AttentionVariantInterface>(op);
  KernelConfigAttr config = iface.getKernelConfig();
  if (!config)
    return op->emitOpError()
           << "has no kernel config; run flash-select-config first";
  if (config.getRecipe() == Recipe::Decode)
    return op->emitOpError() << "recipe 'decode' has no GPU lowering yet";
  KernelSpec s;
  s.recipe = config.getRecipe();
  s.elementType = getElementTypeOrSelf(query.getType());
  // FP8 forwards are served by the sm90ws recipe (wgmma) and by the sm80
  // recipe's mma.sync engine for sm_89 (getKernelSpec(AttentionOp)).
  if (!s.elementType.isF16() && !s.elementType.isBF16() &&
      !(s.isFp8() && isa<AttentionOp>(op) &&
        (config.getRecipe() == Recipe::Sm90Ws ||
         config.getRecipe() == Recipe::Sm80)))
    return op->emitOpError()
           << "the " << stringifyRecipe(config.getRecipe())
           << " recipe needs f16 or bf16 operands, got " << s.elementType
           << (s.isFp8() ? " (FP8 forwards take the sm90ws recipe, or sm80 "
                           "on sm_89)"
                         : "");
  AttentionSizes sz = iface.getSizes();
  s.headDim = sz.d;
  s.headDimV = sz.dv;
  // Any multiple of 8 up to 256 (HeadDims.h), with Dv <= D: O is staged
  // through the Q tile and the backward's postprocess walks D's columns,
  // Dv's among them.
  if (!isServedHeadDim(s.headDim) || !isServedHeadDim(s.headDimV) ||
      s.headDimV > s.headDim)
    return op->emitOpError()
           << "the GPU recipes support D and Dv multiples of 8 from 8 to 256 "
              "with Dv <= D, got D = "
           << s.headDim << ", Dv = " << s.headDimV;
  std::pair<StringRef, SmallVector<int64_t, 4>> perms[] = {
      {"query", iface.getQueryPerm()},
      {"key", iface.getKeyPerm()},
      {"value", iface.getValuePerm()}};
  for (const auto &[name, perm] : perms)
    if (perm[3] != 3)
      return op->emitOpError() << "'" << name
                               << "' must keep the head dim innermost for the "
                                  "GPU recipe (perm[3] == 3)";
  s.blockM = config.getBlockM();
  s.blockN = config.getBlockN();
  s.warps = config.getWarps();
  s.stages = config.getStages();
  if (iface.isCausal())
    s.causal = iface.isBottomRightAligned() ? KernelSpec::Causal::BottomRight
                                            : KernelSpec::Causal::TopLeft;
  s.window = iface.getWindowLeftSize() || iface.getWindowRightSize();
  s.softcap = iface.getSoftcapValue().has_value();
  s.bias = static_cast<bool>(bias);
  s.mask = static_cast<bool>(mask);
  s.dropout = iface.hasDropout();
  if (Value slopes = iface.getAlibiOperand())
    s.alibi = cast<RankedTensorType>(slopes.getType()).getRank();
  // What the regions read from above the op becomes kernel parameters.
  SmallVector<Region *, 2> regions;
  for (Region *r : {&scoreMod, &maskMod})
    if (!r->empty())
      regions.push_back(r);
  FailureOr<SmallVector<Value>> captures = collectModCaptures(op, regions);
  if (failed(captures))
    return failure();
  s.captures = std::move(*captures);
  if (!scoreMod.empty())
    s.scoreMod = &scoreMod;
  if (!maskMod.empty())
    s.maskMod = &maskMod;
  return s;
}

/// The block-sparse iterators (BlockSparseIterator.h): a thread block's
/// query rows lie in one sparse query block and its key blocks tile the
/// sparse key blocks (both ways round for the backward, whose blocks own
/// keys). The forward and the backward walk the lists on the sm80, sm90 and
/// sm90ws recipes (the sm90ws forward one tile a block: no persistent
/// walk).
static LogicalResult setBlockSparse(Operation *op, KernelSpec &s) {
  BlockSparseOperands lists =
      cast<AttentionVariantInterface>(op).getBlockSparse();
  if (!lists)
    return success();
  bool walks = s.recipe == Recipe::Sm80 || s.recipe == Recipe::Sm90 ||
               s.recipe == Recipe::Sm90Ws;
  if (!walks)
    return op->emitOpError()
           << "block_sparse(...) lists are walked by the sm80, sm90 and "
              "sm90ws recipes' kernels, not by recipe '"
           << stringifyRecipe(s.recipe) << "'";
  if (lists.blockQ % s.blockM != 0 || lists.blockK % s.blockN != 0)
    return op->emitOpError()
           << "block_sparse(...) needs the sparse block size ["
           << lists.blockQ << ", " << lists.blockK
           << "] to be multiples of the config's [block_m, block_n] = ["
           << s.blockM << ", " << s.blockN << "]";
  s.blockSparse = true;
  s.fullBlocks = static_cast<bool>(lists.fullNumBlocks);
  s.sparseBlockQ = lists.blockQ;
  s.sparseBlockK = lists.blockK;
  return success();
}

/// The FP8 forwards' per-block descales (Fp8Descales.h): one Q factor per
/// warp (its 16 rows) and one K and V factor per key tile, which the
/// kernels fold into per-warp and per-block scalars.
static LogicalResult checkDescaleBlocks(AttentionOp op, const KernelSpec &s) {
  if (!s.blockDescales() ||
      (s.descaleBlockQ % 16 == 0 && s.descaleBlockK % s.blockN == 0))
    return success();
  return op->emitOpError()
         << "per-block descales need descale_block_size [BQ, BK] with BQ "
            "a multiple of 16 and BK a multiple of block_n = "
         << s.blockN << "; got [" << s.descaleBlockQ << ", "
         << s.descaleBlockK << "]";
}

/// The head dims the wgmma forwards (sm90, sm90ws) lower: whole 64-column
/// swizzle rows of D and of Dv <= D up to 256 (S = Q Kᵀ walks D's rows,
/// P·V and O Dv's; O is staged through Q's tile).
static bool wgmmaForwardHeadDims(const KernelSpec &s) {
  return s.headDim % 64 == 0 && s.headDim <= 256 && s.headDimV % 64 == 0 &&
         s.headDimV <= s.headDim;
}

FailureOr<KernelSpec> mlir::flash::getKernelSpec(AttentionOp op) {
  FailureOr<KernelSpec> spec =
      getVariantSpec(op, op.getQuery(), op.getBias(), op.getMask(),
                     op.getScoreMod(), op.getMaskMod());
  if (failed(spec))
    return failure();
  // The verifier allows f32 O over f16/bf16 inputs only; the epilogue
  // stores it from the f32 accumulators (ForwardBuilder::writeEpilogue).
  Type outElt = getElementTypeOrSelf(op.getOutput().getType());
  if (outElt != spec->elementType)
    spec->outputElementType = outElt;
  // A packed batch: the recipes' forward under the varlen tile scheduler
  // (the verifier has refused bias, mask, dropout and the regions).
  spec->varlen = op.isVarlen();
  if (failed(setBlockSparse(op.getOperation(), *spec)))
    return failure();
  if (op.hasBlockDescales()) {
    auto [bq, bk] = op.getDescaleBlocks();
    spec->descaleBlockQ = bq;
    spec->descaleBlockK = bk;
  }
  if (spec->recipe == Recipe::Sm90Ws) {
    // Consumer warpgroups of 64 rows on wgmma (block_m = 16 * warps, the
    // producer warpgroup on top): two (warps = 8), or three (warps = 12) in
    // a D = 64 forward, whose O and 128-key S fit the 160 registers a
    // thread of three gets (at D = 128 they spill); K and V tiles of
    // block_n rows, at most 256 (a TMA box's and a wgmma N's limit); whole
    // 64-column swizzle rows of D and of Dv <= D (wgmmaForwardHeadDims).
    // Variants whose operands or per-element work the producer/consumer
    // split does not carry yet are refused by name.
    const KernelSpec &s = *spec;
    bool knownHeadDim = wgmmaForwardHeadDims(s);
    bool threeConsumers = s.warps == 12 && s.kind == KernelSpec::Kind::Forward &&
                          s.headDim == 64;
    if ((s.warps != 8 && !threeConsumers) || s.blockM != 16 * s.warps ||
        s.blockN % 16 != 0 || s.blockN > 256 || s.stages < 2 ||
        !knownHeadDim)
      return op->emitOpError()
             << "the sm90ws recipe needs warps = 8 (two consumer warpgroups; "
                "12, three, for a D = 64 forward), block_m = 16 * "
                "warps, block_n a multiple of 16 up to 256, stages >= 2 and "
                "D and Dv <= D multiples of 64 up to 256; got block_m = "
             << s.blockM << ", block_n = " << s.blockN << ", warps = "
             << s.warps << ", stages = " << s.stages << ", D = " << s.headDim
             << ", Dv = " << s.headDimV;
    StringRef unsupported = s.bias      ? "a bias operand"
                            : s.mask    ? "a mask operand"
                            : s.dropout ? "dropout"
                                        : "";
    if (!unsupported.empty())
      return op->emitOpError()
             << "the sm90ws recipe does not serve " << unsupported
             << " yet; use the sm90 recipe";
    // FP8: Q/K rows are whole 128-byte swizzle rows, or at D = 64 one
    // 64-byte one (KernelSpec::tmaSwizzleBytes), which wgmma's e4m3 k-steps
    // of 32 bytes walk; Vᵀ rows (block_n keys, P·V's k) are whole swizzle
    // rows of 128, 64 or 32 bytes, a TMA box each, and whole groups of the
    // 32 keys P's fragments permute (fp8_vt_layout.h): block_n a multiple
    // of 32.
    if (s.isFp8() && s.blockN % 32 != 0)
      return op->emitOpError()
             << "the FP8 forward needs block_n a multiple of 32 (Vᵀ rows of "
                "whole 32-key groups and swizzle rows); got block_n = "
             << s.blockN;
    if (failed(checkDescaleBlocks(op, s)))
      return failure();
    return spec;
  }
  if (spec->recipe == Recipe::Sm90) {
    // Warpgroups of 4 warps own 64 rows each (one wgmma m64 per warpgroup);
    // the swizzled tiles hold whole 64-element rows of D and of Dv <= D;
    // every thread copies the same number of 16-byte chunks; S is one wgmma
    // of N = block_n <= 256, and so is O += P V, of N = Dv.
    const KernelSpec &s = *spec;
    int64_t threads = s.threads();
    bool knownHeadDim = wgmmaForwardHeadDims(s);
    if (s.warps % 4 != 0 || s.blockM != 16 * s.warps || s.blockN % 16 != 0 ||
        s.blockN > 256 || !knownHeadDim ||
        (s.blockM * s.headDim / 8) % threads != 0 ||
        (s.blockN * s.headDim / 8) % threads != 0)
      return op->emitOpError()
             << "the sm90 recipe needs warps a multiple of 4, block_m = 16 * "
                "warps, block_n a multiple of 16 up to 256, D and Dv <= D "
                "multiples of 64 up to 256 and tiles whose 16-byte chunks the "
                "threads divide; got block_m = "
             << s.blockM << ", block_n = " << s.blockN << ", warps = "
             << s.warps << ", D = " << s.headDim << ", Dv = " << s.headDimV;
    return spec;
  }
  // The sm80 FP8 forward (Sm80Fp8Forward.cpp): Q and K rows of D bytes,
  // Vᵀ rows of block_n = 128 keys (one 128-byte swizzle row), one 16-row
  // slab a warp; per-block descales as the wgmma kernel's (Fp8Descales.h).
  if (spec->isFp8()) {
    const KernelSpec &s = *spec;
    if ((s.headDim != 64 && s.headDim != 128) || s.headDimV != s.headDim ||
        s.blockN != 128 || s.blockM != 16 * s.warps || s.stages < 2)
      return op->emitOpError()
             << "the sm80 FP8 forward needs D = Dv in {64, 128}, block_n = "
                "128, block_m = 16 * warps and stages >= 2; got D = "
             << s.headDim << ", Dv = " << s.headDimV << ", block_m = "
             << s.blockM << ", block_n = " << s.blockN << ", warps = "
             << s.warps << ", stages = " << s.stages;
    StringRef unsupported = s.varlen        ? "varlen (cu_seqlens) batches"
                            : s.blockSparse ? "block-sparse lists"
                                            : "";
    if (!unsupported.empty())
      return op->emitOpError()
             << "the sm80 FP8 forward does not serve " << unsupported;
    if (failed(checkDescaleBlocks(op, s)))
      return failure();
    return spec;
  }
  // The forward's warps each own 16-row slabs of the query block.
  if (spec->blockM % (16 * spec->warps) != 0 || spec->blockN % 16 != 0)
    return op->emitOpError() << "config block_m = " << spec->blockM
                             << " must be a multiple of 16 * warps ("
                             << 16 * spec->warps << ") and block_n = "
                             << spec->blockN << " of 16";
  return spec;
}

FailureOr<KernelSpec> mlir::flash::getKernelSpec(AttentionGradOp op,
                                                 bool deterministic) {
  FailureOr<KernelSpec> spec =
      getVariantSpec(op, op.getQuery(), op.getBias(), op.getMask(),
                     op.getScoreMod(), op.getMaskMod());
  if (failed(spec))
    return failure();
  KernelSpec &s = *spec;
  s.kind = KernelSpec::Kind::Backward;
  s.deterministic = deterministic;
  if (s.recipe == Recipe::Sm90Ws) {
    // The sm90 backward's schedule fed by a TMA producer warpgroup
    // (Sm90WsBackward.cpp): the per-element operands and dropout, whose
    // registers its consumers (240, not 255) have not been measured with,
    // and deterministic mode are refused by name.
    StringRef unsupported =
        deterministic            ? "deterministic mode (its dQ kernel)"
        : s.bias                 ? "a bias operand"
        : s.mask                 ? "a mask operand"
        : s.dropout              ? "dropout"
                                 : "";
    if (!unsupported.empty())
      return op.emitOpError()
             << "the sm90ws backward does not serve " << unsupported
             << " yet; give attention_grad an sm90 config";
  }
  if (failed(setBlockSparse(op.getOperation(), s)))
    return failure();
  // A packed batch: the main and dQ kernels under the varlen tile
  // scheduler (the verifier has refused bias, mask, dropout and the
  // regions).
  s.varlen = op.isVarlen();
  // Not where dQ is staged as rows (packed batches, and column groups
  // whose rows fit beside their tiles, KernelSpec::stagesDQRows). The
  // pieces of the column groups at D = Dv = 256 are whole 64-column blocks
  // of the tile's fragment order, staged in the step's Q and dO tiles
  // (stagesDQInQueryTiles), which hold a warpgroup's half of dQ where Dv >=
  // D; with a narrower dO they add by red.global, to rows.
  s.dqTiles = s.usesWgmma() && !deterministic && !s.varlen &&
              !s.stagesDQRows() &&
              (s.kvColumnGroups() == 1 || s.headDimV >= s.headDim);
  // The kernels recompute P through the score_mod region and take dS as
  // the gradient of its result: right for the additive forms (derivative
  // 1, e.g. ALiBi or relative-position biases); anything else is refused
  // here, as by the CPU lowerings.
  if (s.scoreMod &&
      failed(checkScoreModHasUnitDerivative(
          cast<AttentionVariantInterface>(op.getOperation()))))
    return failure();
  // Each warp owns 16-key m-tiles of the transposed products (Sᵀ, dPᵀ,
  // dK, dV) and 16-row m-tiles of dQ; with column groups, the warps of
  // each group split the keys.
  int64_t groups = s.kvColumnGroups();
  if (groups == 1 && s.blockN % (16 * s.warps) != 0)
    return op.emitOpError() << "the sm80 backward needs block_n = " << s.blockN
                            << " to be a multiple of 16 * warps ("
                            << 16 * s.warps << ")";
  if (groups > 1 && (s.warps % groups != 0 ||
                     s.blockN % (16 * s.warps / groups) != 0))
    return op.emitOpError()
           << "the sm80 backward needs an even number of warps and block_n = "
           << s.blockN << " a multiple of 8 * warps (" << 8 * s.warps
           << ") at D = " << s.headDim << ", Dv = " << s.headDimV
           << ": two warps share each 16-key tile and split the columns of "
              "its dK and dV";
  // The deterministic dQ kernel holds a warp's 16 rows of dQ over the whole
  // of D next to S and dP of a key block: at the wide head dims (D = 256:
  // 128 registers of dQ) ptxas 13.0 spilled 260-1376 bytes, even over
  // 16-key slices of the block.
  if (deterministic && groups > 1)
    return op.emitOpError()
           << "the sm80 backward has no deterministic mode for D = "
           << s.headDim << ", Dv = " << s.headDimV
           << " (D + Dv past " << kMaxBackwardDims
           << "; its dQ kernel would spill): run it with dQ atomics";
  // dQ (block_m x D) is split over the warps by 16-row slabs, then by
  // column groups of a multiple of 16 when the warps outnumber the slabs.
  // The deterministic dQ kernel runs min(warps, block_m / 16) warps.
  if (s.blockM % 16 != 0 || s.dqColumnGroups() == 0)
    return op.emitOpError()
           << "the sm80 backward needs block_m = " << s.blockM
           << " to be a multiple of 16 whose 16-row slabs the " << s.warps
           << " warps divide, or divide with column groups of D = "
           << s.headDim << " that are multiples of 16";
  if (s.usesWgmma()) {
    // Warpgroups own 64 keys each (one wgmma m64 per product), the query
    // block is the N of Sᵀ and dPᵀ, and the warpgroups split dQ into 64-row
    // blocks and column slices of 32 or a multiple of 64. The sm90
    // recipe's threads copy the tiles and the rows' LSE and Dsum; the
    // sm90ws producer's TMA and its warp do (any tile; a TMA box is at
    // most 256 rows).
    int64_t groups = s.warps / 4, rowBlocks = s.blockM / 64;
    bool ws = s.recipe == Recipe::Sm90Ws;
    // Two warpgroups on the same keys (HeadDims.h's
    // wgmmaBackwardColumnGroups): each keeps a column half of dK and dV and
    // computes the scores of half the queries (scoresByQueryHalves), built
    // for the sm90ws consumers' registers and barriers only. Dense
    // walks, and packed ones whose staged dQ rows fit (a packed batch's
    // dq_accum takes no red.global from these kernels); the block-sparse
    // and deterministic kernels are not written for them.
    int64_t colGroups = s.kvColumnGroups();
    if (colGroups > 1 &&
        (!ws || (s.varlen && !s.dqRowsFit()) || s.blockSparse ||
         deterministic ||
         s.dkGroupColumns() % 32 != 0 || s.dvGroupColumns() % 32 != 0 ||
         s.headDim % 64 != 0 || s.headDimV % 64 != 0 || s.blockM != 64))
      return op.emitOpError()
             << "the " << stringifyRecipe(s.recipe)
             << " backward at D = " << s.headDim << ", Dv = " << s.headDimV
             << " (D + Dv past " << kMaxWgmmaBackwardDims
             << ") splits dK and dV between two warpgroups: it needs the "
                "sm90ws recipe, a walk without block-sparse lists or the "
                "deterministic mode (a packed one where its dQ rows fit "
                "beside the tiles), block_m = 64, and D and Dv multiples of "
                "64";
    int64_t threads = ws ? 1 : s.threads();
    int64_t dqCols = rowBlocks > 0 && groups % rowBlocks == 0
                         ? s.headDim * rowBlocks / groups
                         : 0;
    bool ok = s.warps % 4 == 0 && s.blockN * colGroups == 16 * s.warps &&
              s.blockM % 64 == 0 && s.headDim % 64 == 0 &&
              (colGroups > 1 ||
               (s.headDim <= 128 && s.headDimV == s.headDim)) &&
              groups % rowBlocks == 0 &&
              (dqCols == 32 || (dqCols > 0 && dqCols % 64 == 0) ||
               (colGroups > 1 && dqCols % 32 == 0)) &&
              (s.blockM * s.headDim / 8) % threads == 0 &&
              (s.blockN * s.headDim / 8) % threads == 0 &&
              (ws ? s.blockM % 32 == 0 && s.stages >= 2 && s.blockN <= 256
                  : 2 * s.blockM <= threads);
    if (!ok)
      return op.emitOpError()
             << "the " << stringifyRecipe(s.recipe) << " backward needs warps a multiple of 4, block_n = 16 "
                "* warps (8 * warps where two warpgroups share keys), "
                "block_m a multiple of 64 and at most threads / 2 (one "
                "LSE or Dsum copy per thread) whose 64-row blocks split the "
                "warpgroups into dQ slices of 32 or a multiple of 64 columns, "
                "D = Dv in {64, 128} (or D + Dv past 256, column halves) "
                "and tiles whose 16-byte chunks the "
                "threads divide (sm90ws: block_m a multiple of 32 and stages "
                ">= 2); got block_m = "
             << s.blockM << ", block_n = " << s.blockN << ", warps = "
             << s.warps << ", stages = " << s.stages << ", D = " << s.headDim
             << ", Dv = " << s.headDimV;
  }
  if (op.getGradBias()) {
    // dBias = dS element by element, written full-size by the kernel; the
    // launch sequence sums it over a broadcast bias' size-1 dimensions
    // (HostLaunches.cpp). Both need the full shape statically.
    auto iface = cast<AttentionVariantInterface>(op.getOperation());
    AttentionSizes sz = iface.getSizes();
    auto biasTy = cast<RankedTensorType>(op.getBias().getType());
    SmallVector<int64_t> full = {sz.batch, sz.headsQ, sz.seqQ, sz.seqK};
    bool broadcastable = biasTy.getRank() == 4;
    for (int64_t d = 0; broadcastable && d < 4; ++d)
      broadcastable = biasTy.getDimSize(d) == full[d] || biasTy.getDimSize(d) == 1;
    if (!broadcastable || ShapedType::isDynamicShape(full))
      return op.emitOpError()
             << "the GPU backward computes 'grad_bias' for a static bias of "
                "shape [B, Hq, Sq, Sk] = ["
             << llvm::interleaved(llvm::map_range(full,
                                                  [](int64_t n) {
                                                    return ShapedType::isDynamic(n)
                                                               ? std::string("?")
                                                               : std::to_string(n);
                                                  }),
                                  ", ")
             << "] or a broadcast of it (size-1 dimensions), got " << biasTy;
    s.gradBias = true;
  }
  return s;
}

FailureOr<KernelSpec> mlir::flash::getKernelSpec(AttentionKVCacheOp op) {
  KernelConfigAttr config = op.getConfigAttr();
  if (!config)
    return op.emitOpError()
           << "has no kernel config; run flash-select-config first";
  if (config.getRecipe() != Recipe::Decode)
    return op.emitOpError() << "is lowered by the 'decode' recipe, got '"
                            << stringifyRecipe(config.getRecipe()) << "'";
  KernelSpec s;
  s.kind = KernelSpec::Kind::Decode;
  s.recipe = Recipe::Decode;
  s.elementType = getElementTypeOrSelf(op.getQuery().getType());
  if (!s.elementType.isF16() && !s.elementType.isBF16())
    return op.emitOpError()
           << "the decode recipe needs f16 or bf16 operands, got "
           << s.elementType;
  s.headDim = op.getHeadDim();
  s.headDimV = op.getHeadDimV();
  if (op.hasFp8Cache()) {
    // The target check (sm_89+) is flash-lower-to-gpu's, which knows the
    // chip (checkFp8CacheTarget).
    if (std::string why = fp8CacheKernelGap(s.headDim, s.headDimV);
        !why.empty())
      return op.emitOpError() << why;
    s.fp8Cache = true;
  }
  if (!isDecodeHeadDim(s.headDim, s.headDimV))
    return op.emitOpError()
           << "the decode recipe supports D = Dv, a multiple of 16 from 32 to "
              "256, got D = "
           << s.headDim << ", Dv = " << s.headDimV;
  if (op.hasRotary())
    if (std::string why = rotaryKernelGap(2 * op.getRotaryPairs());
        !why.empty())
      return op.emitOpError() << why;
  if (op.getQueryPerm()[3] != 3 || op.getKeyPerm()[3] != 3 ||
      op.getValuePerm()[3] != 3)
    return op.emitOpError() << "the GPU recipe needs the head dim innermost "
                               "in every operand (perm[3] == 3)";
  s.blockM = config.getBlockM();
  s.blockN = config.getBlockN();
  s.warps = config.getWarps();
  s.stages = config.getStages();
  // Warps own 16-row slabs of the packed rows; where there are fewer rows
  // than 16 * warps, the warps sharing a slab split the keys of each block
  // (KernelSpec::keyWarps) into 16-key multiples.
  bool rowsSplit = s.blockM % (16 * s.warps) == 0;
  bool keysSplit = s.blockM % 16 == 0 && (16 * s.warps) % s.blockM == 0 &&
                   s.blockN % (16 * s.keyWarps()) == 0;
  if (s.swapsDecodeOperands()) {
    // The rows as the products' n (KernelSpec::swapsDecodeOperands): the
    // warps split every block's keys in 16-key tiles, on 16-bit swizzled
    // tiles.
    if (s.fp8Cache || s.warps < 2 || s.blockN % (16 * s.warps) != 0 ||
        !s.swizzledTiles())
      return op.emitOpError()
             << "the decode recipe's block_m = 8 (the rows as the products' "
                "n) needs a 16-bit cache, D and Dv of 64 or more whose 8-row "
                "Q tile the block's threads copy evenly, 2 or more warps and "
                "block_n a multiple of 16 per warp; got D = "
             << s.headDim << ", block_n = " << s.blockN
             << ", warps = " << s.warps
             << (s.fp8Cache ? ", an FP8 cache" : "");
  } else if (!(rowsSplit && s.blockN % 16 == 0) && !keysSplit)
    return op.emitOpError()
           << "the decode recipe needs block_m a multiple of 16 * warps ("
           << 16 * s.warps
           << ") and block_n of 16, or block_m a multiple of 16 dividing 16 * "
              "warps and block_n a multiple of 16 per warp sharing a row; got "
              "block_m = "
           << s.blockM << ", block_n = " << s.blockN << ", warps = " << s.warps;
  if (op.getCausal())
    s.causal = KernelSpec::Causal::BottomRight;
  s.window = op.getWindowLeft().has_value() || op.getWindowRight().has_value();
  s.softcap = op.getSoftcap().has_value();
  s.pageSize = op.getPageSize();
  s.leftPad = op.hasLeftPad();
  s.cacheBatchIdx = op.hasCacheBatchIdx();
  if (op.hasAlibi())
    s.alibi = cast<RankedTensorType>(op.getAlibiSlopes().getType()).getRank();
  return s;
}
