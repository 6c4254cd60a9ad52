"""Read the learning rate an optax optimizer uses now, when it was built with `optax.inject_hyperparams`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def current_learning_rates(opt_state: Any) -> dict[str, Any]:
    """`{"learning_rate": value}` from the `inject_hyperparams` states inside `opt_state` (else `{}`).

    Usage: `kd.optim.current_learning_rates(state.opt_state)`.

    Only learning rates are read (any hyperparameter whose name contains `learning_rate`), not the
    other injected ones (`b1`, `eps`, ...). The state is searched through chains, `optax.partition`
    and wrappers in order; when several injected optimizers name the same rate, the first one wins.
    """
    found: dict[str, Any] = {}
    stack = [opt_state]
    while stack:
        node = stack.pop()
        hyperparams = getattr(node, "hyperparams", None)
        if isinstance(hyperparams, Mapping):
            for name, value in hyperparams.items():
                if "learning_rate" in name:
                    found.setdefault(name, value)
        if isinstance(node, (tuple, list)):
            children = list(node)
        elif isinstance(node, Mapping):  # optax.partition keeps each group's state by label
            children = list(node.values())
        else:
            continue
        stack.extend(reversed(children))  # popped in order: the first optimizer's rate is found first
    return found
