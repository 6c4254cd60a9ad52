"""`TrainState`: the whole training state as one pytree that orbax saves as is.

state = trainer.init_state()
state.step, state.params, state.collections, state.opt_state
"""

from __future__ import annotations

import dataclasses

import jax

from kd._interfaces import PyTree  # at run time too: typing.get_type_hints(TrainState) resolves


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainState:
    """`step` (int32 scalar), `params`, `collections` (e.g. `batch_stats`), `opt_state`.

    Usage: `state.replace(step=state.step + 1)`.
    """

    step: jax.Array
    params: PyTree
    collections: PyTree
    opt_state: PyTree

    def replace(self, **changes: object) -> TrainState:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]
