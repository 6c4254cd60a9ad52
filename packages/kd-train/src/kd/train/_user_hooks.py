"""`UserHooks`: the Trainer's `hooks` (`kd.train.Hook`) as one hook of the loop, run after the evaluators and
before the checkpoint hook, so that a stop they ask for is saved.

    user_hooks = UserHooks(trainer.hooks, writer=writer, watch=watch)
    user_hooks.start(trainer, state, saved=run_info["hooks"])   # on_train_start, then load_state_dict
    user_hooks.after(call, state, out)       # after_step with the step's values; a stop sets out.stop
    user_hooks.saved_states()                # {key: state_dict()}: saved in each checkpoint's info
    user_hooks.end(trainer, state)           # on_train_end
    user_hooks.stop_request                  # the `StopRequest` that ended the run early, or None
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from kd._interfaces import Writer
from kd._phase import during
from kd.runtime import TrainState
from kd.train._hook import Hook, hook_keys, take_logged
from kd.train._hooks import BaseHook
from kd.train._nonfinite import NonFiniteWatch
from kd.train._plan import Call
from kd.train._runner import CallOutput
from kd.train._stop import StopRequest
from kd.train._types import LoggedValue

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.train._trainer import Trainer

AfterStep = Callable[[int, TrainState, Mapping[str, LoggedValue]], object]
"""A hook's `after_step(step, state, values)`: None or False goes on, a reason (a str) or True stops."""


class UserHooks(BaseHook):
    """Calls each of `hooks` in order (see the module docstring); what they log goes to `writer`."""

    def __init__(
        self,
        hooks: Sequence[Hook | object],
        *,
        writer: Writer,
        watch: NonFiniteWatch,
        stop_request: StopRequest | None = None,
    ) -> None:
        self.hooks = tuple(hooks)
        self.keys = hook_keys(self.hooks)
        self.writer, self.watch = writer, watch
        self.stop_request = stop_request  # given: the run stopped early before (a restore of that step)
        # The hooks' `after_step`, looked up once (a hook need not have one): what runs after each call.
        self._after_steps: tuple[tuple[str, object, AfterStep], ...] = tuple(
            (key, hook, after_step)
            for key, hook in zip(self.keys, self.hooks, strict=True)
            if (after_step := getattr(hook, "after_step", None)) is not None
        )

    def start(self, trainer: Trainer, state: TrainState, *, saved: Mapping[str, Mapping[str, Any]]) -> None:
        """`on_train_start`, then (after a restore) `load_state_dict` with the state saved for the hook's key."""
        for key, hook in zip(self.keys, self.hooks, strict=True):
            with during(f"hook {key} (on_train_start)"):
                _call(hook, "on_train_start", trainer, state)
            if key in saved:
                with during(f"hook {key} (load_state_dict)"):
                    _call(hook, "load_state_dict", saved[key])

    def after(self, call: Call, state: TrainState, out: CallOutput) -> None:
        step = call.end
        values: dict[str, LoggedValue] = {**out.logged, **out.evaluated}
        seen = types.MappingProxyType(values)  # read-only for the hooks; a later hook sees an earlier one's logs
        logged: dict[str, float] = {}
        for key, hook, after_step in self._after_steps:
            with during(f"hook {key} after step {step}"):
                reason = _stop_reason(key, after_step(step, state, seen))
            new = take_logged(hook)
            values.update(new)
            logged.update(new)
            if reason is not None and self.stop_request is None:
                self.stop_request = StopRequest(step=step, reason=reason, hook=key)
        if logged:
            self.writer.write_scalars(step, logged)
        if self.stop_request is not None and self.stop_request.step == step:
            self.watch.check()  # nothing computed from a non-finite loss is saved (the watch raises first)
            out.stop = True
            out.stop_request = self.stop_request

    def saved_states(self) -> dict[str, dict[str, Any]]:
        """`{key: hook.state_dict()}` of the hooks that keep something (JSON, checked here to name the hook)."""
        states = {}
        for key, hook in zip(self.keys, self.hooks, strict=True):
            state_dict = getattr(hook, "state_dict", None)
            kept = state_dict() if state_dict is not None else None
            if not kept:
                continue
            try:
                json.dumps(kept)
            except (TypeError, ValueError) as e:
                raise TypeError(f"hook {key}: state_dict() must return a dict of JSON values; {e}") from None
            states[key] = dict(kept)
        return states

    def end(self, trainer: Trainer, state: TrainState) -> None:
        """`on_train_end` of each hook."""
        for key, hook in zip(self.keys, self.hooks, strict=True):
            with during(f"hook {key} (on_train_end)"):
                _call(hook, "on_train_end", trainer, state)


def _call(hook: object, method: str, *args: object) -> None:
    """`hook.<method>(*args)` when the hook has it (a hook need not subclass `kd.train.Hook`)."""
    function = getattr(hook, method, None)
    if function is not None:
        function(*args)


def _stop_reason(key: str, result: object) -> str | None:
    """What `after_step` returned, as a stop reason: None or False goes on; a str (the reason) or True stops."""
    if isinstance(result, str):
        return result or f"{key} asked to stop"
    if result is None:
        return None
    if isinstance(result, (bool, np.bool_)):
        return f"{key} asked to stop" if result else None
    raise TypeError(
        f"hook {key}: after_step returned {result!r}; expected None to go on, or a reason (a str) or True to "
        "stop the run"
    )
