"""`decay_to_init`: weight decay towards the params at initialization, not towards zero (for fine-tuning).

cfg.optimizer = optax.chain(kd.optim.decay_to_init(1e-2), optax.adam(1e-4))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import optax

from kd._interfaces import PyTree


class DecayToInitState(NamedTuple):
    """The state of `decay_to_init`.

    Attributes:
      init_params: the params `init` was called with, the point the params are pulled back to.
    """

    init_params: PyTree  # optax.Params (its alias does not resolve at run time)


def decay_to_init(
    weight_decay: float | jax.Array, mask: Any | Callable[[optax.Params], Any] | None = None
) -> optax.GradientTransformation:
    """Adds `weight_decay * (params - init_params)` to the updates (gradients), leaf by leaf.

    Usage: `optax.chain(kd.optim.decay_to_init(1e-2, mask=kd.optim.exclude("bias")), optax.sgd(0.1))`.

    Placed before the optimizer (like `optax.add_decayed_weights`), a descent step then moves each param
    towards its initial value by `learning_rate * weight_decay * (params - init_params)`.

    Args:
      weight_decay: the scale of the pull towards the initial params.
      mask: optional tree of bools (or a function from the params to one, e.g. `kd.optim.select(...)`):
        only the True leaves are decayed (`optax.masked`).

    Returns:
      An `optax.GradientTransformation`; its `update` needs `params`.
    """

    def init(params: optax.Params) -> DecayToInitState:
        return DecayToInitState(init_params=params)

    def update(updates: optax.Updates, state: DecayToInitState, params: optax.Params | None = None) -> Any:
        if params is None:
            raise ValueError(
                "decay_to_init: update() needs the current params (update(updates, state, params)), got params=None."
            )
        updates = jax.tree_util.tree_map(
            lambda g, p, p0: g + weight_decay * (p - p0), updates, params, state.init_params
        )
        return updates, state

    transform = optax.GradientTransformation(init, update)
    return transform if mask is None else optax.masked(transform, mask)
