"""What FlashFuse makes of a model: flashfuse.compile_report(model, inputs)
exports it with torch-mlir and reports each attention that
flash-raise-attention found (its shapes, variant and the kernel config
flash-select-config chooses for the target) and each near miss (a softmax
that is not an attention, with the step that failed and why).

report_from_mlir does the part after the export and needs no torch: it runs

    flashfuse-opt --flash-raise-attention=explain=true \\
                  --flash-select-config=target=<target>

and reads the ops back from the IR that flashfuse-opt prints in generic form
(stable whatever the ops' custom syntax) with local scope (no aliases, so
every attribute and location is spelled out on its op).
"""

import dataclasses
import re
import struct
from typing import List, Optional, Tuple

from . import _tools

OPT = "flashfuse-opt"
OPT_ENV = "FLASHFUSE_OPT"

_NEAR_MISS = "flash-raise-attention: found a softmax but not an attention: "
# flashfuse-opt with --mlir-print-ir-after-failure dumps the module after a
# failed pass under this header; select-config fails on ops it cannot
# configure but still configures the others, which the dump shows.
_DUMP_HEADER = re.compile(r"^// -----// IR Dump After .* Failed .*$", re.M)
_DIAGNOSTIC = re.compile(
    r"^(?:(?P<where>.*?): )?(?P<severity>error|warning|remark|note): "
    r"(?P<message>.*)$", re.M)
_OP_START = re.compile(
    r'^[ \t]*(?:%[^=\n]*=[ \t]*)?"(?P<name>flash\.attention(?:_grad)?)"\(',
    re.M)
_FUNC = re.compile(r'^[ \t]*"func\.func"\(\).*?sym_name = "(?P<name>[^"]*)"',
                   re.M)
_FILE_LOC = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')

# Operand segments of each op, in operandSegmentSizes order (FlashOps.td).
_SEGMENTS = {
    "flash.attention": ("query", "key", "value", "bias", "mask", "seed",
                        "cu_seqlens_q", "cu_seqlens_k", "q_descale",
                        "k_descale", "v_descale", "kv_num_blocks",
                        "kv_indices", "full_kv_num_blocks",
                        "full_kv_indices", "alibi_slopes"),
    "flash.attention_grad": ("grad_output", "query", "key", "value",
                             "output", "lse", "bias", "mask", "seed",
                             "cu_seqlens_q", "cu_seqlens_k",
                             "kv_num_blocks", "kv_indices",
                             "full_kv_num_blocks", "full_kv_indices",
                             "alibi_slopes"),
}


# --- Report ----------------------------------------------------------------

@dataclasses.dataclass
class TensorType:
    shape: Tuple[Optional[int], ...]  # None: a dynamic dim
    element: str

    def shape_text(self):
        return "x".join("?" if d is None else str(d) for d in self.shape)

    def __str__(self):
        return f"tensor<{self.shape_text()}x{self.element}>"


@dataclasses.dataclass
class KernelConfig:
    """A #flash.config: the recipe and tiles of the kernel."""
    recipe: str
    block_m: int
    block_n: int
    warps: int
    stages: int

    def __str__(self):
        return (f"{self.recipe} m{self.block_m} n{self.block_n} "
                f"w{self.warps} s{self.stages}")


@dataclasses.dataclass
class Attention:
    """One flash.attention (or flash.attention_grad) of the raised module.
    Shapes are the operands' as written; `layouts` names the operands whose
    layout is not [B, H, S, D] (e.g. {"value": "BSHD"}). `config` is None
    when flash-select-config found none; `config_error` then says why."""
    op: str
    location: str
    function: Optional[str]
    dtype: str
    query: TensorType
    key: TensorType
    value: TensorType
    layouts: dict
    bias: Optional[TensorType]
    mask: Optional[TensorType]
    causal: Optional[str]
    window: Optional[Tuple[Optional[int], Optional[int]]]
    softcap: Optional[float]
    scale: Optional[float]
    dropout: Optional[float]
    heads_q: Optional[int]
    heads_kv: Optional[int]
    gqa_groups: Optional[int]  # Hq / Hkv; 1 without GQA, None if dynamic
    score_mod: bool
    mask_mod: bool
    config: Optional[KernelConfig]
    config_error: Optional[str] = None
    # The slopes of flash-attn's ALiBi (the op's alibi(...) operand).
    alibi: Optional[TensorType] = None


@dataclasses.dataclass
class NearMiss:
    """A softmax flash-raise-attention did not raise: `step` is the step of
    the match that failed, `reason` why (the explain remark, split)."""
    location: str
    function: Optional[str]
    step: str
    reason: str


