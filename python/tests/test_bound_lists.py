"""Artifacts whose kernels' block-sparse lists flashfuse-compile derived at
compile time (docs/KERNEL_ABI.md "Block-sparse", `bound` lines), without a
GPU: the manifest's bound sizes through ctypes, the list file's checks, and
flashfuse.artifact's kernel choice and size checks before a launch."""

import shutil

import pytest

from conftest import ROOT

DERIVED = ROOT / "runtime" / "test" / "data" / "derived"
KERNEL = "flash_fwd_sm90_bf16_d64_m128n64w8s3_bs128x128f_mod0"
SIZES = {"seq_q": 1024, "seq_k": 1024, "batch": 2, "heads_q": 4}


def test_bound_sizes_through_ctypes(rt, sample_dir):
    m = rt.Manifest.open(DERIVED)
    assert m.bound(0) == (14, SIZES)
    # A manifest written before bound lines existed: nothing bound.
    assert rt.Manifest.open(sample_dir).bound(0) == (0, {})


@pytest.fixture
def scratch(tmp_path):
    for name in ("manifest.txt", "lists.bin"):
        shutil.copy(DERIVED / name, tmp_path / name)
    return tmp_path


def test_corrupt_list_file_is_a_manifest_error(rt, scratch):
    from flashfuse.errors import ManifestError
    data = bytearray((scratch / "lists.bin").read_bytes())
    data[100] ^= 0x40  # full_kv_num_blocks[1]
    (scratch / "lists.bin").write_bytes(bytes(data))
    with pytest.raises(ManifestError, match=(
            f"kernel '{KERNEL}': bound 'full_kv_num_blocks': the bytes "
            r"\[96, 128\) of .*lists.bin do not match the manifest's crc32")):
        rt.Manifest.open(scratch)
    (scratch / "lists.bin").write_bytes(bytes(data[:64]))
    with pytest.raises(ManifestError, match="holds 64 bytes, but the list is "
                       r"bytes \[32, 96\)"):
        rt.Manifest.open(scratch)
    (scratch / "lists.bin").unlink()
    with pytest.raises(ManifestError, match="cannot read its list file"):
        rt.Manifest.open(scratch)


def test_kernel_info_of_a_derived_artifact(rt):
    from flashfuse import artifact
    info = artifact.kernel_info(DERIVED)
    assert info.name == KERNEL and info.index == 0
    assert info.num_bound == 14 and info.bound_for == SIZES
    assert ("memref", "kv_indices") in info.params
    assert artifact.kernel_info(DERIVED, KERNEL).name == KERNEL
    with pytest.raises(ValueError, match="no kernel 'nope' in .*; it has: "
                       + KERNEL):
        artifact.kernel_info(DERIVED, "nope")


def test_kernel_info_refusals(rt, sample_dir, scratch):
    from flashfuse import artifact
    with pytest.raises(ValueError, match="has 2 forward kernels "
                       r"\(flash_fwd_f16_d128, flash_fwd_bf16_d64_causal_bias\)"
                       "; name one with kernel="):
        artifact.kernel_info(sample_dir)
    with pytest.raises(ValueError, match="'flash_fwd_bf16_d64_causal_bias' "
                       "takes bias, which forward"):
        artifact.kernel_info(sample_dir, "flash_fwd_bf16_d64_causal_bias")
    with pytest.raises(ValueError, match="takes kind backward, which"):
        artifact.kernel_info(sample_dir, "flash_bwd_f16_d128")
    # The same kernel with its lists left to the caller (no bound lines).
    text = (scratch / "manifest.txt").read_text()
    kept = [line for line in text.splitlines()
            if not line.lstrip().startswith("bound")]
    (scratch / "manifest.txt").write_text("\n".join(kept) + "\n")
    info = artifact.kernel_info(scratch)
    assert info.num_bound == 0
    with pytest.raises(ValueError, match="takes its block-sparse lists from "
                       "the caller .*; pass block_mask="):
        artifact.forward(scratch, None, None, None)
    # A dense kernel takes no lists.
    dense = artifact.kernel_info(sample_dir, "flash_fwd_f16_d128")
    with pytest.raises(ValueError, match="walks every key block; it takes no "
                       "block_mask"):
        artifact._lists_of(dense, ("counts", "indices"))


def test_check_sizes(rt):
    from flashfuse import artifact
    info = artifact.kernel_info(DERIVED)
    artifact.check_sizes(info, 2, 4, 4, 1024, 1024, 64, 64)
    artifact.check_sizes(info, 2, 4, 2, 1024, 1024, 64, 64)  # GQA
    with pytest.raises(ValueError, match="seq_q = 2048, but the block-sparse "
                       "lists .* were derived for seq_q = 1024, seq_k = 1024, "
                       "batch = 2, heads_q = 4; compile the model"):
        artifact.check_sizes(info, 2, 4, 4, 2048, 1024, 64, 64)
    with pytest.raises(ValueError, match="batch = 1, but"):
        artifact.check_sizes(info, 1, 4, 4, 1024, 1024, 64, 64)
    with pytest.raises(ValueError, match="head dims D=128 Dv=128, but .* "
                       "compiled for D=64 Dv=64"):
        artifact.check_sizes(info, 2, 4, 4, 1024, 1024, 128, 128)
    with pytest.raises(ValueError, match=r"query heads \(4\) must be a "
                       r"multiple of key heads \(3\)"):
        artifact.check_sizes(info, 2, 4, 3, 1024, 1024, 64, 64)


def test_forward_refuses_tensors_it_cannot_launch(rt):
    torch = pytest.importorskip("torch")
    from flashfuse import artifact
    q = torch.zeros(2, 4, 1024, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="query must be a CUDA tensor"):
        artifact.forward(DERIVED, q, q, q)
