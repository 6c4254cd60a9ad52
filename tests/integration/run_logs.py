"""Reading a run's metrics.jsonl while the run may still be writing it (for the kill-and-resume tests).

Usage: `rows(workdir)` (the complete lines, as dicts), `logged_step(workdir)` (the last step logged, 0 if none).
"""

from __future__ import annotations

import json
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