@dataclasses.dataclass
class Report:
    target: str
    attentions: List[Attention]
    near_misses: List[NearMiss]
    mlir: str = dataclasses.field(repr=False, default="")  # the input module

    def __str__(self):
        return self.table()

    def table(self):
        n, m = len(self.attentions), len(self.near_misses)
        out = [f"FlashFuse report for target {self.target}: "
               f"{n} attention{'s' * (n != 1)}, "
               f"{m} near miss{'es' * (m != 1)}"]
        notes = []
        if self.attentions:
            rows = []
            for i, a in enumerate(self.attentions, 1):
                if a.config:
                    config = str(a.config)
                else:
                    # One footnote per distinct reason: a model's layers
                    # usually fail alike.
                    note = a.config_error or "no config"
                    if note not in notes:
                        notes.append(note)
                    config = f"none [{notes.index(note) + 1}]"
                operands = []
                for name in ("query", "key", "value"):
                    layout = a.layouts.get(name)
                    operands.append(f"{getattr(a, name).shape_text()}"
                                    + (f" {layout}" if layout else ""))
                rows.append([
                    str(i), _where(a.location, a.function),
                    a.op.replace("flash.", ""), ", ".join(operands), a.dtype,
                    a.causal or "-",
                    _window_text(a.window), _num(a.softcap),
                    ", ".join(f"{k} {t.shape_text()}" for k, t in
                              (("bias", a.bias), ("mask", a.mask)) if t)
                    or "-",
                    "-" if a.gqa_groups is None else str(a.gqa_groups),
                    ", ".join([k for k in ("score_mod", "mask_mod")
                               if getattr(a, k)]
                              + ([f"alibi {a.alibi.shape_text()}"]
                                 if a.alibi else [])) or "-",
                    _num(a.dropout), config])
            out += ["", "Attentions:"]
            out += _table(["#", "where", "op", "Q, K, V", "dtype", "causal",
                           "window", "softcap", "bias/mask", "GQA groups",
                           "mods", "dropout", "kernel config"], rows)
            out += [f"  [{i}] {note}" for i, note in enumerate(notes, 1)]
        if self.near_misses:
            out += ["", "Near misses (a softmax that is not an attention):"]
            out += _table(["#", "where", "failed step", "why"],
                          [[str(i), _where(nm.location, nm.function),
                            nm.step, nm.reason]
                           for i, nm in enumerate(self.near_misses, 1)])
        return "\n".join(out)


def _where(location, function):
    return f"@{function} {location}" if function else location


def _num(x):
    return "-" if x is None else f"{x:g}"


def _window_text(window):
    if window is None:
        return "-"
    return "(" + ", ".join("-1" if w is None else str(w) for w in window) + ")"


def _table(headers, rows):
    widths = [max(len(r[i]) for r in [headers] + rows)
              for i in range(len(headers))]

    def line(cells):
        return "  " + "  ".join(c.ljust(w) for c, w in
                                zip(cells, widths)).rstrip()
    return [line(headers)] + [line(r) for r in rows]


# --- Reading flashfuse-opt's output ----------------------------------------

class _ParseError(ValueError):
    pass


def _closing(text, i):
    """Index just past the bracket that closes the one at text[i] ((, [ or
    {), skipping string literals (locations hold file names)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if not stack or stack.pop() != c:
                raise _ParseError(f"unbalanced '{c}' at offset {i}")
            if not stack:
                return i + 1
        i += 1
    raise _ParseError("unterminated bracket")


def _split_top(text):
    """Splits on commas outside brackets (including <...>) and strings."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("->", i):
            i += 1  # an arrow, not a closing '>'
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    tail = text[start:].strip()
    return parts + [tail] if tail else parts


def _tensor_type(text):
    m = re.fullmatch(r"tensor<([^,>]*)(?:,.*)?>", text.strip())
    if not m:
        return None
    *dims, element = m.group(1).split("x")
    return TensorType(tuple(None if d == "?" else int(d) for d in dims),
                      element)


