"""The Trainer with kd's own data, losses, metrics, summaries, checkpoints and evaluators, built from konfig configs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import numpy as np
import pytest

konfig = pytest.importorskip("konfig")
kd = pytest.importorskip("kd")
optax = pytest.importorskip("optax")
nn = pytest.importorskip("flax.linen")


def _config(**overrides):
    with konfig.imports():
        import kd as c_kd
        import optax as c_optax
        from flax import linen as c_nn

    cfg = c_kd.train.Trainer()
    cfg.seed = 0
    cfg.num_train_steps = 20
    cfg.log_metrics_every = 10
    cfg.train_ds = c_kd.data.InMemoryPipeline(
        loader=c_kd.data.SyntheticRegression(num_examples=256), batch_size=32
    )
    cfg.model = c_kd.nn.ExternalModule(
        model=c_nn.Sequential(layers=[c_nn.Dense(features=16), c_nn.relu, c_nn.Dense(features=1)]),
        keys="batch.x",
    )
    cfg.optimizer = c_optax.adam(learning_rate=1e-2)
    cfg.train_losses = {"l2": c_kd.losses.L2(preds="preds", targets="batch.y")}
    cfg.train_metrics = {
        "grad_norms": c_kd.metrics.TreeMap(metric=c_kd.metrics.Norm(tensor="grads", axis=None))
    }
    cfg.writer = c_kd.writers.InMemoryWriter()
    for path, value in overrides.items():
        konfig.set_by_path(cfg, path, value)
    return cfg


def test_a_config_round_trips_through_json_and_trains() -> None:
    cfg = _config()
    trainer = konfig.resolve(konfig.from_json(konfig.to_json(cfg)))
    state, logged = trainer.train()
    assert int(state.step) == 20
    # TreeMap over the grads: one norm per parameter, named by its path (joined by "/", as in Kauldron).
    assert {k for k in logged if k.startswith("metrics/grad_norms/")} == {
        "metrics/grad_norms/model/layers_0/kernel",
        "metrics/grad_norms/model/layers_0/bias",
        "metrics/grad_norms/model/layers_2/kernel",
        "metrics/grad_norms/model/layers_2/bias",
    }


def test_a_misspelt_argument_of_a_loss_fails_when_the_config_is_written() -> None:
    with konfig.imports():
        import kd as c_kd
    with pytest.raises(
        konfig.ArgumentError,
        match=r"L2\(\) got an unexpected keyword argument 'tragets'; did you mean 'targets'",
    ):
        c_kd.losses.L2(preds="preds", tragets="batch.y")


def test_a_bad_value_in_a_loss_names_its_config_path() -> None:
    cfg = _config()
    cfg.train_losses["l2"].normalize_by = "everything"
    with pytest.raises(
        konfig.ResolveError, match=r"In cfg.train_losses.l2: .*normalize_by must be 'mask' or 'values'"
    ):
        konfig.resolve(cfg)


def test_a_model_output_that_does_not_fit_the_loss_names_both_shapes(tmp_path: Path) -> None:
    workdir = tmp_path / "run"
    cfg = _config(workdir=str(workdir))
    cfg.model.model.layers[2].features = 3  # preds (32, 3) against targets (32, 1)
    trainer = konfig.resolve(cfg)
    with pytest.raises(kd.train.ShapeMismatchError) as info:
        trainer.train()
    message = str(info.value)
    assert "train_losses['l2']" in message and "(32, 3)" in message and "(32, 1)" in message
    assert not workdir.exists()  # nothing is written before the config is known to be good


class _Rows:
    """A random-access source of single examples (what a grain data source is)."""

    def __init__(self) -> None:
        self.columns = kd.data.SyntheticRegression(num_examples=256)()

    def __len__(self) -> int:
        return 256

    def __getitem__(self, index: int) -> dict:
        return {name: column[index] for name, column in self.columns.items()}


def _train_ds(kind: str):
    if kind == "in_memory":
        return None  # the config's own InMemoryPipeline
    pytest.importorskip("grain")
    return kd.data.GrainPipeline(source=_Rows(), batch_size=32)


@pytest.mark.parametrize("kind", ["in_memory", "grain"])
def test_a_preempted_run_resumes_exactly_where_it_stopped(tmp_path: Path, kind: str) -> None:
    with konfig.imports():
        import kd as c_kd

    def trainer_of(cfg):
        trainer = konfig.resolve(cfg)
        ds = _train_ds(kind)
        return trainer if ds is None else dataclasses.replace(trainer, train_ds=ds)

    straight = trainer_of(_config()).train()[0]

    workdir = str(tmp_path / "run")
    cfg = _config(workdir=workdir, stop_after_steps=7)
    cfg.checkpointer = c_kd.ckpts.Checkpointer(save_interval_steps=100)
    first, _ = trainer_of(cfg).train()  # stops after 7 steps; the stop is checkpointed
    assert int(first.step) == 7
    cfg.stop_after_steps = None
    resumed, _ = trainer_of(cfg).train()
    assert int(resumed.step) == 20
    # Same params as the uninterrupted run: the data iterator resumed at batch 8, not batch 1.
    for a, b in zip(jax.tree.leaves(straight.params), jax.tree.leaves(resumed.params)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_evaluator_defaults_come_from_the_trainer_and_are_logged_under_its_name() -> None:
    with konfig.imports():
        import kd as c_kd
    cfg = _config()
    cfg.eval_ds = c_kd.data.InMemoryPipeline(
        loader=c_kd.data.SyntheticRegression(num_examples=64, seed=1),
        batch_size=32,
        shuffle=False,
        num_epochs=1,
    )
    cfg.evals = {"holdout": c_kd.evals.Evaluator(run=c_kd.evals.EveryNSteps(10))}
    trainer = konfig.resolve(cfg)
    evaluator = trainer.evals["holdout"]
    assert evaluator.ds is trainer.eval_ds and evaluator.losses is trainer.train_losses
    trainer.train()
    logged = trainer.writer.scalars
    assert [step for step, _ in logged["holdout/losses/l2"]] == [0, 10, 20]
    # Replacing the Trainer's eval_ds re-fills the evaluator; its own explicit run strategy stays.
    other = dataclasses.replace(trainer, eval_ds=dataclasses.replace(trainer.eval_ds, batch_size=16))
    assert other.evals["holdout"].ds.batch_size == 16
    assert other.evals["holdout"].run == trainer.evals["holdout"].run


def test_summaries_are_written_on_summary_steps_only() -> None:
    with konfig.imports():
        import kd as c_kd
    cfg = _config(log_summaries_every=10, log_metrics_every=5)
    cfg.train_summaries = {"preds": c_kd.summaries.Histogram(tensor="preds", num_buckets=8)}
    trainer = konfig.resolve(cfg)
    trainer.train()
    written = trainer.writer.summaries["summaries/preds"]
    assert [step for step, _ in written] == [1, 10, 20]
    assert isinstance(written[-1][1], kd.summaries.HistogramValue)
    # One compile per distinct set of outputs: plain updates (fused, and single until measured), metrics,
    # metrics + summaries.
    assert dict(trainer.trainstep.num_traces) == {
        ("fused", True): 1,
        (False, False): 1,
        (True, False): 1,
        (True, True): 1,
    }


def test_an_evaluator_key_that_names_no_path_fails_before_training(tmp_path: Path) -> None:
    with konfig.imports():
        import kd as c_kd
    workdir = tmp_path / "run"
    cfg = _config(workdir=str(workdir))
    cfg.evals = {
        "holdout": c_kd.evals.Evaluator(
            run=c_kd.evals.EveryNSteps(10),
            ds=cfg.ref.train_ds,
            num_batches=1,
            metrics={"acc": c_kd.metrics.Accuracy(logits="preds", labels="batch.label")},
        )
    }
    trainer = konfig.resolve(cfg)
    with pytest.raises(kd.train.KeyPathError, match=r"(?s)evals\['holdout'\].*metrics\['acc'\].*batch.label"):
        trainer.train()
    assert not workdir.exists()


def test_train_writes_the_resolved_config_into_the_workdir(tmp_path: Path) -> None:
    workdir = tmp_path / "run"
    cfg = _config(workdir=str(workdir), num_train_steps=2)
    cfg.writer = None  # the default writers: the terminal and <workdir>/metrics.jsonl
    konfig.resolve(cfg).train()
    written = konfig.from_json((workdir / "config.json").read_text())
    assert written.num_train_steps == 2 and written.workdir == str(workdir)
    assert (workdir / "metrics.jsonl").read_text().count("\n") == 2  # steps 1 and 2
