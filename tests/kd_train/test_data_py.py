"""kd.data.py: Kauldron's grain pipelines (sources, transforms, batching, mixtures, resuming, configs)."""

from __future__ import annotations

import json
from pathlib import Path

import grain
import jax
import konfig
import numpy as np
import pytest
from kd import kd

R = grain.sources.RangeDataSource


def _range(n: int = 10, start: int = 0, **kwargs) -> kd.data.py.DataSource:
    kwargs = {"shuffle": False, "num_epochs": 1, "num_workers": 0, **kwargs}
    return kd.data.py.DataSource(R(start, start + n, 1), **kwargs)


def _ints(pipeline) -> list[int]:
    return [int(x) for x in pipeline]


def _lists(pipeline) -> list[list[int]]:
    return [np.asarray(b).tolist() for b in pipeline]


def _images(n: int = 6) -> list[dict[str, object]]:
    """Example `i`: a 4x4x1 image of `100 * i + (0..15)`, label `i`."""
    return [
        {"image": (100 * i + np.arange(16)).reshape(4, 4, 1).astype(np.int32), "label": np.int64(i)}
        for i in range(n)
    ]


def _cropped(**kwargs) -> kd.data.py.DataSource:
    kwargs = {
        "shuffle": True,
        "seed": 7,
        "batch_size": 2,
        "num_epochs": 2,
        "num_workers": 0,
        "transforms": [kd.data.py.RandomCrop(key="image", shape=(2, 2, 1))],
        **kwargs,
    }
    return kd.data.py.DataSource(_images(), **kwargs)


def _assert_same_batches(got, expected) -> None:
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert set(a) == set(b)
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])


# ---- sources ----


def test_a_range_data_source_yields_its_examples_in_order():
    assert _ints(_range(5)) == [0, 1, 2, 3, 4]
    assert _lists(_range(6, batch_size=2)) == [[0, 1], [2, 3], [4, 5]]
    assert isinstance(iter(_range(3)), kd.data.iters.PyGrainIterator)


def test_a_list_of_dict_examples_is_batched_per_key():
    (first, second, third) = list(
        kd.data.py.DataSource(_images(), shuffle=False, batch_size=2, num_epochs=1, num_workers=0)
    )
    assert first["image"].shape == (2, 4, 4, 1)
    assert first["label"].tolist() == [0, 1]
    assert third["label"].tolist() == [4, 5]
    np.testing.assert_array_equal(second["image"][0], _images()[2]["image"])


class _PopKey(grain.transforms.Map):
    """Changes each example in place, as gemma's Seq2SeqTask does (`del element[...]`)."""

    def map(self, element):
        element["out"] = element.pop("text").upper()
        return element


def test_a_list_of_examples_gives_each_read_a_fresh_mutable_copy():
    # A list from a resolved config holds frozen dicts; a transform that edits its example must neither fail
    # nor change the list (the next epoch reads the originals again).
    examples = konfig.resolve(konfig.ConfigDict({"x": [{"text": "ab"}, {"text": "cd"}]}))["x"]
    pipeline = kd.data.py.DataSource(
        examples, shuffle=False, num_epochs=2, num_workers=0, transforms=[_PopKey()]
    )
    assert [e["out"] for e in pipeline] == ["AB", "CD", "AB", "CD"]
    assert examples[0]["text"] == "ab"


def test_a_data_source_without_random_access_is_refused():
    with pytest.raises(TypeError, match=r"random access.*generator"):
        kd.data.py.DataSource((i for i in range(3)), shuffle=False)


def test_json_source_reads_a_list_of_examples(tmp_path: Path):
    path = tmp_path / "examples.json"
    path.write_text(json.dumps([{"x": i, "y": [i, i]} for i in range(5)]))
    ds = kd.data.py.Json(path=str(path), shuffle=False, batch_size=2, num_epochs=1, num_workers=0)
    batches = list(ds)
    assert [b["x"].tolist() for b in batches] == [[0, 1], [2, 3]]
    # A list in an example is a tree node (as in grain and Kauldron): each entry is batched.
    assert [y.tolist() for y in batches[1]["y"]] == [[2, 3], [2, 3]]
    assert len(ds) == 2


