"""Kauldron's spellings of the checkpointer's calls, for code written against `kauldron.checkpoints`.

    ckpt.save(state, step=100, metrics={"eval": {"accuracy": np.float32(0.9)}})  # True when it saved
    state = ckpt.restore(state)  # the latest checkpoint, the state alone; donate=, noop_if_missing=
    tree = ckpt.restore(kd.ckpts.items.StandardCheckpointItem())  # the saved tree, without a template
    ckpt.delete(100); ckpt.item_metadata(-1)
    for step in ckpt.iter_new_checkpoints(timeout=600): ...

`KauldronCheckpointer` holds these methods, a base of `kd.ckpts.Checkpointer`, whose own module is kd's
API (`maybe_save(step, state=...)`, `restore_latest`, `restore(state, step=N)` -> `Restored`, `all_steps()`).
Kauldron's dotted `best_metric_path` (`"eval.accuracy"`) is read by `dotted_metric_name`. Kauldron's two
other spellings live with what they share: `maybe_save(state, step=step)` (`_base.saving_call`) and
`ckpt.all_steps` as a property (`_base.Steps`, a sequence that is also callable).
"""

from __future__ import annotations

import math
import time
from collections.abc import Container, Iterator, Mapping
from typing import Any

import jax

from kd.ckpts import _orbax, items

_LATEST = -1


def is_kauldron_restore(state: Any, *, step: int, noop_if_missing: bool, donate: bool) -> bool:
    """Whether a `restore` call is Kauldron's (the state alone comes back) rather than kd's (`Restored`):
    an item as the state (or no state), the latest step (-1), or an argument only Kauldron's form takes."""
    return items.is_checkpoint_item(state) or state is None or step == _LATEST or noop_if_missing or donate


def dotted_metric_name(path: str, names: Container[str]) -> str | None:
    """The logged name Kauldron's dotted `best_metric_path` stands for among `names`, None when none.

    `"eval.accuracy"` is `"eval/accuracy"`, or kd's `"eval/metrics/accuracy"` / `"eval/losses/accuracy"`.
    """
    slashed = path.replace(".", "/")
    head, _, rest = slashed.partition("/")
    for candidate in (slashed, f"{head}/metrics/{rest}", f"{head}/losses/{rest}"):
        if candidate in names:
            return candidate
    return None


