"""`ema_params`: keep an exponential moving average of the params in the optimizer state; `UseEmaParams`
evaluates with it.

cfg.optimizer = kd.optim.named_chain(adam=optax.adam(1e-3), ema=kd.optim.ema_params(decay=0.999))
cfg.evals = {"ema": kd.evals.Evaluator(init_transform=kd.optim.UseEmaParams())}
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import kontext
import optax

from kd._interfaces import PyTree


class EmaParamsState(NamedTuple):
    """The state of `ema_params`.

    Attributes:
      count: the number of updates seen (int32 scalar).
      ema_params: the moving average of the params after each update (the initial params at first).
    """

    count: jax.Array
    ema_params: PyTree  # optax.Params (its alias does not resolve at run time)


def ema_params(
    *, decay: float, debias: bool = True, accumulator_dtype: Any = None
) -> optax.GradientTransformation:
    """Tracks `ema = decay_t * ema + (1 - decay_t) * new_params` across updates; the updates pass unchanged.

    Usage: `kd.optim.named_chain(adam=optax.adam(1e-3), ema=kd.optim.ema_params(decay=0.999))`.

    Unlike `optax.ema` (which averages the updates), this averages the params themselves, for evaluation
    (`kd.optim.UseEmaParams`). `new_params` is `optax.apply_updates(params, updates)`, so the transform
    goes last in the chain, where the updates are final. It starts from the initial params.

    Args:
      decay: the decay of the average.
      debias: with True, `decay_t = min(decay, (1 + t) / (10 + t))` at update `t` (1, 2, ...), so early
        averages follow the params closely; with False, `decay_t = decay`.
      accumulator_dtype: the dtype the average is kept in (None: the params' dtypes).

    Returns:
      An `optax.GradientTransformation` with an `EmaParamsState`; its `update` needs `params`.
    """
    dtype = None if accumulator_dtype is None else jnp.dtype(accumulator_dtype)

    def init(params: optax.Params) -> EmaParamsState:
        return EmaParamsState(count=jnp.zeros([], jnp.int32), ema_params=optax.tree.cast(params, dtype))

    def update(updates: optax.Updates, state: EmaParamsState, params: optax.Params | None = None) -> Any:
        if params is None:
            raise ValueError(
                "ema_params: update() needs the current params (update(updates, state, params)), got params=None."
            )
        count = optax.safe_increment(state.count)
        rate = jnp.minimum(decay, (1.0 + count) / (10.0 + count)) if debias else decay
        new_params = optax.apply_updates(params, updates)
        averaged = jax.tree_util.tree_map(
            lambda new, old: rate * old + (1.0 - rate) * new, new_params, state.ema_params
        )
        return updates, EmaParamsState(count=count, ema_params=optax.tree.cast(averaged, dtype))

    return optax.GradientTransformation(init, update)


@dataclasses.dataclass(frozen=True, kw_only=True)
class UseEmaParams:
    """An init transform that puts the `ema_params` average in place of the params.

    Usage: `kd.evals.Evaluator(init_transform=kd.optim.UseEmaParams())` (an evaluation of the averaged
    params), or `Trainer(init_transform=...)` when a restored run should go on from its average.

    It has `transform(state)` and `transform_after_optimizer(state)`, as a `kd.ckpts.InitTransform`;
    `state` is a TrainState (`params`, `opt_state`, `replace`).

    Attributes:
      ema_params_transform: the path of the `EmaParamsState` in `state.opt_state` (`"ema"` in a
        `named_chain(..., ema=...)`, `"[1]"` in `optax.chain(adam, ema)`); None finds the one there is.
      partial_ok: with True, params the average does not cover (frozen by `partial_updates`, or outside an
        `optax.masked` one) keep their value; with False, such a param raises a KeyError naming it.
    """

    ema_params_transform: str | None = None
    partial_ok: bool = False

    def transform(self, state: Any) -> Any:
        """`state` with `params` replaced by the moving average kept in `state.opt_state`."""
        average = self._ema_state(state.opt_state).ema_params
        leaves, treedef = jax.tree_util.tree_flatten_with_path(state.params)
        try:
            others = treedef.flatten_up_to(average)
        except (ValueError, TypeError) as e:
            raise ValueError(
                f"UseEmaParams: the EMA params do not have the structure of state.params ({e}); "
                "was ema_params given these params?"
            ) from None
        merged = []
        for (path, param), other in zip(leaves, others):
            if other is None or isinstance(other, optax.MaskedNode):
                if not self.partial_ok:
                    raise KeyError(
                        f"UseEmaParams: no EMA value for params.{kontext.Path.from_jax_path(path)}; "
                        "set partial_ok=True to keep such params (e.g. frozen by kd.optim.partial_updates) as they are."
                    )
                merged.append(param)
            else:
                merged.append(other)
        return state.replace(params=jax.tree_util.tree_unflatten(treedef, merged))

    def transform_after_optimizer(self, state: Any) -> Any:
        """Nothing more once the optimizer state exists: `transform` did it all."""
        return state

    def _ema_state(self, opt_state: Any) -> EmaParamsState:
        found = _ema_states(opt_state)
        if self.ema_params_transform is not None:
            chosen = kontext.get_by_path(opt_state, self.ema_params_transform)
            if not hasattr(chosen, "ema_params"):
                raise ValueError(
                    f"UseEmaParams: opt_state.{self.ema_params_transform} is a {type(chosen).__name__}, "
                    f"not the EmaParamsState of kd.optim.ema_params (it has no 'ema_params'); "
                    f"the EmaParamsStates there: {list(found) or 'none'}."
                )
            return chosen
        paths = list(found)
        if len(paths) != 1:
            problem = "no EmaParamsState" if not paths else f"several EmaParamsStates ({paths})"
            raise ValueError(
                f"UseEmaParams: found {problem} in the optimizer state; "
                + (
                    "add kd.optim.ema_params(decay=...) at the end of the optimizer chain."
                    if not paths
                    else "set ema_params_transform= to the path of the one to use."
                )
            )
        return found[paths[0]]


def _ema_states(opt_state: Any) -> dict[str, EmaParamsState]:
    """The `EmaParamsState`s in `opt_state`, by path (`""`: `opt_state` is one)."""
    nodes, _ = jax.tree_util.tree_flatten_with_path(opt_state, is_leaf=_is_ema_state)
    return {
        str(kontext.Path.from_jax_path(path)): node
        for path, node in nodes
        if isinstance(node, EmaParamsState)
    }


def _is_ema_state(node: Any) -> bool:
    return isinstance(node, EmaParamsState)
