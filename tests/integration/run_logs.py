"""Reading a run's metrics.jsonl while the run may still be writing it (for the kill-and-resume tests).

Usage: `rows(workdir)` (the complete lines, as dicts), `logged_step(workdir)` (the last step logged, 0 if
none), `saved_steps(workdir)` (the steps of its complete checkpoints).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path


def rows(workdir: Path) -> list[dict]:
    path = workdir / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def logged_step(workdir: Path) -> int:
    try:
        return max((r["step"] for r in rows(workdir)), default=0)
    except (OSError, ValueError):  # read while the file was being replaced
        return 0


def saved_steps(workdir: Path) -> list[int]:
    """The steps of the complete checkpoints (orbax renames a step's folder to `ckpt_N` once it is written)."""
    try:
        names = os.listdir(workdir / "checkpoints")
    except FileNotFoundError:
        return []
    return sorted(int(name[5:]) for name in names if re.fullmatch(r"ckpt_\d+", name))