class KauldronCheckpointer:
    """The calls of Kauldron's `Checkpointer` that kd spells differently: a base of kd's `Checkpointer`.

    Built from the Checkpointer's own parts: its orbax manager (`_manager`), `directory`, `read_only`,
    `_known_step`, `_read_step`, `_save`, `_on_schedule`, `restore_raw`, `reload` and `wait_until_finished`.
    """

    def save(
        self,
        state: Any,
        *,
        step: int,
        force: bool = False,
        metrics: Any = None,
        data_state: Mapping[str, Any] | None = None,
        info: Mapping[str, Any] | None = None,
    ) -> bool:
        """Kauldron's `ckpt.save(state, step=100)`: True when it saved.

        As in Kauldron (orbax), a step that `save_interval_steps` / `save_on_steps` does not choose is
        written only with `force=True`; unlike `maybe_save`, `never_save_step_zero` does not apply. A step
        already saved is skipped (False). `metrics` may hold numpy values (nested names are joined with
        "/"); `data_state` and `info` are kd's, as in `maybe_save`.
        """
        numbers = _flat_numbers(metrics) if metrics is not None else None
        step = int(step)
        return self._save(
            step,
            state,
            data_state=data_state,
            metrics=numbers,
            info=info,
            force=force,
            chosen=self._on_schedule(step),
            method="save",
        )

    def _restore_kauldron(self, state: Any, *, step: int, noop_if_missing: bool, donate: bool) -> Any:
        """Kauldron's `state = ckpt.restore(state)`: the restored state alone (see `Checkpointer.restore`).

        `step=-1` is the latest; a `kd.ckpts.items` item restores its parts (`StandardCheckpointItem()`
        itself, or no state, restores the saved tree without a template, as `restore_raw`).
        `noop_if_missing=True` returns `state` unchanged when there is no checkpoint at all; `donate=True`
        frees `state`'s device arrays before reading (Kauldron's default is True, kd's is False).
        """
        self.wait_until_finished()
        if not _orbax.steps(self._manager):
            if noop_if_missing:
                return state
            raise FileNotFoundError(
                f"Checkpointer.restore: no checkpoint in {self.directory}. Pass noop_if_missing=True to keep "
                "the state as it is, or use restore_latest(state) (None in a new workdir)."
            )
        step = self._absolute_step(step, "restore")
        if state is None or items.is_bare(state):
            return self.restore_raw(step=step)
        template, extras = items.split(state, method="restore")
        if donate and template is not None:
            given, template = template, jax.tree.map(_abstract, template)
            jax.tree.map(_release, given)
        restored, extra_values = self._read_step(template, step=step, extras=extras)
        return items.join(state, restored.state, extra_values)

    def _absolute_step(self, step: int, method: str) -> int:
        """`step`, or the latest step for -1; FileNotFoundError when there is no such checkpoint."""
        steps = _orbax.steps(self._manager)
        if int(step) == _LATEST and steps:
            return steps[-1]
        return self._known_step(step, method)

    def delete(self, step: int) -> None:
        """`ckpt.delete(100)`: removes that checkpoint (FileNotFoundError when it is not saved)."""
        if self.read_only:
            raise PermissionError(f"Checkpointer.delete(step={step}): this Checkpointer is read_only.")
        self.wait_until_finished()
        step = self._known_step(step, "delete")
        _orbax.delete(self._manager, step)
        self.__dict__.get("_metric_by_step", {}).pop(step, None)

    def item_metadata(self, step: int = _LATEST) -> dict[str, Any]:
        """`ckpt.item_metadata(100)`: `{"state": tree of array metadata (shape, dtype), ...}`; -1: the latest.

        Kauldron's returns orbax's metadata of its default item; kd's names each item of the step
        (`state`, and `data`, `info`, `digests` when saved).
        """
        self.wait_until_finished()
        step = self._absolute_step(step, "item_metadata")
        metadata = self._manager.item_metadata(step)
        return {name: metadata[name] for name in metadata.keys() if metadata[name] is not None}

    def iter_new_checkpoints(
        self,
        *,
        min_interval_secs: float = 0,
        seconds_to_sleep: float = 1,
        timeout: float | None = None,
        timeout_fn: Any = None,
    ) -> Iterator[int]:
        """`for step in ckpt.iter_new_checkpoints(timeout=600): evaluate(step)`: the newest step, as saves complete.

        As Kauldron's (orbax's `checkpoints_iterator`): yields the newest complete step already saved,
        then, each time a newer one is complete, that one (an evaluator keeps up with the newest: steps
        overtaken between two looks are skipped). A save still being written (orbax's temporary folder,
        or one its writer died in) is never yielded. Looks every `seconds_to_sleep`; yields at most once
        per `min_interval_secs`. Stops once `timeout` seconds pass without a newer step, unless
        `timeout_fn()` returns False (then it keeps waiting); with no timeout it waits forever. A
        `read_only` Checkpointer (the way to watch another process's run: it never removes that run's
        saves in progress) waits for the checkpoint folder to appear.
        """
        last: int | None = None
        last_yield = -math.inf
        while True:
            waited_since = time.monotonic()
            while True:
                steps = self._listed_steps()
                if steps and (last is None or steps[-1] > last):
                    break
                if timeout is not None and time.monotonic() - waited_since >= timeout:
                    if timeout_fn is None or timeout_fn():
                        return
                    waited_since = time.monotonic()
                time.sleep(seconds_to_sleep)
            pause = min_interval_secs - (time.monotonic() - last_yield)
            if pause > 0:
                time.sleep(pause)
                steps = self._listed_steps() or steps  # the newest once the pause is over
            last, last_yield = steps[-1], time.monotonic()
            yield last

    def _listed_steps(self) -> list[int]:
        """The complete steps on disk now; [] while a read_only Checkpointer's folder does not exist yet."""
        if "_manager" not in self.__dict__ and self.read_only and not self.directory.exists():
            return []
        self.reload()
        return _orbax.steps(self._manager)


def _flat_numbers(metrics: Any, prefix: str = "") -> dict[str, Any]:
    """Kauldron's nested metrics (`{"eval": {"accuracy": np.float32(0.9)}}`) as kd's `{"eval/accuracy": 0.9}`."""
    if not isinstance(metrics, Mapping):
        raise TypeError(f"Checkpointer.save(metrics=...): expected a dict, got {type(metrics).__name__}.")
    out: dict[str, Any] = {}
    for name, value in metrics.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping):
            out.update(_flat_numbers(value, key + "/"))
        else:
            out[key] = value
    return out


def _abstract(leaf: Any) -> Any:
    if isinstance(leaf, jax.Array):
        return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=leaf.sharding)
    return leaf


def _release(leaf: Any) -> None:
    """Frees a device array (Kauldron's `donate=True`: the restore does not hold two copies)."""
    if isinstance(leaf, jax.Array) and not leaf.is_deleted():
        leaf.delete()
