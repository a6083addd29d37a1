"""Finding compiled kernels: artifact directories, variants, per-GPU handles.

Artifacts are looked for in FLASHFUSE_KERNEL_DIR (os.pathsep-separated) or,
if unset, in the kernels/ directory next to this package and then in the
kernel library of a source build (build/kernels, see python/CMakeLists.txt:
forward kernels in build/kernels/<target>, backward in <target>-bwd, packed
batches in <target>-varlen). Each
entry is an artifact directory (holding manifest.txt) or a directory of them.
A variant that none of them has is compiled on demand where flashfuse-compile
is found, given the GPU's compute capability (flashfuse._compile).
"""

import os
import pathlib
import threading

from . import _compile
from . import _runtime as rt
from .errors import KernelNotFoundError, ManifestError

_lock = threading.Lock()
_manifests = {}  # artifact dir -> Manifest, or the ManifestError it raised
_ptx_targets = {}  # artifact dir -> its PTX's .target ("sm_90a"), or None
_params = {}     # (artifact dir, kernel index) -> frozenset of param names
_contexts = {}   # device index -> Context
_kernels = {}    # (device index, artifact dir, variant key) -> kernel handle
# (variant key, GPU capability) -> {query rows: artifact dir} of its sm90ws
# kernels
_sm90ws_dirs = {}


def artifact_dirs():
    """Artifact directories in search order."""
    env = os.environ.get("FLASHFUSE_KERNEL_DIR")
    here = pathlib.Path(__file__).resolve().parent
    roots = ([pathlib.Path(p) for p in env.split(os.pathsep) if p] if env
             else [here / "kernels", here.parent.parent / "build" / "kernels"])
    found = []
    for root in roots:
        if (root / "manifest.txt").is_file():
            found.append(root)
        elif root.is_dir():
            found.extend(sorted(p for p in root.iterdir()
                                if (p / "manifest.txt").is_file()))
    return [str(p.resolve()) for p in found]


def _manifest(directory):
    """The parsed manifest of `directory`, or the ManifestError the runtime
    raised for it (kept, so a bad directory is parsed once, not per call)."""
    m = _manifests.get(directory)
    if m is None:
        try:
            m = rt.Manifest.open(directory)
        except ManifestError as e:
            m = e
        _manifests[directory] = m
    return m


def make_variant(kind, dtype_code, head_dim, head_dim_v, causal=0,
                 window=False, softcap=False, bias=False, mask=False,
                 dropout=False, page_size=0, out_f32=False, varlen=False,
                 out_dtype=0, kv_dtype=0, descale_blocks=(0, 0),
                 leftpad=False, alibi=0, batch_idx=False):
    """A runtime Variant; `out_f32` (forward kernels only) asks for the
    kernel that writes O in f32 rather than in the inputs' dtype, `varlen`
    (forward only) for the kernel of a packed batch of variable-length
    sequences, `out_dtype` (a DTYPE_ code; e4m3 forwards only, 0 for every
    other kernel) for O's dtype, `kv_dtype` (decode and kv_append only:
    DTYPE_E4M3 for the kernel of an FP8 cache, 0 for a cache of the
    queries' dtype) for the cache's, `descale_blocks` (e4m3 forwards only)
    the (BQ, BK) of per-block descales, (0, 0) for per-tensor or per-head
    ones, `leftpad` (decode only) for the kernel over a left-padded cache
    (it takes cache_leftpad), `alibi` (decode only) 1 or 2 for the kernel
    with ALiBi whose slopes are [Hq] or [B, Hq] (it takes alibi_slopes),
    `batch_idx` (decode, kv_append and decode_check) for the kernel over a
    pool of sequences' caches (it takes cache_batch_idx and cache_batch)."""
    v = rt.Variant(kind, dtype_code, head_dim, head_dim_v, causal,
                   int(window), int(softcap), int(bias), int(mask),
                   int(dropout), int(page_size), int(out_f32), int(varlen),
                   int(out_dtype))
    v.kv_dtype = int(kv_dtype)
    v.descale_block_q, v.descale_block_k = (int(b) for b in descale_blocks)
    v.leftpad = int(leftpad)
    v.alibi = int(alibi)
    v.batch_idx = int(batch_idx)
    return v


