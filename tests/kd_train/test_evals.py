"""kd.evals: when evaluators run (EveryNSteps / Once / Final), what they evaluate, and what they check."""

from __future__ import annotations

import jax
import kd
import numpy as np
import pytest
import train_fixtures as lib
from precision import highest

LAST = 10


def _steps(strategy: kd.evals.RunStrategy, last_step: int = LAST) -> list[int]:
    """The steps (1 ... last_step, as the Trainer calls it) after which `strategy` evaluates."""
    return [step for step in range(1, last_step + 1) if strategy.should_run(step, last_step=last_step)]


# ---------------------------------------------------------------------------------------------- run strategies


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (kd.evals.EveryNSteps(3), [3, 6, 9, 10]),
        (kd.evals.EveryNSteps(5), [5, 10]),
        (kd.evals.EveryNSteps(1), list(range(1, LAST + 1))),
        (kd.evals.EveryNSteps(3, offset=2), [2, 5, 8, 10]),
        (kd.evals.EveryNSteps(3, offset=20), [10]),
        (kd.evals.EveryNSteps(3, skip_last=True), [3, 6, 9]),
        (kd.evals.EveryNSteps(5, skip_last=True), [5, 10]),
        (kd.evals.EveryNSteps(4, offset=1, skip_last=True), [1, 5, 9]),
    ],
    ids=repr,
)
def test_every_n_steps_runs_every_n_and_after_the_last_step(strategy, expected):
    assert _steps(strategy) == expected


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (kd.evals.Once(step=4), [4]),
        (kd.evals.Once(step=LAST), [LAST]),
        (kd.evals.Once(step=LAST + 1), []),
        (kd.evals.Final(), [LAST]),
    ],
    ids=repr,
)
def test_once_and_final_run_after_one_step(strategy, expected):
    assert _steps(strategy) == expected


@pytest.mark.parametrize("n", [0, -2, 2.5, None, True])
def test_every_n_steps_needs_a_positive_int(n):
    with pytest.raises(ValueError, match=rf"EveryNSteps.n: expected a positive int, got {n!r}"):
        kd.evals.EveryNSteps(n)


def test_run_strategies_are_positional_like_kauldron():
    assert kd.evals.EveryNSteps(100).n == 100
    assert kd.evals.Once(500).step == 500


def test_run_strategy_base_has_no_schedule():
    with pytest.raises(NotImplementedError):
        kd.evals.RunStrategy().should_run(1, last_step=1)


def test_evaluator_run_must_be_a_run_strategy():
    with pytest.raises(TypeError, match=r"Evaluator.run: expected a kd.evals run strategy .* got 100"):
        kd.evals.Evaluator(run=100)


def test_evaluator_runs_every_1000_steps_by_default():
    assert kd.evals.Evaluator().run == kd.evals.EveryNSteps(1000)


# ---------------------------------------------------------------------------------------------- evaluate


class Counting:
    """Evaluation data over `batches`, counting how many it has yielded."""

    def __init__(self, batches: list[dict[str, np.ndarray]]) -> None:
        self.batches = batches
        self.yielded = 0

    @property
    def element_spec(self) -> dict[str, jax.ShapeDtypeStruct]:
        return {k: jax.ShapeDtypeStruct(v.shape, v.dtype) for k, v in self.batches[0].items()}

    def __iter__(self):
        for batch in self.batches:
            self.yielded += 1
            yield batch


def _batches(sizes: list[int]) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(7)
    return [
        {"x": rng.normal(size=(n, 2)).astype(np.float32), "y": rng.normal(size=(n, 1)).astype(np.float32)}
        for n in sizes
    ]


def _evaluator(**fields) -> tuple[kd.train.Trainer, kd.evals.Evaluator]:
    """An Evaluator with its unset fields filled by a Trainer (as in a run)."""
    trainer = lib.make_trainer(evals={"val": kd.evals.Evaluator(**fields)})
    return trainer, trainer.evals["val"]


def test_evaluator_stops_after_num_batches():
    ds = Counting(_batches([4] * 5))
    trainer, evaluator = _evaluator(ds=ds, num_batches=2)
    evaluator.evaluate(trainer.init_state(), step=0)
    assert ds.yielded == 2


def test_evaluator_without_num_batches_reads_all_of_ds():
    ds = Counting(_batches([4] * 3))
    trainer, evaluator = _evaluator(ds=ds, num_batches=None)
    evaluator.evaluate(trainer.init_state(), step=0)
    assert ds.yielded == 3


def _mlp(params: dict, x: np.ndarray) -> np.ndarray:
    hidden, out = params["hidden"], params["out"]
    return np.maximum(x @ hidden["kernel"] + hidden["bias"], 0) @ out["kernel"] + out["bias"]


