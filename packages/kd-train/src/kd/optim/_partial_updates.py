"""`partial_updates`: train only the params a mask selects; the others get zero updates (frozen).

cfg.optimizer = kd.optim.partial_updates(optax.adam(1e-3), mask=kd.optim.select("lora"))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import optax

PyTree = Any
_TRAIN, _FREEZE = "train", "freeze"


def partial_updates(
    optimizer: optax.GradientTransformation, mask: PyTree | Callable[[PyTree], PyTree]
) -> optax.GradientTransformation:
    """`optimizer` on the params where `mask` is True; zero updates (`optax.set_to_zero`) elsewhere.

    Usage: `kd.optim.partial_updates(optax.adam(1e-3), mask=kd.optim.select("lora"))`.

    The frozen params keep their values exactly, and `optimizer` keeps no state for them (its state
    has `optax.MaskedNode`s there), as with `optax.multi_transform`, which this is built on.

    Args:
      optimizer: the transformation for the trained params.
      mask: a tree of bools with the structure of the params (or a prefix of it), or a function from the
        params to one, such as `kd.optim.select(...)` / `kd.optim.exclude(...)`.

    Returns:
      The wrapped optimizer; its state is `optax.multi_transform`'s, with the groups "train" and "freeze".

    Raises:
      TypeError: `optimizer` is not a GradientTransformation; when called, a mask leaf is not a bool.
    """
    if not (callable(getattr(optimizer, "init", None)) and callable(getattr(optimizer, "update", None))):
        raise TypeError(
            f"partial_updates: optimizer= must be an optax GradientTransformation, got {optimizer!r} "
            f"of type {type(optimizer).__name__}."
        )

    def labels(params: PyTree) -> PyTree:
        flags = mask(params) if callable(mask) else mask
        return jax.tree_util.tree_map(_label, flags)

    return optax.multi_transform({_TRAIN: optimizer, _FREEZE: optax.set_to_zero()}, labels)


def _label(flag: Any) -> str:
    if not isinstance(flag, bool) and not (
        hasattr(flag, "dtype") and flag.dtype == bool and flag.shape == ()
    ):
        raise TypeError(
            f"partial_updates: mask leaves must be bools (True: trained, False: frozen), got {flag!r}; "
            "build the mask with kd.optim.select(...) / kd.optim.exclude(...)."
        )
    return _TRAIN if bool(flag) else _FREEZE