def _ptx_target(directory):
    """The `.target` of an artifact's PTX ("sm_80", "sm_90a"), None where it
    has no PTX (manifest.txt's `ptx` line names the file)."""
    if directory not in _ptx_targets:
        target = None
        root = pathlib.Path(directory)
        try:
            names = [line.split()[1] for line in
                     (root / "manifest.txt").read_text().splitlines()
                     if line.startswith("ptx ") and len(line.split()) == 2]
            if names:
                with open(root / names[0]) as f:
                    for _, line in zip(range(64), f):
                        if line.startswith(".target"):
                            target = line.split()[1].rstrip(",")
                            break
        except OSError:
            pass
        _ptx_targets[directory] = target
    return _ptx_targets[directory]


def _load_rank(arch, ptx_target, capability):
    """load_rank of an artifact built for sm_`arch` whose PTX has the
    `.target` `ptx_target` (None: no PTX)."""
    if capability is None:
        return 0
    device = 10 * capability[0] + capability[1]
    if arch == device:
        return 0
    if ptx_target is None or not ptx_target.startswith("sm_"):
        return None
    digits = ptx_target[3:].rstrip("af")
    if not digits.isdigit():
        return None
    if ptx_target.endswith("a"):  # arch-specific: that GPU only
        return 1 if int(digits) == device else None
    return 1 if int(digits) <= device else None


def load_rank(directory, capability):
    """How an artifact's kernels load on a GPU of compute capability
    `capability` (major, minor), as the runtime does it (runtime.h,
    flashfuse_artifact_load): 0 from its cubin (built for this very GPU),
    1 from its PTX, JIT-compiled by the driver (an older arch's PTX: an
    older recipe's kernels), None where they cannot load at all (a newer
    arch's, arch-specific PTX such as sm_90a's on another GPU than sm_90, or
    a manifest the runtime cannot read). capability None: 0."""
    arch = artifact_arch(directory)
    if arch is None:
        return None
    return _load_rank(arch, _ptx_target(directory), capability)


def _search(variant, directory=None, capability=None):
    """([(artifact dir, kernel index)] of every kernel of `variant`, in search
    order, in `directory` only if given; lines describing what the other
    kernels are and which manifests the runtime could not read). Given the
    GPU's `capability`, artifacts that cannot load on it are left out and
    those built for it come before those whose PTX the driver would
    JIT-compile (load_rank): a build for several targets has the variant in
    each of them, and the search order (a100 before h100 before l4) is not
    the GPU's."""
    dirs = artifact_dirs() if directory is None else [directory]
    hits, unreadable, available, unloadable = [], [], [], []
    with _lock:
        for d in dirs:
            m = _manifest(d)
            if isinstance(m, ManifestError):
                # One unreadable artifact (e.g. kernel kinds newer than this
                # runtime) must not hide the kernels of the others; listed
                # first in the error, being the likelier cause of a miss.
                unreadable.append(f"{d}: unreadable: {m}")
                continue
            # A kernel of a score_mod / mask_mod computes what its regions
            # say, which no variant does: never a variant's kernel.
            found = [i for i, info in enumerate(m.kernels())
                     if info.variant.key() == variant.key() and not m.mods(i)]
            if found:
                # _load_rank is 0 for every artifact without a capability.
                rank = _load_rank(m.arch, _ptx_target(d), capability)
                if rank is None:
                    unloadable.append(
                        f"{d}: has it, but built for sm_{m.arch} (PTX "
                        f"{_ptx_target(d)}): cannot load on this GPU "
                        f"(sm_{capability[0]}{capability[1]})")
                    continue
                hits.extend((rank, d, i) for i in found)
            available.extend(
                f"{d}: {info.name.decode()}: {info.variant.describe()}"
                + (" (score_mod/mask_mod: launched by name)"
                   if m.mods(i) else "")
                for i, info in enumerate(m.kernels()) if i not in found)
    hits.sort(key=lambda h: h[0])  # stable: search order within a rank
    return [(d, i) for _, d, i in hits], unreadable + unloadable + available


