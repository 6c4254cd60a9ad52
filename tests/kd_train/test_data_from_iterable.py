"""kd.data.FromIterable: any iterable of batches, resumed by counting and skipping batches."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from kd import data


def _batches(n: int = 5, rows: int = 4) -> list[dict[str, np.ndarray]]:
    return [{"i": np.full((rows,), k), "x": np.zeros((rows, 3), np.float32)} for k in range(n)]


class _CountingGenerator:
    """A one-shot iterator of batches that counts the batches pulled from it."""

    def __init__(self, n: int = 5) -> None:
        self.pulled = 0
        self._batches = iter(_batches(n))

    def __iter__(self):
        return self

    def __next__(self):
        batch = next(self._batches)
        self.pulled += 1
        return batch


def _ids(batches) -> list[int]:
    return [int(b["i"][0]) for b in batches]


def test_yields_the_iterables_batches_unchanged():
    assert _ids(data.FromIterable(iterable=_batches())) == [0, 1, 2, 3, 4]


def test_resume_from_a_json_state_yields_the_original_continuation():
    pipeline = data.FromIterable(iterable=_batches(), num_epochs=2)
    it = iter(pipeline)
    for _ in range(7):  # into the second pass
        next(it)
    state = json.loads(json.dumps(it.get_state()))
    assert state == {"epoch": 1, "index": 2}
    continuation = _ids(it)
    assert _ids(data.FromIterable(iterable=_batches(), num_epochs=2).iter_from_state(state)) == continuation
    assert continuation == [2, 3, 4]


def test_a_re_iterable_source_can_go_back():
    it = iter(data.FromIterable(iterable=_batches()))
    start = it.get_state()
    next(it), next(it), next(it)
    it.set_state(start)
    assert _ids(it) == [0, 1, 2, 3, 4]


def test_a_fresh_generator_resumes_forward_by_skipping():
    it = iter(data.FromIterable(iterable=(b for b in _batches())))
    next(it), next(it)
    state = it.get_state()
    resumed = data.FromIterable(iterable=(b for b in _batches())).iter_from_state(state)
    assert _ids(resumed) == [2, 3, 4]


def test_a_one_shot_iterator_cannot_go_back():
    it = iter(data.FromIterable(iterable=(b for b in _batches())))
    next(it), next(it)
    with pytest.raises(data.StateError, match=r"behind the current position.*one-shot"):
        it.set_state({"epoch": 0, "index": 1})


def test_a_one_shot_iterator_allows_one_epoch_only():
    with pytest.raises(ValueError, match=r"one-shot iterator.*num_epochs must be 1"):
        data.FromIterable(iterable=iter(_batches()), num_epochs=2)


def test_a_one_shot_iterator_can_be_iterated_once():
    pipeline = data.FromIterable(iterable=iter(_batches()))
    iter(pipeline)
    with pytest.raises(RuntimeError, match="iterated once"):
        iter(pipeline)


def test_element_spec_keeps_the_peeked_batch_for_the_first_next():
    source = _CountingGenerator()
    pipeline = data.FromIterable(iterable=source)
    spec = pipeline.element_spec
    assert source.pulled == 1
    assert spec["x"].shape == (4, 3)
    it = iter(pipeline)
    assert it.get_state() == {"epoch": 0, "index": 0}
    assert _ids(it) == [0, 1, 2, 3, 4]
    assert source.pulled == 5


def test_element_spec_after_iterating_pulls_no_batch():
    source = _CountingGenerator()
    pipeline = data.FromIterable(iterable=source)
    it = iter(pipeline)
    next(it)
    assert pipeline.element_spec["i"].shape == (4,)
    assert source.pulled == 1


def test_resuming_the_iterator_kept_by_element_spec_skips_forward():
    pipeline = data.FromIterable(iterable=(b for b in _batches()))
    _ = pipeline.element_spec
    assert _ids(pipeline.iter_from_state({"epoch": 0, "index": 3})) == [3, 4]


def test_len_is_the_iterables_len():
    assert len(data.FromIterable(iterable=_batches(6))) == 6


def test_len_of_an_iterable_without_len_is_a_type_error():
    with pytest.raises(TypeError, match="no len"):
        len(data.FromIterable(iterable=(b for b in _batches())))


def test_num_epochs_repeats_a_re_iterable_source():
    assert _ids(data.FromIterable(iterable=_batches(3), num_epochs=2)) == [0, 1, 2, 0, 1, 2]


def test_a_function_source_is_called_once_per_pass():
    calls = []

    def make():
        calls.append(1)
        return (b for b in _batches(2))

    pipeline = data.FromIterable(iterable=make, num_epochs=None)
    assert _ids(itertools.islice(pipeline, 5)) == [0, 1, 0, 1, 0]
    assert len(calls) == 3


def test_an_empty_pass_ends_iteration_instead_of_looping():
    assert list(data.FromIterable(iterable=[], num_epochs=None)) == []


def test_with_batch_size_each_host_takes_its_rows():
    source = [{"row": np.arange(4) + 4 * k} for k in range(3)]
    hosts = [
        [
            b["row"].tolist()
            for b in data.FromIterable(iterable=source, batch_size=4, process_index=i, process_count=2)
        ]
        for i in range(2)
    ]
    assert hosts == [[[0, 1], [4, 5], [8, 9]], [[2, 3], [6, 7], [10, 11]]]


def test_with_batch_size_a_batch_of_other_rows_names_the_key():
    source = [{"x": np.zeros((4, 2)), "y": np.zeros((3, 1))}]
    with pytest.raises(data.BatchSizeError, match=r"batch 0 of epoch 0 should have 4 rows.*'y': 3"):
        next(iter(data.FromIterable(iterable=source, batch_size=4)))


def test_with_batch_size_not_divisible_by_the_hosts_is_an_error():
    pipeline = data.FromIterable(iterable=_batches(), batch_size=4, process_index=0, process_count=3)
    with pytest.raises(data.BatchSizeError, match="divisible"):
        iter(pipeline)


def test_a_state_past_the_end_of_a_pass_is_rejected():
    with pytest.raises(data.StateError, match="past the end of epoch 0, which has 5 batches"):
        iter(data.FromIterable(iterable=_batches(), num_epochs=2)).set_state({"epoch": 0, "index": 6})


def test_a_state_past_the_last_epoch_is_rejected():
    with pytest.raises(data.StateError, match="num_epochs=1"):
        iter(data.FromIterable(iterable=_batches())).set_state({"epoch": 1, "index": 1})


def test_a_non_iterable_source_is_a_type_error():
    with pytest.raises(TypeError, match="iterable must be an iterable of batches"):
        data.FromIterable(iterable=3)


def test_element_spec_after_resuming_a_one_shot_iterator_pulls_no_batch():
    source = _CountingGenerator()
    pipeline = data.FromIterable(iterable=source)
    it = pipeline.iter_from_state({"epoch": 0, "index": 2})
    assert _ids([next(it)]) == [2]
    assert pipeline.element_spec["x"].shape == (4, 3)
    assert source.pulled == 3


def test_a_one_shot_iterable_keeps_its_first_batch_through_the_trainers_copy():
    import kd
    import optax
    from flax import linen as nn

    def batches():
        for i in range(10):
            yield {"x": np.full((4, 2), i, np.float32), "y": np.zeros((4, 1), np.float32)}

    ds = data.FromIterable(iterable=batches())
    ds.element_spec  # noqa: B018  (pulls batch 0 and keeps it)
    trainer = kd.train.Trainer(
        train_ds=ds,
        model=kd.nn.ExternalModule(model=nn.Dense(1), keys="batch.x"),
        optimizer=optax.sgd(0.0),
        train_losses={"l2": kd.losses.L2(preds="preds", targets="batch.y")},
        num_train_steps=2,
    )
    assert trainer.train_ds is not ds  # filled with the Trainer's seed: a copy
    first = next(iter(trainer.train_ds))
    assert float(first["x"][0, 0]) == 0.0
