"""`AutoState`: a metric state declared by its fields; `merge`, `finalize` and `compute` follow from them.

@kd.metrics.state_dataclass  # with @flax.struct.dataclass, mark static fields kd.metrics.static_field()
class ErrorState(kd.metrics.AutoState):
    num_images: int = 4  # static: checked equal on merge
    total: jax.Array = kd.metrics.sum_field()
    errors: jax.Array = kd.metrics.concat_field()
    images: jax.Array = kd.metrics.truncate_field(num_field="num_images")

ErrorState(total=t0, errors=e0, images=x0).merge(ErrorState.empty()).compute().errors
"""

from __future__ import annotations

import abc
import dataclasses
import types
from collections.abc import Callable
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import kontext
import numpy as np

from . import _errors, _state
from ._state import EMPTY

_AutoT = TypeVar("_AutoT", bound="AutoState")

_MERGER_KEY = "kd_field_merger"


class AutoStateOutput(types.SimpleNamespace):
    """What `AutoState.compute()` gives by default: the finalized data fields as attributes."""


@_state.state_dataclass
class AutoState(_state.State):
    """A state whose data fields say how they merge; every other field is static.

    Usage: subclass, declare data fields with `sum_field`, `min_field`, `max_field`,
    `concat_field`, `truncate_field` or `state_field`, decorate with `@flax.struct.dataclass`
    or `@kd.metrics.state_dataclass`, and override `compute` when the value is not the fields.

    Fields declared otherwise (`num_images: int = 4`) are static: `merge` checks them equal
    (`EMPTY` matches anything) and keeps them. Under `@kd.metrics.state_dataclass` they are also static
    for JAX; `@flax.struct.dataclass` makes them pytree leaves unless declared with
    `kd.metrics.static_field(default=...)` (as in Kauldron: a `str` there fails leaving `jit`). `empty()` sets every field to `EMPTY`.
    Fields may hold `None` (nothing given); merging `None` with a value raises `ValueError`.
    Concatenated and truncated fields are moved to the host by `merge`, so merge those outside
    `jit`; sums, minima and maxima stay on the device.

    `compute()` returns an `AutoStateOutput` namespace of the finalized data fields (numpy
    arrays; `state_field`s computed).
    """

    _kd_fields_static_by_default = True

    @classmethod
    def empty(cls: type[_AutoT]) -> _AutoT:
        return cls(**{f.name: EMPTY for f in dataclasses.fields(cls)})  # type: ignore[arg-type]

    def merge(self: _AutoT, other: _AutoT) -> _AutoT:
        static = {
            f.name: _merge_static(getattr(self, f.name), getattr(other, f.name), f.name, type(self).__name__)
            for f in dataclasses.fields(self)
            if _merger(f) is None
        }
        resolved = dataclasses.replace(self, **static)
        merged = {
            f.name: merger.merge(getattr(self, f.name), getattr(other, f.name), resolved, f.name)
            for f in dataclasses.fields(self)
            if (merger := _merger(f)) is not None
        }
        return dataclasses.replace(resolved, **merged)

    def finalize(self: _AutoT) -> _AutoT:
        """Each data field in its final form: numpy arrays, concatenations joined, truncations cut."""
        final = {
            f.name: merger.finalize(getattr(self, f.name), self)
            for f in dataclasses.fields(self)
            if (merger := _merger(f)) is not None
        }
        return dataclasses.replace(self, **final)

    def compute(self) -> Any:
        final = self.finalize()
        values = {}
        for f in dataclasses.fields(final):
            if _merger(f) is not None:
                value = getattr(final, f.name)
                values[f.name] = value.compute() if isinstance(value, _state.State) else value
        return AutoStateOutput(**values)


def _merger(field: dataclasses.Field[Any]) -> _FieldMerger | None:
    return field.metadata.get(_MERGER_KEY)


def _merge_static(a: Any, b: Any, name: str, owner: str) -> Any:
    if a is EMPTY:
        return b
    if b is EMPTY or a is b:
        return a
    if a != b:
        raise _errors.StateMergeError(
            f"{owner}: cannot merge states with a different static field {name!r}: {a!r} != {b!r}."
        )
    return a