def test_json_file_not_holding_a_list_is_an_error_naming_it(tmp_path: Path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"x": 1}))
    ds = kd.data.py.Json(path=str(path), shuffle=False, num_epochs=1, num_workers=0)
    with pytest.raises(ValueError, match=r"one\.json must hold a list of examples; got dict"):
        list(ds)


def test_an_empty_source_is_a_value_error_at_first_use():
    ds = kd.data.py.DataSource([], shuffle=False, num_epochs=1, num_workers=0)  # constructing is fine
    with pytest.raises(ValueError, match="DataSource has no examples"):
        iter(ds)


# ---- batches, lengths ----


@pytest.mark.parametrize(
    ("drop", "expected"),
    [
        (True, [[0, 1, 2, 3], [4, 5, 6, 7]]),
        ("drop", [[0, 1, 2, 3], [4, 5, 6, 7]]),
        (kd.data.py.DropRemainder.DROP, [[0, 1, 2, 3], [4, 5, 6, 7]]),
        (False, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]),
        ("keep", [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]),
        ("pad", [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 0]]),
    ],
)
def test_batch_drop_remainder(drop, expected):
    ds = _range(10, batch_size=4, batch_drop_remainder=drop)
    assert _lists(ds) == expected
    assert len(ds) == len(expected) == ds.batches_per_epoch
    assert np.asarray(ds[len(expected) - 1]).tolist() == expected[-1]


def test_batch_drop_remainder_is_normalised_to_the_enum():
    assert _range(batch_drop_remainder=True).batch_drop_remainder is kd.data.py.DropRemainder.DROP
    assert _range(batch_drop_remainder=False).batch_drop_remainder is kd.data.py.DropRemainder.KEEP
    assert _range(batch_drop_remainder="pad").batch_drop_remainder is kd.data.py.DropRemainder.PAD


def test_an_invalid_batch_drop_remainder_names_the_near_miss():
    with pytest.raises(ValueError, match=r"batch_drop_remainder='keepp'.*did you mean 'keep'\?"):
        _range(batch_size=2, batch_drop_remainder="keepp")


def test_len_counts_the_batches_of_all_epochs_across_epoch_ends():
    ds = _range(10, batch_size=4, num_epochs=3)
    assert len(ds) == 7  # 30 examples, batches running across the epoch ends
    assert ds.batches_per_epoch == 2
    batches = _lists(ds)
    assert len(batches) == 7
    assert batches[2] == [8, 9, 0, 1]
    assert len(_range(10, batch_size=4, num_epochs=3, batch_drop_remainder="keep")) == 8
    assert len(_range(10, num_epochs=2)) == 20  # no batch_size: examples


def test_len_of_an_endless_pipeline_is_a_type_error():
    ds = _range(10, batch_size=4, num_epochs=None)
    with pytest.raises(TypeError, match=r"num_epochs=None"):
        len(ds)
    assert ds.batches_per_epoch == 2
    it = iter(ds)
    assert [np.asarray(next(it)).tolist() for _ in range(4)][-1] == [2, 3, 4, 5]


def test_a_batch_larger_than_a_finite_dataset_names_both_numbers():
    ds = _range(5, batch_size=8)
    with pytest.raises(kd.data.BatchSizeError, match=r"batch_size=8.*the 5 examples"):
        iter(ds)
    assert _lists(_range(5, batch_size=8, batch_drop_remainder="keep")) == [[0, 1, 2, 3, 4]]


def test_each_process_reads_its_share_and_a_host_batch():
    ds = _range(10, batch_size=4, process_index=1, process_count=2)
    assert ds.host_batch_size == 2
    assert _lists(ds) == [[1, 3], [5, 7]]
    assert len(ds) == 2
    assert _lists(_range(10, batch_size=4, process_index=1, process_count=2, shard_by_process=False))[0] == [
        0,
        1,
    ]


def test_element_spec_gives_the_shapes_and_dtypes_of_one_batch():
    ds = kd.data.py.DataSource(_images(), shuffle=False, batch_size=2, num_epochs=1, num_workers=0)
    spec = ds.element_spec
    assert spec["image"].shape == (2, 4, 4, 1)
    assert spec["image"].dtype == np.int32
    assert spec["label"].shape == (2,)
    assert spec["label"].dtype == np.int64
    assert len(list(ds)) == 3  # element_spec used no batch of the iterators


