"""`KDMetricWriter`: the Trainer's default writers under Kauldron's name.

trainer = kd.train.Trainer(..., writer=kd.writers.KDMetricWriter())  # the same as leaving `writer` unset
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from kd.writers._base import JsonlWriter, MultiWriter, PrintWriter, Writer
from kd.writers._tensorboard import TensorBoardWriter


@dataclasses.dataclass(kw_only=True)
class KDMetricWriter(MultiWriter):
    """The Trainer's default writers (Kauldron's name): the terminal and, with a workdir, `metrics.jsonl`
    and TensorBoard event files.

    Usage: `kd.train.Trainer(..., writer=kd.writers.KDMetricWriter())` (the same as leaving `writer` unset);
    `writers=` replaces the set. `collection` is accepted for Kauldron configs (the Trainer names the
    folders: `train/`, `<evaluator>/`).
    """

    writers: Sequence[Writer] | None = None  # None: the default set (the Trainer chooses it for its workdir)
    collection: str | None = None

    def __post_init__(self) -> None:
        self.default_set = self.writers is None
        if self.writers is None:
            self.writers = [PrintWriter(), JsonlWriter(), TensorBoardWriter()]
