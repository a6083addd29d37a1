#!/usr/bin/env python3
"""Time per generated token of Hugging Face greedy generate(),
attn_implementation flashfuse against sdpa, on a randomly
initialised Llama (GQA): what a user of flashfuse.hf sees of a decoding
step, host time included (no CUDA graphs).

    bench_hf_decode.py [--layers N] [--hidden H] [--heads Q,KV]
                       [--batch B] [--prompt P] [--new T] [--reps R]
                       [--cache dynamic|static]

Medians over R interleaved repetitions, each after a warm-up generate();
also checks that both give the same tokens.
"""
import argparse
import copy
import statistics
import time

import torch
import transformers

import flashfuse.hf


def model(cfg, impl, state=None):
    # A config of its own: transformers records the implementation in it,
    # which two models built from one object would share.
    m = transformers.AutoModelForCausalLM.from_config(
        copy.deepcopy(cfg), attn_implementation=impl)
    if state is not None:
        m.load_state_dict(state)
    return m.to("cuda", torch.bfloat16).eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--heads", default="32,8")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cache", choices=["dynamic", "static"],
                    default="dynamic",
                    help="transformers' cache; a static one makes generate() "
                         "compile the model with CUDA graphs, so the host "
                         "time of a step is no longer what is measured")
    args = ap.parse_args()
    hq, hkv = (int(x) for x in args.heads.split(","))
    cfg = transformers.LlamaConfig(
        hidden_size=args.hidden, intermediate_size=2 * args.hidden,
        num_hidden_layers=args.layers, num_attention_heads=hq,
        num_key_value_heads=hkv, vocab_size=1000,
        max_position_embeddings=4096)
    impl = flashfuse.hf.register()
    ref = model(cfg, "sdpa")
    ours = model(cfg, impl, ref.state_dict())
    ids = torch.randint(1, cfg.vocab_size, (args.batch, args.prompt),
                        device="cuda")
    kwargs = dict(attention_mask=torch.ones_like(ids),
                  max_new_tokens=args.new, min_new_tokens=args.new,
                  do_sample=False, pad_token_id=0)
    if args.cache == "static":
        kwargs["cache_implementation"] = "static"
    from flashfuse import kvcache
    calls = [0]
    real = kvcache.attention_with_kvcache

    def counted(*a, **kw):
        calls[0] += 1
        return real(*a, **kw)

    kvcache.attention_with_kvcache = counted

    def run(m):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.no_grad():
            out = m.generate(ids, **kwargs)
        torch.cuda.synchronize()
        return time.perf_counter() - t0, out

    times = {"sdpa": [], "flashfuse": []}
    outs = {}
    for m in (ref, ours):
        run(m)  # warm-up: kernels loaded, cache allocated
    for _ in range(args.reps):
        for name, m in (("sdpa", ref), ("flashfuse", ours)):
            t, outs[name] = run(m)
            times[name].append(t)
    same = torch.equal(outs["sdpa"], outs["flashfuse"])
    print(f"Llama {args.layers} layers, hidden {args.hidden}, heads "
          f"{hq}/{hkv}, B = {args.batch}, prompt {args.prompt}, "
          f"{args.new} new tokens, bf16, {args.cache} cache; same tokens: "
          f"{same}; attention_with_kvcache calls per generate(): "
          f"{calls[0] // (args.reps + 1)}")
    for name, ts in times.items():
        t = statistics.median(ts)
        print(f"  {name:10s} {t * 1e3:8.1f} ms per generate(), "
              f"{t / args.new * 1e3:6.2f} ms per token "
              f"(reps: {', '.join(f'{x * 1e3:.0f}' for x in ts)})")


if __name__ == "__main__":
    main()