def test_getitem_reads_a_batch_directly():
    ds = _range(10, batch_size=3, shuffle=True, seed=4, batch_drop_remainder="keep")
    batches = _lists(ds)
    assert [np.asarray(ds[i]).tolist() for i in range(len(batches))] == batches
    assert int(_range(10)[7]) == 7


def test_take_map_cache_and_prefetch_views():
    ds = _range(10, batch_size=2)
    taken = ds.take(2)
    assert len(taken) == 2
    assert _lists(taken) == [[0, 1], [2, 3]]
    assert _lists(ds.map(lambda b: b * 10).take(1)) == [[0, 10]]
    cached = ds.take(3).cache()
    assert _lists(cached) == _lists(cached) == [[0, 1], [2, 3], [4, 5]]
    assert _lists(ds.prefetch(2)) == _lists(ds)
    assert ds.map(lambda b: b.astype(np.float32)).element_spec.dtype == np.float32


# ---- shuffling, seeds ----


def test_the_same_seed_gives_the_same_order_and_another_seed_another():
    a = _ints(_range(20, shuffle=True, seed=0))
    assert a == _ints(_range(20, shuffle=True, seed=0))
    assert sorted(a) == list(range(20))
    assert a != list(range(20))
    assert a != _ints(_range(20, shuffle=True, seed=1))


def test_each_epoch_is_reshuffled():
    order = _ints(_range(20, shuffle=True, seed=0, num_epochs=2))
    assert sorted(order[:20]) == sorted(order[20:]) == list(range(20))
    assert order[:20] != order[20:]


def test_a_deterministic_transform_does_not_change_the_order():
    plain = _ints(_range(20, shuffle=True, seed=5))
    doubled = _ints(_range(20, shuffle=True, seed=5, transforms=[lambda x: 2 * x]))
    assert doubled == [2 * x for x in plain]


def test_seed_left_to_the_trainer_is_fine_without_randomness():
    ds = kd.data.py.DataSource(R(0, 4, 1), shuffle=False, num_epochs=1, num_workers=0)
    assert _ints(ds) == [0, 1, 2, 3]


def test_seed_left_to_the_trainer_is_an_error_when_shuffling():
    ds = kd.data.py.DataSource(R(0, 4, 1), shuffle=True, num_epochs=1, num_workers=0)
    with pytest.raises(kd.data.SeedNotSetError, match=r"DataSource needs its seed.*seed=<int>"):
        iter(ds)


def test_seed_left_to_the_trainer_is_an_error_with_a_random_transform():
    ds = _cropped(shuffle=False, seed=kd.data.py.DataSource.__dataclass_fields__["seed"].default)
    with pytest.raises(kd.data.SeedNotSetError):
        iter(ds)


# ---- transforms ----


class _AddOne(grain.transforms.Map):
    def map(self, x):
        return x + 1


class _Even(grain.transforms.Filter):
    def filter(self, x):
        return x % 2 == 0


class _Noise(grain.transforms.RandomMap):
    def random_map(self, x, rng: np.random.Generator):
        return x * 1000 + int(rng.integers(0, 1000))


class _Odd(kd.data.FilterTransform):
    def filter(self, element):
        return element % 2 == 1


def test_kd_data_transforms_apply_to_each_example():
    ds = kd.data.py.DataSource(
        _images(3),
        shuffle=False,
        num_epochs=1,
        num_workers=0,
        transforms=[
            kd.data.Elements(keep=["image"]),
            kd.data.ValueRange(key="image", vrange=(0, 1), in_vrange=(0, 1000)),
            kd.data.AddConstants({"w": 1.5}),
        ],
    )
    examples = list(ds)
    assert set(examples[0]) == {"image", "w"}
    assert examples[1]["image"].dtype == np.float32
    np.testing.assert_allclose(examples[1]["image"][0, 0, 0], 0.1)
    assert examples[2]["w"] == 1.5


def test_a_plain_function_is_a_map():
    assert _ints(_range(3, transforms=[lambda x: x + 10])) == [10, 11, 12]


