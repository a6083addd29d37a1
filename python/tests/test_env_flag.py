"""flashfuse._env.EnvFlag: the debug switches read at every call follow
os.environ as os.environ.get would (no GPU; the last test needs torch)."""
import os

import pytest

from flashfuse._env import EnvFlag

NAME = "FLASHFUSE_TEST_ENV_FLAG"


def test_follows_changes_through_os_environ(monkeypatch):
    flag = EnvFlag(NAME)
    monkeypatch.delenv(NAME, raising=False)
    assert flag() is False
    monkeypatch.setenv(NAME, "1")
    assert flag() is True
    for value in ("0", "", "true", "11", " 1"):
        monkeypatch.setenv(NAME, value)
        assert flag() is False, value
    os.environ[NAME] = "1"
    assert flag() is True
    del os.environ[NAME]
    assert flag() is False


def test_another_mapping_in_place_of_os_environ(monkeypatch):
    flag = EnvFlag(NAME)
    monkeypatch.setattr(os, "environ", {NAME: "1"})
    assert flag() is True
    monkeypatch.setattr(os, "environ", {})
    assert flag() is False


def test_the_package_switches_are_flags(monkeypatch):
    pytest.importorskip("torch")
    from flashfuse import kvcache, ops
    monkeypatch.delenv("FLASHFUSE_POISON_OUTPUTS", raising=False)
    assert ops.poison_requested() is False
    monkeypatch.setenv("FLASHFUSE_POISON_OUTPUTS", "1")
    assert ops.poison_requested() is True
    monkeypatch.setenv(kvcache.CHECK_ENV, "1")
    assert kvcache.check_requested(False) is True
