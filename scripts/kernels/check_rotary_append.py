#!/usr/bin/env python3
"""The fused rotary embedding of kv_append (flash.attention_kvcache's
rotary operands; docs/KVCACHE.md "Rotary embedding") on the GPU: the
kernel flash-lower-to-gpu builds for a step with rotary_cos / rotary_sin,
launched by name through the runtime (as the compiled host code launches
it), against flashfuse.rotary's torch rotation (the op's formula, checked
on the CPU by python/tests/test_rotary_kvcache.py). The kernel's products
and sums are mul.rn / sub.rn / add.rn in f32, as torch's eager passes
compute them, so the caches it writes and q_rot must match bit for bit:
GPT-NeoX halves and GPT-J pairs, rotary_dim below D and equal to it,
causal (query rows at their own positions) and not (all at
cache_seqlens[b]), contiguous and paged caches (pages shuffled), several
new rows, GQA, D = 64 / 128 / 256, f16 and bf16, and an FP8 cache (the
rotated row quantised, code for code against torch's e4m3 conversion).
The whole caches are compared, so a row written at the wrong place (or one
clobbered) fails too.

The lent GPU machine has no LLVM: compile here, check there.

    check_rotary_append.py --compile DIR          # where flashfuse-compile is
    check_rotary_append.py --artifacts DIR [--quick]   # on the GPU
    check_rotary_append.py --artifacts DIR --dry-run   # anywhere: the
        # arguments built for each kernel against its params, no launch
"""
import argparse, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

# (dtype, D, rotary_dim, interleaved, causal, page size, Snew, Sq, fp8)
CASES = [("bf16", 128, 128, False, True, 0, 1, 1, False),
         ("f16", 128, 128, True, True, 0, 1, 1, False),
         ("bf16", 128, 64, False, False, 0, 3, 3, False),
         ("bf16", 64, 32, True, True, 16, 2, 2, False),
         ("f16", 256, 128, False, True, 64, 1, 1, False),
         ("bf16", 256, 256, True, False, 0, 4, 2, False),
         ("bf16", 128, 128, False, True, 16, 1, 1, True),
         ("f16", 128, 64, True, True, 0, 2, 2, True)]
QUICK = CASES[:2] + CASES[3:4] + CASES[6:7]
# B, Hq, Hkv, capacity; lengths before the step (the last at the capacity's
# end), and rows past R = capacity + 5 never read.
SHAPE = (4, 8, 2, 256)


def case_name(case):
    dtype, d, rd, inter, causal, page, snew, sq, fp8 = case
    return (f"{dtype}_d{d}_r{rd}{'i' if inter else ''}"
            f"{'_causal' if causal else ''}_p{page}_n{snew}_q{sq}"
            f"{'_fp8' if fp8 else ''}")


