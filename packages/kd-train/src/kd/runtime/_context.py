"""`Context`: everything one train step knows, the tree that kontext keys point into.

loss = kd.losses.L2(preds="preds", targets="batch.y")   # keys are paths into a Context
context = Context(step=0, batch=batch, preds=preds)
loss.get_state_from_context(context)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import jax
import kontext

from kd._interfaces import MetricState, PyTree  # at run time too: typing.get_type_hints(Context) resolves
from kd.runtime._aux import AuxiliariesState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.runtime._state import TrainState


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class Context:
    """The step's values under Kauldron's names; a field not computed yet is `None`.

    Usage: `context.replace(preds=model_output)`.
    """

    step: jax.Array | int
    batch: PyTree
    params: PyTree | None = None
    collections: PyTree | None = None
    preds: PyTree | None = None
    interms: PyTree | None = None
    loss_states: Mapping[str, MetricState] | None = None
    loss_total: jax.Array | None = None
    grads: PyTree | None = None
    updates: PyTree | None = None
    opt_state: PyTree | None = None
    metric_states: Mapping[str, MetricState] | None = None
    summary_states: Mapping[str, MetricState] | None = None

    def replace(self, **changes: object) -> Context:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def from_state_and_batch(cls, *, state: TrainState, batch: PyTree) -> Context:
        """Kauldron's: the context of a step about to run on `state` (a TrainState) and `batch`.

        Usage: `context = kd.train.Context.from_state_and_batch(state=state, batch=batch)`.
        """
        return cls(
            step=state.step,
            batch=batch,
            params=state.params,
            collections=getattr(state, "collections", None),
            opt_state=getattr(state, "opt_state", None),
        )

    def get_aux_state(
        self, *, return_losses: bool = False, return_metrics: bool = False, return_summaries: bool = False
    ) -> AuxiliariesState:
        """Kauldron's: the chosen states of this context as a `kd.train.AuxiliariesState` (to merge, `|`).

        Usage: `aux = context.get_aux_state(return_metrics=True)`, after `Auxiliaries(...).update_context`.
        """
        return AuxiliariesState(
            loss_states=dict(self.loss_states or {}) if return_losses else {},
            metric_states=dict(self.metric_states or {}) if return_metrics else {},
            summary_states=dict(self.summary_states or {}) if return_summaries else {},
        )

    def available_paths(self) -> list[str]:
        """Every leaf path a key can name (`"batch.image"`, `"params.dense.kernel"`), for messages."""
        return [str(path) for path in kontext.flatten_with_path(_without_none(self))]


def _without_none(context: Context) -> dict[str, object]:
    return {
        f.name: getattr(context, f.name)
        for f in dataclasses.fields(context)
        if getattr(context, f.name) is not None
    }