def test_grain_transforms_are_applied():
    assert _ints(_range(6, transforms=[_AddOne()])) == [1, 2, 3, 4, 5, 6]
    assert _ints(_range(6, transforms=[_Even()])) == [0, 2, 4]
    noisy = _ints(_range(4, seed=0, transforms=[_Noise()]))
    assert [x // 1000 for x in noisy] == [0, 1, 2, 3]
    assert noisy == _ints(_range(4, seed=0, transforms=[_Noise()]))


def test_a_kd_filter_transform_drops_examples():
    assert _ints(_range(7, transforms=[_Odd()])) == [1, 3, 5]


def test_slice_dataset():
    assert _ints(_range(10, transforms=[kd.data.py.SliceDataset(3)])) == [0, 1, 2]
    assert _ints(_range(10, transforms=[kd.data.py.SliceDataset(2, 8, 2)])) == [2, 4, 6]
    assert len(_range(10, batch_size=2, transforms=[kd.data.py.SliceDataset(4)])) == 2


def test_a_dict_of_transforms_applies_its_values_in_order():
    transforms = {"plus": lambda x: x + 1, "times": lambda x: x * 10}
    assert _ints(_range(3, transforms=transforms)) == [10, 20, 30]
    reverse = {"times": lambda x: x * 10, "plus": lambda x: x + 1}
    assert _ints(_range(3, transforms=reverse)) == [1, 11, 21]


def test_a_transform_that_is_not_one_is_refused():
    with pytest.raises(TypeError, match=r"transforms\[1\] must be a kd.data transform.*int"):
        iter(_range(3, transforms=[lambda x: x, 3]))


def _fails_on_two(x):
    if x == 2:
        raise RuntimeError("two is not allowed")
    return x


def test_an_error_in_a_transform_notes_the_pipeline_and_its_position():
    it = iter(_range(5, transforms=[lambda x: x, _fails_on_two]))
    assert [int(next(it)), int(next(it))] == [0, 1]
    with pytest.raises(RuntimeError, match="two is not allowed") as info:
        next(it)
    notes = info.value.__notes__
    assert any("DataSource.transforms[1]" in n and "_fails_on_two" in n for n in notes), notes


def test_an_error_in_a_named_transform_notes_its_name():
    ds = _range(5, transforms={"keep": lambda x: x, "check": _fails_on_two})
    with pytest.raises(RuntimeError) as info:
        list(ds)
    assert any("DataSource.transforms['check']" in n for n in info.value.__notes__)


# ---- random transforms: reproducible, resumable ----


def test_a_random_crop_is_reproducible_for_the_same_seed():
    a, b = list(_cropped()), list(_cropped())
    _assert_same_batches(a, b)
    assert a[0]["image"].shape == (2, 2, 2, 1)
    other = list(_cropped(seed=8))
    assert any(not np.array_equal(x["image"], y["image"]) for x, y in zip(a, other))


def test_a_random_crop_takes_a_window_of_each_example():
    for batch in _cropped():
        for image, label in zip(batch["image"], batch["label"]):
            full = _images()[int(label)]["image"][..., 0]
            top, left = divmod(int(image[0, 0, 0]) - 100 * int(label), 4)
            np.testing.assert_array_equal(image[..., 0], full[top : top + 2, left : left + 2])


def test_an_example_gets_the_same_crop_however_it_is_reached():
    shuffled = {int(lbl): img for b in _cropped() for lbl, img in zip(b["label"], b["image"])}
    in_order = {int(lbl): img for b in _cropped(shuffle=False) for lbl, img in zip(b["label"], b["image"])}
    assert shuffled.keys() == in_order.keys()


def test_resuming_from_a_json_state_gives_the_uninterrupted_batches():
    expected = list(_cropped())  # 6 batches over 2 epochs
    it = iter(_cropped())
    got = [next(it) for _ in range(2)]
    state = json.loads(json.dumps(it.get_state()))
    got += list(_cropped().iter_from_state(state))
    _assert_same_batches(got, expected)
    # The state taken in the middle of the second epoch too.
    it = iter(_cropped())
    for _ in range(4):
        next(it)
    _assert_same_batches(list(_cropped().iter_from_state(it.get_state())), expected[4:])


def _copied(batches) -> list[dict[str, np.ndarray]]:
    return [{k: np.array(v) for k, v in b.items()} for b in batches]  # out of grain's shared memory


def _crops(batches) -> list[tuple[int, bytes]]:
    return sorted((int(lbl), img.tobytes()) for b in batches for lbl, img in zip(b["label"], b["image"]))


def test_resuming_with_worker_processes_gives_the_uninterrupted_batches():
    it = iter(_cropped(num_workers=2))
    try:
        uninterrupted = _copied(next(it) for _ in range(3))
        state = json.loads(json.dumps(it.get_state()))
        uninterrupted += _copied(it)
    finally:
        it.close()
    resumed = _cropped(num_workers=2).iter_from_state(state)
    try:
        rest = _copied(resumed)
    finally:
        resumed.close()
    _assert_same_batches(uninterrupted[:3] + rest, uninterrupted)
    # A state that worker processes saved does not fit a pipeline without workers: said, not a grain KeyError.
    with pytest.raises(kd.data.StateError, match=r"another num_workers"):
        _cropped().iter_from_state(state)
    # Grain's workers each batch their own share of the examples (as in Kauldron), so the batches differ
    # from num_workers=0; each example still gets the same crop (seeded by its index, not by the worker).
    assert _crops(uninterrupted) == _crops(_cropped())


def test_a_pygrain_iterator_round_trips_through_a_checkpointer(tmp_path: Path):
    expected = list(_cropped())
    it = iter(_cropped())
    next(it), next(it)
    ckpt = kd.ckpts.Checkpointer(workdir=tmp_path, save_interval_steps=1)
    assert ckpt.save(it, step=1)
    ckpt.wait_until_finished()
    restored = ckpt.restore(iter(_cropped()))
    assert isinstance(restored, kd.data.iters.PyGrainIterator)
    _assert_same_batches([next(restored)], [expected[2]])
    _assert_same_batches(list(restored), expected[3:])


# ---- mixtures ----


def test_mix_without_shuffle_interleaves_the_datasets():
    ds = kd.data.py.Mix(
        [_range(10, num_epochs=None), _range(10, 100, num_epochs=None)],
        seed=0,
        num_epochs=1,
        num_workers=0,
        shuffle=False,
    )
    assert _ints(ds) == [x for i in range(10) for x in (i, 100 + i)]


def test_mix_shuffles_as_kauldron_does_for_seed_0():
    ds = kd.data.py.Mix(
        [
            kd.data.py.DataSource(R(0, 10, 1), shuffle=False),
            kd.data.py.DataSource(R(100, 110, 1), shuffle=False),
        ],
        seed=0,
        num_epochs=1,
        num_workers=0,
    )
    assert _ints(ds) == [2, 101, 4, 109, 5, 106, 104, 103, 107, 1, 102, 105, 0, 8, 6, 9, 108, 100, 7, 3]


def test_mix_batches_and_counts_its_own_epochs():
    ds = kd.data.py.Mix([_range(10), _range(10, 100)], seed=0, num_epochs=2, num_workers=0, batch_size=4)
    assert len(ds) == 10
    assert ds.batches_per_epoch == 5
    assert ds.element_spec.shape == (4,)


def test_mix_weights_give_the_proportions():
    ds = kd.data.py.Mix(
        [_range(3000), _range(1000, 10_000)],
        weights=[3, 1],
        seed=0,
        num_epochs=1,
        num_workers=0,
        batch_size=None,
    )
    values = np.array(_ints(ds))
    share = np.mean(values < 10_000)
    assert len(values) > 1000
    assert abs(share - 0.75) < 0.01
    first = values[:400]
    assert abs(np.mean(first < 10_000) - 0.75) < 0.05  # mixed throughout, not one after the other


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"weights": [1, 2, 3]}, ValueError, r"weights has 3 entries for 2 datasets"),
        ({"weights": [1, -1]}, ValueError, r"weights must be finite numbers > 0 .*; got \[1, -1\]"),
        ({"weights": [1, 0]}, ValueError, r"grain mixes no zero proportion"),
        ({"weights": [1, float("nan")]}, ValueError, r"finite numbers"),
    ],
)
def test_mix_refuses_bad_weights_at_construction(kwargs, error, match):
    with pytest.raises(error, match=match):
        kd.data.py.Mix([_range(3), _range(3)], seed=0, **kwargs)


