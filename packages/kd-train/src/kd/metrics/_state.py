"""Metric states: pytrees emitted inside `jit`, merged across steps, computed on the host.

    state = kd.metrics.AverageState.from_values(values, mask=mask)  # inside the train step
    state = state.merge(other_state)  # accumulate (in or out of jit)
    value = jax.device_get(state).compute()  # on the host: total / count

Every state is a frozen dataclass registered as a JAX pytree: its array fields are pytree
data, fields declared with `static_field` are static (part of the treedef, hashable).
Subclasses are declared with `@state_dataclass` (`@flax.struct.dataclass` works too).
"""

from __future__ import annotations

import abc
import dataclasses
import enum
import functools
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from . import _errors

_T = TypeVar("_T")
_StateT = TypeVar("_StateT", bound="State")


class _EmptyType(enum.Enum):
    """The type of `EMPTY` (an enum, so `Literal[_EmptyType.EMPTY]` type-checks)."""

    EMPTY = enum.auto()


EMPTY = _EmptyType.EMPTY
"""Marks a state field as not set yet: `State.parent` before `get_state` links it, every field of `AutoState.empty()`."""


def static_field(default: Any = dataclasses.MISSING, **kwargs: Any) -> Any:
    """A state field that is static pytree metadata (a config value), not an array.

    Usage: `keep_first: int = static_field(default=5)`.

    Static under `@state_dataclass` and under `@flax.struct.dataclass` alike.
    """
    metadata = {**kwargs.pop("metadata", {}), "static": True, "pytree_node": False}
    return dataclasses.field(default=default, metadata=metadata, **kwargs)


def is_static_field(field: dataclasses.Field[Any], static_by_default: bool = False) -> bool:
    """Whether `field` is static metadata: marked so, or (with `static_by_default`) not marked as data."""
    if field.metadata.get("static", False) or field.metadata.get("pytree_node", True) is False:
        return True
    return static_by_default and not field.metadata.get("pytree_node", False)


def state_dataclass(cls: type[_T]) -> type[_T]:
    """Makes `cls` a frozen keyword-only dataclass registered as a JAX pytree.

    Usage:

        @kd.metrics.state_dataclass
        class MaxState(kd.metrics.State):
            value: jax.Array

            def merge(self, other): return MaxState(value=jnp.maximum(self.value, other.value))
            def compute(self): return self.value

    Fields made with `static_field` (and `parent`) are static metadata; every other field is
    pytree data, except in an `AutoState`, whose data fields are the ones made by its field helpers.
    """
    cls = dataclasses.dataclass(frozen=True, kw_only=True, eq=False)(cls)
    by_default = getattr(cls, "_kd_fields_static_by_default", False)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    meta = [f.name for f in fields if is_static_field(f, by_default)]
    data = [f.name for f in fields if f.name not in meta]
    return jax.tree_util.register_dataclass(cls, data_fields=data, meta_fields=meta)


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class State(abc.ABC):
    """Base of metric states: `merge` accumulates two states, `compute` gives the final value.

    Usage: `total = state_a.merge(state_b).compute()`.

    The `merge` of every subclass is checked: merging with an `EmptyState` (on either side)
    returns the other state unchanged, and merging two states of different types, or emitted
    by different metrics (unequal `parent`s), raises `StateMergeError`, so `merge`
    implementations only see a state of their own type. The merged state keeps the parent.

    Attributes:
      parent: the metric that emitted this state (set by `Metric.get_state` and
        `Metric.empty`; `EMPTY` until then). Static: states of two metrics do not merge.
    """

    parent: Any = static_field(default=EMPTY)  # noqa: RUF009 (a dataclasses.field, not a value)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        merge = cls.__dict__.get("merge")
        if merge is not None and not getattr(merge, "_kd_checked_merge", False):
            cls.merge = _checked_merge(merge)  # type: ignore[method-assign]

    @abc.abstractmethod
    def merge(self: _StateT, other: _StateT) -> _StateT:
        """A new state accumulating `self` and `other` (pure; works in and out of `jit`)."""

    @abc.abstractmethod
    def compute(self) -> Any:
        """The final value (on host numpy arrays after `jax.device_get`, and inside `jit` where sensible)."""

    @classmethod
    def empty(cls: type[_StateT]) -> _StateT:
        """A state of this type that merges as a no-op (`s.merge(type(s).empty())` computes as `s`)."""
        raise NotImplementedError(
            f"{cls.__name__}.empty() is not defined: override the classmethod `empty` to return a "
            "state that merges as a no-op (e.g. zeros for sums), or subclass kd.metrics.AutoState."
        )

    def finalize(self: _StateT) -> _StateT:
        """This state made ready for `compute` on the host (e.g. collected arrays joined); here `self`."""
        return self

    @staticmethod
    def isinstance(obj: Any) -> bool:
        """Whether `obj` is a `State` (for `jax.tree.map(..., is_leaf=State.isinstance)`)."""
        return isinstance(obj, State)