def test_evaluator_averages_over_every_example_of_every_batch():
    batches = _batches([4, 2, 3])
    trainer, evaluator = _evaluator(
        ds=Counting(batches),
        losses={"l2": kd.losses.L2(preds="preds", targets="batch.y")},
        metrics={"mean_y": kd.metrics.Average(values="batch.y")},
    )
    state = trainer.init_state()
    with highest():  # compared with a float64 reference
        values = evaluator.evaluate(state, step=0)
    params = jax.device_get(state.params)
    x, y = (np.concatenate([b[k] for b in batches]) for k in ("x", "y"))
    np.testing.assert_allclose(values["losses/l2"], np.mean((_mlp(params, x) - y) ** 2), rtol=1e-5)
    np.testing.assert_allclose(values["metrics/mean_y"], y.mean(), rtol=1e-5)


def test_evaluator_uses_the_trainer_losses_by_default():
    trainer, evaluator = _evaluator(ds=Counting(_batches([4])))
    assert set(evaluator.evaluate(trainer.init_state(), step=0)) == {"losses/l2"}


def test_evaluator_runs_the_model_in_eval_mode():
    # Dropout keeps every value in eval mode, so the preds are the inputs.
    trainer = lib.make_trainer(
        model=lib.Dropout(),
        train_losses={"id": lib.MSE(preds="preds", targets="batch.x")},
        evals={"val": kd.evals.Evaluator(ds=Counting(_batches([8])))},
    )
    values = trainer.evals["val"].evaluate(trainer.init_state(), step=0)
    assert values["losses/id"] == 0.0


def test_evaluator_with_empty_data_raises_naming_the_step():
    trainer, evaluator = _evaluator(ds=[])
    with pytest.raises(ValueError, match="yielded no batch at step 7"):
        evaluator.evaluate(trainer.init_state(), step=7)


def test_evaluator_reads_the_trainer_eval_ds_by_default():
    ds = Counting(_batches([4]))
    trainer = lib.make_trainer(eval_ds=ds, evals={"val": kd.evals.Evaluator()})
    assert trainer.evals["val"].ds is ds


# ---------------------------------------------------------------------------------------------- check


def test_check_without_eval_data_raises():
    trainer, evaluator = _evaluator()
    with pytest.raises(ValueError, match=r"evals\['val'\].ds: no evaluation data"):
        evaluator.check(trainer.state_specs, where="evals['val']")


def test_check_of_endless_data_without_num_batches_raises():
    trainer, evaluator = _evaluator(ds=lib.Regression(num_epochs=None), num_batches=None)
    with pytest.raises(ValueError, match=r"Evaluator: num_batches=None .* num_epochs is None"):
        evaluator.check(trainer.state_specs)


def test_check_of_endless_data_with_num_batches_passes():
    trainer, evaluator = _evaluator(ds=lib.Regression(num_epochs=None), num_batches=2)
    evaluator.check(trainer.state_specs)


def test_check_of_a_bad_key_raises_naming_the_evaluator_and_the_key():
    trainer, evaluator = _evaluator(
        ds=lib.Regression(num_epochs=1),
        losses={"l2": kd.losses.L2(preds="preds", targets="batch.label")},
    )
    with pytest.raises(kd.train.KeyPathError, match=r"(?s)evals\['val'\]: losses\['l2'\].*'batch\.label'"):
        evaluator.check(trainer.state_specs, where="evals['val']")


def test_trainer_check_runs_the_evaluator_checks():
    trainer, _ = _evaluator(ds=lib.Regression(num_epochs=None))
    with pytest.raises(ValueError, match=r"evals\['val'\]: num_batches=None"):
        trainer.check()


def test_cache_reads_the_evaluation_data_once_and_gives_the_same_values():
    counting = _CountingForCache(lib.Regression(num_epochs=1))
    evaluator = kd.evals.Evaluator(run=kd.evals.EveryNSteps(2), ds=counting, cache=True)
    trainer = lib.make_trainer(evals={"e": evaluator})
    trainer.train()
    values = [value for _, value in trainer.writer.scalars["e/losses/l2"]]
    assert counting.passes == 1 and len(values) == 3  # steps 0, 2, 4: one read of the data
    state = trainer.init_state()
    assert trainer.evals["e"].evaluate(state, 0) == trainer.evals["e"].evaluate(state, 0)


def test_an_evaluator_name_is_the_prefix_of_its_values():
    evaluator = kd.evals.Evaluator(run=kd.evals.Final(), name="holdout", ds=lib.Regression(num_epochs=1))
    trainer = lib.make_trainer(evals={"e": evaluator})
    trainer.train()
    assert "holdout/losses/l2" in trainer.writer.scalars and "e/losses/l2" not in trainer.writer.scalars


class _CountingForCache:
    def __init__(self, ds):
        self.ds, self.passes = ds, 0
        self.num_epochs = ds.num_epochs
        self.element_spec = ds.element_spec

    def __iter__(self):
        self.passes += 1
        return iter(self.ds)


def test_the_eval_step_compiles_once_for_every_evaluation_of_a_run():
    trainer = lib.make_trainer(
        num_train_steps=6,
        eval_ds=lib.Regression(num_epochs=1),
        evals={"val": kd.evals.Evaluator(run=kd.evals.EveryNSteps(2))},
    )

    trainer.train()  # evaluates at steps 0, 2, 4 and 6

    evalstep = trainer.evals["val"].evalstep
    # One compiled eval step (the check before ran eval_shape).
    assert evalstep._jitted_eval._cache_size() == 1
