"""`Progress`: the terminal progress bar of a run (tqdm on stderr: step, steps/s, ETA, last loss).

    trainer = kd.train.Trainer(..., progress=kd.train.Progress(enabled=False))  # plain lines only

Shown on the lead host when stderr is a terminal; elsewhere (logs, CI, pipes) the writers' plain lines are
all there is. While a bar is shown, `print_line` puts lines above it instead of through it.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import Any

from kd._terminal import ACTIVE_BARS as _ACTIVE
from kd._terminal import print_line as print_line


@dataclasses.dataclass(frozen=True, kw_only=True)
class Progress:
    """A tqdm bar for the training loop.

    Attributes:
      enabled: True / False, or None (default): shown when stderr is a terminal on process 0.
      loss_key: the logged value shown next to the bar (the first `losses/...` when absent).
    """

    enabled: bool | None = None
    loss_key: str = "losses/total"

    def start(self, total: int, initial: int) -> Progress._Bar:
        """Opens the bar for steps `initial` -> `total`; `close()` the returned handle at the end."""
        return Progress._Bar(self, total, initial)

    def _shown(self) -> bool:
        if self.enabled is not None:
            return bool(self.enabled)
        import jax

        isatty = getattr(sys.stderr, "isatty", None)
        return bool(isatty and isatty()) and jax.process_index() == 0

    class _Bar:
        __slots__ = ("bar", "progress")

        def __init__(self, progress: Progress, total: int, initial: int) -> None:
            self.progress = progress
            self.bar = None
            if progress._shown():
                from tqdm.auto import tqdm

                self.bar = tqdm(
                    total=total, initial=initial, unit="step", dynamic_ncols=True, file=sys.stderr, leave=True
                )
                _ACTIVE.append(self.bar)

        def step(self, n: int = 1) -> None:
            if self.bar is not None:
                self.bar.update(n)

        def logged(self, values: Mapping[str, Any]) -> None:
            if self.bar is None:
                return
            key = self.progress.loss_key
            if key not in values:
                key = next((k for k in values if k.startswith("losses/")), "")
            if key in values:
                self.bar.set_postfix_str(
                    f"{key.removeprefix('losses/')} {float(values[key]):.4g}", refresh=False
                )

        def close(self) -> None:
            if self.bar is not None:
                self.bar.close()
                if self.bar in _ACTIVE:
                    _ACTIVE.remove(self.bar)
                self.bar = None