def test_mix_refuses_no_datasets_and_non_pipelines_at_construction():
    with pytest.raises(ValueError, match=r"Mix: datasets must be a non-empty list"):
        kd.data.py.Mix([], seed=0)
    with pytest.raises(TypeError, match=r"Mix: datasets\[1\] must be a kd.data.py pipeline.*got list"):
        kd.data.py.Mix([_range(3), [1, 2, 3]], seed=0)
    with pytest.raises(TypeError, match=r"datasets\[0\] must be a kd.data.py pipeline.*InMemoryPipeline"):
        kd.data.py.Mix([kd.data.InMemoryPipeline(loader=lambda: {"x": np.arange(3)})], seed=0)


def test_mix_applies_each_datasets_transforms_and_its_own():
    ds = kd.data.py.Mix(
        [_range(3, transforms=[lambda x: x + 10]), _range(3, transforms=[lambda x: x + 20])],
        shuffle=False,
        seed=0,
        num_epochs=1,
        num_workers=0,
        transforms=[lambda x: -x],
    )
    assert _ints(ds) == [-10, -20, -11, -21, -12, -22]


def test_mix_of_unshuffled_datasets_without_seed_needs_one_only_to_shuffle():
    parts = [_range(2), _range(2, 100)]
    assert _ints(kd.data.py.Mix(parts, shuffle=False, num_epochs=1, num_workers=0)) == [0, 100, 1, 101]
    with pytest.raises(kd.data.SeedNotSetError):
        iter(kd.data.py.Mix(parts, num_epochs=1, num_workers=0))


