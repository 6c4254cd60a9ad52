"""`kd.train.Hook`: your code at the start of a run, after each step, and at its end (Keras' and Lightning's
callbacks, the kd way: a plain dataclass in the config, shown by `kd-train inspect`, its values logged).

    @dataclasses.dataclass
    class StopBelow(kd.train.Hook):
        key: str = "losses/l2"
        threshold: float = 0.01

        def after_step(self, step, state, values):
            if values.get(self.key, math.inf) < self.threshold:
                return f"{self.key} fell below {self.threshold}"   # the run stops after this step

    trainer = kd.train.Trainer(..., hooks=[StopBelow()])   # a config: cfg.hooks = [my_hooks.StopBelow()]

Standard library only: the loop's side (`kd.train._user_hooks`) calls these methods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.runtime import TrainState
    from kd.train._trainer import Trainer
    from kd.train._types import LoggedValue

# Where `Hook.log` keeps the values of the current step until the loop writes them.
_LOGGED_ATTR = "_kd_hook_logged"


class Hook:
    """A base class for your own hooks: define the methods you need, the others do nothing.

    Usage: subclass it as a dataclass (its fields are the settings a config sets) and put an instance in
    `Trainer.hooks`. The loop calls, in this order:

    - `on_train_start(trainer, state)` once `train()` has its state (fresh, or restored from a checkpoint);
    - after a restore, `load_state_dict(saved)` with what `state_dict()` returned when that checkpoint was saved;
    - `after_step(step, state, values)` after each call of the loop (a call runs one or more updates and ends
      at every step that logs, evaluates or checkpoints), after the evaluators and before the checkpoint;
    - `on_train_end(trainer, state)` when the loop ends without an error: the last step, an early stop, or a
      SIGTERM's save.

    The hooks of `Trainer.hooks` run in their order, on every host (their values are the same on all).
    """

    def on_train_start(self, trainer: Trainer, state: TrainState) -> None:
        """Before the first step of this `train()`; `int(state.step)` is where it starts (0, or a resume's)."""

    def after_step(self, step: int, state: TrainState, values: Mapping[str, LoggedValue]) -> str | bool | None:
        """After the call that reached `step` (`state.step`).

        Args:
          step: the step the call reached.
          state: the train state after it.
          values: the values written at `step`, keyed as in metrics.jsonl: the training's (`losses/l2`,
            `metrics/...`, `schedules/...`, `perf/...`) on logging steps, each evaluator's (`val/losses/l2`)
            where it ran, and what the hooks before this one logged (`Hook.log`); empty on other steps.

        Returns:
          None (or False) to go on; a reason (a str) or True to stop the run after this step: the checkpoint
          hook saves it, the loop prints `early stopping at step N: <reason>`, and the run is complete.
        """
        return None

    def on_train_end(self, trainer: Trainer, state: TrainState) -> None:
        """After the loop's last call (`int(state.step)` is where it ended)."""

    def log(self, name: str, value: float) -> None:
        """Logs `name` (e.g. `"early_stopping/best"`) at the current step, from `after_step`: written (to
        metrics.jsonl, TensorBoard, the terminal) once `after_step` returns, and seen by the hooks after this one."""
        vars(self).setdefault(_LOGGED_ATTR, {})[name] = value

    def state_dict(self) -> dict[str, Any]:
        """What this hook must keep across a resume (JSON values), saved with every checkpoint; {} (the default)
        keeps nothing."""
        return {}

    def load_state_dict(self, saved: Mapping[str, Any]) -> None:
        """Takes back what `state_dict()` returned when the checkpoint the run resumes from was saved."""

    @property
    def state_key(self) -> str:
        """The name its saved state and a stop it requests are filed under: its class name by default (a second
        hook of the same key gets `#2`, in the order of `Trainer.hooks`)."""
        return type(self).__name__


def take_logged(hook: object) -> dict[str, float]:
    """The values `hook.log` collected since the last call, emptied."""
    return vars(hook).pop(_LOGGED_ATTR, {}) if hasattr(hook, "__dict__") else {}


def hook_keys(hooks: Sequence[object]) -> list[str]:
    """Each hook's `state_key` (its class name for an object that is not a `Hook`), unique: `["A", "A#2"]`."""
    keys: list[str] = []
    seen: dict[str, int] = {}
    for hook in hooks:
        key = str(getattr(hook, "state_key", type(hook).__name__))
        seen[key] = seen.get(key, 0) + 1
        keys.append(key if seen[key] == 1 else f"{key}#{seen[key]}")
    return keys
