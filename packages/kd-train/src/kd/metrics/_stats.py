"""Statistics of any value: `Average`, `Norm`, `Std`.

kd.metrics.Norm(tensor="preds.embedding")  # mean L2 norm of the embeddings (axis=-1)
"""

# ruff: noqa: UP037
from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any, Literal

import jax.numpy as jnp
import kontext
import ktyping
from ktyping import Bool, Float, Num

from . import _base, _errors, _state
from ._state import AverageState


@dataclasses.dataclass(frozen=True, kw_only=True)
class Average(_base.Metric):
    """The mean of every element of a value (a scalar such as `loss_total`, or a batch).

    Usage: `kd.metrics.Average(values="preds.confidence", mask="batch.is_valid")`.

    Attributes:
      values: key of the values (any shape).
      mask: optional key of weights aligned with the leading axes of the values
        (`(b,)` or `(b, 1)` for values `(b, n)`), or of the same shape.
    """

    values: kontext.Key = kontext.REQUIRED
    mask: kontext.Key | None = None

    State = AverageState

    @ktyping.typechecked
    def get_state(
        self,
        values: Num["..."] | Bool["..."],
        mask: Bool["..."] | Float["..."] | None = None,
    ) -> AverageState:
        return AverageState.from_values(jnp.asarray(values, jnp.float32), mask=mask)


@_state.state_dataclass
class NormState(AverageState):
    """The state of `Norm`: an average of norms, or (`aggregation="concat"`) a sum of `|x|**power`.

    Usage: `TreeReduce(metric=Norm(tensor="grads", aggregation_type="concat"))` merges the
    per-leaf states of a tree into the norm of all its values at once (the global norm).
    """

    aggregation: str = _state.static_field(default="average")
    power: float = _state.static_field(default=2.0)

    @classmethod
    def empty(cls, aggregation: str = "average", power: float = 2.0) -> NormState:
        return cls(
            total=jnp.zeros((), jnp.float32),
            count=jnp.zeros((), jnp.float32),
            aggregation=aggregation,
            power=power,
        )

    def merge(self, other: NormState) -> NormState:
        parent = self.parent if self.parent is not _state.EMPTY else other.parent
        if isinstance(parent, Norm) and parent.axis is None and parent.aggregation_type is None:
            warnings.warn(_AXIS_NONE_WARNING, UserWarning, stacklevel=3)
        if (self.aggregation, self.power) != (other.aggregation, other.power):
            raise _errors.StateMergeError(
                "Cannot merge Norm states of different settings: "
                f"aggregation={self.aggregation!r}, power={self.power} and "
                f"aggregation={other.aggregation!r}, power={other.power}."
            )
        return super().merge(other)

    def compute(self) -> Any:
        if self.aggregation == "concat":
            return self.total ** (1.0 / self.power)
        return super().compute()