def _checked_merge(merge: Any) -> Any:
    @functools.wraps(merge)
    def checked(self: State, other: State) -> State:
        if isinstance(other, EmptyState):
            return self
        if isinstance(self, EmptyState):
            return other
        if type(other) is not type(self):
            raise _errors.StateMergeError(
                f"Cannot merge a {type(self).__name__} with a {type(other).__name__}: "
                "only states of the same type (emitted by the same metric) merge."
            )
        parent, other_parent = getattr(self, "parent", EMPTY), getattr(other, "parent", EMPTY)
        if parent is EMPTY:
            parent = other_parent
        elif other_parent is not EMPTY and other_parent != parent:
            raise _errors.StateMergeError(
                f"Cannot merge {type(self).__name__} states from different metrics: {parent!r} and "
                f"{other_parent!r}. Each metric accumulates its own states (equal configs and keys)."
            )
        merged = merge(self, other)
        if parent is not EMPTY and getattr(merged, "parent", parent) is not parent:
            merged = dataclasses.replace(merged, parent=parent)
        return merged

    checked._kd_checked_merge = True  # type: ignore[attr-defined]
    return checked


@state_dataclass
class EmptyState(State):
    """A state holding nothing: the identity of `merge` (`EmptyState().merge(s) is s`).

    Usage: `SkipIfMissing` emits it when a key is missing; `compute()` returns `{}`, a metric
    with no values, which a writer flattening dict results writes as nothing.
    """

    @classmethod
    def empty(cls) -> EmptyState:
        return cls()

    def merge(self, other: State) -> State:
        return other

    def compute(self) -> dict[str, Any]:
        return {}


def is_host_array(x: Any) -> bool:
    """Whether `x` is a numpy array or scalar (not a JAX array or tracer)."""
    return isinstance(x, (np.ndarray, np.generic, int, float, bool))


def array_namespace(*xs: Any) -> Any:
    """`np` when every input is a host value, else `jnp` (so `compute` runs on the host and in `jit`)."""
    return np if all(is_host_array(x) for x in xs) else jnp


def safe_divide(total: Any, count: Any) -> Any:
    """`total / count`, and 0 where `count == 0`."""
    xp = array_namespace(total, count)
    nonzero = count != 0
    return xp.where(nonzero, total / xp.where(nonzero, count, 1), xp.zeros_like(total))


@state_dataclass
class AverageState(State):
    """The (masked) average of values: `compute()` is `total / count` (0 when `count == 0`).

    Usage: `AverageState.from_values(correct, mask=mask).compute()`.
    """

    total: Any
    count: Any

    @classmethod
    def from_values(cls: type[_T], values: Any, mask: Any = None, **static: Any) -> _T:
        """The average of every element of `values`, counting only those where `mask` is nonzero.

        `mask` is aligned with the *leading* axes of `values` (a per-example mask `(b,)` or
        `(b, 1)` applies to values `(b, n)`); it may also have the same shape as `values`.
        Extra keyword arguments set the static fields of a subclass.
        """
        values = jnp.asarray(values)
        if values.ndim == 0:
            values = values[None]
        if mask is None:
            total = values.sum()
            count = jnp.asarray(values.size, jnp.float32)
        else:
            mask = align_mask_leading(jnp.asarray(mask), values.shape)
            total = (values * mask).sum()
            count = jnp.broadcast_to(mask, values.shape).sum(dtype=jnp.float32)
        return cls(total=total, count=count, **static)  # type: ignore[call-arg]

    @classmethod
    def empty(cls: type[_T]) -> _T:
        return cls(total=jnp.zeros((), jnp.float32), count=jnp.zeros((), jnp.float32))  # type: ignore[call-arg]

    def merge(self, other: AverageState) -> AverageState:
        return dataclasses.replace(self, total=self.total + other.total, count=self.count + other.count)

    def compute(self) -> Any:
        return safe_divide(self.total, self.count)


def align_mask_leading(mask: Any, shape: tuple[int, ...]) -> Any:
    """`mask` with trailing axes added (or trailing size-1 axes dropped) to broadcast to `shape` from the left."""
    original = mask.shape
    while mask.ndim > len(shape) and mask.shape[-1] == 1:
        mask = mask[..., 0]
    mask = jnp.reshape(mask, mask.shape + (1,) * (len(shape) - mask.ndim))
    ok = mask.ndim == len(shape) and all(m in (1, s) for m, s in zip(mask.shape, shape))
    if not ok:
        raise ValueError(
            f"mask of shape {original} does not match values of shape {shape}: a mask must have the "
            "leading axes of the values (or size 1 there), e.g. (b,) or (b, 1) for values (b, n)."
        )
    return mask


@state_dataclass
class SumState(State):
    """A running sum: `compute()` is `total`.

    Usage: `SumState(total=jnp.sum(mask)).merge(other).compute()` counts examples.
    """

    total: Any

    @classmethod
    def empty(cls) -> SumState:
        return cls(total=jnp.zeros((), jnp.float32))

    def merge(self, other: SumState) -> SumState:
        return dataclasses.replace(self, total=self.total + other.total)

    def compute(self) -> Any:
        return self.total


