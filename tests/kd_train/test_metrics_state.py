"""kd.metrics states: pytrees that merge in and out of jit and compute on the host."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from kd import metrics


def _merge_in_jit(a: metrics.State, b: metrics.State) -> metrics.State:
    return jax.jit(lambda x, y: x.merge(y))(a, b)


def test_average_state_merge_in_jit_then_compute_on_host():
    a = metrics.AverageState.from_values(jnp.array([1.0, 2.0]))
    b = metrics.AverageState.from_values(jnp.array([6.0]))
    merged = jax.device_get(_merge_in_jit(a, b))
    assert isinstance(merged, metrics.AverageState)
    assert isinstance(merged.total, np.ndarray)
    np.testing.assert_allclose(merged.compute(), 3.0)


def test_average_state_compute_inside_jit():
    state = metrics.AverageState.from_values(jnp.array([1.0, 3.0]))
    np.testing.assert_allclose(jax.jit(lambda s: s.compute())(state), 2.0)


def test_average_state_mask_aligns_with_leading_axes():
    values = jnp.array([[1.0, 3.0], [10.0, 20.0]])
    state = metrics.AverageState.from_values(values, mask=jnp.array([True, False]))
    np.testing.assert_allclose(state.compute(), 2.0)
    np.testing.assert_allclose(state.count, 2.0)


def test_average_state_accepts_a_mask_with_a_trailing_unit_axis():
    state = metrics.AverageState.from_values(jnp.array([1.0, 5.0]), mask=jnp.array([[1.0], [0.0]]))
    np.testing.assert_allclose(state.compute(), 1.0)


def test_average_state_rejects_a_mask_of_another_batch_size():
    with pytest.raises(ValueError, match=r"mask of shape \(3,\) does not match values of shape \(2,\)"):
        metrics.AverageState.from_values(jnp.ones(2), mask=jnp.ones(3))


def test_average_state_with_zero_count_computes_zero_on_host_and_in_jit():
    state = metrics.AverageState.from_values(jnp.array([4.0]), mask=jnp.array([0.0]))
    host = jax.device_get(state)
    assert host.compute() == 0.0
    assert jax.jit(lambda s: s.compute())(state) == 0.0


def test_empty_state_is_the_identity_of_merge_on_both_sides():
    state = metrics.AverageState.from_values(jnp.array([2.0]))
    assert metrics.EmptyState().merge(state) is state
    assert state.merge(metrics.EmptyState()) is state


def test_empty_state_computes_an_empty_dict():
    assert metrics.EmptyState().compute() == {}


def test_merging_states_of_different_types_raises_naming_both():
    with pytest.raises(metrics.StateMergeError, match="AverageState with a SumState"):
        metrics.AverageState.from_values(jnp.ones(1)).merge(metrics.SumState(total=jnp.ones(())))


def test_sum_state_adds_totals():
    state = metrics.SumState(total=jnp.array(2.0)).merge(metrics.SumState(total=jnp.array(5.0)))
    assert state.compute() == 7.0


def test_state_is_a_pytree_with_array_leaves():
    state = metrics.AverageState.from_values(jnp.array([1.0, 2.0]))
    leaves = jax.tree.leaves(state)
    assert len(leaves) == 2
    assert all(isinstance(leaf, jax.Array) for leaf in leaves)


@metrics.state_dataclass
class _Collected(metrics.CollectingState):
    labels: Any = None
    logits: Any = None


def test_collecting_state_concatenates_every_field_along_axis_0():
    a = _Collected(labels=jnp.array([0, 1]), logits=jnp.zeros((2, 3)))
    b = _Collected(labels=jnp.array([2]), logits=jnp.ones((1, 3)))
    out = a.merge(b).compute()
    np.testing.assert_array_equal(out["labels"], [0, 1, 2])
    assert out["logits"].shape == (3, 3)


def test_collecting_state_merges_in_jit_and_computes_after_device_get():
    a = _Collected(labels=jnp.array([0]), logits=jnp.zeros((1, 2)))
    b = _Collected(labels=jnp.array([7]), logits=jnp.ones((1, 2)))
    out = jax.device_get(_merge_in_jit(a, b)).compute()
    assert isinstance(out["labels"], np.ndarray)
    np.testing.assert_array_equal(out["labels"], [0, 7])


def test_collecting_state_with_nothing_collected_on_one_side_keeps_the_other():
    a = _Collected(labels=jnp.array([3]), logits=None)
    out = _Collected().merge(a).compute()
    np.testing.assert_array_equal(out["labels"], [3])
    assert out["logits"] is None


@metrics.state_dataclass
class _First(metrics.CollectFirstState):
    rows: Any = None


def test_collect_first_state_keeps_only_the_first_rows_across_merges():
    a = _First(rows=jnp.arange(2), keep_first=3)
    b = _First(rows=jnp.arange(10, 14), keep_first=3)
    c = _First(rows=jnp.arange(20, 22), keep_first=3)
    np.testing.assert_array_equal(a.merge(b).merge(c).compute()["rows"], [0, 1, 10])


def test_collect_first_state_merges_in_jit_with_static_keep_first():
    a = _First(rows=jnp.arange(2), keep_first=3)
    b = _First(rows=jnp.arange(10, 14), keep_first=3)
    merged = _merge_in_jit(a, b)
    assert merged.keep_first == 3
    np.testing.assert_array_equal(jax.device_get(merged).compute()["rows"], [0, 1, 10])


def test_collect_first_states_with_different_keep_first_do_not_merge():
    with pytest.raises(metrics.StateMergeError, match="keep_first=2 and keep_first=3"):
        _First(rows=jnp.arange(2), keep_first=2).merge(_First(rows=jnp.arange(2), keep_first=3))


def test_static_field_is_part_of_the_treedef_not_a_leaf():
    state = _First(rows=jnp.arange(2), keep_first=4)
    assert len(jax.tree.leaves(state)) == 1
    rebuilt = jax.tree.unflatten(jax.tree.structure(state), [jnp.arange(5)])
    assert rebuilt.keep_first == 4
