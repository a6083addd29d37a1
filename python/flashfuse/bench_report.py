"""Presenting benchmark rows: a text table, JSON, and a TFLOP/s plot."""

import json


def _key(r):
    return (r["dtype"], r["head_dim"], r.get("head_dim_v", r["head_dim"]),
            r["seqlen"], r["causal"])


# The SDPA backends flashfuse's ratio columns compare against.
_RATIO_COLUMNS = (("sdpa-flash", "ours/flash"), ("sdpa-cudnn", "ours/cudnn"))


def _ratio_cell(ours, other, width):
    """flashfuse's speed over another method's: the ratio of their medians,
    and with several rounds the range of the per-round ratios (round i of
    each, timed side by side) in brackets."""
    if not (ours and ours.get("tflops") and other and other.get("tflops")):
        return f"{'n/a':>{width}}"
    text = f"{ours['tflops'] / other['tflops']:.2f}"
    pairs = list(zip(ours.get("round_ms") or [], other.get("round_ms") or []))
    if len(pairs) > 1:
        per_round = [b / a for a, b in pairs]  # time ratio = speed ratio
        text += f" ({min(per_round):.2f}-{max(per_round):.2f})"
    return f"{text:>{width}}"


def table(rows, methods, pass_name="forward"):
    """One line per shape, TFLOP/s per method (median of its rounds) and
    flashfuse's ratio to SDPA's flash and cuDNN backends where they ran
    (n/a where a method did not)."""
    by_shape = {}
    for r in rows:
        by_shape.setdefault(_key(r), {})[r["method"]] = r
    rounds = max((len(r.get("round_ms") or []) for r in rows), default=0)
    width = 18 if rounds > 1 else 10
    ratios = [(m, name) for m, name in _RATIO_COLUMNS
              if m in methods and "flashfuse" in methods]
    if not ratios:  # the column the table always had
        ratios = [("sdpa-flash", "ours/flash")]
    head = (f"{'dtype':5} {'D':>7} {'S':>6} {'causal':6} "
            + " ".join(f"{m:>14}" for m in methods)
            + "".join(f" {name:>{width}}" for _, name in ratios))
    title = f"{pass_name} TFLOP/s (median"
    title += f" of {rounds} interleaved rounds)" if rounds > 1 else ")"
    lines = [title, head, "-" * len(head)]
    for key in sorted(by_shape):
        got = by_shape[key]
        cells = []
        for m in methods:
            t = got.get(m, {}).get("tflops")
            cells.append(f"{t:14.1f}" if t else f"{'n/a':>14}")
        dtype, d, dv, s, causal = key
        # "D/Dv" where V's head dim differs (MLA's 192/128).
        d = str(d) if dv == d else f"{d}/{dv}"
        lines.append(f"{dtype:5} {d:>7} {s:>6} {('yes' if causal else 'no'):6} "
                     + " ".join(cells)
                     + "".join(" " + _ratio_cell(got.get("flashfuse"),
                                                 got.get(m), width)
                               for m, _ in ratios))
    reasons = sorted({f"{r['method']}: {r['error']}" for r in rows
                      if r.get("error")})
    if reasons:
        lines.append("not measured:")
        lines.extend(f"  {x}" for x in reasons[:20])
    return "\n".join(lines)


def pool_ratio(got):
    """flashfuse-pool's GB/s over flashfuse's on one shape's row, 7 wide."""
    ours = got.get("flashfuse-pool", {}).get("gbps")
    plain = got.get("flashfuse", {}).get("gbps")
    return f"{ours / plain:7.2f}" if ours and plain else f"{'n/a':>7}"


