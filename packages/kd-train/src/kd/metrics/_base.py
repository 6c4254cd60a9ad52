"""`Metric`: a frozen config object with `kontext.Key` fields and a `get_state(**inputs)` method.

metric = kd.metrics.Accuracy(logits="preds.logits", labels="batch.label")
state = metric.get_state_from_context(context)  # inside the jitted step
value = jax.device_get(state.merge(other)).compute()  # on the host
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any

import kontext

from . import _state


@dataclasses.dataclass(frozen=True, kw_only=True)
class Metric(abc.ABC):
    """Base of metrics, losses and summaries.

    Usage: `kd.metrics.Norm(tensor="grads")(tensor=x)` computes a value directly.

    A subclass is a frozen keyword-only dataclass whose `kontext.Key` fields name paths in the
    context (`logits: kontext.Key = kontext.REQUIRED`) and whose `get_state` takes arguments of
    the same names and returns a `kd.metrics.State`. `get_state` runs inside `jax.jit` on traced
    arrays; the state's `compute()` runs on the host after `jax.device_get`.
    """

    @abc.abstractmethod
    def get_state(self, **inputs: Any) -> _state.State:
        """The state of this metric for one batch of inputs (called inside `jit`)."""

    def get_state_from_context(self, context: Any) -> _state.State:
        """`get_state` with its arguments looked up in `context` by this metric's keys.

        Raises the kontext errors unchanged: `kontext.UnresolvedKeysError` for a missing path,
        `kontext.RequiredKeyError` for an unset key, `kontext.KeySignatureError` for keys that
        do not match `get_state`.
        """
        kwargs = kontext.resolve_from_keyed_obj(context, self, func=self.get_state)
        return self.get_state(**kwargs)

    def empty(self) -> _state.State:
        """A state that merges as a no-op (`EmptyState`)."""
        return _state.EmptyState()

    def __call__(self, *, context: Any = None, **inputs: Any) -> Any:
        """`get_state(**inputs).compute()`, or from a context: `metric(context=ctx)`."""
        if context is not None:
            if inputs:
                raise TypeError(
                    f"{type(self).__name__}: pass either context= or the inputs by name, "
                    f"not both (got context and {sorted(inputs)})."
                )
            return self.get_state_from_context(context).compute()
        return self.get_state(**inputs).compute()


@dataclasses.dataclass(frozen=True, kw_only=True)
class NoopMetric(Metric):
    """A metric that does nothing (its state is an `EmptyState`): replaces a metric in a sweep.

    Usage: `cfg.train_metrics["grad_norm"] = kd.metrics.NoopMetric()`.
    """

    def get_state(self, **inputs: Any) -> _state.EmptyState:
        del inputs
        return _state.EmptyState()
