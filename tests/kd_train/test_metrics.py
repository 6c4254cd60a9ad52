"""kd.metrics built-ins and the Metric protocol (keys, get_state_from_context, __call__)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import konfig
import kontext
import ktyping
import numpy as np
import pytest
from kd import metrics
from precision import rtol

_LOGITS = jnp.array([[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 1.0], [5.0, 0.0, 0.0]])
_LABELS = jnp.array([0, 1, 0, 2])  # the first two are right


def test_accuracy_of_int_labels_shaped_b():
    assert metrics.Accuracy(logits="l", labels="y")(logits=_LOGITS, labels=_LABELS) == 0.5


def test_accuracy_of_int_labels_shaped_b_1():
    assert metrics.Accuracy(logits="l", labels="y")(logits=_LOGITS, labels=_LABELS[:, None]) == 0.5


def test_accuracy_mask_excludes_examples():
    mask = jnp.array([True, False, True, False])
    value = metrics.Accuracy(logits="l", labels="y")(logits=_LOGITS, labels=_LABELS, mask=mask)
    np.testing.assert_allclose(value, 0.5)
    value = metrics.Accuracy(logits="l", labels="y")(logits=_LOGITS, labels=_LABELS, mask=mask[:, None])
    np.testing.assert_allclose(value, 0.5)


def test_accuracy_with_labels_of_the_wrong_shape_names_labels_and_both_shapes():
    with pytest.raises(ktyping.KTypeCheckError) as info:
        metrics.Accuracy(logits="l", labels="y").get_state(
            logits=_LOGITS, labels=jnp.zeros((4, 2), jnp.int32)
        )
    message = str(info.value)
    assert "argument labels" in message
    assert "(4, 2)" in message
    assert "f32[4 3]" in message  # the logits' shape, in the argument listing


def test_accuracy_rejects_float_labels():
    with pytest.raises(ktyping.KTypeCheckError, match="argument labels"):
        metrics.Accuracy(logits="l", labels="y").get_state(logits=_LOGITS, labels=jnp.zeros(4))


def test_precision1_counts_the_top_class_among_positive_labels():
    multi_hot = jnp.array([[1.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    value = metrics.Precision1(logits="l", labels="y")(logits=_LOGITS, labels=multi_hot)
    np.testing.assert_allclose(value, 0.5)  # rows 0 and 2 have their arg-max among the positives


def test_norm_default_axis_is_the_last_axis_averaged_over_the_others():
    x = np.arange(24.0).reshape(2, 3, 4) - 10.0
    assert metrics.Norm(tensor="x").axis == -1
    expected = np.linalg.norm(x, axis=-1).mean()  # the mean of the 6 vector norms
    np.testing.assert_allclose(metrics.Norm(tensor="x")(tensor=jnp.asarray(x)), expected, rtol=1e-6)


def test_norm_along_an_axis_is_averaged_over_the_batch():
    x = jnp.array([[3.0, 4.0], [0.0, 1.0]])  # row norms 5 and 1
    np.testing.assert_allclose(metrics.Norm(tensor="x", axis=-1)(tensor=x), 3.0)


def test_norm_along_a_pair_of_axes_is_the_mean_matrix_norm():
    x = np.arange(12.0).reshape(3, 2, 2)
    expected = np.linalg.norm(x, axis=(1, 2)).mean()  # Frobenius norms of the 3 matrices
    np.testing.assert_allclose(
        metrics.Norm(tensor="x", axis=(1, 2))(tensor=jnp.asarray(x)), expected, rtol=1e-6
    )


def test_norm_with_axis_none_is_the_norm_of_the_whole_tensor():
    x = np.array([[3.0, 0.0], [1.0, 4.0]])
    expected = np.sqrt((x**2).sum())
    np.testing.assert_allclose(
        metrics.Norm(tensor="x", axis=None)(tensor=jnp.asarray(x)), expected, rtol=1e-6
    )


def test_norm_with_axis_none_and_an_ord_is_the_vector_norm_of_the_flattened_tensor():
    x = np.array([[1.0, -2.0], [3.0, 4.0]])  # as a matrix, its 1-norm would be 6
    value = metrics.Norm(tensor="x", axis=None, ord=1)(tensor=jnp.asarray(x))
    np.testing.assert_allclose(value, np.abs(x).sum())


def test_norm_of_a_scalar_needs_axis_none():
    with pytest.raises(ValueError, match=r"axis=-1 is out of range for a tensor of shape \(\).*axis=None"):
        metrics.Norm(tensor="x").get_state(tensor=jnp.array(3.0))
    np.testing.assert_allclose(metrics.Norm(tensor="x", axis=None)(tensor=jnp.array(-3.0)), 3.0)


def test_norm_mask_drops_norms_from_the_average():
    x = jnp.array([[3.0, 4.0], [0.0, 1.0]])
    value = metrics.Norm(tensor="x", axis=-1)(tensor=x, mask=jnp.array([[True], [False]]))
    np.testing.assert_allclose(value, 5.0)


def test_norm_with_ord_1():
    np.testing.assert_allclose(metrics.Norm(tensor="x", ord=1)(tensor=jnp.array([1.0, -2.0, 3.0])), 6.0)


def test_norm_aggregation_type_none_is_the_default_and_averages_like_average():
    x = np.array([[3.0, 4.0], [0.0, 1.0], [1.0, 1.0]])
    assert metrics.Norm(tensor="x").aggregation_type is None
    expected = np.linalg.norm(x, axis=-1).mean()
    for aggregation_type in (None, "average"):
        value = metrics.Norm(tensor="x", aggregation_type=aggregation_type)(tensor=jnp.asarray(x))
        np.testing.assert_allclose(value, expected, rtol=1e-6)


def test_norm_average_merges_batches_as_the_mean_of_all_their_norms():
    a, b = np.array([[3.0, 4.0]]), np.array([[0.0, 1.0], [0.0, 2.0]])
    norm = metrics.Norm(tensor="x")
    state = norm.get_state(tensor=jnp.asarray(a)).merge(norm.get_state(tensor=jnp.asarray(b)))
    expected = np.linalg.norm(np.concatenate([a, b]), axis=-1).mean()  # (5 + 1 + 2) / 3
    np.testing.assert_allclose(state.compute(), expected, rtol=1e-6)


def test_norm_concat_merges_batches_as_the_norm_of_all_their_values():
    a, b = np.array([[3.0, 4.0]]), np.array([[0.0, 1.0], [0.0, 2.0]])
    norm = metrics.Norm(tensor="x", aggregation_type="concat")
    state = norm.get_state(tensor=jnp.asarray(a)).merge(norm.get_state(tensor=jnp.asarray(b)))
    expected = np.sqrt((a**2).sum() + (b**2).sum())
    np.testing.assert_allclose(jax.device_get(state).compute(), expected, rtol=rtol(1e-6))


def test_norm_concat_with_a_mask_is_the_norm_of_the_masked_in_rows():
    x = np.array([[3.0, 4.0], [0.0, 1.0], [2.0, 0.0]])
    mask = np.array([[True], [False], [True]])
    value = metrics.Norm(tensor="x", aggregation_type="concat")(tensor=jnp.asarray(x), mask=jnp.asarray(mask))
    np.testing.assert_allclose(value, np.sqrt((x[[0, 2]] ** 2).sum()), rtol=rtol(1e-6))


def test_norm_concat_with_ord_1_is_the_sum_of_absolute_values():
    x = np.array([[1.0, -2.0], [3.0, -4.0]])
    value = metrics.Norm(tensor="x", ord=1, aggregation_type="concat")(tensor=jnp.asarray(x))
    np.testing.assert_allclose(value, np.abs(x).sum(), rtol=1e-6)


def test_norm_rejects_an_unknown_aggregation_type():
    with pytest.raises(ValueError, match="aggregation_type must be None, 'average' or 'concat', got 'sum'"):
        metrics.Norm(tensor="x", aggregation_type="sum")  # type: ignore[arg-type]


def test_norm_concat_aggregation_requires_a_power_norm():
    with pytest.raises(ValueError, match="aggregation_type='concat' needs a finite positive `ord`"):
        metrics.Norm(tensor="x", ord=jnp.inf, aggregation_type="concat")


def test_std_of_values():
    values = jnp.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(
        metrics.Std(values="v")(values=values), np.std([1.0, 2.0, 3.0, 4.0]), rtol=1e-6
    )


def test_std_state_merges_like_the_std_of_all_values():
    std = metrics.Std(values="v")
    state = std.get_state(values=jnp.array([1.0, 2.0])).merge(std.get_state(values=jnp.array([3.0, 10.0])))
    np.testing.assert_allclose(jax.device_get(state).compute(), np.std([1.0, 2.0, 3.0, 10.0]), rtol=1e-6)


def test_average_of_a_scalar_value():
    avg = metrics.Average(values="loss_total")
    state = avg.get_state(values=jnp.array(2.0)).merge(avg.get_state(values=jnp.array(4.0)))
    np.testing.assert_allclose(state.compute(), 3.0)


def test_average_with_mask():
    value = metrics.Average(values="v")(values=jnp.array([1.0, 100.0, 3.0]), mask=jnp.array([1, 0, 1]) > 0)
    np.testing.assert_allclose(value, 2.0)


def test_noop_metric_emits_an_empty_state():
    assert isinstance(metrics.NoopMetric().get_state_from_context({}), metrics.EmptyState)


def test_get_state_from_context_on_a_plain_dict():
    ctx = {"preds": {"logits": _LOGITS}, "batch": {"label": _LABELS}}
    state = metrics.Accuracy(logits="preds.logits", labels="batch.label").get_state_from_context(ctx)
    assert isinstance(state, metrics.AverageState)
    np.testing.assert_allclose(state.compute(), 0.5)


@dataclasses.dataclass
class _Context:
    step: int
    batch: dict
    preds: dict


def test_get_state_from_context_inside_jit_on_a_dataclass_context():
    metric = metrics.Accuracy(logits="preds.logits", labels="batch.label")

    @jax.jit
    def step(logits, labels):
        return metric.get_state_from_context(
            _Context(step=0, batch={"label": labels}, preds={"logits": logits})
        )

    np.testing.assert_allclose(jax.device_get(step(_LOGITS, _LABELS)).compute(), 0.5)


def test_missing_key_raises_kontexts_unresolved_keys_error():
    with pytest.raises(kontext.UnresolvedKeysError, match=r"batch\.label"):
        metrics.Accuracy(logits="preds.logits", labels="batch.label").get_state_from_context(
            {"preds": {"logits": _LOGITS}, "batch": {}}
        )


def test_unset_required_key_raises_kontexts_required_key_error():
    with pytest.raises(kontext.RequiredKeyError, match="labels"):
        metrics.Accuracy(logits="preds.logits").get_state_from_context({"preds": {"logits": _LOGITS}})


def test_call_with_context_computes_from_the_context():
    ctx = {"x": jnp.array([3.0, 4.0])}
    np.testing.assert_allclose(metrics.Norm(tensor="x")(context=ctx), 5.0)


def test_simple_metric_keys_are_its_key_fields():
    keys = kontext.get_keypaths(metrics.Accuracy(logits="preds.logits", labels="batch.label"))
    assert keys == {"logits": "preds.logits", "labels": "batch.label", "mask": None}


def test_metric_is_a_frozen_keyword_only_dataclass():
    metric = metrics.Norm(tensor="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        metric.tensor = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        metrics.Norm("x")  # type: ignore[misc]


def test_metric_built_from_a_konfig_config_works():
    with konfig.imports():
        from kd import metrics as cfg_metrics

    cfg = konfig.ConfigDict()
    cfg.metric = cfg_metrics.Accuracy(logits="preds.logits", labels="batch.label")
    metric = konfig.resolve(cfg).metric
    assert isinstance(metric, metrics.Accuracy)
    ctx = {"preds": {"logits": _LOGITS}, "batch": {"label": _LABELS}}
    np.testing.assert_allclose(metric(context=ctx), 0.5)