def _data_field(merger: _FieldMerger, default: Any, kwargs: dict[str, Any]) -> Any:
    metadata = {**kwargs.pop("metadata", {}), "pytree_node": True, _MERGER_KEY: merger}
    return dataclasses.field(default=default, metadata=metadata, **kwargs)


def sum_field(*, default: Any = dataclasses.MISSING, **kwargs: Any) -> Any:
    """An `AutoState` data field merged by elementwise `a + b` (arrays or pytrees of the same shapes).

    Usage: `total: jax.Array = kd.metrics.sum_field()`.
    """
    return _data_field(_Reduce(op=jnp.add, verb="sum"), default, kwargs)


def min_field(*, default: Any = dataclasses.MISSING, **kwargs: Any) -> Any:
    """An `AutoState` data field merged by elementwise minimum.

    Usage: `lowest: jax.Array = kd.metrics.min_field()`.
    """
    return _data_field(_Reduce(op=jnp.minimum, verb="take the minimum of"), default, kwargs)


def max_field(*, default: Any = dataclasses.MISSING, **kwargs: Any) -> Any:
    """An `AutoState` data field merged by elementwise maximum.

    Usage: `highest: jax.Array = kd.metrics.max_field()`.
    """
    return _data_field(_Reduce(op=jnp.maximum, verb="take the maximum of"), default, kwargs)


def concat_field(*, axis: int = 0, default: Any = dataclasses.MISSING, **kwargs: Any) -> Any:
    """An `AutoState` data field whose values are all kept and joined along `axis` on `finalize`.

    Usage: `tokens: jax.Array = kd.metrics.concat_field(axis=1)`.

    `merge` moves the values to the host (a tuple of numpy arrays per leaf), so device memory
    does not grow; it must run outside `jit`.
    """
    return _data_field(_Concat(axis=axis), default, kwargs)


def truncate_field(
    *, num_field: str, axis: int | None = 0, default: Any = dataclasses.MISSING, **kwargs: Any
) -> Any:
    """An `AutoState` data field keeping the first `num` entries along `axis` (e.g. a few images).

    Usage: `images: jax.Array = kd.metrics.truncate_field(num_field="num_images")`.

    `num_field` is a path into the state giving `num` (`"num_images"`, `"parent.num_images"`).
    Values are moved to the host by `merge` (outside `jit`) and cut by `merge` and `finalize`.
    """
    return _data_field(_Truncate(num_field=num_field, axis=axis), default, kwargs)


def state_field(*, default: Any = dataclasses.MISSING, **kwargs: Any) -> Any:
    """An `AutoState` data field holding another `State`, merged by its own `merge`.

    Usage: `accuracy: kd.metrics.AverageState = kd.metrics.state_field()`; `compute()`
    gives that state's `compute()`.
    """
    return _data_field(_MergeStates(), default, kwargs)


class _FieldMerger(abc.ABC):
    """How one data field merges, and its final form."""

    @abc.abstractmethod
    def merge(self, a: Any, b: Any, state: AutoState, name: str) -> Any: ...

    def finalize(self, value: Any, state: AutoState) -> Any:
        del state
        if value is EMPTY or value is None:
            return None
        return jax.tree.map(np.asarray, value)


def _empty_or_none(a: Any, b: Any, name: str, verb: str, owner: str) -> tuple[bool, Any]:
    """`(True, result)` when one side is `EMPTY` or `None`; raises for `None` with a value."""
    if a is EMPTY:
        return True, b
    if b is EMPTY:
        return True, a
    if a is None or b is None:
        if a is None and b is None:
            return True, None
        raise ValueError(
            f"{owner}.{name}: Cannot {verb} None and non-None values: one state left the field unset "
            "(None) and the other set it. Set the field in every state, or in none."
        )
    return False, None


