"""Read the learning rate an optax optimizer uses now, when it was built with `optax.inject_hyperparams`."""

from __future__ import annotations

from typing import Any


def current_learning_rates(opt_state: Any) -> dict[str, Any]:
    """`{"learning_rate": value}` from every `inject_hyperparams` state inside `opt_state` (else `{}`).

    Usage: `kd.optim.current_learning_rates(state.opt_state)`.
    """
    found: dict[str, Any] = {}
    stack = [opt_state]
    while stack:
        node = stack.pop()
        hyperparams = getattr(node, "hyperparams", None)
        if isinstance(hyperparams, dict):
            for name, value in hyperparams.items():
                found.setdefault(name, value)
        if isinstance(node, (tuple, list)):
            stack.extend(node)
    return found