def locate_all(variant, capability=None):
    """[(artifact dir, kernel index)] of every kernel of `variant`, first
    kernel of each directory, in search order (possibly empty); given the
    GPU's `capability`, only artifacts that load on it, those built for it
    first (_search)."""
    hits, _ = _search(variant, capability=capability)
    seen, out = set(), []
    for d, i in hits:
        if d not in seen:
            seen.add(d)
            out.append((d, i))
    return out


def kernel_infos(variant, capability=None):
    """[(artifact dir, KernelInfo)] of the first kernel of `variant` in each
    artifact that has one, in search order (locate_all)."""
    out = []
    for directory, index in locate_all(variant, capability):
        with _lock:
            manifest = _manifest(directory)
        if not isinstance(manifest, ManifestError):
            out.append((directory, manifest.kernels()[index]))
    return out


def artifact_arch(directory):
    """The sm_XY its cubin is for, as the number XY (the manifest's `arch`);
    None where the runtime could not read its manifest."""
    with _lock:
        m = _manifest(directory)
    return None if isinstance(m, ManifestError) else m.arch


def locate(variant, directory=None, capability=None):
    """(artifact dir, kernel index) of the first kernel of `variant` (in
    `directory` only, if given) that loads on a GPU of `capability` where
    that is given (_search). Where no artifact has it and `capability` is
    given, it is compiled on demand; otherwise, or without a compiler,
    KernelNotFoundError listing what the artifacts provide."""
    hits, available = _search(variant, directory, capability)
    if hits:
        return hits[0]
    note = ""
    if directory is None and capability is not None:
        try:
            compiled = _compile.artifact_for(variant, capability)
        except _compile.Unavailable as e:
            note = f"\n(not compiled on demand: {e})"
        else:
            return locate(variant, compiled)
    if directory is None and not artifact_dirs():
        where = os.environ.get("FLASHFUSE_KERNEL_DIR") or str(
            pathlib.Path(__file__).resolve().parent / "kernels")
        raise KernelNotFoundError(
            f"flashfuse: no kernel artifacts found in {where}; set "
            "FLASHFUSE_KERNEL_DIR to a directory written by flashfuse-compile"
            + note, "FLASHFUSE_ERROR_NOT_FOUND")
    raise KernelNotFoundError(
        f"flashfuse: no compiled kernel for '{variant.describe()}'"
        + (f" in {directory}" if directory else "") + ". Available:\n  "
        + "\n  ".join(available) + note, "FLASHFUSE_ERROR_NOT_FOUND")


def param_names(directory, index):
    """The parameter names kernel `index` of an artifact takes."""
    key = (directory, index)
    names = _params.get(key)
    if names is None:
        with _lock:
            names = _params[key] = frozenset(
                name for _, name in _manifest(directory).params(index))
    return names


def info(directory, index):
    """The KernelInfo (name, variant, tiles) of kernel `index` of an
    artifact."""
    with _lock:
        return _manifest(directory).kernels()[index]


def context(device_index):
    """The runtime context of a GPU, created on first use."""
    with _lock:
        c = _contexts.get(device_index)
        if c is None:
            c = _contexts[device_index] = rt.Context(device_index)
        return c


def kernel(device_index, variant, directory=None, capability=None):
    """A launchable kernel handle for `variant` on a GPU, from `directory`
    if given (kernels that share buffers must come from one artifact);
    compiled on demand for `capability` where no artifact has it (locate)."""
    key = (device_index, directory, variant.key())
    k = _kernels.get(key)
    if k is not None:
        return k
    found, _ = locate(variant, directory, capability)
    ctx = context(device_index)
    k = ctx.find_kernel(found, variant)
    with _lock:
        _kernels[key] = k
    return k


# The key length from which the sm90ws forward (TMA loads, a producer and
# two consumer warpgroups, one CTA per SM) is taken over the sm90 forward of
# the same variant: below it the per-tile prologue of its one CTA per SM,
# with no second CTA beside it, costs more than it saves. H200, bf16,
# docs/PERF.md runs 103 and 105: through the package 1.12-1.31x from 2k
# keys, 0.58-0.87x at 256-512, mixed at 1k.
SM90WS_MIN_KEYS = 2048

