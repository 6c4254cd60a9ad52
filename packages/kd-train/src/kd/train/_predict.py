"""`Trainer.predict`: the model's outputs (`preds`) on one batch or a whole dataset, from a trained state.

    preds = trainer.predict(batch)                    # one batch (a dict as the data yields): numpy arrays
    preds = trainer.predict(eval_ds)                  # every batch, concatenated on the first axis (as Keras)
    preds = trainer.predict(eval_ds, state=state, num_batches=10)

The state is the latest checkpoint in the Trainer's workdir, read through its checkpointer without changing
anything there (`_eval_only.restore_latest_state`, as `Trainer.eval_only` restores), unless `state=` is given.
The model runs in evaluation mode (`is_training=False`, the `eval` RNG streams) in one jitted program, compiled
once per Trainer and batch shape. `kd-train predict --cfg=CONFIG` writes the outputs to an `.npz`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

import jax
import numpy as np

from kd.ckpts import NoopCheckpointer
from kd.runtime import ConfigError, InterestFilter
from kd.train._eval_only import restore_latest_state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd._interfaces import PyTree
    from kd.runtime import TrainState
    from kd.train._trainer import Trainer


def predict(
    trainer: Trainer,
    data: PyTree | Iterable[PyTree],
    *,
    state: TrainState | None = None,
    num_batches: int | None = None,
) -> PyTree:
    """The model's `preds` (a tree of numpy arrays) on `data`, with the trained state.

    Usage: `trainer.predict(batch)` (one batch: a dict as the dataset yields) or `trainer.predict(ds)` (a
    `kd.data` pipeline or any iterable of batches: the outputs of every batch concatenated on the first axis,
    as Keras' `model.predict`; a 0-d output is stacked, one value per batch).

    Args:
      trainer: the run; its model, RNG streams and sharding are used.
      data: one batch (a Mapping) or an iterable of batches.
      state: the TrainState to predict with; None: the latest checkpoint in `trainer.workdir`.
      num_batches: at most this many batches of `data`; needed when `data` is endless (`num_epochs=None`).

    Raises:
      kd.train.ConfigError: no checkpoint to read (no workdir, no checkpointer, none saved yet), endless data
        without `num_batches`, or data that yields no batch.
    """
    if state is None:
        state = latest_state(trainer)
    if isinstance(data, Mapping):
        return jax.device_get(_predict_fn(trainer)(state, trainer.sharding.step_input(dict(data))))
    outputs = list(predict_batches(trainer, data, state=state, num_batches=num_batches))
    if not outputs:
        raise ConfigError("Trainer.predict: the data yielded no batch, so there is nothing to predict")
    return concatenate(outputs)


def predict_batches(
    trainer: Trainer, data: Iterable[PyTree], *, state: TrainState, num_batches: int | None = None
) -> Iterator[PyTree]:
    """The `preds` of each batch of `data` in turn (numpy trees), computed with `state`.

    Usage: `for preds in predict_batches(trainer, ds, state=state, num_batches=4): ...`.
    """
    if not isinstance(data, Iterable) or isinstance(data, (str, bytes)):
        raise TypeError(
            "Trainer.predict: data must be one batch (a dict as the dataset yields) or a dataset (a kd.data "
            f"pipeline, any iterable of batches); got {type(data).__name__}"
        )
    if num_batches is not None and (
        isinstance(num_batches, bool) or not isinstance(num_batches, int) or num_batches < 1
    ):
        raise ValueError(f"Trainer.predict: num_batches must be a positive int or None, got {num_batches!r}")
    if num_batches is None and getattr(data, "num_epochs", 1) is None:
        raise ConfigError(
            f"Trainer.predict: the data ({type(data).__name__}) is endless (num_epochs=None), so predicting on all "
            "of it never ends; pass num_batches= (kd-train predict --batches=N), or give it num_epochs=1"
        )
    fn = _predict_fn(trainer)
    for index, batch in enumerate(data):
        if num_batches is not None and index >= num_batches:
            return
        yield jax.device_get(fn(state, trainer.sharding.step_input(batch)))


def latest_state(trainer: Trainer) -> TrainState:
    """The TrainState of the latest checkpoint in `trainer.workdir`, read through `trainer.checkpointer`
    (read-only); ConfigError naming the folder when there is none to read."""
    if trainer.workdir is None:
        raise ConfigError(
            "Trainer.predict: Trainer.workdir is not set, so there is no checkpoint to predict with; set it to a "
            "trained run's folder (--cfg.workdir=/path/to/run), or pass state= (trainer.predict(data, state=state))"
        )
    if isinstance(trainer.checkpointer, NoopCheckpointer):
        raise ConfigError(
            f"Trainer.predict: Trainer.checkpointer is {type(trainer.checkpointer).__name__} (checkpointer=None), "
            f"so nothing is read from {trainer.workdir}; keep the run's checkpointer, or pass state="
        )
    where = getattr(trainer.checkpointer, "directory", trainer.workdir)
    state = restore_latest_state(trainer, trainer.checkpointer, what=f"the run's latest checkpoint ({where})")
    if state is None:
        raise ConfigError(
            f"Trainer.predict: {where} holds no checkpoint to predict with; train the run first "
            f"(kd-train --cfg=CONFIG --cfg.workdir={trainer.workdir}, or trainer.train()), or pass state="
        )
    return state


def concatenate(outputs: list[PyTree]) -> PyTree:
    """Per-batch output trees joined leaf by leaf on the first axis (0-d leaves stacked, one per batch)."""
    return jax.tree.map(
        lambda *leaves: np.stack(leaves) if np.ndim(leaves[0]) == 0 else np.concatenate(leaves), *outputs
    )


def _predict_fn(trainer: Trainer) -> Callable[[TrainState, PyTree], PyTree]:
    """`fn(state, batch) -> preds`: the eval-mode forward pass, jitted once per Trainer (kept in its memo)."""
    fn = trainer._memo.get("predict_fn")
    if fn is None:
        step = trainer.trainstep

        def preds(state: TrainState, batch: PyTree) -> PyTree:
            context = step.forward(
                state.params,
                state.collections,
                batch,
                state.step,
                is_training=False,
                capture=InterestFilter(()),
            )
            return context.preds

        fn = trainer._memo["predict_fn"] = jax.jit(preds)
    return fn
