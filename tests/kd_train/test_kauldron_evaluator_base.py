"""Kauldron's evaluator base and what such evaluators use: `kd.evals.EvaluatorBase`, `Writer.write_step_metrics`,
`Context.from_state_and_batch` / `get_aux_state`, `kd.utils`, `kd.kdash`."""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

import jax.numpy as jnp
import kd
import konfig
import numpy as np
import pytest
import train_fixtures as lib


class CountingEval(kd.evals.EvaluatorBase):
    """Kauldron-style: computes a metric over a few batches itself and writes through `self.writer`."""

    num_batches: int = 2
    offset: float = 0.0

    def evaluate(self, state: Any, step: int) -> Any:
        self._assert_root_cfg_resolved()
        aux = kd.train.Auxiliaries(
            losses={}, metrics={"mean_x": kd.metrics.Norm(tensor="batch.x")}, summaries={}
        )
        merged = kd.train.AuxiliariesState()
        for _, batch in kd.utils.utils.enum_iter(self.base_cfg.train_ds, total_steps=self.num_batches):
            context = kd.train.Context.from_state_and_batch(state=state, batch=batch)
            merged |= aux.update_context(context).get_aux_state(return_metrics=True)
        self.writer.write_step_metrics(
            step=step, aux=merged, schedules={"offset": self.offset}, log_summaries=True
        )
        return {"step_seen": step}


def test_a_subclass_is_a_frozen_keyword_only_dataclass_without_the_decorator() -> None:
    evaluator = CountingEval(num_batches=3)
    assert dataclasses.is_dataclass(evaluator) and evaluator.num_batches == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        evaluator.num_batches = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        CountingEval(3)  # type: ignore[misc]  # keyword-only, as Kauldron's

    @dataclasses.dataclass(frozen=True, kw_only=True)  # decorated again, as some Kauldron code does
    class Decorated(kd.evals.EvaluatorBase):
        extra: int = 1

    assert Decorated(extra=2).extra == 2


def test_the_base_checks_its_name_and_run_strategy() -> None:
    with pytest.raises(ValueError, match="expected a Python identifier"):
        CountingEval(name="has space")
    with pytest.raises(TypeError, match="run strategy"):
        CountingEval(run=100)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"CountingEval.writer is still ROOT_CFG_REF.writer"):
        CountingEval().evaluate(None, 0)


def test_kd_evaluator_counts_as_an_evaluator_base() -> None:
    assert isinstance(kd.evals.Evaluator(), kd.evals.EvaluatorBase)
    assert not isinstance(object(), kd.evals.EvaluatorBase)


def test_the_trainer_drives_an_evaluator_base_and_its_values_are_logged_under_its_name() -> None:
    writer = kd.writers.InMemoryWriter()
    trainer = lib.make_trainer(
        writer=writer,
        num_train_steps=4,
        evals={"counting": CountingEval(run=kd.evals.EveryNSteps(2), offset=0.5)},
    )
    evaluator = trainer.evals["counting"]
    assert evaluator.name == "counting" and evaluator.base_cfg is trainer  # filled from the Trainer
    assert isinstance(evaluator.writer, kd.writers.CollectionWriter)
    trainer.train()
    steps = [step for step, _ in writer.scalars["counting/metrics/mean_x"]]
    assert steps == [0, 2, 4]
    assert [v for _, v in writer.scalars["counting/schedules/offset"]] == [0.5, 0.5, 0.5]
    value = writer.scalars["counting/metrics/mean_x"][0][1]
    assert np.isfinite(value) and value > 0


def test_write_step_metrics_writes_computed_values_and_summaries_with_the_collection_prefix() -> None:
    writer = kd.writers.InMemoryWriter()
    scoped = writer.collection_writer("sampling")
    metric = kd.metrics.Norm(tensor="preds")
    context = kd.train.Context(step=1, batch={}, preds=jnp.ones((2, 3)))
    aux = kd.train.Auxiliaries(losses={}, metrics={"norm": metric}, summaries={}).update_context(context)
    scoped.write_step_metrics(step=7, aux=aux.get_aux_state(return_metrics=True), schedules={"lr": 0.1})
    assert writer.scalars["sampling/metrics/norm"] == [(7, pytest.approx(np.sqrt(3.0)))]
    assert writer.scalars["sampling/schedules/lr"] == [(7, pytest.approx(0.1))]
    assert scoped.collection_writer("other").writer is writer  # re-scoped, not nested


def test_context_from_state_and_batch_and_its_aux_state() -> None:
    state = kd.train.TrainState(step=3, params={"w": jnp.ones(2)}, collections={}, opt_state=())
    context = kd.train.Context.from_state_and_batch(state=state, batch={"x": jnp.zeros(1)})
    assert context.step == 3 and context.params is state.params and context.opt_state == ()
    empty = context.get_aux_state(return_losses=True, return_metrics=True)
    assert empty.loss_states == {} and empty.metric_states == {}
    assert (kd.train.AuxiliariesState() | empty).compute().metric_values == {}