class _Alternate(grain.transforms.DatasetSelectionMap):
    """Position `i` takes example `i // 2` of dataset `i % 2`."""

    def __len__(self) -> int:
        return 6

    def __getitem__(self, index: int) -> tuple[int, int]:
        return index % 2, index // 2


def test_select_from_datasets_follows_the_selection_map():
    ds = kd.data.py.SelectFromDatasets(
        [_range(3), _range(3, 100)], selection_map=_Alternate(), shuffle=False, num_epochs=1, num_workers=0
    )
    assert _ints(ds) == [0, 100, 1, 101, 2, 102]
    shuffled = _ints(
        kd.data.py.SelectFromDatasets(
            [_range(3), _range(3, 100)], selection_map=_Alternate(), seed=0, num_epochs=1, num_workers=0
        )
    )
    assert sorted(shuffled) == [0, 1, 2, 100, 101, 102]


# ---- TFDS ----

TFDS_NAME = "kd_tiny_digits"


@pytest.fixture(scope="module")
def tfds_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Installed by the test environment; an accelerator machine without network may lack it (the device lane).
    pytest.importorskip("tensorflow_datasets", reason="writing the dataset needs tensorflow-datasets")
    from tests.kd_train.test_data_tfds_source import NAME, KdTinyDigits

    assert NAME == TFDS_NAME
    root = tmp_path_factory.mktemp("tfds")
    KdTinyDigits(data_dir=str(root), file_format="array_record").download_and_prepare()
    return root


def test_tfds_reads_an_array_record_dataset(tfds_dir: Path):
    ds = kd.data.py.Tfds(
        TFDS_NAME,
        split="train",
        data_dir=tfds_dir,
        shuffle=False,
        batch_size=2,
        num_epochs=1,
        num_workers=0,
        transforms=[kd.data.ValueRange(key="image", vrange=(0, 1))],
    )
    assert len(ds) == 2  # 5 examples, the short batch dropped
    batches = list(ds)
    assert len(batches) == 2
    assert batches[0]["image"].shape == (2, 8, 8, 1)
    assert batches[0]["image"].dtype == np.float32
    np.testing.assert_allclose(batches[1]["image"][:, 0, 0, 0], [20 / 255, 30 / 255], rtol=1e-6)
    assert [b["label"].tolist() for b in batches] == [[0, 1], [2, 0]]
    assert ds.element_spec["image"].shape == (2, 8, 8, 1)


