"""`Metric`: a frozen config object with `kontext.Key` fields and a `get_state(**inputs)` method.

metric = kd.metrics.Accuracy(logits="preds.logits", labels="batch.label")
state = metric.get_state_from_context(context)  # inside the jitted step
value = jax.device_get(state.merge(other)).compute()  # on the host
"""

from __future__ import annotations

import abc
import dataclasses
import functools
from typing import Any, ClassVar

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

    A subclass may declare its state type as a nested class `State` (decorated with
    `@flax.struct.dataclass` or `@kd.metrics.state_dataclass`); `empty()` is then
    `State.empty()`. The states `get_state` and `empty` return get `parent=self`
    (unless already set, as by `TreeReduce`), so states of different metrics do not merge.
    """

    State: ClassVar[type[_state.State]] = _state.State

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        state_cls = cls.__dict__.get("State")
        if state_cls is not None and "__dataclass_fields__" not in state_cls.__dict__:
            raise TypeError(
                f"{cls.__name__}.State must be decorated with @flax.struct.dataclass (or "
                f"@kd.metrics.state_dataclass); {state_cls.__qualname__} is a plain class."
            )
        for name in ("get_state", "empty"):
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "_kd_links_parent", False):
                setattr(cls, name, _link_parent(method))

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
        """A state that merges as a no-op: `State.empty()` when the metric declares `State`, else an `EmptyState`."""
        state_cls = type(self).State
        if state_cls is _state.State:
            return _set_parent(_state.EmptyState(), self)
        return _set_parent(state_cls.empty(), self)

    def __call__(self, *, context: Any = None, **inputs: Any) -> Any:
        """`get_state(**inputs).compute()`, or from a context: `metric(context=ctx)`."""
        if context is not None:
            if inputs:
                raise TypeError(
                    f"{type(self).__name__}: pass either context= or the inputs by name, "
                    f"not both (got context and {sorted(inputs)})."
                )
            return self.get_state_from_context(context).finalize().compute()
        return self.get_state(**inputs).finalize().compute()


def _set_parent(state: Any, metric: Metric) -> Any:
    if dataclasses.is_dataclass(state) and getattr(state, "parent", None) is _state.EMPTY:
        return dataclasses.replace(state, parent=metric)
    return state


def _link_parent(method: Any) -> Any:
    """`method` returning its state with `parent` set to the metric (when still `EMPTY`)."""

    @functools.wraps(method)
    def linked(self: Metric, *args: Any, **kwargs: Any) -> Any:
        return _set_parent(method(self, *args, **kwargs), self)

    linked._kd_links_parent = True  # type: ignore[attr-defined]
    return linked


@dataclasses.dataclass(frozen=True, kw_only=True)
class NoopMetric(Metric):
    """A metric that does nothing (its state is an `EmptyState`): replaces a metric in a sweep.

    Usage: `cfg.train_metrics["grad_norm"] = kd.metrics.NoopMetric()`.
    """

    State = _state.EmptyState

    def get_state(self, **inputs: Any) -> _state.EmptyState:
        del inputs
        return _state.EmptyState()
