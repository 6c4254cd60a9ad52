"""kd.data.InMemoryPipeline: Kauldron's per-epoch shuffles, exact resume, host slices, shapes, transforms."""

from __future__ import annotations

import itertools
import json

import konfig
import numpy as np
import pytest
from kd import data


def _arange_loader(n: int = 10):
    return lambda: {"i": np.arange(n), "x": np.arange(2 * n, dtype=np.float32).reshape(n, 2)}


class _CountingLoader:
    """A loader that counts its calls."""

    def __init__(self, n: int) -> None:
        self.calls = 0
        self.n = n

    def __call__(self):
        self.calls += 1
        return {"i": np.arange(self.n)}


def _ids(batches) -> list[list[int]]:
    return [b["i"].tolist() for b in batches]


def _pipeline(**kwargs) -> data.InMemoryPipeline:
    kwargs = {"loader": _arange_loader(), "batch_size": 4, "seed": 0, "shuffle": True, **kwargs}
    return data.InMemoryPipeline(**kwargs)


def test_same_seed_gives_the_same_batches():
    first = _ids(itertools.islice(_pipeline(seed=7), 6))
    assert _ids(itertools.islice(_pipeline(seed=7), 6)) == first


def test_different_seeds_give_different_orders():
    assert _ids(itertools.islice(_pipeline(seed=1), 2)) != _ids(itertools.islice(_pipeline(seed=2), 2))


def test_each_epoch_is_a_new_permutation_of_all_examples():
    pipeline = _pipeline(batch_size=5, num_epochs=2)
    epoch0, epoch1 = _ids(pipeline)[:2], _ids(pipeline)[2:]
    flat0, flat1 = list(itertools.chain(*epoch0)), list(itertools.chain(*epoch1))
    assert sorted(flat0) == sorted(flat1) == list(range(10))
    assert flat0 != flat1


def test_without_shuffle_examples_come_in_order():
    assert _ids(_pipeline(shuffle=False, num_epochs=1)) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_resume_from_a_json_state_yields_the_original_continuation():
    pipeline = _pipeline(num_epochs=3)
    it = iter(pipeline)
    for _ in range(3):  # into the second epoch (2 batches per epoch)
        next(it)
    state = json.loads(json.dumps(it.get_state()))
    continuation = _ids(it)
    resumed = _pipeline(num_epochs=3).iter_from_state(state)
    assert _ids(resumed) == continuation
    assert len(continuation) == 3


def test_state_after_a_whole_epoch_points_at_the_next_epoch():
    it = iter(_pipeline())
    next(it), next(it)
    assert it.get_state() == {"epoch": 1, "index": 0}


def test_set_state_on_a_used_iterator_jumps_back():
    it = iter(_pipeline())
    start = it.get_state()
    first = _ids(itertools.islice(it, 3))
    it.set_state(start)
    assert _ids(itertools.islice(it, 3)) == first


def test_num_epochs_stops_iteration_after_that_many_epochs():
    pipeline = _pipeline(num_epochs=3)
    assert len(list(pipeline)) == len(pipeline) == 3 * pipeline.batches_per_epoch


def test_repeats_forever_by_default():
    pipeline = _pipeline()
    assert pipeline.num_epochs is None
    assert len(list(itertools.islice(pipeline, 50))) == 50


def test_batches_per_epoch_and_len_over_all_epochs_as_in_kauldron():
    assert _pipeline(batch_size=3).batches_per_epoch == 3  # 10 examples, remainder dropped
    assert _pipeline(batch_size=3, drop_remainder=False).batches_per_epoch == 4
    assert len(_pipeline(batch_size=3, num_epochs=2)) == 6
    with pytest.raises(TypeError, match=r"repeats forever .*an epoch has 3 batches"):
        len(_pipeline(batch_size=3, num_epochs=None))


def test_drop_remainder_false_yields_a_smaller_last_batch():
    batches = _ids(_pipeline(batch_size=4, drop_remainder=False, shuffle=False, num_epochs=1))
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_drop_remainder_drops_the_examples_past_the_last_full_batch():
    batches = _ids(_pipeline(batch_size=4, shuffle=False, num_epochs=1))
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_hosts_take_consecutive_slices_of_each_global_batch():
    global_batches = _ids(_pipeline(batch_size=4, num_epochs=2))
    per_host = [
        _ids(_pipeline(batch_size=4, num_epochs=2, process_index=i, process_count=2)) for i in range(2)
    ]
    assert [a + b for a, b in zip(*per_host, strict=True)] == global_batches
    assert all(len(batch) == 2 for batch in per_host[0])


def test_a_smaller_last_batch_is_split_as_evenly_as_its_rows_allow():
    def host(i):
        return _ids(
            _pipeline(
                batch_size=4,
                drop_remainder=False,
                shuffle=False,
                num_epochs=1,
                process_index=i,
                process_count=2,
            )
        )

    assert host(0) == [[0, 1], [4, 5], [8]]
    assert host(1) == [[2, 3], [6, 7], [9]]