_AXIS_NONE_WARNING = (
    "Merging states of Norm(axis=None) (in a TreeReduce, or across steps) averages the norms of the "
    "individual leaves; it is not the norm of all the leaves concatenated. Set "
    'aggregation_type="concat" for that norm, or aggregation_type="average" to keep the average '
    "without this warning."
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Norm(_base.Metric):
    """The norm of a tensor along `axis` (`jnp.linalg.norm`), averaged over the other axes (masked).

    Usage: `kd.metrics.Norm(tensor="preds.embedding")` is the mean L2 norm of the embeddings
    (one norm per vector along the last axis); `axis=None` gives the norm of the whole tensor.

    Under `TreeReduce` (and across batches) the states merge by `aggregation_type`: the average
    of all the norms of all the leaves (each norm counts once, so a leaf with more rows weighs
    more), or with "concat" the norm of all the values taken together.

    Attributes:
      tensor: key of the tensor.
      axis: the axis (int) or pair of axes (matrix norms) the norm is taken over, -1 by default
        (vector norms along the last axis); `None` takes the norm of the whole tensor, flattened
        (needed for scalars).
      ord: the order of the norm, as in `jnp.linalg.norm` (`None`: the 2-norm / Frobenius norm).
      mask: optional key of a mask broadcastable to the tensor's shape with the norm axes
        kept as size 1 (`(b, 1)` for a tensor `(b, n)` and axis=-1); masked-out norms are left
        out of the average.
      aggregation_type: how states merge: "average" averages the norms; "concat" gives the norm
        of all values taken together (`(sum |x|**ord) ** (1/ord)`, e.g. the global gradient
        norm). `None` (the default) averages, and warns when built into a `TreeReduce` with
        axis=None, as the average of the leaves' norms is rarely the norm wanted there.
    """

    tensor: kontext.Key = kontext.REQUIRED
    mask: kontext.Key | None = None
    axis: int | tuple[int, int] | None = -1
    ord: float | int | str | None = None
    aggregation_type: Literal["average", "concat"] | None = None

    State = NormState

    def __post_init__(self) -> None:
        if self.aggregation_type not in (None, "average", "concat"):
            raise ValueError(
                f"Norm: aggregation_type must be None, 'average' or 'concat', got {self.aggregation_type!r}."
            )
        if self.aggregation_type == "concat" and not _is_power_norm(self.ord):
            raise ValueError(
                "Norm: aggregation_type='concat' needs a finite positive `ord` (or None / 'fro' for the "
                f"2-norm), got ord={self.ord!r}."
            )

    @ktyping.typechecked
    def get_state(
        self,
        tensor: Float["*any"],
        mask: Bool["..."] | Float["..."] | None = None,
    ) -> NormState:
        if self.axis is None:
            flat = tensor.reshape(-1)
            norm = jnp.linalg.norm(flat, ord=self.ord).reshape((1,) * tensor.ndim)
        else:
            axes = (self.axis,) if isinstance(self.axis, int) else tuple(self.axis)
            if not all(-tensor.ndim <= a < tensor.ndim for a in axes):
                raise ValueError(
                    f"Norm: axis={self.axis!r} is out of range for a tensor of shape {tensor.shape}; "
                    "use axis=None for the norm of the whole tensor (e.g. of a scalar)."
                )
            norm = jnp.linalg.norm(tensor, ord=self.ord, axis=self.axis, keepdims=True)
        if mask is not None:
            try:
                mask = jnp.broadcast_to(mask, norm.shape)
            except ValueError:
                raise ValueError(
                    f"Norm: mask of shape {mask.shape} does not broadcast to the norms' shape {norm.shape} "
                    f"(tensor {tensor.shape} with axis={self.axis} kept as size 1)."
                ) from None
        aggregation, power = self._aggregation()
        values = norm if aggregation == "average" else norm**power
        return NormState.from_values(values, mask=mask, aggregation=aggregation, power=power)

    def _aggregation(self) -> tuple[str, float]:
        power = 2.0 if self.ord in (None, "fro") else float(self.ord)  # type: ignore[arg-type]
        return self.aggregation_type or "average", power

    def empty(self) -> NormState:
        aggregation, power = self._aggregation()
        return NormState.empty(aggregation=aggregation, power=power)


def _is_power_norm(ord_: Any) -> bool:
    if ord_ is None or ord_ == "fro":
        return True
    return isinstance(ord_, (int, float)) and not isinstance(ord_, bool) and 0 < ord_ < math.inf


@_state.state_dataclass
class StdState(_state.State):
    """The standard deviation of values: sums of values and of squares, and a count.

    Usage: `StdState.from_values(x).merge(StdState.from_values(y)).compute()`.
    """

    total: Any
    sum_of_squares: Any
    count: Any

    @classmethod
    def from_values(cls, values: Any, mask: Any = None) -> StdState:
        values = jnp.asarray(values, jnp.float32)
        mask = jnp.ones((), jnp.float32) if mask is None else jnp.asarray(mask, jnp.float32)
        mask = jnp.broadcast_to(mask, values.shape)
        return cls(
            total=(values * mask).sum(),
            sum_of_squares=(values**2 * mask).sum(),
            count=mask.sum(),
        )

    @classmethod
    def empty(cls) -> StdState:
        zero = jnp.zeros((), jnp.float32)
        return cls(total=zero, sum_of_squares=zero, count=zero)

    def merge(self, other: StdState) -> StdState:
        return dataclasses.replace(
            self,
            total=self.total + other.total,
            sum_of_squares=self.sum_of_squares + other.sum_of_squares,
            count=self.count + other.count,
        )

    def compute(self) -> Any:
        xp = _state.array_namespace(self.total, self.count)
        mean = _state.safe_divide(self.total, self.count)
        variance = _state.safe_divide(self.sum_of_squares, self.count) - mean**2
        return xp.sqrt(xp.maximum(variance, 0.0))  # Rounding can make it slightly negative.


@dataclasses.dataclass(frozen=True, kw_only=True)
class Std(_base.Metric):
    """The standard deviation of every element of a value (masked).

    Usage: `kd.metrics.Std(values="preds.logits")`.

    Attributes:
      values: key of the values.
      mask: optional key of a mask broadcastable to the values' shape.
    """

    values: kontext.Key = kontext.REQUIRED
    mask: kontext.Key | None = None

    State = StdState

    @ktyping.typechecked
    def get_state(
        self,
        values: Float["*any"],
        mask: Bool["*#any"] | Float["*#any"] | None = None,
    ) -> StdState:
        return StdState.from_values(values, mask=mask)


@dataclasses.dataclass(frozen=True, kw_only=True)
class SingleDimension(_base.Metric):
    """One entry of the last axis of a tensor (`tensor[..., index]`), averaged over everything else.

    Usage: `kd.metrics.SingleDimension(tensor="preds.xyz", index=2)` tracks the mean z coordinate.

    Attributes:
      tensor: key of the tensor `(*b, n)`.
      index: the entry of the last axis to keep (negative counts from the end); `None` averages
        the whole tensor.
    """

    tensor: kontext.Key = kontext.REQUIRED
    index: int | None = 0

    State = AverageState

    @ktyping.typechecked
    def get_state(self, tensor: Float["*any"]) -> AverageState:
        if self.index is not None:
            if tensor.ndim == 0 or not -tensor.shape[-1] <= self.index < tensor.shape[-1]:
                raise ValueError(
                    f"SingleDimension: index={self.index} is out of range for a tensor of shape "
                    f"{tuple(tensor.shape)} (it indexes the last axis); use index=None to average it all."
                )
            tensor = tensor[..., self.index]
        return AverageState.from_values(tensor)