def test_kd_utils_status_logs_and_prints_on_the_lead_host(capsys, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="kd"):
        kd.utils.status.log("restored the EMA params")
    assert "restored the EMA params" in caplog.text
    assert "restored the EMA params" in capsys.readouterr().err
    assert kd.utils.status.on_xmanager is False and kd.utils.status.is_lead_host is True


def test_enum_iter_numbers_from_init_step_and_stops_at_total_steps() -> None:
    assert list(kd.utils.utils.enum_iter("abcd", init_step=2, total_steps=4)) == [(2, "a"), (3, "b")]
    assert list(kd.utils.utils.enum_iter("ab", desc="eval")) == [(0, "a"), (1, "b")]


def test_config_util_base_config_and_update_from_root_cfg() -> None:
    from kd.utils import config_util

    class NeedsSeed(config_util.BaseConfig, config_util.UpdateFromRootCfg):
        seed: int = config_util.ROOT_CFG_REF.seed
        scale: float = 1.0

    obj = NeedsSeed(scale=2.0)
    with pytest.raises(ValueError, match=r"NeedsSeed\.seed is still ROOT_CFG_REF\.seed"):
        obj._assert_root_cfg_resolved()
    filled = obj.update_from_root_cfg(lib.make_trainer(seed=11))
    assert (filled.seed, filled.scale) == (11, 2.0)
    filled._assert_root_cfg_resolved()
    assert filled.replace(scale=3.0).scale == 3.0


def test_immutabledict_freeze_dict_attrs() -> None:
    @dataclasses.dataclass(frozen=True)
    class Holder:
        metrics: Any
        other: Any = 1

        def __post_init__(self) -> None:
            kd.utils.immutabledict.freeze_dict_attrs(self, ["metrics"])

    holder = Holder(metrics={"acc": 1})
    assert isinstance(holder.metrics, konfig.ImmutableDict) and holder.metrics["acc"] == 1
    kd.utils.immutabledict.freeze_dict_attrs(holder, ["other"])  # not a dict: left alone
    assert holder.other == 1


def test_kdash_dashboards_are_accepted_and_normalise() -> None:
    assert kd.kdash.NoopDashboard().normalize().dashboards == {}
    boards = kd.kdash.MetricDashboards(collection="eval", metrics={"acc": None}).normalize().dashboards
    assert list(boards) == ["metrics/acc"] and boards["metrics/acc"].y_keys == ("eval/metrics/acc",)
    assert CountingEval().__dashboards__.normalize().dashboards == {}


def test_the_default_name_becomes_the_key_and_an_explicit_name_stays() -> None:
    assert CountingEval().name == "eval"  # Kauldron's default, outside a Trainer
    trainer = lib.make_trainer(evals={"first": CountingEval(), "second": CountingEval(name="mine")})
    assert trainer.evals["first"].name == "first" and trainer.evals["second"].name == "mine"


def test_standalone_evaluation_writes_an_evaluator_base_to_its_own_writer_once(tmp_path) -> None:
    # `kd-train eval` / evaluate_checkpoints: the values go to the evaluation's writer (not the training
    # run's metrics.jsonl), are returned, and a second pass finds the checkpoints done.
    training_writer = kd.writers.InMemoryWriter()
    trainer = lib.make_trainer(
        workdir=str(tmp_path / "run"),
        num_train_steps=4,
        writer=training_writer,
        checkpointer=kd.ckpts.Checkpointer(save_interval_steps=2, max_to_keep=None),
        evals={"counting": CountingEval(run=kd.evals.StandaloneEveryCheckpoint())},
    )
    trainer.train()
    assert not [name for name in training_writer.scalars if name.startswith("counting/")]
    values = kd.evals.evaluate_checkpoints(trainer, follow=False)  # its default: <workdir>/eval_metrics.jsonl
    assert values == {
        2: {"counting/step_seen": 2.0},
        4: {"counting/step_seen": 4.0},
    }  # what evaluate returned
    rows = [
        json.loads(line) for line in (tmp_path / "run" / kd.evals.EVAL_METRICS_FILE).read_text().splitlines()
    ]
    assert [row["step"] for row in rows if "counting/metrics/mean_x" in row] == [2, 4]
    assert not [name for name in training_writer.scalars if name.startswith("counting/")]
    assert kd.evals.evaluate_checkpoints(trainer, follow=False) == {}  # both found done: not evaluated again


def test_what_evaluate_returns_is_logged_when_numeric_and_texts_are_left_out() -> None:
    from kd.train._hooks import evaluate_and_write

    class Returns(kd.evals.EvaluatorBase):
        def evaluate(self, state: Any, step: int) -> Any:
            return {"count": 3, "ratio": np.float32(0.5), "note": "sampled 3 prompts"}

    writer = kd.writers.InMemoryWriter()
    values = evaluate_and_write({"returns": Returns(name="returns")}, None, 7, writer)
    assert values == {"returns/count": 3.0, "returns/ratio": 0.5}