def module(case):
    """One decoding step with rotary, as MLIR (the logical layouts)."""
    dtype, d, rd, inter, causal, page, snew, sq, fp8 = case
    b, hq, hkv, cap = SHAPE
    cache = "f8E4M3FN" if fp8 else dtype
    if page:
        pages = b * (cap // page) + 3
        kt = f"tensor<{pages}x{page}x{hkv}x{d}x{cache}>"
    else:
        kt = f"tensor<{b}x{hkv}x{cap}x{d}x{cache}>"
    qt = f"tensor<{b}x{hq}x{sq}x{d}x{dtype}>"
    nt = f"tensor<{b}x{hkv}x{snew}x{d}x{dtype}>"
    rt = f"tensor<{cap + 5}x{rd // 2}x{dtype}>"
    lt = f"tensor<{b}xi32>"
    args = [f"%q: {qt}", f"%k: {kt}", f"%v: {kt}", f"%len: {lt}",
            f"%kn: {nt}", f"%vn: {nt}", f"%c: {rt}", f"%s: {rt}"]
    extra = ""
    if page:
        tt = f"tensor<{b}x{cap // page}xi32>"
        args.append(f"%bt: {tt}")
        extra += f" block_table(%bt : {tt})"
    extra += f" new_kv(%kn, %vn : {nt}, {nt})"
    if fp8:
        dt = f"tensor<{b}x{hkv}xf32>"
        args.append(f"%kd: {dt}")
        extra += f" descale(%kd, %kd : {dt}, {dt})"
    extra += f" rotary(%c, %s : {rt}, {rt})"
    attrs = []
    if causal:
        attrs.append("causal = #flash.causal<bottom_right>")
    if inter:
        attrs.append("rotary_interleaved")
    attr = (" {" + ", ".join(attrs) + "}") if attrs else ""
    return (f"func.func @step({', '.join(args)}) -> {qt} {{\n"
            f"  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %len"
            f"{extra}{attr}\n      : {qt}, {kt}, {kt}, {lt} -> {qt}, {kt}, "
            f"{kt}\n  return %o : {qt}\n}}\n")


def compile_all(root):
    for case in CASES:
        out = os.path.join(root, case_name(case))
        os.makedirs(out, exist_ok=True)
        src = os.path.join(out, "step.mlir")
        with open(src, "w") as f:
            f.write(module(case))
        subprocess.run(["flashfuse-compile", src, "--target=h100", "-o", out],
                       check=True, stdout=subprocess.DEVNULL)
        print(case_name(case), out, flush=True)


def append_kernel(directory):
    """(name, param names) of the artifact's rotating kv_append."""
    found = None
    with open(os.path.join(directory, "manifest.txt")) as f:
        for line in f:
            words = line.split()
            if line.startswith("kernel "):
                current, rotary = words[1], False
            elif words[:1] == ["rotary_dim"]:
                rotary = True
            elif words[:1] == ["params"] and rotary:
                found = (current, {w.split(":", 1)[1] for w in words[1:]})
    if found is None:
        raise SystemExit(f"{directory}: no kv_append with rotary_dim")
    return found


def check_case(case, directory, gen, dry_run=False):
    import torch
    from flashfuse import _kernels, rotary
    from flashfuse import _runtime as rt
    dtype, d, rd, inter, causal, page, snew, sq, fp8 = case
    b, hq, hkv, cap = SHAPE
    dt = torch.bfloat16 if dtype == "bf16" else torch.float16
    dev = "cpu" if dry_run else "cuda"
    lens = torch.tensor([0, 1, 130, cap - snew], dtype=torch.int32,
                        device=dev)
    q = torch.randn(b, sq, hq, d, device=dev, dtype=dt, generator=gen)
    k_new = torch.randn(b, snew, hkv, d, device=dev, dtype=dt, generator=gen)
    v_new = torch.randn(b, snew, hkv, d, device=dev, dtype=dt, generator=gen)
    angle = torch.rand(cap + 5, rd // 2, device=dev, generator=gen) * 6.3
    cos, sin = angle.cos().to(dt), angle.sin().to(dt)
    cache_dt = torch.float8_e4m3fn if fp8 else dt
    if page:
        pages = b * (cap // page) + 3
        k = torch.randn(pages, page, hkv, d, device=dev, generator=gen)
        table = torch.randperm(pages, device=dev, generator=gen)[
            :b * (cap // page)].view(b, cap // page).to(torch.int32)
    else:
        k = torch.randn(b, cap, hkv, d, device=dev, generator=gen)
        table = None
    k = k.to(cache_dt)
    v = torch.randn(k.shape, device=dev, generator=gen).to(cache_dt)
    descale = (torch.rand(b, hkv, device=dev, generator=gen) + 0.5
               if fp8 else None)

    # The reference: the rotation, then the rows written (quantised).
    q_ref, k_rot = rotary.rotate_step(q, k_new, cos, sin, lens, inter, causal)
    k_ref, v_ref = k.clone(), v.clone()

    def stored(x, bi, hi):
        if not fp8:
            return x
        inv = 1.0 / descale[bi, hi]
        return (x.float() * inv).clamp(-448, 448).to(torch.float8_e4m3fn)

    for bi in range(b):
        for t in range(snew):
            row = int(lens[bi]) + t
            for hi in range(hkv):
                if page:
                    at = (int(table[bi, row // page]), row % page, hi)
                else:
                    at = (bi, row, hi)
                k_ref[at] = stored(k_rot[bi, t, hi], bi, hi)
                v_ref[at] = stored(v_new[bi, t, hi], bi, hi)

    q_rot = torch.full_like(q, float("nan"))
    # The arguments attention_with_kvcache builds (flashfuse.rotary).
    named = rotary.append_args(q, q_rot, k, v, k_new, v_new, lens, table,
                               descale, descale, cos, sin)
    name, params = append_kernel(directory)
    if dry_run:
        ok = set(named) == params
        return dict(case=case_name(case), ok=ok,
                    missing=sorted(params - set(named)),
                    extra=sorted(set(named) - params))
    handle = _kernels.context(0).kernel_named(directory, name)
    rt.kernel_launch(handle, named, torch.cuda.current_stream().cuda_stream,
                     allow_unused=False)
    torch.cuda.synchronize()
    same = lambda x, y: torch.equal(x.view(torch.uint8), y.view(torch.uint8)) \
        if fp8 else torch.equal(x, y)
    result = dict(case=case_name(case),
                  q_rot=torch.equal(q_rot, q_ref),
                  k_cache=same(k, k_ref), v_cache=same(v, v_ref))
    if not result["q_rot"]:
        result["q_rot_max_diff"] = (q_rot.float() - q_ref.float()).abs() \
            .max().item()
    result["ok"] = result["q_rot"] and result["k_cache"] and result["v_cache"]
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--compile", metavar="DIR")
    p.add_argument("--artifacts", metavar="DIR")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args()
    if args.compile:
        compile_all(args.compile)
        return 0
    if not args.artifacts:
        p.error("--compile DIR or --artifacts DIR")
    import torch
    gen = torch.Generator(device="cpu" if args.dry_run else "cuda")
    gen.manual_seed(7)
    failed = 0
    for case in QUICK if args.quick else CASES:
        r = check_case(case, os.path.join(args.artifacts, case_name(case)),
                       gen, args.dry_run)
        failed += not r["ok"]
        print(json.dumps(r), flush=True)
    print(f"{failed} of {len(QUICK if args.quick else CASES)} cases failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
