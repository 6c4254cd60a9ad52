"""kd.train.AuxState: the loss / metric / summary states of steps, merged and computed under their log names."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import kd
import numpy as np
import pytest
import train_fixtures as lib
from precision import highest

AuxState = kd.train.AuxState


def _avg(total: float, count: float) -> kd.metrics.AverageState:
    return kd.metrics.AverageState(total=jnp.float32(total), count=jnp.float32(count))


# ---------------------------------------------------------------------------------------------- merge


def test_merge_combines_the_states_of_two_steps():
    first = AuxState(loss_states={"l2": _avg(2.0, 4.0)}, metric_states={"acc": _avg(3.0, 4.0)})
    second = AuxState(loss_states={"l2": _avg(4.0, 4.0)}, metric_states={"acc": _avg(1.0, 4.0)})
    assert first.merge(second).compute() == {
        "losses/l2": 0.75,
        "metrics/acc": 0.5,
    }


def test_merge_keeps_a_state_present_in_one_step_only():
    first = AuxState(metric_states={"a": _avg(1.0, 1.0)})
    second = AuxState(metric_states={"b": _avg(6.0, 2.0)})
    assert first.merge(second).compute() == {"metrics/a": 1.0, "metrics/b": 3.0}


def test_merge_merges_summary_states():
    images = kd.summaries.ShowImages(images="batch.image", num_images=3)
    first = AuxState(summary_states={"img": images.get_state(images=jnp.zeros((2, 2, 2, 1)))})
    second = AuxState(summary_states={"img": images.get_state(images=jnp.ones((2, 2, 2, 1)))})
    shown = first.merge(second).compute_summaries()["summaries/img"]
    assert shown.shape == (3, 2, 2, 1)
    np.testing.assert_array_equal(shown[:, 0, 0, 0], [0.0, 0.0, 1.0])


def test_merge_with_none_is_itself():
    aux = AuxState(loss_states={"l2": _avg(1.0, 1.0)})
    assert aux.merge(None) is aux


def test_merge_runs_under_jit():
    first = AuxState(loss_states={"l2": _avg(2.0, 1.0)})
    second = AuxState(loss_states={"l2": _avg(4.0, 1.0)})
    merged = jax.jit(lambda a, b: a.merge(b))(first, second)
    assert merged.compute()["losses/l2"] == 3.0


# ---------------------------------------------------------------------------------------------- compute


def test_compute_names_each_loss_and_their_sum():
    aux = AuxState(loss_states={"recon": _avg(1.0, 4.0), "reg": _avg(0.5, 1.0)})
    assert aux.compute() == {"losses/recon": 0.25, "losses/reg": 0.5, "losses/total": 0.75}


def test_compute_without_losses_has_no_total():
    assert AuxState(metric_states={"acc": _avg(1.0, 2.0)}).compute() == {"metrics/acc": 0.5}


def test_compute_of_one_loss_has_no_total():  # the loss is its own total
    aux = AuxState(loss_states={"l2": _avg(1.0, 4.0)}, metric_states={"acc": _avg(1.0, 2.0)})
    assert aux.compute() == {"losses/l2": 0.25, "metrics/acc": 0.5}


def test_compute_gives_python_floats_for_scalars():
    values = AuxState(loss_states={"l2": _avg(1.0, 2.0)}, metric_states={"m": _avg(1.0, 4.0)}).compute()
    assert all(type(value) is float for value in values.values())


def test_compute_names_dict_results_by_their_keys():
    params = {"dense": {"kernel": jnp.full((2, 2), 3.0), "bias": jnp.full((2,), 4.0)}}
    norms = kd.metrics.TreeMap(metric=kd.metrics.Norm(tensor="params", axis=None))
    aux = AuxState(metric_states={"norm": norms.get_state(tensor=params)})
    values = aux.compute()
    # A nested result (TreeMap's) is named by its path, joined with "/" as Kauldron's writer does.
    assert set(values) == {"metrics/norm/dense/kernel", "metrics/norm/dense/bias"}
    assert values["metrics/norm/dense/kernel"] == pytest.approx(6.0)
    assert values["metrics/norm/dense/bias"] == pytest.approx(np.sqrt(32.0))


def test_compute_leaves_out_empty_states():
    aux = AuxState(metric_states={"grad_norm": kd.metrics.EmptyState(), "acc": _avg(1.0, 1.0)})
    assert aux.compute() == {"metrics/acc": 1.0}


def test_compute_keeps_array_results_as_arrays():
    per_class = kd.metrics.AverageState(total=jnp.array([1.0, 2.0]), count=jnp.array([1.0, 4.0]))
    values = AuxState(metric_states={"per_class": per_class}).compute()
    assert isinstance(values["metrics/per_class"], np.ndarray)
    np.testing.assert_allclose(values["metrics/per_class"], [1.0, 0.5])


def test_compute_leaves_out_summaries():
    images = kd.summaries.ShowImages(images="batch.image", num_images=1)
    aux = AuxState(summary_states={"img": images.get_state(images=jnp.zeros((1, 2, 2, 1)))})
    assert aux.compute() == {}


def test_compute_summaries_names_each_summary():
    images = kd.summaries.ShowImages(images="batch.image", num_images=2)
    histogram = kd.summaries.Histogram(tensor="preds")
    aux = AuxState(
        metric_states={"acc": _avg(1.0, 1.0)},
        summary_states={
            "inputs": images.get_state(images=jnp.zeros((2, 3, 3, 1))),
            "preds": histogram.get_state(tensor=jnp.arange(6.0)),
        },
    )
    summaries = aux.compute_summaries()
    assert set(summaries) == {"summaries/inputs", "summaries/preds"}
    assert summaries["summaries/inputs"].shape == (2, 3, 3, 1)


# ---------------------------------------------------------------------------------------------- from a step


def _mlp(params: dict, x: np.ndarray) -> np.ndarray:
    """`lib.Mlp` in NumPy."""
    hidden, out = params["hidden"], params["out"]
    return np.maximum(x @ hidden["kernel"] + hidden["bias"], 0) @ out["kernel"] + out["bias"]


def test_a_logging_step_gives_every_loss_and_metric():
    trainer = lib.make_trainer(
        train_losses={"l2": kd.losses.L2(preds="preds", targets="batch.y")},
        train_metrics={"mean_y": kd.metrics.Average(values="batch.y")},
    )
    batch = trainer.train_ds.batch(0)
    state = trainer.init_state()
    params = jax.device_get(state.params)  # the loss is of the params before the update
    with highest():  # compared with a float64 reference
        _, aux = trainer.trainstep.step(state, batch, return_metrics=True)
    values = aux.compute()
    assert set(values) == {"losses/l2", "metrics/mean_y"}
    assert values["losses/l2"] == pytest.approx(
        np.mean((_mlp(params, batch["x"]) - batch["y"]) ** 2), rel=1e-5
    )
    assert values["metrics/mean_y"] == pytest.approx(batch["y"].mean(), rel=1e-5)


def test_a_tree_with_lists_is_named_by_index():
    params = {"layers": [{"k": jnp.full((2,), 3.0)}, {"k": jnp.full((2,), 4.0)}]}
    norms = kd.metrics.TreeMap(metric=kd.metrics.Norm(tensor="params", axis=None))
    values = AuxState(metric_states={"tm": norms.get_state(tensor=params)}).compute()
    assert set(values) == {"metrics/tm/layers/0/k", "metrics/tm/layers/1/k"}
    assert values["metrics/tm/layers/1/k"] == pytest.approx(np.sqrt(32.0))
