"""kd.metrics.AutoState and its field helpers: merge, empty, finalize and compute follow the fields."""

from __future__ import annotations

import flax.struct
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from kd import metrics


@metrics.state_dataclass
class _Errors(metrics.AutoState):
    keep: int = 2
    total: jax.Array = metrics.sum_field()
    low: jax.Array = metrics.min_field()
    high: jax.Array = metrics.max_field()
    errors: jax.Array = metrics.concat_field()
    first: jax.Array = metrics.truncate_field(num_field="keep")


def _errors(values: np.ndarray) -> _Errors:
    x = jnp.asarray(values, jnp.float32)
    return _Errors(total=x.sum(), low=x.min(), high=x.max(), errors=x, first=x)


def test_each_field_merges_by_its_rule_against_numpy():
    a, b = np.array([3.0, -1.0, 4.0]), np.array([1.5, 9.0])
    out = _errors(a).merge(_errors(b)).compute()
    both = np.concatenate([a, b])
    np.testing.assert_allclose(out.total, both.sum())
    np.testing.assert_allclose(out.low, both.min())
    np.testing.assert_allclose(out.high, both.max())
    np.testing.assert_allclose(out.errors, both)
    np.testing.assert_allclose(out.first, both[:2])
    assert isinstance(out.errors, np.ndarray)


def test_empty_merges_as_a_no_op_on_either_side():
    state = _errors(np.array([1.0, 2.0, 3.0]))
    for merged in (state.merge(_Errors.empty()), _Errors.empty().merge(state)):
        assert merged.keep == 2
        np.testing.assert_allclose(merged.compute().errors, [1.0, 2.0, 3.0])
        np.testing.assert_allclose(merged.compute().first, [1.0, 2.0])


def test_static_fields_are_pytree_metadata_and_must_match_on_merge():
    state = _errors(np.array([1.0]))
    assert 2 not in jax.tree.leaves(state)  # keep is in the treedef, not a leaf
    other = _Errors(
        keep=3, total=jnp.ones(()), low=jnp.ones(()), high=jnp.ones(()), errors=jnp.ones(1), first=jnp.ones(1)
    )
    with pytest.raises(ValueError, match="static field 'keep': 2 != 3"):
        state.merge(other)


def test_sum_fields_merge_inside_jit():
    @metrics.state_dataclass
    class Sums(metrics.AutoState):
        total: jax.Array = metrics.sum_field()

    merged = jax.jit(lambda a, b: a.merge(b))(Sums(total=jnp.ones(3)), Sums(total=2 * jnp.ones(3)))
    np.testing.assert_allclose(merged.compute().total, [3.0, 3.0, 3.0])


def test_concat_fields_refuse_to_merge_traced_values():
    @metrics.state_dataclass
    class Kept(metrics.AutoState):
        values: jax.Array = metrics.concat_field()

    with pytest.raises(RuntimeError, match="outside jit"):
        jax.jit(lambda a, b: a.merge(b))(Kept(values=jnp.ones(2)), Kept(values=jnp.ones(2)))


def test_a_none_field_only_merges_with_none():
    @metrics.state_dataclass
    class Maybe(metrics.AutoState):
        values: jax.Array | None = metrics.concat_field(default=None)

    assert Maybe().merge(Maybe()).compute().values is None
    with pytest.raises(ValueError, match=r"Maybe\.values: Cannot concatenate None and non-None"):
        Maybe().merge(Maybe(values=jnp.ones(1)))


def test_state_fields_merge_and_compute_the_inner_state():
    @flax.struct.dataclass(kw_only=True)
    class Outer(metrics.AutoState):
        mean: metrics.AverageState = metrics.state_field()

    a = Outer(mean=metrics.AverageState.from_values(jnp.array([1.0, 2.0])))
    b = Outer(mean=metrics.AverageState.from_values(jnp.array([6.0])))
    assert a.merge(b).compute().mean == pytest.approx(3.0)


def test_truncate_reads_its_number_through_a_path_into_the_parent():
    @metrics.state_dataclass
    class FirstImages(metrics.AutoState):
        images: jax.Array = metrics.truncate_field(num_field="parent.num_images")

    class _Parent:
        num_images = 3

    parent = _Parent()
    state = FirstImages(images=jnp.arange(5.0), parent=parent)
    assert state.finalize().images.tolist() == [0.0, 1.0, 2.0]


def test_a_metric_with_an_auto_state_links_itself_as_parent():
    import dataclasses

    import kontext

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Median(metrics.Metric):
        values: kontext.Key = "batch.x"

        @metrics.state_dataclass
        class State(metrics.AutoState):
            values: jax.Array = metrics.concat_field()

            def compute(self) -> float:
                return float(np.median(self.finalize().values))

        def get_state(self, values: jax.Array) -> Median.State:
            return self.State(values=values)

    metric = Median()
    state = metric.get_state(values=jnp.array([5.0, 1.0])).merge(metric.empty())
    state = state.merge(metric.get_state(values=jnp.array([3.0])))
    assert state.parent is metric
    assert state.compute() == 3.0
    with pytest.raises(ValueError, match="from different metrics"):
        state.merge(Median(values="batch.y").get_state(values=jnp.ones(1)))


def test_two_empty_states_with_a_truncated_field_merge_to_empty_and_a_first_merge_collects_on_the_host():
    @metrics.state_dataclass
    class Firsts(metrics.AutoState):
        keep: int = 2
        first: jax.Array = metrics.truncate_field(num_field="keep")
        seen: jax.Array = metrics.concat_field()

    merged = Firsts.empty().merge(Firsts.empty())  # an evaluation of no batch
    assert merged.first is metrics.EMPTY and merged.seen is metrics.EMPTY
    state = Firsts.empty().merge(Firsts(first=jnp.arange(3.0), seen=jnp.arange(3.0)))
    np.testing.assert_array_equal(state.finalize().first, [0.0, 1.0])
    assert isinstance(state.finalize().seen, np.ndarray)  # moved to the host like after any merge
