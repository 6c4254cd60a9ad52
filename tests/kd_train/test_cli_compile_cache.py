"""kd-train turns on JAX's persistent compilation cache by default (kd.cli._compile_cache): a second run of
the same config finds its programs there instead of compiling them; `KD_COMPILATION_CACHE=off` turns it off,
`KD_COMPILATION_CACHE=/path` moves it, and a user's own `JAX_COMPILATION_CACHE_DIR` is left as it is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kd.cli import _compile_cache

ROOT = Path(__file__).resolve().parents[2]
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"


def kd_train(workdir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("KD_COMPILATION_CACHE", "JAX_COMPILATION_CACHE_DIR")}
    return subprocess.run(
        [KD_TRAIN, "--cfg=examples/mlp_regression.py", f"--cfg.workdir={workdir}", "--cfg.num_train_steps=20"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**environ, "JAX_PLATFORMS": "cpu", **env},
        timeout=300,
    )


def test_a_second_run_reads_the_programs_the_first_compiled(tmp_path):
    cache = tmp_path / "cache"
    first = kd_train(tmp_path / "a", KD_COMPILATION_CACHE=str(cache))
    assert first.returncode == 0, first.stderr[-2000:]
    stored = sorted(p.name for p in cache.iterdir())
    assert any(name.startswith("jit__fused_steps") for name in stored), stored

    second = kd_train(tmp_path / "b", KD_COMPILATION_CACHE=str(cache))

    assert second.returncode == 0, second.stderr[-2000:]
    assert sorted(p.name for p in cache.iterdir()) == stored  # nothing new compiled and stored
    assert first.stdout.splitlines()[-1].split(";")[-1] == second.stdout.splitlines()[-1].split(";")[-1]  # the same loss


def test_the_cache_is_off_with_the_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    result = kd_train(tmp_path / "a", KD_COMPILATION_CACHE="off", HOME=str(tmp_path / "home"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert not (tmp_path / "home" / ".cache" / "kd" / "jax").exists()


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "{home}/.cache/kd/jax"),
        ({"XDG_CACHE_HOME": "/xdg"}, "/xdg/kd/jax"),
        ({"KD_COMPILATION_CACHE": "/mine"}, "/mine"),
        ({"KD_COMPILATION_CACHE": "off"}, None),
    ],
)
def test_where_the_cache_goes(env, expected, monkeypatch, tmp_path):
    for name in ("XDG_CACHE_HOME", "KD_COMPILATION_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert _compile_cache.cache_folder() == (None if expected is None else expected.format(home=tmp_path))
