"""`Progress`: the terminal progress bar of a run (tqdm on stderr: step, steps/s, ETA, latest loss).

    trainer = kd.train.Trainer(..., progress=kd.train.Progress(enabled=False))  # plain lines only

Shown on the lead host when stderr is a terminal; elsewhere (logs, CI, pipes) the writers' plain lines are
all there is. While a bar is shown, `print_line` puts lines above it instead of through it. The loss shown is
the latest any call brought back (read once computed: the bar never makes a step wait), under the loss's
name. The elapsed time is the wall clock's; the rate and the ETA leave the time spent compiling out and are
shown ("?" until then) once a second call has run (the first holds one-off work: the first batch, a warm-up).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import Any

from kd._terminal import ACTIVE_BARS as _ACTIVE
from kd._terminal import print_line as print_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.train._types import LoggedValue


@dataclasses.dataclass(frozen=True, kw_only=True)
class Progress:
    """A tqdm bar for the training loop.

    Attributes:
      enabled: True / False, or None (default): shown when stderr is a terminal on process 0.
      loss_key: the logged loss shown next to the bar, e.g. `"losses/xent"`; None (default): the one loss, or
        the total of several.
    """

    enabled: bool | None = None
    loss_key: str | None = None

    def start(self, total: int, initial: int, desc: str | None = None) -> Progress._Bar:
        """Opens the bar for steps `initial` -> `total` (labelled `desc`); `close()` the returned handle at
        the end."""
        return Progress._Bar(self, total, initial, desc)

    def _shown(self) -> bool:
        if self.enabled is not None:
            return bool(self.enabled)
        import jax

        isatty = getattr(sys.stderr, "isatty", None)
        return bool(isatty and isatty()) and jax.process_index() == 0

    class _Bar:
        __slots__ = ("bar", "progress")

        def __init__(self, progress: Progress, total: int, initial: int, desc: str | None = None) -> None:
            self.progress = progress
            self.bar = None
            if progress._shown():
                self.bar = _bar_class()(
                    total=total,
                    initial=initial,
                    desc=desc,
                    unit="step",
                    dynamic_ncols=True,
                    file=sys.stderr,
                    leave=True,
                )
                _ACTIVE.append(self.bar)

        def step(self, n: int = 1) -> None:
            if self.bar is not None:
                self.bar.kd_calls += n > 0  # a call of no update (step 0's evaluations) measures nothing
                self.bar.update(n)

        @property
        def shown(self) -> bool:
            return self.bar is not None

        def exclude(self, seconds: float) -> None:
            """Leaves `seconds` (spent compiling) out of the bar's elapsed time and rate."""
            if self.bar is not None and seconds > 0:
                from tqdm.std import EMA

                bar = self.bar
                bar.start_t += seconds  # tqdm's own clock: what its rate is measured over
                bar.kd_excluded += seconds  # put back into the elapsed time shown
                # The rate (and so the ETA) is measured afresh from now: the compiling call's time per step,
                # already averaged in, would otherwise be shown for the rest of a short run.
                bar.last_print_t, bar.last_print_n = bar._time(), bar.n
                bar._ema_dn, bar._ema_dt = EMA(bar.smoothing), EMA(bar.smoothing)

        def losses(self, values: Mapping[str, float]) -> None:
            """An update's losses by name (`{"xent": 0.31}`): shown as the chosen one, the one, or the total."""
            key = self.progress.loss_key
            if self.bar is None or not values:
                return
            name = key.removeprefix("losses/") if key is not None else None
            if name is not None and name in values:
                label, value = name, values[name]
            elif len(values) == 1:
                label, value = next(iter(values.items()))
            else:
                label, value = "total", sum(values.values())
            self.bar.set_postfix_str(f"{label} {float(value):.4g}", refresh=False)

        def logged(self, values: Mapping[str, LoggedValue]) -> None:
            """A logging step's values (`losses/...` among them)."""
            losses = {
                k.removeprefix("losses/"): float(v)
                for k, v in values.items()
                if k.startswith("losses/") and k != "losses/total"
            }
            self.losses(losses)

        def close(self) -> None:
            if self.bar is not None:
                self.bar.close()
                if self.bar in _ACTIVE:
                    _ACTIVE.remove(self.bar)
                self.bar = None


_BAR_CLASS: list[type] = []


def _bar_class() -> type:
    """tqdm's bar (`tqdm.auto`'s, for a notebook too), showing the wall clock's elapsed time and a rate measured
    without the compiling (left out of tqdm's own clock by `exclude`), unknown during the first call."""
    if not _BAR_CLASS:
        from tqdm.auto import tqdm

        class WallClockBar(tqdm):
            kd_excluded = 0.0  # seconds left out of tqdm's clock (compiling)
            kd_calls = 0  # calls that moved the bar

            @property
            def format_dict(self) -> dict[str, Any]:
                shown = super().format_dict
                if self.kd_calls < 2:
                    shown["rate"] = 0  # shown as "?": one call's time is mostly one-off work
                elif shown["rate"] is None and shown["elapsed"] > 0:
                    shown["rate"] = (shown["n"] - shown["initial"]) / shown["elapsed"]
                shown["elapsed"] += self.kd_excluded
                return shown

        _BAR_CLASS.append(WallClockBar)
    return _BAR_CLASS[0]
