"""`MixedPrecision`: the dtypes a model computes in, apart from the dtype its parameters are stored in.

    cfg.precision = "bfloat16"                     # or kd.train.MixedPrecision(compute_dtype="bfloat16")
    policy = as_precision(trainer.precision)       # MixedPrecision, or None (the model as written)
    preds = policy.cast_outputs(model(policy.cast_params(params), policy.cast_inputs(batch)))

As jmp's and Keras' mixed policies: the parameters and the optimizer state stay in their stored dtype (float32),
each forward pass (training and evaluation) reads the floating parameters and the floating batch cast to
`compute_dtype`, and the model's floating outputs reach the losses and metrics cast to `output_dtype`. The
casts are differentiable, so the gradients arrive in the parameters' dtype.
"""

from __future__ import annotations

import dataclasses
import difflib

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike, DTypeLike

from kd._interfaces import PyTree
from kd.runtime import ConfigError

FLOAT_DTYPES = ("bfloat16", "float16", "float32", "float64")
_DTYPE_ALIASES = {
    "bf16": "bfloat16",
    "fp16": "float16",
    "f16": "float16",
    "fp32": "float32",
    "f32": "float32",
}


@dataclasses.dataclass(frozen=True)
class MixedPrecision:
    """Compute in `compute_dtype`, hand the outputs to the losses and metrics in `output_dtype`.

    Usage: `kd.train.Trainer(..., precision=kd.train.MixedPrecision())` (bfloat16 compute, float32 outputs), or
    `precision="bfloat16"`. Only the `params` collection is cast (batch statistics and other collections are
    read and kept as stored); intermediates (`interms.*`) are in the dtype the model computed them in.
    `compute_dtype="float16"` has no loss scaling: small gradients may underflow.
    """

    compute_dtype: DTypeLike = "bfloat16"
    output_dtype: DTypeLike = "float32"

    def __post_init__(self) -> None:
        for field in ("compute_dtype", "output_dtype"):
            object.__setattr__(
                self, field, _float_dtype_name(getattr(self, field), f"MixedPrecision.{field}")
            )

    def cast_params(self, params: PyTree) -> PyTree:
        """The floating leaves of `params` in `compute_dtype`."""
        return _cast_floating(params, self.compute_dtype)

    def cast_inputs(self, batch: PyTree) -> PyTree:
        """The floating leaves of `batch` in `compute_dtype` (integer tokens, labels and keys unchanged)."""
        return _cast_floating(batch, self.compute_dtype)

    def cast_outputs(self, preds: PyTree) -> PyTree:
        """The floating leaves of the model's outputs in `output_dtype`."""
        return _cast_floating(preds, self.output_dtype)

    def describe(self, stored: str) -> str:
        """`bfloat16 compute, float32 params and outputs`, the parameters being stored in `stored`."""
        if stored == self.output_dtype:
            return f"{self.compute_dtype} compute, {stored} params and outputs"
        return f"{self.compute_dtype} compute, {stored} params, {self.output_dtype} outputs"


# What `Trainer.precision` accepts as a string: Lightning's and Keras' spellings of the bfloat16 policy too.
_NAMED = {
    "bfloat16": MixedPrecision,
    "bf16": MixedPrecision,
    "bf16-mixed": MixedPrecision,
    "mixed_bfloat16": MixedPrecision,
    "float32": None,
    "fp32": None,
    "32": None,
}


def as_precision(value: object, where: str = "cfg.precision") -> MixedPrecision | None:
    """`Trainer.precision` as a policy: a `MixedPrecision`, or None for the model as it is written."""
    if value is None or isinstance(value, MixedPrecision):
        return value
    expected = "None, 'bfloat16' (or 'bf16'), 'float32' or kd.train.MixedPrecision(compute_dtype=..., output_dtype=...)"
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected {expected}, got {type(value).__name__}: {value!r}")
    name = value.strip().lower()
    if name in _NAMED:
        policy = _NAMED[name]
        return None if policy is None else policy()
    if "16" in name and "bf" not in name:
        hint = (
            "float16 compute needs loss scaling, which kd does not do; bfloat16 does not "
            "(kd.train.MixedPrecision(compute_dtype='float16') asks for float16 anyway)"
        )
    else:
        close = difflib.get_close_matches(name, list(_NAMED), n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"{where}: expected {expected}, got {value!r}" + (f"; {hint}" if hint else ""))


def _float_dtype_name(value: DTypeLike, where: str) -> str:
    """The canonical name of a floating dtype given by name (`"bfloat16"`, `"bf16"`) or as a dtype."""
    if isinstance(value, str):
        name = _DTYPE_ALIASES.get(value.strip().lower(), value.strip().lower())
        if name in FLOAT_DTYPES:
            return name
        close = difflib.get_close_matches(name, FLOAT_DTYPES, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"{where}: expected a floating dtype ({', '.join(FLOAT_DTYPES)}), got {value!r}{hint}"
        )
    try:
        dtype = jnp.dtype(value)
    except TypeError:
        dtype = None
    if dtype is None or not jnp.issubdtype(dtype, jnp.floating):
        raise ConfigError(f"{where}: expected a floating dtype ({', '.join(FLOAT_DTYPES)}), got {value!r}")
    return dtype.name


def _cast_floating(tree: PyTree, name: DTypeLike) -> PyTree:
    dtype = jnp.dtype(name)

    def cast(leaf: ArrayLike) -> ArrayLike:
        leaf_dtype = getattr(leaf, "dtype", None)
        if leaf_dtype is None or leaf_dtype == dtype or not jnp.issubdtype(leaf_dtype, jnp.floating):
            return leaf
        return leaf.astype(dtype)

    return jax.tree.map(cast, tree)


def keep_stored_dtypes(updated: PyTree, stored: PyTree) -> PyTree:
    """`updated` (the collections after a forward pass) with each leaf back in the dtype `stored` has it: a
    module computing in bfloat16 must not change the dtype of the state it carries (batch statistics)."""
    if jax.tree.structure(updated) != jax.tree.structure(stored):
        return updated
    return jax.tree.map(
        lambda new, old: (
            new.astype(old.dtype) if getattr(new, "dtype", None) != getattr(old, "dtype", None) else new
        ),
        updated,
        stored,
    )