def decode_table(rows, methods):
    """One line per decode shape and cache layout: GB/s of K and V per
    method and flashfuse's ratio to the best SDPA method. SDPA reads a
    contiguous [B, Hkv, L, D] cache in every line (it has no paged form):
    a paged line compares against SDPA timed in the same round. With the
    ALiBi methods, a column more: flashfuse-alibi against the best SDPA
    method with the bias (and the plain ratio leaves those out); with
    flashfuse-pool, one more: it against flashfuse over the batch's own
    caches (the same bytes read). Rows of many query rows (--decode-sq)
    give TFLOP/s instead of GB/s."""
    by_shape = {}
    for r in rows:
        key = (r["batch"], r["heads_q"], r["heads_kv"], r["seqlen"],
               r["page_size"])
        by_shape.setdefault(key, {})[r["method"]] = r
    graphs = any(m.endswith("-graph") for m in methods)
    alibi = any("-alibi" in m for m in methods)
    pool = "flashfuse-pool" in methods
    head = (f"{'B':>3} {'Hq/Hkv':>6} {'L':>7} {'layout':>9} "
            + " ".join(f"{m:>11}" for m in methods) + f" {'ours/best':>9}"
            + (f" {'graphs':>7}" if graphs else "")
            + (f" {'alibi':>7}" if alibi else "")
            + (f" {'pool':>7}" if pool else ""))
    sq = max((r.get("sq", 1) for r in rows), default=1)
    unit = "tflops" if sq > 1 else "gbps"
    # --decode-cold: each step's caches were not in L2 (bench.py,
    # decode_cold_copies).
    cold = (", caches not in L2"
            if any(r.get("copies", 1) > 1 for r in rows) else "")
    title = (f"chunked prefill of {sq} query rows a sequence{cold}, TFLOP/s "
             "(median)" if sq > 1 else
             f"decode GB/s of K and V read{cold} (median)")
    lines = [title, head, "-" * len(head)]
    for key in sorted(by_shape, key=lambda k: (k[4], k[3], k[0])):
        got = by_shape[key]
        cells = []
        for m in methods:
            g = got.get(m, {}).get(unit)
            cells.append(f"{g:11.0f}" if g else f"{'n/a':>11}")
        def ratio(ours_method, graphed, width, with_bias=False):
            # flashfuse against the best SDPA method timed the same way
            # (launched per call, or replayed from a CUDA graph) on the
            # same problem (with or without ALiBi's bias).
            ours = got.get(ours_method, {}).get(unit)
            best = max((got[m][unit] or 0 for m in got
                        if m.startswith("sdpa")
                        and m.endswith("-graph") == graphed
                        and ("-alibi" in m) == with_bias), default=0)
            return (f"{ours / best:{width}.2f}" if ours and best
                    else f"{'n/a':>{width}}")
        b, hq, hkv, length, page = key
        layout = f"page {page}" if page else "contig"
        lines.append(f"{b:>3} {f'{hq}/{hkv}':>6} {length:>7} {layout:>9} "
                     + " ".join(cells) + " " + ratio("flashfuse", False, 9)
                     + (" " + ratio("flashfuse-graph", True, 7)
                        if graphs else "")
                     + (" " + ratio("flashfuse-alibi", False, 7, True)
                        if alibi else "")
                     + (" " + pool_ratio(got) if pool else ""))
    reasons = sorted({f"{r['method']}: {r['error']}" for r in rows
                      if r.get("error")})
    if reasons:
        lines.append("not measured:")
        lines.extend(f"  {x}" for x in reasons[:20])
    return "\n".join(lines)


def write_json(path, meta, rows):
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": rows}, f, indent=1)


def plot(path, meta, rows, methods, pass_name="forward"):
    """One panel per (dtype, D, causal): TFLOP/s against sequence length."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r["dtype"], r["head_dim"], r["causal"]) for r in rows})
    cols = min(4, len(panels))
    nrows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(4.5 * cols, 3.6 * nrows),
                             squeeze=False)
    for ax, (dtype, d, causal) in zip(axes.flat, panels):
        for m in methods:
            pts = sorted((r["seqlen"], r["tflops"]) for r in rows
                         if r["method"] == m and r["tflops"]
                         and (r["dtype"], r["head_dim"], r["causal"])
                         == (dtype, d, causal))
            if pts:
                ax.plot(*zip(*pts), marker="o", label=m)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{dtype} D={d} {'causal' if causal else 'non-causal'}")
        ax.set_xlabel("sequence length")
        ax.set_ylabel("TFLOP/s")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    if panels:
        axes.flat[0].legend(fontsize=8)
    fig.suptitle(f"{pass_name} attention, {meta.get('device', '')}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