def test_tfds_with_a_split_slice_and_shuffle(tfds_dir: Path):
    ds = kd.data.py.Tfds(
        TFDS_NAME,
        split="train[1:4]",
        data_dir=str(tfds_dir),
        shuffle=True,
        seed=0,
        num_epochs=1,
        num_workers=0,
    )
    assert sorted(int(e["image"][0, 0, 0]) for e in ds) == [10, 20, 30]


# ---- kd.data.tf ----


def test_kd_data_tf_names_say_which_kd_data_py_name_to_use():
    with pytest.raises(AttributeError, match=r"kd.data.tf.Tfds is not ported.*use kd.data.py.Tfds"):
        kd.data.tf.Tfds  # noqa: B018
    with pytest.raises(AttributeError, match=r"kd.data.py.Mix"):
        kd.data.tf.SampleFromDatasets  # noqa: B018


def test_an_unknown_kd_data_tf_name_gives_the_near_miss():
    with pytest.raises(AttributeError, match=r"no 'Tfsd' either; did you mean 'Tfds'\?"):
        kd.data.tf.Tfsd  # noqa: B018


def test_a_konfig_config_naming_kd_data_tf_tfds_fails_with_the_not_ported_message():
    with pytest.raises(Exception, match=r"kd.data.py.Tfds"):  # at capture or at resolve
        with konfig.imports():
            from kd import kd as ckd

        cfg = konfig.ConfigDict()
        cfg.train_ds = ckd.data.tf.Tfds("mnist", split="train")
        konfig.resolve(cfg)


def test_a_konfig_config_dict_naming_kd_data_tf_tfds_fails_at_resolve_with_the_not_ported_message():
    cfg = konfig.ConfigDict(
        {"train_ds": {"__qualname__": "kd.data.tf:Tfds", "name": "mnist", "split": "train"}}
    )
    with pytest.raises(konfig.ResolveError, match=r"kd.data.py.Tfds"):
        konfig.resolve(cfg)


# ---- konfig ----


def test_a_kd_data_py_pipeline_builds_from_a_konfig_config():
    with konfig.imports():
        import grain as cgrain
        from kd import kd as ckd

    cfg = konfig.ConfigDict()
    cfg.seed = 3
    cfg.train_ds = ckd.data.py.DataSource(
        cgrain.sources.RangeDataSource(0, 10, 1),
        shuffle=True,
        seed=cfg.ref.seed,
        batch_size=2,
        num_epochs=1,
        num_workers=0,
        transforms=[ckd.data.py.SliceDataset(8)],
    )
    pipeline = konfig.resolve(cfg).train_ds
    assert isinstance(pipeline, kd.data.py.DataSource)
    assert pipeline.seed == 3
    assert len(pipeline) == 4
    direct = kd.data.py.DataSource(
        R(0, 10, 1), shuffle=True, seed=3, batch_size=2, num_epochs=1, num_workers=0,
        transforms=[kd.data.py.SliceDataset(8)],
    )  # fmt: skip
    assert _lists(pipeline) == _lists(direct)
    assert jax.tree.leaves(pipeline.element_spec)[0].shape == (2,)


# ---- sources of arrays and ArrayRecord files; filters that drop everything ----


def test_a_dict_of_arrays_is_a_source_of_examples_and_mismatched_lengths_are_refused():
    arrays = {"x": np.arange(6, dtype=np.float32), "y": np.arange(6) * 10}
    ds = kd.data.py.DataSource(arrays, shuffle=False, batch_size=3, num_epochs=1, num_workers=0)
    batches = list(ds)
    np.testing.assert_array_equal(batches[1]["x"], [3.0, 4.0, 5.0])
    np.testing.assert_array_equal(batches[1]["y"], [30, 40, 50])
    assert repr(kd.data.py.ArraysSource(arrays)) == "ArraysSource(x: float32[6], y: int64[6])"
    with pytest.raises(ValueError, match=r"sharing their first \(example\) dimension; got 'x': 6, 'y': 5"):
        kd.data.py.DataSource({"x": np.zeros(6), "y": np.zeros(5)}, shuffle=False)


