"""`leave_out_writers`: a run's config without the writers it names, for commands that only read the run.

    cfg = konfig.from_json((workdir / "config.json").read_text())
    leave_out_writers(cfg)   # cfg.writer = None; each evaluator's own `writer` removed
    trainer = konfig.resolve(cfg, allowed=...)   # kd's own writers, for the Trainer's workdir

A run's config.json is data, and may come from someone else: its writers could send to a server it chooses
(a W&B `base_url`, an MLflow `tracking_uri`) or write to a folder it chooses. `kd-train eval`, `kd-train
inspect` and `Trainer.eval_only` leave them out before resolving, so none of them is even built: the
Trainer then takes its default writers for the workdir the command chose.
"""

from __future__ import annotations

from typing import Any


def leave_out_writers(cfg: Any) -> None:
    """Sets the konfig config `cfg`'s `writer` to None (where it names one) and removes the `writer` of each
    evaluator in `cfg.evals` (they then take the Trainer's), in place, before `cfg` is resolved.

    Usage: `leave_out_writers(cfg); trainer = konfig.resolve(cfg)`.
    """
    if _has(cfg, "writer"):
        cfg["writer"] = None
    evals = cfg.get("evals") if _has(cfg, "evals") else None
    if callable(getattr(evals, "values", None)):
        for evaluator in evals.values():
            if _has(evaluator, "writer"):
                evaluator.pop("writer")


def _has(node: Any, key: str) -> bool:
    try:
        return callable(getattr(node, "keys", None)) and key in node.keys()
    except TypeError:
        return False
