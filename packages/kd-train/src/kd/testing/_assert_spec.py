"""`assert_step_specs(trainer)`: a train step traced with shapes only, no computation."""

from __future__ import annotations

from typing import Any

import jax


def assert_step_specs(trainer: Any) -> None:
    """Traces one `trainer.trainstep.step` on the abstract state and batch (`jax.eval_shape`): every key the
    model, losses, metrics and summaries read, and every shape and dtype, is checked in seconds, with nothing
    computed or compiled. Needs `trainer.train_ds.element_spec` (mock the data where reading it needs files:
    `with tfds.testing.mock_data(): ...`). The init transform (a partial checkpoint load) is not run.

    Usage: `kd.testing.assert_step_specs(konfig.resolve(cfg))`.
    """
    state = trainer.state_specs  # the state's shapes from the model's init, abstractly
    batch = jax.tree.map(_abstract, trainer.element_spec)
    jax.eval_shape(lambda s, b: trainer.trainstep.step(s, b, return_metrics=True), state, batch)


def _abstract(leaf: Any) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(tuple(leaf.shape), leaf.dtype)