# Head dims (D, Dv) whose sm90 forward holds one CTA an SM too, so the
# sm90ws one wins from fewer keys. DeepSeek's MLA prefill (192, 128): its
# sm90 tile (128 x 128, two stages) takes 209 KiB; the sm90ws kernel is
# 1.17-1.30x it at 512-2048 keys, 1.10x / 0.97x at 256 without / with the
# causal mask (H200, bf16, 16k tokens, docs/PERF.md run 520).
SM90WS_MIN_KEYS_BY_HEAD_DIMS = {(192, 128): 512}


def sm90ws_min_keys(variant):
    """The key length from which the forward of `variant` takes the
    sm90ws kernel where an artifact has one."""
    return SM90WS_MIN_KEYS_BY_HEAD_DIMS.get(
        (variant.head_dim, variant.head_dim_v), SM90WS_MIN_KEYS)

# The key length from which the sm90ws backward is taken over the sm90
# backward of the same variant (ops._backward_plan), by head dim. D = 128
# from 1024 keys: H200, docs/PERF.md run 311 (bf16, the library's kernels
# through the package): 1.26-1.37x at 1024-1978 keys without a mask and at
# 1536-1978 causal, 1.34x and 0.91x in two rounds causal at 1024, 0.84-1.30x
# at 512. D = 64 from 1024 keys too: run 316 (the same way, two rounds):
# 1.24-1.27x without a mask at 1024-2048 keys, causal 1.05-1.08x at 1024
# and 1.19-1.23x from 1536; at 512 1.04-1.15x without a mask, 0.94-1.00x
# causal. The other head dims (the sm90ws backward serves 64 and 128) keep
# the forward's length.
SM90WS_BACKWARD_MIN_KEYS = {64: 1024, 128: 1024}


def sm90ws_backward_min_keys(head_dim):
    """The key length from which the backward of head dim `head_dim` takes
    the sm90ws kernels where an artifact has them."""
    return SM90WS_BACKWARD_MIN_KEYS.get(head_dim, SM90WS_MIN_KEYS)


# Where artifacts hold sm90ws forwards of one variant with different query
# rows, the length decides: the D = 64 causal kernels of <target>-ws have
# 128 rows, those of <target>-ws-long 192 on three consumer warpgroups
# that issue in turn, 1.03-1.09x faster from 4k queries and keys but
# 0.92-0.94x at 2k (H200, docs/PERF.md run 294). From this length on
# (queries and keys) the most rows are taken, below it the fewest; it is
# flash-select-config's kLongCausalMinLength for static shapes.
SM90WS_LONG_MIN_LENGTH = 4096


def sm90ws_dirs(variant, capability=None):
    """{query rows: artifact directory} of the sm90ws kernels of `variant`
    (a forward, or a backward: <target>-bwd-ws), the first directory in
    search order (locate_all) for each tile height; searched once per
    variant and GPU capability (a search reads every manifest)."""
    key = (variant.key(), None if capability is None else tuple(capability))
    if key not in _sm90ws_dirs:
        found = {}
        for directory, index in locate_all(variant, capability):
            with _lock:
                manifest = _manifest(directory)
            # An artifact this runtime cannot read is not one to launch.
            if isinstance(manifest, ManifestError):
                continue
            info = manifest.kernels()[index]
            if b"_sm90ws_" in info.name:
                found.setdefault(info.block_m, directory)
        _sm90ws_dirs[key] = found
    return _sm90ws_dirs[key]


def sm90ws_dir(variant, long=False, capability=None):
    """The artifact directory holding an sm90ws kernel of `variant` (that
    loads on a GPU of `capability`, where given), or None: with `long`
    (SM90WS_LONG_MIN_LENGTH) the one of the most query rows, otherwise of
    the fewest."""
    tiers = sm90ws_dirs(variant, capability)
    if not tiers:
        return None
    return tiers[max(tiers) if long else min(tiers)]


