//===- CaseSpec.h - one numerics case, parsed from the command line -*- C++ -*-===//
//
// A case is one whitespace- or comma-separated list of key=value pairs, e.g.
//   "lowering=loops dir=bwd B=1 Hq=4 Hkv=2 Sq=113 Sk=203 D=64 causal=br"
// Keys and defaults are listed by `flashfuse-numerics --help`.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHFUSE_TOOLS_NUMERICS_CASESPEC_H
#define FLASHFUSE_TOOLS_NUMERICS_CASESPEC_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flashfuse::numerics {

struct CaseSpec {
  std::string lowering = "naive"; // naive | loops
  /// op=attention: flash.attention / attention_grad. op=kvcache:
  /// flash.attention_kvcache (forward only), with Sk the cache capacity C.
  /// op=varlen: flash.attention (dir=bwd: attention_grad) over a packed
  /// batch, B = 1
  /// and Sq / Sk the packed totals, set from lens_q / lens_k / pad.
  std::string op = "attention";
  bool backward = false;          // dir=fwd | bwd
  int64_t batch = 1, headsQ = 1, headsKV = 1, seqQ = 17, seqK = 17, d = 32,
          dv = -1; // dv < 0: same as d
  /// f32 | f16 | bf16 | f8E4M3FN (dtype=e4m3: FP8 flash.attention with
  /// descales, forward only; FlashOps.td states its semantics).
  std::string dtype = "f32";
  /// out=f32: flash.attention's O in f32 over 16-bit inputs (the partial
  /// results of FlashOps.td); out=bf16|f16: the O of an e4m3 case (bf16
  /// when not given); "" for O in `dtype`.
  std::string outDtype;
  /// e4m3: descale=head ([B, Hq] / [B, Hkv] factors, the default),
  /// descale=tensor (one factor each) or descale=block ([B, H, N] factors,
  /// one per block of descale_block=BQxBK rows, default 128x128); head and
  /// tensor are also the k/v descales of an FP8 cache (cache=e4m3).
  std::string descale = "head";
  int64_t descaleBlockQ = 128, descaleBlockK = 128;
  /// The shape of an e4m3 case's descale of an operand with `heads` heads
  /// and `seq` rows, blocks of `blockRows`.
  std::vector<int64_t> descaleShape(int64_t heads, int64_t seq,
                                    int64_t blockRows) const;
  /// op=kvcache: cache=e4m3 keeps the caches in f8E4M3FN with k/v descales
  /// (Q, new rows and O stay in `dtype`, f16 or bf16); "" for caches in
  /// `dtype`.
  std::string cacheDtype;
  /// cache=e4m3 (and dtype=e4m3) counter-cases, so that a test can show
  /// the descales and the quantisation on append are visible (they must
  /// fail): ref_descale=first makes the reference read every head's (and
  /// block's) descale as the first one; ref_quantize=0 makes it append new
  /// rows unquantised.
  bool referenceFirstDescale = false;
  bool referenceQuantizesNewRows = true;
  /// e4m3: ref_p8=0 makes the reference skip P's e4m3 quantisation, so that
  /// a test can show the lowering's quantisation is visible (it must fail).
  bool referenceQuantizesP = true;
  /// layout=bhsd (default) | bshd | bhds: the order Q, K, V (and O) store
  /// the logical [B, H, S, D] dimensions in.
  std::string layout = "bhsd";
  std::optional<double> scale;
  std::string causal; // "" | tl | br
  std::optional<int64_t> windowLeft, windowRight;
  std::optional<double> softcap;
  double dropout = 0.0;
  uint64_t dropoutSeed = 0x1234abcd9876ull;
  /// Bias / mask operand shapes as four characters over [B, Hq, Sq, Sk]:
  /// 'x' the full size, '1' broadcast; empty: no operand.
  std::string bias, mask;
  bool gradBias = true;   // request dBias when there is a bias (backward)
  int64_t maskedRow = -1; // >= 0: the mask operand hides this whole row
  std::string scoreMod;   // "" | alibi | batch_slope
  /// The b the score_mod, mask_mod and dropout's keep test see for batch
  /// 0: the varlen reference gives sequence b's dense case regionBatch =
  /// b, as the op gives them the sequence's index.
  int64_t regionBatch = 0;
  std::string maskMod;    // "" | document | drop_row3
  uint64_t seed = 1;      // inputs' random generator
  double inputScale = 1.0; // Q and K magnitudes (scores grow as its square)
  int64_t blockM = 16, blockN = 16;
  /// op=kvcache: cache_seqlens (lens=a:b:c; their count is B), the rows
  /// appended by new_kv (0: no new_kv), the page size (0: contiguous cache;
  /// else max_pages = Sk / page) and the pool's pages beyond B * max_pages,
  /// which no sequence owns.
  std::vector<int64_t> seqlens;
  int64_t newRows = 0, pageSize = 0, sparePages = 3;
  /// op=kvcache: cache_leftpad (leftpad=a:b:c, one per sequence; any
  /// values, negative and past the length included); empty: no operand.
  std::vector<int64_t> leftpad;
  /// op=kvcache: cache_batch_idx (batch_idx=a:b:c, one per sequence, each
  /// in [0, cache_batch)) over contiguous caches of cache_batch sequences
  /// (0: B); empty: no operand.
  std::vector<int64_t> batchIdx;
  int64_t cacheBatch = 0;
  /// Sequences the contiguous caches hold: cache_batch with batch_idx,
  /// else B.
  int64_t cacheRows() const {
    return batchIdx.empty() || cacheBatch == 0 ? batch : cacheBatch;
  }
  /// ALiBi's slopes operand, f32 [Hq] (alibi=1) or [B, Hq] (alibi=2; B
  /// the sequences of op=varlen), random positive values; 0: none.
  int alibi = 0;
  /// op=kvcache: rotary embedding of key_new and Q (rotary=half |
  /// interleaved; needs Snew > 0) over rotary_dim elements (0: D) with
  /// rotary_cos / rotary_sin of rotary_rows positions (0: Sk, the
  /// capacity); empty: none.
  std::string rotary;
  int64_t rotaryDim = 0, rotaryRows = 0;
  int64_t effectiveRotaryDim() const { return rotaryDim ? rotaryDim : d; }
  int64_t effectiveRotaryRows() const { return rotaryRows ? rotaryRows : seqK; }
  /// op=varlen: each sequence's query and key lengths (lens_q=a:b:..,
  /// lens_k=..; the same count, the number of sequences), and `pad` rows
  /// packed after the last sequence in Q, K and V that no sequence owns.
  std::vector<int64_t> lensQ, lensK;
  int64_t pad = 0;
  /// Block-sparse lists (FlashOps.td): sparse=BQxBK (0x0: a dense op)
  /// gives flash.attention (dir=bwd: attention_grad) random lists over
  /// BQ x BK blocks: each key block of a row is listed with probability
  /// `density`, as full with probability `fullFraction` (full=0: no
  /// full_blocks operands), and a row is empty with probability
  /// `emptyRows`. `sparseBcast` ("xx", "1x", "x1", "11") says whether the
  /// lists have the batch and head dimensions or broadcast them. The slots
  /// past each row's count hold junk (out-of-range, repeated indices) that
  /// the op must ignore.
  int64_t sparseBlockQ = 0, sparseBlockK = 0;
  double density = 0.5, fullFraction = 0.3, emptyRows = 0.15;
  std::string sparseBcast = "xx";
  bool isBlockSparse() const { return sparseBlockQ > 0; }
  int64_t queryBlocks() const { return (seqQ + sparseBlockQ - 1) / sparseBlockQ; }
  int64_t keyBlocks() const { return (seqK + sparseBlockK - 1) / sparseBlockK; }
  /// Shape of kv_num_blocks ([B', H', QB]) and of kv_indices (+ [KB] slots).
  std::vector<int64_t> blockCountShape() const;
  std::vector<int64_t> blockIndexShape() const;
  std::optional<double> tolerance;