def test_batch_size_not_divisible_by_process_count_is_an_error():
    pipeline = _pipeline(batch_size=4, process_index=0, process_count=3)
    with pytest.raises(
        data.BatchSizeError, match=r"batch_size=4 .*divisible by the number of processes \(3\)"
    ):
        iter(pipeline)


def test_element_spec_is_one_host_batch_read_from_the_array_shapes():
    pipeline = _pipeline(batch_size=4, process_index=1, process_count=2)
    spec = pipeline.element_spec
    assert spec["x"].shape == (2, 2) and spec["x"].dtype == np.float32
    batch = next(iter(pipeline))
    assert spec == data.spec_of(batch)


def test_loader_is_called_once_for_spec_len_and_iteration():
    loader = _CountingLoader(12)
    pipeline = data.InMemoryPipeline(loader=loader, batch_size=4, seed=0, num_epochs=1)
    _ = pipeline.element_spec
    assert loader.calls == 1
    assert len(pipeline) == 3
    assert len(list(pipeline)) == 3
    assert loader.calls == 1


def test_element_spec_does_not_advance_an_iterator():
    pipeline = _pipeline()
    expected = _ids(itertools.islice(_pipeline(), 2))
    _ = pipeline.element_spec
    it = iter(pipeline)
    assert it.get_state() == {"epoch": 0, "index": 0}
    assert _ids(itertools.islice(it, 2)) == expected


def test_batch_size_larger_than_the_data_set_is_an_error():
    pipeline = _pipeline(batch_size=11)
    with pytest.raises(
        data.BatchSizeError, match=r"batch_size=11 is larger than the data set \(10 examples\)"
    ):
        len(pipeline)


def test_batch_size_larger_than_the_data_set_without_drop_remainder_gives_one_batch_per_epoch():
    assert _ids(_pipeline(batch_size=11, drop_remainder=False, shuffle=False, num_epochs=1)) == [
        list(range(10))
    ]


def test_arrays_of_different_lengths_are_named_in_the_error():
    pipeline = data.InMemoryPipeline(
        loader=lambda: {"x": np.zeros((10, 2)), "y": np.zeros((9, 1))}, batch_size=2, seed=0
    )
    with pytest.raises(data.LengthMismatchError, match=r"'x': 10, 'y': 9"):
        iter(pipeline)


def test_nested_trees_are_batched_leaf_by_leaf():
    pipeline = data.InMemoryPipeline(
        loader=lambda: {"image": {"pixels": np.zeros((6, 3, 3))}, "label": np.arange(6)},
        batch_size=2,
        seed=0,
    )
    batch = next(iter(pipeline))
    assert batch["image"]["pixels"].shape == (2, 3, 3) and batch["label"].shape == (2,)


def test_shuffling_without_a_filled_seed_says_what_to_do():
    pipeline = data.InMemoryPipeline(
        loader=_arange_loader(), batch_size=2, shuffle=True
    )  # seed=ROOT_CFG_REF.seed
    with pytest.raises(data.SeedNotSetError, match=r"ROOT_CFG_REF\.seed.*pass seed="):
        iter(pipeline)


def test_without_shuffle_no_seed_is_needed():
    pipeline = data.InMemoryPipeline(loader=_arange_loader(), batch_size=2, shuffle=False, num_epochs=1)
    assert len(list(pipeline)) == 5


@pytest.mark.parametrize(
    "state",
    [{"epoch": 0}, {"epoch": 0, "index": -1}, {"epoch": 0, "index": 2}, {"epoch": "0", "index": 0}, [0, 0]],
)
def test_a_state_of_the_wrong_form_or_out_of_range_is_rejected(state):
    with pytest.raises(data.StateError, match="InMemoryPipeline iterator state"):
        iter(_pipeline()).set_state(state)


def test_a_state_past_the_last_epoch_is_rejected():
    with pytest.raises(data.StateError, match="num_epochs=2"):
        iter(_pipeline(num_epochs=2)).set_state({"epoch": 2, "index": 1})


def test_the_state_at_the_end_resumes_to_no_batch():
    pipeline = _pipeline(num_epochs=1)
    it = iter(pipeline)
    list(it)
    assert list(pipeline.iter_from_state(it.get_state())) == []


def test_builds_from_a_konfig_config():
    with konfig.imports():
        from kd import data as cdata

    cfg = konfig.ConfigDict()
    cfg.seed = 3
    cfg.train_ds = cdata.InMemoryPipeline(
        loader=cdata.SyntheticRegression(num_examples=32), batch_size=8, seed=cfg.ref.seed, num_epochs=2
    )
    pipeline = konfig.resolve(cfg).train_ds
    assert isinstance(pipeline, data.InMemoryPipeline)
    assert (len(pipeline), pipeline.num_epochs, pipeline.seed) == (8, 2, 3)
    assert pipeline.element_spec["x"].shape == (8, 2)