def _attr_value(text):
    """Python value of a printed attribute: ints, floats (also hex bit
    patterns), arrays, #flash.causal / #flash.config; else the text."""
    text = text.strip()
    m = re.fullmatch(r"(\S+) : (i\d+|f16|bf16|f32|f64)", text)
    if m:
        literal, ty = m.groups()
        if ty.startswith("i"):
            return int(literal)
        if literal.startswith("0x") and ty == "f32":
            return struct.unpack("<f", struct.pack("<I", int(literal, 16)))[0]
        return float(literal)
    m = re.fullmatch(r"array<i\d+(?:: (.*))?>", text)
    if m:
        return [int(x) for x in (m.group(1) or "").split(",") if x.strip()]
    m = re.fullmatch(r"#flash\.causal<(\w+)>", text)
    if m:
        return m.group(1)
    m = re.fullmatch(r"#flash\.config<(\w+), block_m = (\d+), block_n = "
                     r"(\d+), warps = (\d+), stages = (\d+)>", text)
    if m:
        return KernelConfig(m.group(1), *(int(g) for g in m.groups()[1:]))
    return text


def _location(loc_text):
    """'file:line:col' of the first file location in a printed loc(...),
    with '<stdin>:' (the module text given to flashfuse-opt) dropped."""
    m = _FILE_LOC.search(loc_text)
    if not m:
        return "unknown"
    return _normalise_where(f"{m.group(1)}:{m.group(2)}:{m.group(3)}")


def _normalise_where(where):
    return where[len("<stdin>:"):] if where.startswith("<stdin>:") else where


def _logical(t, perm, index):
    """Logical dim `index` ([B, H, S, D]) of operand type t under perm."""
    return t.shape[perm[index]] if t and len(t.shape) == 4 else None