  int64_t headDimV() const { return dv < 0 ? d : dv; }
  /// The element type of the forward's O.
  const std::string &outputType() const {
    return outDtype.empty() ? dtype : outDtype;
  }
  bool isKVCache() const { return op == "kvcache"; }
  /// op=kvcache with cache=e4m3.
  bool hasFp8Cache() const { return cacheDtype == "f8E4M3FN"; }
  /// The caches' element type.
  const std::string &cacheType() const {
    return cacheDtype.empty() ? dtype : cacheDtype;
  }
  bool isFp8() const { return dtype == "f8E4M3FN"; }
  /// The bias operand's element type: f32 for e4m3 cases (the op takes no
  /// FP8 bias), else dtype.
  std::string biasType() const { return isFp8() ? "f32" : dtype; }
  bool isVarlen() const { return op == "varlen"; }
  /// op=varlen: cumulative offsets [0, l0, l0 + l1, ...] of `lens`.
  static std::vector<int64_t> cumulative(const std::vector<int64_t> &lens);
  /// op=kvcache, paged: pages per sequence and pages in the pool.
  int64_t maxPages() const { return pageSize ? seqK / pageSize : 0; }
  int64_t numPages() const { return batch * maxPages() + sparePages; }
  /// The tolerance on max|out - ref| / max|ref| for this case.
  double effectiveTolerance() const;
  /// The attention scale: `scale`, else 1/sqrt(D), rounded to f32 like the
  /// op's attribute.
  double effectiveScale() const;
  /// Logical -> operand dimension of Q, K, V (and O, dQ, dK, dV).
  std::array<int64_t, 4> perm() const;
  /// Shape of a bias or mask operand with broadcast pattern `pattern`.
  std::vector<int64_t> broadcastShape(const std::string &pattern) const;
};

/// Parses `text`; on error returns nullopt and sets `error`.
std::optional<CaseSpec> parseCase(const std::string &text, std::string &error);

/// The accepted keys, one per line, for --help.
const char *caseKeysHelp();

} // namespace flashfuse::numerics

#endif