def forward_kernel(device_index, variant, capability, seq_k, seq_q=0):
    """The forward kernel of `variant` for `seq_q` queries and `seq_k` keys:
    an artifact's sm90ws kernel of the variant from sm90ws_min_keys keys on
    (from SM90WS_LONG_MIN_LENGTH queries and keys the one of the most rows),
    otherwise the first one found (kernel(): the library's <target>
    directory sorts before <target>-ws)."""
    if seq_k >= sm90ws_min_keys(variant):
        long = min(seq_q, seq_k) >= SM90WS_LONG_MIN_LENGTH
        directory = sm90ws_dir(variant, long, capability)
        if directory is not None:
            return kernel(device_index, variant, directory)
    return kernel(device_index, variant, capability=capability)


# The mean key length of a packed batch's sequences (its keys over its
# sequences) from which its forward takes the sm90ws varlen kernel
# (<target>-varlen-ws) over the sm90 one of <target>-varlen, by head dim,
# causal mask, and whether the runtime walks the batch (sequences of about
# equal length, runtime.h flashfuse_packed_batch_walks: the persistent walk
# of run 546) or runs the sm90ws kernel a block a tile. H100, bf16, 32k
# tokens, docs/PERF.md runs 552-555 (scripts/kernels/bench_varlen_ws.py,
# each kernel forced), sm90ws / sm90, equal lengths (walked) and lengths
# drawn from a range (not walked, the mean given):
# - D = 128: walked 1.04-1.09x at 128-256 keys (causal 1.16-1.19x), 384
#   1.00-1.02x (causal 1.23-1.25x since the walk's grid is coprime with a
#   sequence's units, run 555; 0.91x before), 1.17-1.32x from 512. Not
#   walked 0.96-0.98x at a mean of 260, 1.00-1.03x at 400, 1.03-1.08x at
#   500, 1.06-1.20x from 750.
# - D = 64 (without a mask the sm90ws tiles are 192 rows high, so an equal
#   length's fit into them decides): walked 0.74-0.83x at 128-256, 1.10x
#   at 384, 1.01x at 512, 1.11x at 1024; not walked 0.79-0.93x at means
#   260-500, 1.04x at 750, 1.08x at 1k. Causal walked 0.91-0.98x at
#   128-256, 1.01-1.04x at 384 (0.76x before run 555), 1.04-1.07x at 512,
#   1.10x at 640, 1.11x at 1024; not walked 0.67-0.89x to a mean of 1k,
#   0.97x at 1.55k, 1.02x at 2k.
# - DeepSeek's MLA (D = 192, Dv = 128): 1.13-1.34x from 128 keys, walked
#   or not, causal or not.
# Other head dims: 512 (the library has no other sm90ws varlen forward).
SM90WS_VARLEN_MIN_MEAN_KEYS = {
    # (head_dim, causal, walks): keys
    (128, False, True): 128, (128, True, True): 128,
    (128, False, False): 384, (128, True, False): 384,
    (64, False, True): 384, (64, False, False): 768,
    (64, True, True): 384, (64, True, False): 2048,
    (192, False, True): 128, (192, True, True): 128,
    (192, False, False): 128, (192, True, False): 128,
}
SM90WS_VARLEN_MIN_MEAN_KEYS_OTHER = 512


def sm90ws_varlen_min_mean_keys(variant, walks=False):
    """The mean key length from which the packed-batch forward of
    `variant` takes the sm90ws kernel where an artifact has one; `walks`:
    whether the runtime walks the batch (flashfuse_packed_batch_walks)."""
    return SM90WS_VARLEN_MIN_MEAN_KEYS.get(
        (variant.head_dim, bool(variant.causal), bool(walks)),
        SM90WS_VARLEN_MIN_MEAN_KEYS_OTHER)


def varlen_forward_kernel(device_index, variant, capability, mean_keys,
                          walks=False):
    """The forward kernel of the packed-batch `variant` for sequences of
    `mean_keys` keys on average: an artifact's sm90ws kernel of the variant
    from sm90ws_varlen_min_mean_keys on, otherwise the first one found."""
    if mean_keys >= sm90ws_varlen_min_mean_keys(variant, walks):
        directory = sm90ws_dir(variant, capability=capability)
        if directory is not None:
            return kernel(device_index, variant, directory)
    return kernel(device_index, variant, capability=capability)


def has_kernel(variant, directory=None):
    return bool(_search(variant, directory)[0])
