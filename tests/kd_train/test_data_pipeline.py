"""kd.data.Pipeline: the shared fields, their checks, and the protocol's defaults for subclasses."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from kd import data
from kd._root_ref import ROOT_CFG_REF


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Counting(data.Pipeline):
    """A user pipeline written against the base class alone: batch k is `{"k": [k, k]}`."""

    made: list = dataclasses.field(default_factory=list)

    def _new_iterator(self):
        return _CountingIterator(self)


class _CountingIterator:
    def __init__(self, pipeline: _Counting) -> None:
        self._pipeline = pipeline
        self._next = 0

    def __iter__(self):
        return self

    def __next__(self):
        self._pipeline.made.append(self._next)
        batch = {"k": np.full((2,), self._next)}
        self._next += 1
        return batch

    def get_state(self):
        return {"next": self._next}

    def set_state(self, state):
        self._next = state["next"]


def test_default_element_spec_pulls_one_batch_and_hands_it_to_the_next_iterator():
    pipeline = _Counting(seed=0)
    assert pipeline.element_spec["k"].shape == (2,)
    it = iter(pipeline)
    assert it.get_state() == {"next": 0}
    assert [int(next(it)["k"][0]) for _ in range(3)] == [0, 1, 2]
    assert pipeline.made == [0, 1, 2]  # batch 0 made once, by element_spec


def test_the_kept_iterator_goes_to_the_first_iter_only():
    pipeline = _Counting(seed=0)
    _ = pipeline.element_spec
    next(iter(pipeline))
    assert int(next(iter(pipeline))["k"][0]) == 0
    assert pipeline.made == [0, 0]


def test_element_spec_is_cached():
    pipeline = _Counting(seed=0)
    assert pipeline.element_spec is pipeline.element_spec
    assert pipeline.made == [0]


def test_setting_another_state_on_the_kept_iterator_drops_the_pulled_batch():
    pipeline = _Counting(seed=0)
    _ = pipeline.element_spec
    assert int(next(pipeline.iter_from_state({"next": 5}))["k"][0]) == 5


def test_len_is_unknown_by_default():
    with pytest.raises(TypeError, match="_Counting does not know how many batches"):
        len(_Counting(seed=0))


def test_iterators_are_checkpointable_iterators():
    in_memory = data.InMemoryPipeline(loader=lambda: {"x": np.zeros((4, 1))}, batch_size=2, seed=0)
    from_iterable = data.FromIterable(iterable=[{"x": np.zeros((2, 1))}])
    assert isinstance(iter(in_memory), data.CheckpointableIterator)
    assert isinstance(iter(from_iterable), data.CheckpointableIterator)


def test_seed_defaults_to_the_trainers_seed():
    assert _Counting().seed == ROOT_CFG_REF.seed


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"batch_size": 0}, data.BatchSizeError, "batch_size must be an int >= 1; got 0"),
        ({"batch_size": 2.0}, data.BatchSizeError, "batch_size must be an int >= 1; got 2.0"),
        ({"num_epochs": 0}, ValueError, r"num_epochs must be an int >= 1 or None \(forever\); got 0"),
        ({"seed": -1}, ValueError, "seed must be an int >= 0; got -1"),
        ({"process_index": 0}, ValueError, "process_index and process_count go together"),
        (
            {"process_index": 2, "process_count": 2},
            ValueError,
            r"process_index must be an int in \[0, 2\); got 2",
        ),
        ({"process_index": 0, "process_count": 0}, ValueError, "process_count must be an int >= 1; got 0"),
    ],
)
def test_bad_fields_are_rejected_naming_the_field(kwargs, error, match):
    with pytest.raises(error, match=match):
        _Counting(**{"seed": 0, **kwargs})


def test_without_process_fields_jax_names_the_host():
    assert _Counting(seed=0).process == (0, 1)


def test_spec_of_reads_shapes_and_dtypes_of_every_leaf():
    spec = data.spec_of({"a": np.zeros((3, 2), np.int8), "b": {"c": 1.5}})
    assert (spec["a"].shape, spec["a"].dtype) == ((3, 2), np.int8)
    assert spec["b"]["c"].shape == ()
