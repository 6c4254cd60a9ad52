"""A run stopped and resumed from its orbax checkpoint ends exactly where an uninterrupted run does (linen, NNX)."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import jax
import kd
import numpy as np
import pytest
import train_fixtures as lib

MODELS = {
    "linen_batch_norm": lambda: lib.BatchNormed(),
    "nnx_mlp": lambda: kd.train.NnxModel(functools.partial(lib.NnxMlp, 2, 1)),
}


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_stop_and_resume_equals_one_uninterrupted_run(tmp_path: Path, kind: str) -> None:
    straight, _ = lib.make_trainer(model=MODELS[kind](), num_train_steps=9).train()

    checkpointer = kd.ckpts.Checkpointer(save_interval_steps=100)
    trainer = lib.make_trainer(
        model=MODELS[kind](),
        num_train_steps=9,
        stop_after_steps=4,
        workdir=str(tmp_path),
        checkpointer=checkpointer,
    )
    assert int(trainer.train()[0].step) == 4
    resumed, _ = dataclasses.replace(trainer, stop_after_steps=None, model=MODELS[kind]()).train()

    assert int(resumed.step) == 9
    for a, b in zip(
        jax.tree.leaves((straight.params, straight.collections, straight.opt_state)),
        jax.tree.leaves((resumed.params, resumed.collections, resumed.opt_state)),
    ):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
