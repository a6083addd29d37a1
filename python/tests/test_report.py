"""flashfuse.report_from_mlir on the exported model fixtures (test/models/),
on modules whose attentions get kernel configs, and on near misses; and
compile_report's export, which needs torch and torch-mlir."""

import os
import re
import subprocess
import sys

import pytest

import flashfuse
from conftest import ROOT
from flashfuse.errors import CompileError, ToolNotFoundError
from flashfuse.variants import KernelVariant, emit_module

MODELS = ROOT / "test" / "models"
LIT_TORCH = ROOT / "test" / "Transforms" / "RaiseAttention" / "torch"


def from_file(path, target="h100"):
    return flashfuse.report_from_mlir(path.read_text(), target)


def test_llama_two_gqa_attentions(opt_tool):
    r = from_file(MODELS / "llama.linalg.mlir")
    assert len(r.attentions) == 2 and not r.near_misses
    for a in r.attentions:
        assert a.op == "flash.attention" and a.function == "llama"
        assert (a.heads_q, a.heads_kv, a.gqa_groups) == (4, 2, 2)
        assert a.causal == "top_left" and a.dtype == "f32"
        assert a.query.shape == (1, 4, 16, 16)
        assert a.key.shape == (1, 2, 16, 16)
        assert a.value.shape == (1, 16, 2, 16) and a.layouts == {"value": "BSHD"}
        assert re.fullmatch(r"\d+:\d+", a.location)
        # f32 models get no GPU kernel; the report says why.
        assert a.config is None and "needs f16 or bf16" in a.config_error
    table = str(r)
    assert "2 attentions, 0 near misses" in table and "GQA groups" in table
    assert "needs f16 or bf16" in table


def test_gpt2_two_causal_attentions(opt_tool):
    r = from_file(MODELS / "gpt2.linalg.mlir")
    assert [a.causal for a in r.attentions] == ["top_left", "top_left"]
    assert all(a.gqa_groups == 1 for a in r.attentions)


@pytest.mark.parametrize("case, check", [
    ("eager_window", lambda a: a.window == (3, None)),
    ("sdpa_mask_bool", lambda a: a.mask.shape == (2, 1, 16, 16)
     and a.mask.element == "i1" and a.bias is None),
    ("sdpa_mask_add", lambda a: a.bias.shape == (1, 1, 16, 16)),
    ("mod_softcap", lambda a: a.softcap == 30.0),
    ("mod_alibi", lambda a: a.score_mod and not a.mask_mod
     and a.alibi is None),
    # Causal ALiBi becomes the op's operand (no region).
    ("mod_alibi_causal", lambda a: a.alibi.shape == (4,)
     and a.alibi.element == "f32" and not a.score_mod),
    ("dropout", lambda a: a.dropout == pytest.approx(0.1)),
    ("eager_causal_bottom_right", lambda a: a.causal == "bottom_right"),
    ("sdpa_gqa", lambda a: a.gqa_groups == 2),
])
def test_variant_attributes(opt_tool, case, check):
    r = from_file(MODELS / "cases" / f"{case}.linalg.mlir")
    (a,) = r.attentions
    assert check(a), a


@pytest.mark.parametrize("case", ["neg_no_pv", "neg_wrong_axis",
                                  "neg_data_mask"])
def test_near_misses_say_which_step_failed(opt_tool, case):
    # The remark the lit test of the same case expects.
    expected = re.search(
        r"// EXPLAIN: remark: flash-raise-attention: found a softmax but not "
        r"an attention: (.*?): (.*)",
        (LIT_TORCH / f"{case}.mlir").read_text())
    r = from_file(MODELS / "cases" / f"{case}.linalg.mlir")
    assert not r.attentions
    (nm,) = r.near_misses
    assert (nm.step, nm.reason) == expected.groups()
    assert nm.function == case and re.fullmatch(r"\d+:\d+", nm.location)
    table = str(r)
    assert "0 attentions, 1 near miss" in table and nm.reason in table