def test_examples_come_in_order_by_default_as_in_kauldron():
    pipeline = data.InMemoryPipeline(loader=_arange_loader(), batch_size=4, num_epochs=1)
    assert _ids(pipeline)[:2] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_an_unshuffled_batch_shares_the_examples_memory_and_cannot_be_written():
    examples = {"i": np.arange(10)}
    batch = next(iter(data.InMemoryPipeline(loader=lambda: examples, batch_size=4)))
    assert np.shares_memory(batch["i"], examples["i"])  # no copy per batch
    with pytest.raises(ValueError, match="read-only"):
        batch["i"][0] = 99
    assert examples["i"][0] == 0 and examples["i"].flags.writeable  # the user's array is untouched


def test_a_shuffled_batch_is_a_copy_the_user_may_write():
    examples = {"i": np.arange(10)}
    batch = next(iter(_pipeline(loader=lambda: examples)))
    batch["i"][0] = 99
    assert 99 not in examples["i"]


# ---- transforms= ----


def _images(n: int = 10) -> dict[str, np.ndarray]:
    return {"image": np.arange(n * 16, dtype=np.uint8).reshape(n, 4, 4, 1), "label": np.arange(n)}


def test_deterministic_transforms_run_once_at_load_and_batches_stay_gatherable():
    calls = []

    def count(example):
        calls.append(int(example["label"]))
        return example

    pipeline = data.InMemoryPipeline(
        loader=_images,
        batch_size=5,
        seed=0,
        transforms=[data.ValueRange(key="image", vrange=(0, 1)), count],
    )
    batch = next(iter(pipeline))
    assert batch["image"].dtype == np.float32 and batch["image"].max() <= 1.0
    np.testing.assert_allclose(batch["image"], _images()["image"][:5] / 255.0, rtol=1e-6)
    assert sorted(calls) == list(range(10))  # once per example, however many batches follow
    list(pipeline.take(4))
    assert len(calls) == 10
    assert iter(pipeline).gather_on_device


def test_a_filter_before_random_transforms_drops_examples_at_load():
    class Even(data.FilterTransform):
        def filter(self, example):
            return int(example["label"]) % 2 == 0

    pipeline = data.InMemoryPipeline(loader=_images, batch_size=5, seed=0, transforms=[Even()], num_epochs=1)
    assert pipeline.num_examples == 5
    assert next(iter(pipeline))["label"].tolist() == [0, 2, 4, 6, 8]


def test_random_transforms_run_per_batch_reproducibly_and_resume_exactly():
    def make():
        return data.InMemoryPipeline(
            loader=_images,
            batch_size=4,
            seed=3,
            shuffle=True,
            num_epochs=3,
            transforms=[data.RandomCrop(key="image", shape=(2, 2, 1))],
        )

    pipeline = make()
    assert pipeline.element_spec["image"].shape == (4, 2, 2, 1)
    batches = list(pipeline)
    again = list(make())
    for a, b in zip(batches, again, strict=True):
        np.testing.assert_array_equal(a["image"], b["image"])
    it = iter(make())
    head = [next(it) for _ in range(3)]
    state = json.loads(json.dumps(it.get_state()))
    resumed = list(make().iter_from_state(state))
    for a, b in zip(head + resumed, batches, strict=True):
        np.testing.assert_array_equal(a["image"], b["image"])
    assert not iter(make()).gather_on_device  # batches are made on the host, example by example
    # The same example is cropped differently in another epoch (seeded by the epoch too).
    first_epoch = {
        int(label): img for b in batches[:2] for label, img in zip(b["label"], b["image"], strict=True)
    }
    second_epoch = {
        int(label): img for b in batches[2:4] for label, img in zip(b["label"], b["image"], strict=True)
    }
    common = set(first_epoch) & set(second_epoch)
    assert any(not np.array_equal(first_epoch[k], second_epoch[k]) for k in common)


def test_transform_errors_name_the_pipeline_and_position_and_bad_transforms_fail_at_construction():
    pipeline = data.InMemoryPipeline(
        loader=_images, batch_size=2, seed=0, transforms=[data.Elements(keep=["imag"])]
    )
    with pytest.raises(KeyError, match=r"did you mean 'image'") as info:
        next(iter(pipeline))
    assert any("InMemoryPipeline.transforms[0]" in note for note in info.value.__notes__)
    with pytest.raises(TypeError, match=r"InMemoryPipeline.transforms\[1\] must be a kd.data transform"):
        data.InMemoryPipeline(
            loader=_images, batch_size=2, transforms=[data.Cast(key="image", dtype="float32"), 3]
        )
    with pytest.raises(ValueError, match=r"transforms\[1\] is a filter after a random transform"):
        data.InMemoryPipeline(
            loader=_images,
            batch_size=2,
            transforms=[data.RandomCrop(key="image", shape=(2, 2, 1)), _OddFilter()],
        )


class _OddFilter:
    def filter(self, example):
        return int(example["label"]) % 2 == 1