def _reject_tracers(owner: str, *values: Any) -> None:
    if any(isinstance(x, jax.core.Tracer) for v in values for x in jax.tree.leaves(v)):
        raise RuntimeError(
            f"{owner}.merge was called on traced values (inside jit): its concat / truncate fields "
            "collect on the host. Merge these states outside jit (after jax.device_get)."
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Reduce(_FieldMerger):
    op: Callable[[Any, Any], Any]
    verb: str

    def merge(self, a: Any, b: Any, state: AutoState, name: str) -> Any:
        done, result = _empty_or_none(a, b, name, self.verb, type(state).__name__)
        return result if done else jax.tree.map(self.op, a, b)


class _Collected(tuple):
    """The values of a concat field gathered so far (host arrays), joined on `finalize`."""


def _is_collected_leaf(x: Any) -> bool:
    return isinstance(x, _Collected) or not isinstance(x, (dict, list, tuple)) or _is_array(x)


def _is_array(x: Any) -> bool:
    return isinstance(x, (np.ndarray, jax.Array, np.generic))


def _as_collected(x: Any) -> _Collected:
    return x if isinstance(x, _Collected) else _Collected((np.asarray(x),))


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Concat(_FieldMerger):
    axis: int = 0

    def merge(self, a: Any, b: Any, state: AutoState, name: str) -> Any:
        owner = type(state).__name__
        _reject_tracers(owner, a, b)
        done, result = _empty_or_none(a, b, name, "concatenate", owner)
        if done:  # The other side as collected (on the host), as after any merge.
            return (
                result
                if result is EMPTY or result is None
                else jax.tree.map(_as_collected, result, is_leaf=_is_collected_leaf)
            )
        a = jax.tree.map(_as_collected, a, is_leaf=_is_collected_leaf)
        b = jax.tree.map(_as_collected, b, is_leaf=_is_collected_leaf)
        return jax.tree.map(lambda x, y: _Collected(x + y), a, b, is_leaf=_is_collected_leaf)

    def finalize(self, value: Any, state: AutoState) -> Any:
        if value is EMPTY or value is None:
            return None
        value = jax.tree.map(_as_collected, value, is_leaf=_is_collected_leaf)
        return jax.tree.map(
            lambda parts: np.concatenate(parts, axis=self.axis), value, is_leaf=_is_collected_leaf
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Truncate(_FieldMerger):
    num_field: str
    axis: int | None = 0

    def _num(self, state: AutoState) -> int:
        try:
            num = kontext.get_by_path(state, self.num_field)
        except (KeyError, AttributeError) as e:
            raise ValueError(
                f"{type(state).__name__}: truncate_field(num_field={self.num_field!r}) names no field of "
                "the state (use a static field such as num_images, or a path like 'parent.num_images')."
            ) from e
        if num is EMPTY:
            raise ValueError(
                f"{type(state).__name__}: the field {self.num_field!r} giving the number of entries to keep "
                "is EMPTY on both states; set it on at least one of them."
            )
        return int(num)

    def _cut(self, x: Any, num: int) -> Any:
        if x is EMPTY or x is None:
            return x
        axis = 0 if self.axis is None else self.axis
        axis = axis % np.ndim(x)
        return np.asarray(x[(slice(None),) * axis + (slice(None, num),)])

    def merge(self, a: Any, b: Any, state: AutoState, name: str) -> Any:
        owner = type(state).__name__
        _reject_tracers(owner, a, b)
        if all(v is EMPTY or v is None for v in (a, b)):
            return b  # Two empty states (an evaluation of no batch): nothing to cut, no count needed.
        num = self._num(state)
        a, b = self._cut(a, num), self._cut(b, num)
        done, result = _empty_or_none(a, b, name, "concatenate (& truncate)", owner)
        if done:
            return result
        axis = 0 if self.axis is None else self.axis
        if np.shape(a)[axis] < num:
            a = np.concatenate([a, b], axis=axis)
        return self._cut(a, num)

    def finalize(self, value: Any, state: AutoState) -> Any:
        if value is EMPTY or value is None:
            return None
        return self._cut(value, self._num(state))


@dataclasses.dataclass(frozen=True, kw_only=True)
class _MergeStates(_FieldMerger):
    def merge(self, a: Any, b: Any, state: AutoState, name: str) -> Any:
        done, result = _empty_or_none(a, b, name, "merge", type(state).__name__)
        return result if done else a.merge(b)

    def finalize(self, value: Any, state: AutoState) -> Any:
        if value is EMPTY or value is None:
            return None
        return value.finalize()