def _data_fields(state: Any) -> list[str]:
    return [f.name for f in dataclasses.fields(state) if not is_static_field(f)]


def to_host(x: Any) -> Any:
    """`x` as a numpy array, or unchanged when it is a tracer (inside `jit`)."""
    return x if isinstance(x, jax.core.Tracer) else np.asarray(x)


class StateOutput(dict):
    """What collecting states compute: a dict whose values are also attributes (`out.images`)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no collected field {name!r}; the fields are {sorted(self)}.") from None


def _as_rows(x: Any) -> Any:
    """Scalars become one row, so every collected value concatenates along axis 0."""
    xp = array_namespace(x)
    x = xp.asarray(x)
    return x[None] if x.ndim == 0 else x


def _concat(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    a, b = _as_rows(a), _as_rows(b)
    return array_namespace(a, b).concatenate([a, b], axis=0)


@state_dataclass
class CollectingState(State):
    """Keeps every value: `merge` concatenates each array field along axis 0.

    Usage:

        @kd.metrics.state_dataclass
        class Collected(kd.metrics.CollectingState):
            labels: jax.Array | None = None
            logits: jax.Array | None = None

        Collected(labels=l0, logits=x0).merge(Collected(labels=l1, logits=x1)).compute()
        # -> {"labels": concat([l0, l1]), "logits": concat([x0, x1])}

    Data fields may hold arrays or pytrees of arrays (concatenated leaf by leaf); `None` means
    nothing collected yet. Memory grows with every merge: prefer `CollectFirstState` or a
    reducing state when the values need not all be kept.
    """

    @classmethod
    def empty(cls: type[_T]) -> _T:
        return cls(**{f.name: None for f in dataclasses.fields(cls) if not is_static_field(f)})  # type: ignore[arg-type]

    def merge(self, other: CollectingState) -> CollectingState:
        merged = {
            name: _tree_concat(getattr(self, name), getattr(other, name)) for name in _data_fields(self)
        }
        return dataclasses.replace(self, **merged)

    def compute(self) -> dict[str, Any]:
        """`{field name: concatenated values}` (scalars collected as rows); also attributes."""
        return StateOutput({name: jax.tree.map(_as_rows, getattr(self, name)) for name in _data_fields(self)})


def _tree_concat(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return jax.tree.map(_concat, a, b)


@state_dataclass
class CollectFirstState(State):
    """Keeps the first `keep_first` rows (axis 0) of each array field, across merges.

    Usage:

        @kd.metrics.state_dataclass
        class FirstImages(kd.metrics.CollectFirstState):
            images: jax.Array | None = None

        s = FirstImages(images=x0, keep_first=5).merge(FirstImages(images=x1, keep_first=5))
        s.compute()["images"].shape[0]  # -> min(5, len(x0) + len(x1))

    `keep_first` is static, so merging inside `jit` gives static shapes. Values are only
    truncated by `merge` and `compute`; metrics truncate what they emit themselves.
    """

    keep_first: int = static_field(default=1)

    @classmethod
    def empty(cls: type[_T]) -> _T:
        """A state with nothing collected: it merges with states keeping any number of rows."""
        return cls(**{f.name: None for f in dataclasses.fields(cls) if not is_static_field(f)})  # type: ignore[arg-type]

    def _is_empty(self) -> bool:
        return all(getattr(self, name) is None for name in _data_fields(self))

    def merge(self, other: CollectFirstState) -> CollectFirstState:
        if other._is_empty():
            return self
        if self._is_empty():
            return other
        if self.keep_first != other.keep_first:
            raise _errors.StateMergeError(
                f"Cannot merge {type(self).__name__} states keeping a different number of rows: "
                f"keep_first={self.keep_first} and keep_first={other.keep_first}."
            )
        merged = {
            name: _tree_concat_first(getattr(self, name), getattr(other, name), self.keep_first)
            for name in _data_fields(self)
        }
        return dataclasses.replace(self, **merged)

    def compute(self) -> dict[str, Any]:
        """`{field name: the first keep_first rows}` (numpy arrays outside `jit`); also attributes."""
        return StateOutput(
            {
                name: jax.tree.map(lambda x: to_host(_as_rows(x)[: self.keep_first]), getattr(self, name))
                for name in _data_fields(self)
            }
        )


def _tree_concat_first(a: Any, b: Any, keep: int) -> Any:
    if a is None:
        return None if b is None else jax.tree.map(lambda x: _as_rows(x)[:keep], b)
    if b is None:
        return jax.tree.map(lambda x: _as_rows(x)[:keep], a)

    def first(x: Any, y: Any) -> Any:
        x = _as_rows(x)
        if x.shape[0] >= keep:  # Shapes are static: this also holds under `jit`.
            return x[:keep]
        return _concat(x, _as_rows(y)[: keep - x.shape[0]])

    return jax.tree.map(first, a, b)
