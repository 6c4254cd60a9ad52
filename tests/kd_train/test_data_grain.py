"""kd.data.GrainPipeline: grain sources in InMemoryPipeline's order, resumed from grain's own state."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from kd import data

grain = pytest.importorskip("grain")


class _Source:
    """A random-access source of `{"i": i, "x": f32[2]}` examples that counts its reads."""

    def __init__(self, n: int = 10) -> None:
        self.n = n
        self.reads = 0

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int):
        self.reads += 1
        return {"i": np.int64(index), "x": np.full((2,), index, np.float32)}


class _AddNoise(grain.transforms.RandomMap):
    def random_map(self, element, rng):
        return {**element, "noise": np.float32(rng.uniform())}


class _Double(grain.transforms.Map):
    def map(self, element):
        return {**element, "x": element["x"] * 2}


def _pipeline(**kwargs) -> data.GrainPipeline:
    kwargs = {"source": _Source(), "batch_size": 4, "seed": 0, **kwargs}
    return data.GrainPipeline(**kwargs)


def _ids(batches) -> list[list[int]]:
    return [b["i"].tolist() for b in batches]


def _flat(lists) -> list[int]:
    return list(itertools.chain.from_iterable(lists))


def test_batches_equal_in_memory_pipeline_over_the_same_examples_and_seed():
    grain_batches = _ids(_pipeline(seed=5, num_epochs=3))
    in_memory = data.InMemoryPipeline(
        loader=lambda: {"i": np.arange(10)}, batch_size=4, seed=5, num_epochs=3, shuffle=True
    )
    assert grain_batches == _ids(in_memory)


def test_same_seed_gives_the_same_batches_and_different_seeds_differ():
    assert _ids(_pipeline(seed=1, num_epochs=1)) == _ids(_pipeline(seed=1, num_epochs=1))
    assert _ids(_pipeline(seed=1, num_epochs=1)) != _ids(_pipeline(seed=2, num_epochs=1))


def test_each_epoch_is_a_new_permutation():
    batches = _ids(_pipeline(batch_size=5, num_epochs=2))
    epoch0, epoch1 = _flat(batches[:2]), _flat(batches[2:])
    assert sorted(epoch0) == sorted(epoch1) == list(range(10))
    assert epoch0 != epoch1


def test_resume_from_a_json_state_yields_the_original_continuation():
    it = iter(_pipeline(num_epochs=3, transforms=[_AddNoise()]))
    for _ in range(3):
        next(it)
    state = json.loads(json.dumps(it.get_state()))
    continuation = list(it)
    resumed = list(_pipeline(num_epochs=3, transforms=[_AddNoise()]).iter_from_state(state))
    assert len(resumed) == len(continuation) == 3
    for a, b in zip(resumed, continuation, strict=True):
        np.testing.assert_array_equal(a["i"], b["i"])
        np.testing.assert_array_equal(a["noise"], b["noise"])


def test_the_state_is_grains_own_iterator_state():
    it = iter(_pipeline())
    next(it), next(it)
    assert isinstance(it, grain.DatasetIterator)
    assert it.get_state() == {"next_index": 2}


def test_num_epochs_stops_iteration_and_len_counts_every_epoch():
    pipeline = _pipeline(batch_size=3, num_epochs=2)
    assert (pipeline.batches_per_epoch, len(pipeline)) == (3, 6)
    assert len(list(pipeline)) == 6


def test_drop_remainder_false_yields_a_smaller_last_batch():
    assert _ids(_pipeline(shuffle=False, drop_remainder=False, num_epochs=1)) == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [8, 9],
    ]


def test_hosts_take_consecutive_slices_of_each_global_batch():
    global_batches = _ids(_pipeline(num_epochs=2))
    hosts = [_ids(_pipeline(num_epochs=2, process_index=i, process_count=2)) for i in range(2)]
    assert [a + b for a, b in zip(*hosts, strict=True)] == global_batches


def test_a_last_batch_too_small_for_every_host_gives_an_empty_batch_of_the_same_keys():
    def host(i):
        return list(
            _pipeline(
                source=_Source(9),
                shuffle=False,
                drop_remainder=False,
                num_epochs=1,
                process_index=i,
                process_count=2,
            )
        )

    last0, last1 = host(0)[-1], host(1)[-1]
    assert set(last0) == set(last1) == {"i", "x"}
    assert last0["x"].shape == (0, 2) and last0["x"].dtype == np.float32
    assert last1["i"].tolist() == [8]


def test_batch_size_not_divisible_by_process_count_is_an_error():
    with pytest.raises(data.BatchSizeError, match="divisible"):
        iter(_pipeline(process_index=0, process_count=3))


def test_batch_size_larger_than_the_source_is_an_error():
    with pytest.raises(data.BatchSizeError, match=r"larger than the data set \(10 examples\)"):
        len(_pipeline(batch_size=12))


def test_map_transforms_and_plain_functions_apply_in_order():
    pipeline = _pipeline(shuffle=False, transforms=[_Double(), lambda e: {**e, "x": e["x"] + 1}])
    np.testing.assert_array_equal(next(iter(pipeline))["x"][:, 0], [1, 3, 5, 7])


def test_random_transforms_are_deterministic_by_seed_and_differ_between_epochs():
    def noise(seed):
        return [b["noise"].tolist() for b in _pipeline(seed=seed, transforms=[_AddNoise()], num_epochs=2)]

    first = noise(0)
    assert first == noise(0)
    assert first != noise(1)
    by_example = [
        dict(zip(ids, values, strict=True))
        for ids, values in zip(
            _ids(_pipeline(seed=0, transforms=[_AddNoise()], num_epochs=2)), first, strict=True
        )
    ]
    epoch0 = {k: v for batch in by_example[:2] for k, v in batch.items()}
    epoch1 = {k: v for batch in by_example[2:] for k, v in batch.items()}
    shared = epoch0.keys() & epoch1.keys()
    assert shared and all(epoch0[k] != epoch1[k] for k in shared)


def test_a_filter_transform_is_refused():
    class _KeepEven(grain.transforms.Filter):
        def filter(self, element):
            return element["i"] % 2 == 0

    with pytest.raises(TypeError, match=r"transforms\[0\] is a Filter"):
        iter(_pipeline(transforms=[_KeepEven()]))


def test_a_map_dataset_source_is_accepted():
    source = grain.MapDataset.source([{"i": np.int64(k)} for k in range(8)])
    assert _ids(data.GrainPipeline(source=source, batch_size=4, shuffle=False, num_epochs=1)) == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
    ]


def test_an_iter_dataset_source_is_refused():
    source = grain.MapDataset.range(8).to_iter_dataset()
    with pytest.raises(TypeError, match="random access"):
        len(data.GrainPipeline(source=source, batch_size=4, seed=0))


def test_element_spec_reads_one_batch_and_keeps_it_for_the_first_next():
    source = _Source()
    pipeline = _pipeline(source=source)
    spec = pipeline.element_spec
    assert spec["x"].shape == (4, 2) and spec["x"].dtype == np.float32
    assert source.reads == 4
    it = iter(pipeline)
    assert it.get_state() == {"next_index": 0}
    first = next(it)
    assert source.reads == 4
    assert data.spec_of(first) == spec
    assert _ids([first]) == _ids(itertools.islice(_pipeline(), 1))


def test_read_threads_give_the_same_batches():
    threaded = _pipeline(num_epochs=2, read_options=grain.ReadOptions(num_threads=2, prefetch_buffer_size=2))
    assert _ids(threaded) == _ids(_pipeline(num_epochs=2))


def test_builds_from_a_konfig_config():
    import konfig

    with konfig.imports():
        import grain as cgrain
        from kd import data as cdata

    cfg = konfig.ConfigDict()
    cfg.ds = cdata.GrainPipeline(source=cgrain.MapDataset.range(12), batch_size=4, seed=0, num_epochs=1)
    pipeline = konfig.resolve(cfg).ds
    assert sorted(_flat(b.tolist() for b in pipeline)) == list(range(12))
