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


def test_a_safe_resolve_that_compiles_stores_its_program_in_the_cache(tmp_path):
    # A config may compile as it resolves (a key, a jnp call): JAX's cache code (only it) may write the cache
    # folder under safe mode's audit hook, which refuses every other write.
    cache = tmp_path / "cache"
    script = (
        "import sys, jax, konfig\n"
        "from kd.cli import _compile_cache\n"
        "_compile_cache.enable_compilation_cache()\n"
        "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)\n"
        "jax.devices()\n"  # the backend starts before the resolve, as in kd-train
        "cfg = {'x': {'__qualname__': 'jax.numpy:lcm', '0': 4, '1': 6}}\n"
        "print(int(konfig.resolve(cfg, allowed=['jax'])['x']))\n"
        "bad = {'x': {'__qualname__': 'jax.numpy:save', '0': sys.argv[1], '1': 1}}\n"
        "try:\n"
        "    konfig.resolve(bad, allowed=['jax'])\n"
        "except konfig.DisallowedTargetError as e:\n"
        "    print('refused')\n"
    )
    environ = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(cache / "planted.npy")],
        capture_output=True,
        text=True,
        env={**environ, "JAX_PLATFORMS": "cpu", "KD_COMPILATION_CACHE": str(cache)},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["12", "refused"]  # other code writing into the cache folder is still refused
    assert any(p.name.startswith("jit_lcm") for p in cache.iterdir()), sorted(p.name for p in cache.iterdir())
    assert not (cache / "planted.npy").exists()
