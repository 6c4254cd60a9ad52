"""Kauldron's `PatchConfig` (`kauldron.cli.patch_config`): a copy of a config made quick to try (one step, a
batch per device, no checkpoints, evaluators once at step 0), with every change listed by its path.

    patched, updates = kd.cli.PatchConfig(batch_size=8)(cfg)   # updates: {"train_ds.batch_size": 8, ...}
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import konfig

from . import cmd_utils as cu

BATCH_SIZE_DEVICES = "devices"
"""`PatchConfig(batch_size=BATCH_SIZE_DEVICES)`: as many examples as local devices."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class PatchConfig:
    """Patches a copy of a config so that a trial run is quick. Each field is a `--patch.<field>` flag."""

    stop_after_steps: int | None = 1
    """Stop training after this many steps; None leaves the config's."""
    batch_size: int | str | None = BATCH_SIZE_DEVICES
    """The batch size of the train and eval pipelines; `"devices"` gives one example per local device."""
    num_batches: int | None = 1
    """The evaluators' number of batches."""
    skip_eval: bool = False
    """No evaluators."""
    eval_run_once: bool = True
    """Each evaluator runs once, at step 0."""
    skip_checkpointer: bool = True
    """No checkpointer."""
    skip_metrics: bool = False
    """No train metrics."""
    skip_summaries: bool = False
    """No train summaries."""
    skip_flatboard: bool = True
    """No dashboard (`setup.add_flatboard`)."""
    profile: bool = False
    """Profile 17 steps with a `kd.inspect.Profiler`."""
    checkify: bool = False
    """`jax.experimental.checkify`'s checks, all of them."""

    def __call__(self, cfg: konfig.ConfigDict) -> tuple[konfig.ConfigDict, dict[str, Any]]:
        """A patched copy of `cfg`, and `{path: value}` of every change."""
        cfg = copy.deepcopy(cfg)
        updates: dict[str, Any] = {}
        if self.stop_after_steps is not None:
            updates |= cu.tracked_update(cfg, "stop_after_steps", self.stop_after_steps)
        updates |= self._patch_batch_size(cfg)
        if self.skip_eval:
            updates |= cu.tracked_update(cfg, "evals", {})
        else:
            updates |= self._patch_num_batches(cfg)
            updates |= self._patch_eval_run_once(cfg)
        if self.skip_checkpointer:
            updates |= cu.tracked_update(cfg, "checkpointer", None)
        if self.skip_metrics:
            updates |= cu.tracked_update(cfg, "train_metrics", {})
        if self.skip_summaries:
            updates |= cu.tracked_update(cfg, "train_summaries", {})
        if "setup" in cfg:
            updates |= cu.tracked_update(cfg, "setup.add_flatboard", not self.skip_flatboard)
        updates |= self._patch_profile(cfg)
        updates |= self._patch_checkify(cfg)
        return cfg, updates

    def _patch_batch_size(self, cfg: konfig.ConfigDict) -> dict[str, Any]:
        if self.batch_size is None:
            return {}
        batch_size = self.batch_size
        if batch_size == BATCH_SIZE_DEVICES:
            import jax

            batch_size = jax.local_device_count()
        updates = cu.tracked_update(cfg, "train_ds.**.batch_size", batch_size)
        updates |= cu.tracked_update(cfg, "train_ds.**.shuffle_buffer_size", 1)
        if "evals" in cfg:
            updates |= cu.tracked_update(cfg, "evals.**.batch_size", batch_size)
        return updates

    def _patch_num_batches(self, cfg: konfig.ConfigDict) -> dict[str, Any]:
        if not self.num_batches or "evals" not in cfg:
            return {}
        return cu.tracked_update(cfg, "evals.**.num_batches", self.num_batches)

    def _patch_eval_run_once(self, cfg: konfig.ConfigDict) -> dict[str, Any]:
        if not self.eval_run_once or "evals" not in cfg:
            return {}
        with konfig.imports(lazy=True):
            from kd import evals
        updates = {}
        for name, evaluator in cfg.evals.items():
            evaluator.run = evals.Once(0)
            updates[f"evals.{name}.run"] = evaluator.run
        return updates

    def _patch_profile(self, cfg: konfig.ConfigDict) -> dict[str, Any]:
        if not self.profile:
            return {}
        updates = {}
        if "profiler" not in cfg:
            with konfig.imports(lazy=True):
                from kd import inspect
            cfg.profiler = inspect.Profiler()
            updates["profiler"] = cfg.profiler
        updates |= cu.tracked_update(cfg, "stop_after_steps", 17)
        updates |= cu.tracked_update(cfg, "profiler.profile_duration_ms", None)
        updates |= cu.tracked_update(cfg, "profiler.on_colab", True)
        return updates

    def _patch_checkify(self, cfg: konfig.ConfigDict) -> dict[str, Any]:
        if not self.checkify:
            return {}
        with konfig.imports(lazy=True):
            from jax.experimental import checkify
        return cu.tracked_update(cfg, "checkify_error_categories", checkify.all_checks)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ConfigOrigin:
    """Where a config came from: its file, the command line's overrides, the patches."""

    filename: Any = None
    overrides: dict[str, Any] = dataclasses.field(default_factory=dict)
    patches: dict[str, Any] = dataclasses.field(default_factory=dict)

    def summary(self, include_patches: bool = True) -> str:
        """A few lines: the file, the overrides and (unless `include_patches=False`) the patches."""
        from etils import epy

        lines = [f"========= Config ({'patched' if include_patches else 'unpatched'}) ========="]
        if self.filename:
            lines.append(f"Filename: {self.filename}")
        if self.overrides:
            lines.append(f"Overrides:\n {epy.pretty_repr(self.overrides)}")
        if include_patches and self.patches:
            lines.append(f"Patches:\n {epy.pretty_repr(self.patches)}")
        return "\n".join(lines) + "\n"
