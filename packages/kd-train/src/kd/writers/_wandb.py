"""`WandbWriter`: the run in Weights & Biases (the `kd-train[wandb]` extra): config, scalars, summaries.

    cfg.writer = kd.writers.MultiWriter(writers=[kd.writers.KDMetricWriter(), kd.writers.WandbWriter(project="digits")])
    # or, without editing the config: kd-train --cfg=... --cfg.workdir=/runs/a --track=wandb

wandb is imported when the writer is made, never by `import kd`.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import string
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from kd.writers._tracker import Summary, TrackerWriter, format_path, import_extra, unreachable

STEP = "step"
"""The metric every value is plotted against: the training step (W&B's own `_step` counts `log` calls)."""


def import_wandb() -> Any:
    return import_extra("wandb", "WandbWriter", "wandb")


@dataclasses.dataclass(kw_only=True)
class WandbWriter(TrackerWriter):
    """Sends the run to Weights & Biases: the config (one entry per konfig path, `model.layers[0].features`),
    the scalars at their training step (W&B's x-axis `step`), the summaries as W&B media, the evaluators'
    values under their names (`val/losses/total`).

    Usage: `kd.writers.MultiWriter(writers=[kd.writers.KDMetricWriter(), kd.writers.WandbWriter(project="p")])`,
    or `kd-train ... --track=wandb` beside the default writers.

    Summaries: images as `wandb.Image` (a batch tiled into one image, as in TensorBoard), histograms as
    `wandb.Histogram`, texts as a one-column `wandb.Table`, point clouds as `wandb.Object3D`.

    The W&B files go to `<workdir>/wandb/` (W&B's default folder without a workdir). A resume continues the
    W&B run whose id `<workdir>/wandb_run.json` holds, without sending a step twice. W&B that cannot be
    reached gets one warning and the run is written offline to `<workdir>/wandb/offline-run-*` instead, for
    `wandb sync` to upload later: a server that refuses connections (tried for 5 s first) under the run's
    own id; one that fails to start the run (no API key, `init_timeout` passed) under a new id, as W&B
    holds the failed one. With `WANDB_MODE=offline` (or `mode="offline"`) nothing goes over the network.

    Attributes (and those of `TrackerWriter`: project, name, group, tags, workdir):
      entity: the W&B team or user; None: the API key's default.
      mode: "online", "offline" or "disabled"; None: `WANDB_MODE`, else online.
      init_timeout: seconds `wandb.init` may wait for the server; None: W&B's own (`WANDB_INIT_TIMEOUT`, 90).
      settings: more `wandb.Settings` fields, e.g. `{"console": "off"}`.
    """

    TRACKER = "W&B"
    RUN_FILE = "wandb_run.json"
    FLAG = "wandb"
    PROJECT_ENV = ("WANDB_PROJECT",)

    entity: str | None = None
    mode: str | None = None
    init_timeout: float | None = None
    settings: Mapping[str, Any] | None = None

    _run: Any = dataclasses.field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in (None, "online", "offline", "disabled"):
            raise ValueError(
                f"WandbWriter.mode: expected 'online', 'offline', 'disabled' or None, found {self.mode!r}"
            )
        if self.init_timeout is not None and not (
            isinstance(self.init_timeout, (int, float)) and self.init_timeout > 0
        ):
            raise ValueError(
                f"WandbWriter.init_timeout: expected a number of seconds > 0 or None, found {self.init_timeout!r}"
            )
        if self.settings is not None and not isinstance(self.settings, Mapping):
            raise TypeError(
                f"WandbWriter.settings: expected a mapping of wandb.Settings fields, found {self.settings!r}"
            )
        import_wandb()  # fails when the run is configured, not at its first logging step

    def _open(
        self, run_id: str | None, flat_config: dict[tuple[Any, ...], Any] | None, config_json: str | None
    ) -> str:
        wandb = import_wandb()
        config = None if flat_config is None else {format_path(k): v for k, v in flat_config.items()}
        # `create_new`: each writer holds its own run, several may be open in one process (a sweep's items).
        options = {"reinit": "create_new", **dict(self.settings or {})}
        if self.init_timeout is not None:
            options["init_timeout"] = float(self.init_timeout)
        kwargs = {
            "project": self.project,
            "entity": self.entity,
            "name": self.run_name(),
            "group": self.group,
            "tags": list(self.run_tags()) or None,
            "dir": self.local_workdir(),
            "id": run_id or _new_id(),  # known before W&B answers: the offline fallback keeps it
            "resume": "allow" if run_id is not None else None,
            "config": config if run_id is None else None,
        }
        mode = self.mode or os.environ.get("WANDB_MODE") or "online"
        if kwargs["dir"] is not None:
            os.makedirs(kwargs["dir"], exist_ok=True)
        problem = None
        if mode == "online":
            base_url = options.get("base_url") or os.environ.get("WANDB_BASE_URL") or "https://api.wandb.ai"
            problem = unreachable(str(base_url), timeout=5.0)  # W&B itself retries for `init_timeout`
        run = None
        if problem is None:
            try:
                run = wandb.init(mode=self.mode, settings=wandb.Settings(**options), **kwargs)
            except Exception as e:
                if mode != "online":
                    raise
                problem = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
                kwargs["id"] = _new_id()  # the failed start holds its id in W&B's service process
        if run is None:
            run = wandb.init(
                mode="offline", settings=wandb.Settings(**options), **{**kwargs, "resume": "allow"}
            )
            where = os.path.join(kwargs["dir"] or os.getcwd(), "wandb", f"offline-run-*-{run.id}")
            warnings.warn(
                f"WandbWriter: W&B cannot be reached ({problem}); the run is written offline instead, to "
                f"{where}: upload it with `wandb sync {where}` once W&B can be reached.",
                RuntimeWarning,
                stacklevel=5,
            )
        self._run = run
        if run_id is not None and config is not None:  # a continued run: the config as this invocation has it
            run.config.update(config, allow_val_change=True)
        run.define_metric(STEP)
        run.define_metric("*", step_metric=STEP, step_sync=True)
        return str(run.id)

    def _send_scalars(self, step: int, values: dict[str, float]) -> None:
        self._run.log({STEP: step, **values})

    def _send_summaries(self, step: int, summaries: dict[str, Summary]) -> None:
        wandb = import_wandb()
        row: dict[str, Any] = {STEP: step}
        for name, summary in summaries.items():
            row[name] = _media(wandb, summary)
        self._run.log(row)

    def _send_config(self, flat_config: dict[tuple[Any, ...], Any], config_json: str) -> None:
        self._run.config.update({format_path(k): v for k, v in flat_config.items()}, allow_val_change=True)

    def _finish(self, failed: bool) -> None:
        run, self._run = self._run, None
        if run is not None:
            run.finish(exit_code=1 if failed else 0)


def _new_id() -> str:
    """A W&B run id: 8 characters of [a-z0-9], as W&B makes them."""
    alphabet = string.ascii_lowercase + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(8))


def _media(wandb: Any, summary: Summary) -> Any:
    if summary.kind == "image":
        image = summary.data[..., 0] if summary.data.shape[-1] == 1 else summary.data  # grey: (h, w)
        return wandb.Image(image)
    if summary.kind == "histogram":
        bins = max(1, min(int(summary.num_buckets), 512))  # W&B's limit
        return wandb.Histogram(np_histogram=np.histogram(summary.data, bins=bins))
    if summary.kind == "text":
        return wandb.Table(columns=["text"], data=[[summary.data]])
    if summary.kind == "texts":
        return wandb.Table(columns=["text"], data=[[t] for t in summary.data])
    if summary.kind == "points":
        points = summary.data if summary.colors is None else np.concatenate([summary.data, summary.colors], 1)
        return wandb.Object3D(points)
    return summary.data  # a scalar