def test_array_record_files_are_read_as_records_and_a_missing_file_is_named(tmp_path: Path):
    from array_record.python.array_record_module import ArrayRecordWriter

    path = tmp_path / "numbers.array_record"
    writer = ArrayRecordWriter(str(path), "group_size:1")
    for i in range(5):
        writer.write(json.dumps({"i": i}).encode())
    writer.close()
    ds = kd.data.py.ArrayRecord(
        paths=path,
        shuffle=False,
        num_epochs=1,
        num_workers=0,
        transforms=[lambda record: {"i": np.int64(json.loads(record)["i"])}],
        batch_size=5,
    )
    np.testing.assert_array_equal(next(iter(ds))["i"], [0, 1, 2, 3, 4])
    missing = kd.data.py.ArrayRecord(paths=[tmp_path / "nope.array_record"], shuffle=False, num_workers=0)
    with pytest.raises(FileNotFoundError, match=r"nope\.array_record"):
        iter(missing)


def test_a_filter_dropping_every_example_of_an_endless_pipeline_raises_instead_of_hanging():
    class Nothing(kd.data.FilterTransform):
        def filter(self, example):
            return False

    ds = _range(20, transforms=[Nothing()], batch_size=2, num_epochs=None)
    with pytest.raises(
        ValueError, match=r"DataSource.transforms\[0\] refused 20 examples in a row, as many as an epoch"
    ):
        next(iter(ds))


def test_a_filter_refusing_long_runs_of_examples_still_yields_those_it_keeps():
    class Ones(kd.data.FilterTransform):
        def filter(self, example):
            return int(example["label"]) == 1

    labels = np.array([0] * 2000 + [1] * 100)
    ds = kd.data.py.DataSource(
        {"label": labels}, shuffle=False, num_epochs=1, num_workers=0, batch_size=10, transforms=[Ones()]
    )
    batches = list(ds)
    assert len(batches) == 10 and all((b["label"] == 1).all() for b in batches)


def test_mix_weights_may_be_numpy_numbers():
    ds = kd.data.py.Mix(
        [_range(3), _range(3, start=10)],
        weights=[np.float32(1), np.int64(1)],
        seed=0,
        num_epochs=1,
        shuffle=False,
        num_workers=0,
    )
    assert sorted(_ints(ds)) == [0, 1, 2, 10, 11, 12]


def test_a_transform_writing_into_its_example_changes_neither_the_source_nor_later_epochs():
    def double(example):
        example["x"] *= 2
        return example

    arrays = {"x": np.ones(4, np.float32)}
    ds = kd.data.py.DataSource(
        arrays, shuffle=False, num_epochs=3, num_workers=0, batch_size=4, transforms=[double]
    )
    assert [b["x"].tolist() for b in ds] == [[2.0] * 4] * 3
    np.testing.assert_array_equal(arrays["x"], np.ones(4))
    loaded = {"x": np.ones(4, np.float32), "y": np.arange(4)}
    in_memory = kd.data.InMemoryPipeline(
        loader=lambda: loaded,
        batch_size=4,
        seed=0,
        num_epochs=3,
        transforms=[kd.data.RandomCrop(key="y", shape=()), double],
    )
    assert [b["x"].tolist() for b in in_memory] == [[2.0] * 4] * 3
    np.testing.assert_array_equal(loaded["x"], np.ones(4))


def test_hosts_get_equal_shards_and_a_mixture_passes_its_host_to_its_datasets():
    per_host = [_range(7, batch_size=4, process_index=i, process_count=2) for i in range(2)]
    assert [len(p) for p in per_host] == [1, 1]
    assert [_lists(p) for p in per_host] == [[[0, 2]], [[1, 3]]]  # 7 examples: the 7th is left out
    mixes = [
        kd.data.py.Mix(
            [_range(4), _range(4, start=100)],
            shuffle=False,
            seed=0,
            num_epochs=1,
            num_workers=0,
            batch_size=4,
            process_index=i,
            process_count=2,
        )
        for i in range(2)
    ]
    seen = [sorted(int(v) for b in m for v in b) for m in mixes]
    assert seen == [[0, 2, 100, 102], [1, 3, 101, 103]]