def test_configs_chosen_per_attention(opt_tool):
    """Half-precision attentions get their #flash.config; one that the
    target cannot run (D = 44, not a multiple of 8) gets its reason, the
    others still theirs; D = 80 gets the sm80 recipe, D = 192 with Dv =
    128 the sm90 one (which serves (D, Dv) in {(64, 64), (128, 128),
    (192, 128), (256, 256)})."""
    module = emit_module([
        KernelVariant("causal", "f16", 64, causal="top_left"),
        KernelVariant("odd_head_dim", "f16", 44),
        KernelVariant("phi2", "f16", 80, causal="top_left"),
        KernelVariant("mla", "bf16", 192, 128),
        KernelVariant("rich", "bf16", 128, window=(32, 0), softcap=20.0,
                      bias=True, mask=True, dropout=0.25),
    ]) + emit_module([KernelVariant("grad", "f16", 64)], backward=True)
    r = flashfuse.report_from_mlir(module, "h100")
    by_fn = {a.function: a for a in r.attentions}
    assert set(by_fn) == {"causal", "odd_head_dim", "phi2", "mla", "rich",
                          "grad_grad"}
    assert by_fn["phi2"].config.recipe == "sm80"
    assert by_fn["mla"].config.recipe == "sm90"
    causal, odd, rich = by_fn["causal"], by_fn["odd_head_dim"], by_fn["rich"]
    assert causal.config.recipe == "sm90" and causal.config.block_m > 0  # h100: wgmma
    assert odd.config is None and "serves head dims" in odd.config_error
    assert rich.config is not None
    assert (rich.window, rich.softcap, rich.dropout) == ((32, 0), 20.0, 0.25)
    assert rich.bias.shape == (1, 1, 128, 128) and rich.mask.element == "i1"
    assert by_fn["grad_grad"].op == "flash.attention_grad"
    assert by_fn["grad_grad"].config is not None
    table = r.table()
    assert str(causal.config) in table and "serves head dims" in table


def test_tool_errors_are_raised(opt_tool, monkeypatch, tmp_path):
    text = (MODELS / "cases" / "sdpa_plain.linalg.mlir").read_text()
    with pytest.raises(CompileError, match="unknown target 'b200'; known "
                       "targets are a100, l4, h100, h200"):
        flashfuse.report_from_mlir(text, "b200")
    with pytest.raises(CompileError, match="custom op 'garbage' is unknown"):
        flashfuse.report_from_mlir("garbage", "h100")
    with pytest.raises(TypeError, match="must be a str"):
        flashfuse.report_from_mlir(b"module {}", "h100")
    monkeypatch.setenv("FLASHFUSE_OPT", str(tmp_path / "missing"))
    with pytest.raises(ToolNotFoundError, match="FLASHFUSE_OPT="):
        flashfuse.report_from_mlir(text, "h100")


def test_compile_report_without_torch_mlir(monkeypatch):
    # A None entry makes the import fail as if torch-mlir were absent.
    monkeypatch.setitem(sys.modules, "torch_mlir", None)
    with pytest.raises(ImportError, match="needs torch-mlir to export the "
                       "model.*report_from_mlir"):
        flashfuse.compile_report(object(), ())


def test_compile_report_exports_a_model(opt_tool):
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch_mlir", reason="torch-mlir is not installed")

    class Attn(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=True, enable_gqa=True)

    # PyTorch's CPU decomposition of SDPA (what torch-mlir exports)
    # computes 16-bit attention in f32 on up-cast inputs; the raise narrows
    # it back to the 16-bit type, which gets a GPU kernel config. In f32 it
    # stays f32, and the report says why no kernel serves it.
    for dtype, elt in ((torch.bfloat16, "bf16"), (torch.float32, "f32")):
        q = torch.randn(1, 8, 64, 64, dtype=dtype)
        kv = torch.randn(1, 2, 64, 64, dtype=dtype)
        r = flashfuse.compile_report(Attn().eval(), (q, kv, kv))
        (a,) = r.attentions
        assert a.causal == "top_left" and a.gqa_groups == 4
        assert (a.query.shape, a.dtype) == ((1, 8, 64, 64), elt), a
        if elt == "f32":
            assert a.config is None and "needs f16 or bf16" in a.config_error
        else:
            assert a.config is not None, a.config_error


def test_report_needs_no_torch(opt_tool):
    # Where torch is installed, block it: the part after the export must
    # work without it.
    code = ("import sys; sys.modules['torch'] = None; import flashfuse; "
            "r = flashfuse.report_from_mlir(open(sys.argv[1]).read(), 'a100');"
            " print(len(r.attentions))")
    out = subprocess.run(
        [sys.executable, "-c", code,
         str(MODELS / "cases" / "sdpa_plain.linalg.mlir")],
        capture_output=True, text=True, check=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    assert out.stdout.strip() == "1"
