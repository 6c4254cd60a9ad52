"""kd.metrics names matching Kauldron's: BinaryAccuracy, RocAuc, Ari, SingleDimension, LpipsVgg,
nested TreeMap results, TreeReduce.empty, the Norm(axis=None) warning, state parents."""

from __future__ import annotations

import dataclasses
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sklearn.metrics
from kd import metrics
from precision import rtol


def test_binary_accuracy_counts_positive_logits_matching_labels():
    logits = jnp.array([2.0, -1.0, 0.5, -3.0])
    labels = jnp.array([1, 1, 0, 0])
    assert metrics.BinaryAccuracy()(logits=logits, labels=labels) == pytest.approx(0.5)


def test_roc_auc_matches_sklearn_across_merged_batches():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(40, 3)).astype(np.float32)
    labels = rng.integers(0, 3, size=(40, 1)).astype(np.int32)
    metric = metrics.RocAuc()
    state = metric.get_state(logits=jnp.asarray(logits[:25]), labels=jnp.asarray(labels[:25]))
    state = state.merge(metric.empty()).merge(
        metric.get_state(logits=jnp.asarray(logits[25:]), labels=jnp.asarray(labels[25:]))
    )
    probs = np.asarray(jax.nn.softmax(logits, axis=-1), np.float64)
    expected = sklearn.metrics.roc_auc_score(labels[:, 0], probs, multi_class="ovr", labels=[0, 1, 2])
    assert state.compute() == pytest.approx(expected, rel=1e-5)


def test_roc_auc_binary_scores_the_positive_class():
    logits = jnp.array([[0.0, 1.0], [1.0, 0.0], [0.0, 3.0], [0.2, 0.1]])
    labels = jnp.array([[1], [0], [1], [1]], jnp.int32)
    probs = np.asarray(jax.nn.softmax(logits, axis=-1))[:, 1]
    expected = sklearn.metrics.roc_auc_score(np.asarray(labels)[:, 0], probs)
    assert metrics.RocAuc()(logits=logits, labels=labels) == pytest.approx(expected)


def test_states_of_differently_configured_metrics_do_not_merge():
    logits, labels = jnp.eye(3), jnp.array([[0], [1], [2]], jnp.int32)
    ovr = metrics.RocAuc().get_state(logits=logits, labels=labels)
    ovo = metrics.RocAuc(multi_class_mode="ovo").get_state(logits=logits, labels=labels)
    with pytest.raises(ValueError, match="from different metrics"):
        ovr.merge(ovo)


def test_ari_matches_sklearn_per_example():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 4, size=(3, 2, 4, 4, 1))
    preds = rng.integers(0, 5, size=(3, 2, 4, 4, 1))
    preds[0] = (labels[0] + 1) % 4  # a relabelling: ARI 1
    metric = metrics.Ari(num_instances_true=4, num_instances_pred=5)
    expected = [sklearn.metrics.adjusted_rand_score(labels[i].ravel(), preds[i].ravel()) for i in range(3)]
    assert expected[0] == pytest.approx(1.0)
    value = metric(predictions=jnp.asarray(preds), labels=jnp.asarray(labels))
    assert value == pytest.approx(np.mean(expected), rel=1e-5)


def test_ari_leaves_out_pixels_of_ignored_true_ids():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 3, size=(1, 1, 6, 6, 1))
    preds = rng.integers(0, 3, size=(1, 1, 6, 6, 1))
    keep = labels.ravel() != 0
    expected = sklearn.metrics.adjusted_rand_score(labels.ravel()[keep], preds.ravel()[keep])
    metric = metrics.Ari(num_instances_true=3, num_instances_pred=3, ignored_ids=0)
    assert metric(predictions=jnp.asarray(preds), labels=jnp.asarray(labels)) == pytest.approx(
        expected, rel=1e-5
    )


def test_single_dimension_averages_one_entry_of_the_last_axis():
    x = jnp.arange(12.0).reshape(4, 3)
    assert metrics.SingleDimension(index=2)(tensor=x) == pytest.approx(np.mean([2, 5, 8, 11]))
    with pytest.raises(ValueError, match="index=3 is out of range"):
        metrics.SingleDimension(index=3)(tensor=x)


def test_lpips_without_weights_names_the_field_and_the_file():
    metric = metrics.LpipsVgg(pred="pred", target="target")
    images = jnp.zeros((1, 16, 16, 3))
    with pytest.raises(FileNotFoundError, match=r"weights_path.*lpips_vgg_weights\.bin"):
        metric.get_state(pred=images, target=images)
    with pytest.raises(FileNotFoundError, match=r"No file at weights_path='/nonexistent\.bin'"):
        dataclasses.replace(metric, weights_path="/nonexistent.bin").get_state(pred=images, target=images)


def test_tree_map_computes_a_tree_shaped_like_its_input():
    params = {"dense": {"kernel": jnp.full((2, 2), 1.0), "bias": jnp.array([3.0, 4.0])}, "scale": jnp.ones(4)}
    out = metrics.TreeMap(metric=metrics.Norm(tensor="params", axis=None)).get_state(tensor=params).compute()
    assert jax.tree.structure(out) == jax.tree.structure({"dense": {"kernel": 0, "bias": 0}, "scale": 0})
    np.testing.assert_allclose(out["dense"]["bias"], 5.0)
    np.testing.assert_allclose(out["scale"], 2.0)


def test_tree_reduce_empty_is_the_inner_metrics_empty_state():
    inner = metrics.Norm(tensor="grads", aggregation_type="concat")
    empty = metrics.TreeReduce(metric=inner).empty()
    assert isinstance(empty, metrics.NormState) and empty.parent is inner
    state = metrics.TreeReduce(metric=inner).get_state(tensor={"a": jnp.array([3.0]), "b": jnp.array([4.0])})
    assert state.merge(empty).compute() == pytest.approx(5.0, rel=rtol(1e-6))


def test_merging_norm_states_with_axis_none_and_no_aggregation_warns():
    tree = {"a": jnp.array([3.0, 4.0]), "b": jnp.array([6.0, 8.0])}
    with pytest.warns(UserWarning, match='aggregation_type="concat"'):
        metrics.TreeReduce(metric=metrics.Norm(tensor="t", axis=None)).get_state(tensor=tree)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = metrics.TreeReduce(metric=metrics.Norm(tensor="t", axis=None, aggregation_type="average"))
        assert value.get_state(tensor=tree).compute() == pytest.approx(7.5)


def test_a_metric_state_class_must_be_a_dataclass():
    with pytest.raises(TypeError, match=r"@flax\.struct\.dataclass"):

        class _Bad(metrics.Metric):  # pyright: ignore[reportUnusedClass]
            class State(metrics.State):
                pass


def test_states_start_without_parent_and_get_it_from_get_state():
    assert metrics.AverageState.empty().parent is metrics.EMPTY
    metric = metrics.Average(values="x")
    assert metric.get_state(values=jnp.ones(2)).parent is metric
    assert metric.empty().parent is metric
