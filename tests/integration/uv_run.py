"""Running uv (and other commands) outside this test environment, for the packaging tests.

Usage: `run([uv(), "pip", "compile", ...])`: the completed process; a non-zero exit fails the test with its output.
"""

from __future__ import annotations

import os
import subprocess


def uv() -> str:
    from uv import find_uv_bin

    return find_uv_bin()


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    """`cmd` with this environment's VIRTUAL_ENV and PYTHONPATH left out (it must not see them)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, **kwargs)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc
