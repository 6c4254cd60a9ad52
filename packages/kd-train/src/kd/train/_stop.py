"""`StopRequest`: a hook's request to end the run after a step, and how the run remembers it.

    request = StopRequest(step=400, reason="val/losses/l2 did not improve ...", hook="EarlyStopping[val/losses/l2]")
    request.line()               # 'early stopping at step 400: val/losses/l2 did not improve ...'
    StopRequest.from_json(request.as_json()) == request

The loop prints `line()`; the checkpoint of that step keeps `as_json()` in its info and `DONE` records it, so a
second `train()` (or `kd-train`) in the workdir knows the run is complete. Standard library only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping


@dataclasses.dataclass(frozen=True)
class StopRequest:
    """A run stopped before its last step at a hook's request (`kd.train.Hook.after_step` returned a reason).

    Attributes:
      step: `state.step` after the call the run stopped after (its checkpoint is saved).
      reason: what the hook said, e.g. `"val/losses/l2 did not improve by min_delta=0 for 3 checks (best 0.12 at
        step 400)"`.
      hook: the hook's key (`kd.train.Hook.state_key`, e.g. `"EarlyStopping[val/losses/l2]"`).
    """

    step: int
    reason: str
    hook: str

    def line(self) -> str:
        """The one line the loop prints: `early stopping at step 400: <reason>`."""
        return f"early stopping at step {self.step}: {self.reason}"

    def as_json(self) -> dict[str, int | str]:
        return {"step": self.step, "reason": self.reason, "hook": self.hook}

    @classmethod
    def from_json(cls, record: object) -> StopRequest | None:
        """The request `as_json()` wrote; None for anything else (an older record, a damaged one)."""
        if not isinstance(record, Mapping):
            return None
        step, reason, hook = record.get("step"), record.get("reason"), record.get("hook")
        if not (isinstance(step, int) and isinstance(reason, str) and isinstance(hook, str)):
            return None
        return cls(step=step, reason=reason, hook=hook)