def _parse_op(ir, match, functions):
    """An Attention from the generic form of the op starting at `match`."""
    name = match.group("name")
    i = match.end() - 1
    end = _closing(ir, i)                    # ( operands )
    rest = ir[end:]
    props = {}
    if rest.startswith(" <{"):
        close = _closing(ir, end + 2)        # <{ properties }>
        for entry in _split_top(ir[end + 3:close - 1]):
            key, _, value = entry.partition(" = ")
            props[key.strip()] = _attr_value(value)
        end = close + 1
    regions = []
    if ir.startswith(" ({", end) or ir.startswith(" (\n", end):
        close = _closing(ir, end + 1)        # ({ score_mod }, { mask_mod })
        regions = [r.strip()[1:-1].strip()
                   for r in _split_top(ir[end + 2:close - 1])]
        end = close
    m = re.compile(r" : \(").match(ir, end)
    if not m:
        raise _ParseError(f"no function type after {name} at offset {end}")
    close = _closing(ir, m.end() - 1)
    operand_types = _split_top(ir[m.end():close - 1])
    loc = re.compile(r"[^\n]*?loc\(").match(ir, close)
    location = "unknown"
    if loc:
        location = _location(ir[loc.end() - 4:_closing(ir, loc.end() - 1)])

    segments = props.get("operandSegmentSizes")
    names = _SEGMENTS[name]
    if not isinstance(segments, list) or len(segments) != len(names):
        raise _ParseError(f"{name} without operandSegmentSizes for {names}")
    operands, at = {}, 0
    for operand, size in zip(names, segments):
        if size:
            operands[operand] = _tensor_type(operand_types[at])
        at += size
    q, k, v = operands["query"], operands["key"], operands["value"]
    if not (q and k and v):
        raise _ParseError(f"{name} whose query, key, value are not tensors")
    perms = {n: props.get(f"{n[0]}_perm") or [0, 1, 2, 3]
             for n in ("query", "key", "value")}
    layouts = {n: ("BSHD" if p == [0, 2, 1, 3] else f"perm {p}")
               for n, p in perms.items() if p != [0, 1, 2, 3]}
    hq = _logical(q, perms["query"], 1)
    hkv = _logical(k, perms["key"], 1)
    window = None
    if "window_left" in props or "window_right" in props:
        window = (props.get("window_left"), props.get("window_right"))
    config = props.get("config")
    return Attention(
        op=name, location=location, function=_function_at(functions, match),
        dtype=q.element, query=q, key=k, value=v, layouts=layouts,
        bias=operands.get("bias"), mask=operands.get("mask"),
        causal=props.get("causal"), window=window,
        softcap=props.get("softcap"), scale=props.get("scale"),
        dropout=props.get("dropout_p"), heads_q=hq, heads_kv=hkv,
        gqa_groups=(hq // hkv if hq and hkv else None),
        score_mod=bool(regions and regions[0]),
        mask_mod=bool(len(regions) > 1 and regions[1]),
        config=config if isinstance(config, KernelConfig) else None,
        alibi=operands.get("alibi_slopes"))


def _function_at(functions, match):
    """Name of the last func.func that starts before `match` (in generic
    form a function's name is printed before its body)."""
    name = None
    for f in functions:
        if f.start() > match.start():
            break
        name = f.group("name")
    return name


def _diagnostics(text):
    return [(d.group("severity"), _normalise_where(d.group("where") or ""),
             d.group("message")) for d in _DIAGNOSTIC.finditer(text)]


def report_from_mlir(mlir_text, target="h100"):
    """The Report of a module (MLIR text as torch-mlir exports it:
    linalg-on-tensors or TOSA) for a GPU target (a100, l4, h100, h200).
    Locations read 'line:col' of `mlir_text`, or the source locations it
    carries. Raises ToolNotFoundError without flashfuse-opt ($FLASHFUSE_OPT,
    the repository's build/bin, PATH) and CompileError with its message when
    it rejects the module or the target."""
    if not isinstance(mlir_text, str):
        raise TypeError(f"mlir_text must be a str, got "
                        f"{type(mlir_text).__name__}")
    opt = _tools.require_tool(OPT, OPT_ENV)
    cmd = [opt, "--flash-raise-attention=explain=true",
           f"--flash-select-config=target={target}",
           "--mlir-print-op-generic", "--mlir-print-local-scope",
           "--mlir-print-debuginfo", "--mlir-print-ir-after-failure",
           # Only read back: weights need not be printed again.
           "--mlir-elide-elementsattrs-if-larger=16",
           "--mlir-elide-resource-strings-if-larger=16"]
    proc = _tools.run(cmd, stdin_text=mlir_text, what=OPT)
    dump = _DUMP_HEADER.search(proc.stderr)
    if proc.returncode == 0:
        ir, diagnostics = proc.stdout, _diagnostics(proc.stderr)
    elif dump:
        ir = proc.stderr[dump.end():]
        diagnostics = _diagnostics(proc.stderr[:dump.start()])
    else:
        raise _tools.failure(cmd, proc, f"{OPT} on the module")

    functions = list(_FUNC.finditer(ir))
    try:
        attentions = [_parse_op(ir, m, functions)
                      for m in _OP_START.finditer(ir)]
    except _ParseError as e:
        raise _tools.failure(cmd, proc, f"reading back {OPT}'s output ({e})")

    # select-config reports each op it cannot configure at the op, in
    # program order; an error that no unconfigured op accounts for (an
    # unknown target) is a failure of the whole run.
    unexplained = []
    waiting = [a for a in attentions if a.config is None]
    for severity, where, message in diagnostics:
        if severity != "error":
            continue
        op = next((a for a in waiting if a.location == where), None)
        if op is None:
            unexplained.append(f"{where}: {message}" if where else message)
            continue
        op.config_error = message
        waiting.remove(op)
    if proc.returncode != 0 and (unexplained or waiting):
        raise _tools.failure(cmd, proc, f"{OPT} on the module")

    near_misses = []
    for severity, where, message in diagnostics:
        if severity == "remark" and message.startswith(_NEAR_MISS):
            step, _, reason = message[len(_NEAR_MISS):].partition(": ")
            near_misses.append(NearMiss(where, _function_near(mlir_text, where),
                                        step, reason))
    return Report(target, attentions, near_misses, mlir_text)


def _function_near(mlir_text, where):
    """The function around line:col `where` of the input module (near misses
    are reported at their softmax, which the raised IR no longer needs to
    hold); None for locations in other files."""
    m = re.fullmatch(r"(\d+):\d+", where)
    if not m:
        return None
    name = None
    for line in mlir_text.splitlines()[:int(m.group(1))]:
        f = (re.search(r"\bfunc\.func\b[^@]*@([\w$.]+)", line)
             or _FUNC.match(line))
        if f:
            name = f.group(1)
    return name


def compile_report(model, example_inputs, target="h100"):
    """Exports `model` (a torch.nn.Module, called as model(*example_inputs))
    with torch-mlir to linalg-on-tensors and returns report_from_mlir of it:
    print it for a table of the attentions found, their variants and
    kernel configs, and the near misses with why each was not raised.
    Call model.eval() first to see the inference graph (in training mode
    dropout is part of it)."""
    try:
        from torch_mlir import fx
    except ImportError as e:
        raise ImportError(
            "flashfuse.compile_report needs torch-mlir to export the model "
            "(pip install torch-mlir, from the torch-mlir release wheels); "
            "flashfuse.report_from_mlir(mlir_text, target) takes a module you "
            f"exported yourself ({e})") from e
    import torch
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    with torch.no_grad():
        module = fx.export_and_import(model, *example_inputs,
                                      output_type="linalg-on-tensors")
    # Debug info keeps torch-mlir's source locations, so the report points
    # at the model's code.
    return report_from_mlir(module.operation.get_asm(enable_debug_info=True),
                            target)
