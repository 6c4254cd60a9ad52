"""`Setup`: Kauldron's run-environment options on a Trainer (`cfg.setup`); `TqdmInfo` names the bar.

    cfg.setup = kd.train.Setup(tags=["baseline"], tqdm_info=kd.train.TqdmInfo(desc="pretrain"))

`eval_only` is set by `kd.train.Trainer.eval_only()`: the run evaluates a trained run's last checkpoint
instead of training.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, kw_only=True)
class TqdmInfo:
    """The progress bar's label (`desc`); `log_xm` is accepted for Kauldron configs (no XManager here)."""

    desc: str = "train"
    log_xm: bool = True


@dataclasses.dataclass(frozen=True, kw_only=True)
class Setup:
    """Run-environment options: `tags` (recorded in run.json; a "a,b" string is split), the bar's label,
    `eval_only` (see `Trainer.eval_only`), `preemptable_eval` (accepted; evaluations here are resumable).

    Usage: `kd.train.Trainer(..., setup=kd.train.Setup(tags="sweep,lr"))`.
    """

    tags: tuple[str, ...] | list[str] | str = ()
    tqdm_info: TqdmInfo = dataclasses.field(default_factory=TqdmInfo)
    eval_only: bool = False
    preemptable_eval: bool = False

    def __post_init__(self) -> None:
        tags = self.tags.split(",") if isinstance(self.tags, str) else self.tags
        object.__setattr__(self, "tags", tuple(t.strip() for t in tags if str(t).strip()))
