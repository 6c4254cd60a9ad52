"""kd.metrics wrappers: TreeMap, TreeReduce (globs included) and SkipIfMissing."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import kontext
import ktyping
import numpy as np
import optax
import pytest
from kd import losses, metrics


def _params() -> dict:
    return {
        "dense": {"kernel": jnp.full((2, 2), 1.0), "bias": jnp.array([3.0, 4.0])},
        "out": {"kernel": jnp.array([[2.0], [0.0]]), "bias": jnp.array([0.0])},
    }


def _leaves(*paths: str) -> list[np.ndarray]:
    tree = _params()
    return [np.asarray(tree[a][b]) for a, b in (path.split(".") for path in paths)]


def test_tree_map_computes_a_tree_shaped_like_its_input_as_in_kauldron():
    metric = metrics.TreeMap(metric=metrics.Norm(tensor="params", axis=None))
    out = metric.get_state_from_context({"params": _params()}).compute()
    assert {k: sorted(v) for k, v in out.items()} == {"dense": ["bias", "kernel"], "out": ["bias", "kernel"]}
    np.testing.assert_allclose(out["dense"]["kernel"], 2.0)
    np.testing.assert_allclose(out["dense"]["bias"], 5.0)


def test_tree_map_of_norm_with_the_default_axis_gives_each_leafs_mean_row_norm():
    out = metrics.TreeMap(metric=metrics.Norm(tensor="params")).get_state_from_context({"params": _params()})
    out = kontext.flatten_with_path(out.compute())
    for path, leaf in zip(out, _leaves(*out)):
        np.testing.assert_allclose(out[path], np.linalg.norm(leaf, axis=-1).mean(), rtol=1e-6)
    np.testing.assert_allclose(out["dense.kernel"], np.sqrt(2.0), rtol=1e-6)
    np.testing.assert_allclose(out["out.kernel"], 1.0)  # rows [2] and [0]


def test_tree_map_with_a_glob_keeps_only_matching_leaves_relative_to_the_prefix():
    metric = metrics.TreeMap(metric=metrics.Norm(tensor="grads.**.kernel"))
    out = kontext.flatten_with_path(metric.get_state_from_context({"grads": _params(), "params": {}}).compute())
    assert list(out) == ["dense.kernel", "out.kernel"]
    np.testing.assert_allclose(out["out.kernel"], 1.0)  # the mean of the row norms 2 and 0


def test_tree_map_state_merges_in_jit_and_computes_on_the_host():
    metric = metrics.TreeMap(metric=metrics.Norm(tensor="params"))
    step = jax.jit(metric.get_state_from_context)
    a, b = step({"params": _params()}), step({"params": jax.tree.map(lambda x: 3 * x, _params())})
    merged = jax.device_get(jax.jit(lambda x, y: x.merge(y))(a, b))
    np.testing.assert_allclose(merged.compute()["dense"]["bias"], (5.0 + 15.0) / 2)


def test_tree_map_over_two_trees_pairs_their_leaves():
    preds = {"a": jnp.array([1.0, 2.0]), "b": jnp.array([0.0])}
    targets = {"a": jnp.array([1.0, 0.0]), "b": jnp.array([3.0])}
    metric = metrics.TreeMap(metric=losses.L2(preds="preds", targets="batch"))
    out = metric.get_state_from_context({"step": 0, "preds": preds, "batch": targets}).compute()
    np.testing.assert_allclose(out["a"], 2.0)
    np.testing.assert_allclose(out["b"], 9.0)


def test_tree_map_over_trees_with_different_leaves_names_both():
    metric = metrics.TreeMap(metric=metrics.Norm(tensor="params", mask="masks"))
    with pytest.raises(ValueError, match="'tensor' and 'mask' have different leaves"):
        metric.get_state_from_context({"params": {"a": jnp.ones(2)}, "masks": {"b": jnp.ones(1)}})


def test_tree_map_names_the_leaf_where_the_inner_metric_fails():
    metric = metrics.TreeMap(metric=metrics.Norm(tensor="params"))
    with pytest.raises(ktyping.KTypeCheckError) as info:
        metric.get_state(tensor={"ok": jnp.ones(2), "steps": jnp.ones(2, jnp.int32)})
    assert "leaf 'steps'" in "\n".join(getattr(info.value, "__notes__", []))


def test_tree_reduce_of_the_default_norm_averages_every_row_norm_of_every_leaf():
    metric = metrics.TreeReduce(metric=metrics.Norm(tensor="grads.**.kernel"))
    state = metric.get_state_from_context({"grads": _params()})
    assert isinstance(state, metrics.NormState)
    row_norms = np.concatenate([np.linalg.norm(k, axis=-1) for k in _leaves("dense.kernel", "out.kernel")])
    np.testing.assert_allclose(state.compute(), row_norms.mean(), rtol=1e-6)  # (2 sqrt(2) + 2 + 0) / 4


def test_tree_reduce_weighs_leaves_by_their_number_of_norms_not_equally():
    grads = {"a": jnp.array([[3.0, 4.0], [0.0, 1.0], [0.0, 0.0]]), "b": jnp.array([[6.0, 8.0]])}
    value = metrics.TreeReduce(metric=metrics.Norm(tensor="grads")).get_state_from_context({"grads": grads})
    np.testing.assert_allclose(value.compute(), (5.0 + 1.0 + 0.0 + 10.0) / 4)  # not (2 + 10) / 2


def test_tree_reduce_with_average_aggregation_equals_the_default():
    context = {"grads": _params()}
    default = metrics.TreeReduce(metric=metrics.Norm(tensor="grads")).get_state_from_context(context)
    average = metrics.TreeReduce(metric=metrics.Norm(tensor="grads", aggregation_type="average"))
    np.testing.assert_allclose(average.get_state_from_context(context).compute(), default.compute())
    row_norms = np.concatenate([np.linalg.norm(x, axis=-1).ravel() for x in jax.tree.leaves(_params())])
    np.testing.assert_allclose(default.compute(), row_norms.mean(), rtol=1e-6)


def test_tree_reduce_of_norm_with_axis_none_averages_the_leaf_norms_and_warns():
    with pytest.warns(
        UserWarning, match='averages the norms of the individual leaves.*aggregation_type="concat"'
    ):
        metric = metrics.TreeReduce(metric=metrics.Norm(tensor="grads", axis=None))
    value = metric.get_state_from_context({"grads": _params()}).compute()
    leaf_norms = [np.linalg.norm(x.ravel()) for x in jax.tree.leaves(_params())]
    np.testing.assert_allclose(value, np.mean(leaf_norms), rtol=1e-6)  # (2 + 5 + 2 + 0) / 4


def test_tree_reduce_of_norm_with_axis_none_and_average_aggregation_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metric = metrics.TreeReduce(
            metric=metrics.Norm(tensor="grads", axis=None, aggregation_type="average")
        )
        metrics.TreeReduce(metric=metrics.Norm(tensor="grads"))
    np.testing.assert_allclose(metric.get_state_from_context({"grads": _params()}).compute(), 9.0 / 4)


def test_tree_reduce_with_concat_aggregation_is_the_global_norm():
    expected = np.sqrt(sum(float(jnp.sum(x**2)) for x in jax.tree.leaves(_params())))
    for axis in (-1, None):
        metric = metrics.TreeReduce(metric=metrics.Norm(tensor="grads", axis=axis, aggregation_type="concat"))
        value = metric.get_state_from_context({"grads": _params()}).compute()
        np.testing.assert_allclose(value, expected, rtol=1e-6)


def test_tree_reduce_with_concat_aggregation_and_ord_1_is_the_sum_of_absolute_values():
    metric = metrics.TreeReduce(metric=metrics.Norm(tensor="grads", ord=1, aggregation_type="concat"))
    value = metric.get_state_from_context({"grads": _params()}).compute()
    np.testing.assert_allclose(value, sum(np.abs(x).sum() for x in jax.tree.leaves(_params())), rtol=1e-6)


def test_tree_glob_matching_nothing_raises_path_not_found():
    metric = metrics.TreeReduce(metric=metrics.Norm(tensor="grads.**.scale"))
    with pytest.raises(kontext.PathNotFoundError, match="no leaf of the context matches"):
        metric.get_state_from_context({"grads": _params()})


def test_tree_glob_matching_nothing_raises_even_with_a_shared_scalar_input():
    metric = metrics.TreeReduce(
        metric=losses.L1(preds="preds.**.y", targets="preds.**.y", weight=optax.constant_schedule(1.0))
    )
    with pytest.raises(kontext.PathNotFoundError, match="no leaf of the context matches"):
        metric.get_state_from_context({"step": 0, "preds": {"x": jnp.ones(2)}})


def test_tree_wrappers_expose_the_inner_keys_cut_before_the_first_wildcard():
    metric = metrics.TreeMap(metric=metrics.Norm(tensor="grads.**.kernel", mask=None))
    assert kontext.get_keypaths(metric) == {"tensor": "grads", "mask": None}


def test_skip_if_missing_emits_an_empty_state_for_a_missing_key():
    metric = metrics.SkipIfMissing(metrics.Norm(tensor="grads"))
    state = metric.get_state_from_context({"params": _params()})
    assert isinstance(state, metrics.EmptyState)
    assert state.compute() == {}


def test_skip_if_missing_computes_the_metric_when_the_key_is_there():
    metric = metrics.SkipIfMissing(metric=metrics.Norm(tensor="x"))
    np.testing.assert_allclose(metric.get_state_from_context({"x": jnp.array([3.0, 4.0])}).compute(), 5.0)


def test_skip_if_missing_around_a_tree_glob_matching_nothing_skips():
    metric = metrics.SkipIfMissing(metrics.TreeReduce(metric=metrics.Norm(tensor="grads.**.scale")))
    assert isinstance(metric.get_state_from_context({"grads": _params()}), metrics.EmptyState)


def test_skip_if_missing_still_raises_shape_errors():
    metric = metrics.SkipIfMissing(metrics.Accuracy(logits="l", labels="y"))
    with pytest.raises(ktyping.KTypeCheckError):
        metric.get_state_from_context({"l": jnp.zeros((2, 3)), "y": jnp.zeros((2, 5), jnp.int32)})


def test_skipped_state_merges_with_a_computed_one():
    metric = metrics.SkipIfMissing(metrics.Norm(tensor="x"))
    skipped = metric.get_state_from_context({})
    computed = metric.get_state_from_context({"x": jnp.array([3.0, 4.0])})
    np.testing.assert_allclose(skipped.merge(computed).compute(), 5.0)
    np.testing.assert_allclose(computed.merge(skipped).compute(), 5.0)


def test_skip_if_missing_exposes_the_inner_keys():
    metric = metrics.SkipIfMissing(metrics.Accuracy(logits="preds.logits", labels="batch.label"))
    assert kontext.get_keypaths(metric) == {"logits": "preds.logits", "labels": "batch.label", "mask": None}
