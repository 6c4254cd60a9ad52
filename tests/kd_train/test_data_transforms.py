"""kd.data's transforms (Kauldron's names): values, shapes, dtypes, config errors, bad-input messages, rngs."""

from __future__ import annotations

import dataclasses

import grain
import jax
import numpy as np
import pytest
from kd.data import _map_transforms, _random_transforms, _transform_base

ELEMENT = {"yes": 1, "definitely": 2, "old": 3, "no": 4, "drop": 5}


def _message(excinfo: pytest.ExceptionInfo) -> str:
    return str(excinfo.value)


# --- the abstract bases ------------------------------------------------------------------------------


def test_map_and_filter_transforms_are_abstract_and_callable():
    with pytest.raises(TypeError):
        _transform_base.MapTransform()

    class Double(_transform_base.MapTransform):
        def map(self, element):
            return {k: 2 * v for k, v in element.items()}

    class Positive(_transform_base.FilterTransform):
        def filter(self, element):
            return element["x"] > 0

    assert Double()({"x": 2}) == {"x": 4}
    assert Positive().filter({"x": 1}) and not Positive()({"x": -1})


def test_map_transform_runs_in_a_grain_map():
    ds = grain.MapDataset.source([{"x": np.float32(1.0)}]).map(_map_transforms.Cast(key="x", dtype=np.int32))
    assert ds[0]["x"].dtype == np.int32


# --- Elements ----------------------------------------------------------------------------------------


def test_elements_keep_keeps_renamed_and_copied_keys():
    after = _transform_base.Elements(
        keep={"yes", "definitely"}, rename={"old": "new"}, copy={"no": "no_copy"}
    ).map(ELEMENT)
    assert after == {"yes": 1, "definitely": 2, "new": 3, "no_copy": 4}


def test_elements_drop_keeps_the_rest():
    after = _transform_base.Elements(
        drop={"no", "drop"}, rename={"old": "new"}, copy={"yes": "yes_copy"}
    ).map(ELEMENT)
    assert after == {"yes": 1, "definitely": 2, "new": 3, "yes_copy": 1}


def test_elements_rename_only():
    after = _transform_base.Elements(rename={"old": "new"}).map(ELEMENT)
    assert after == {"yes": 1, "definitely": 2, "no": 4, "drop": 5, "new": 3}


def test_elements_copy_only():
    after = _transform_base.Elements(copy={"yes": "no", "old": "new"}).map({"yes": 1, "old": 2})
    assert after == {"yes": 1, "old": 2, "no": 1, "new": 2}


def test_elements_does_not_mutate_its_input():
    before = dict(ELEMENT)
    _transform_base.Elements(drop={"no"}, rename={"old": "new"}, copy={"yes": "y"}).map(before)
    assert before == ELEMENT


def test_elements_rename_onto_an_existing_key_raises():
    with pytest.raises(KeyError, match="overwrite"):
        _transform_base.Elements(rename={"old": "oops"}).map({"old": 1, "oops": 2})


def test_elements_copy_onto_an_existing_key_raises():
    with pytest.raises(KeyError, match="overwrite"):
        _transform_base.Elements(copy={"old": "oops"}).map({"old": 1, "oops": 2})


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"keep": {"a"}, "drop": {"b"}}, ValueError),
        ({"keep": {"a"}, "rename": {"a": "b"}}, KeyError),
        ({"keep": {"b"}, "rename": {"a": "b"}}, KeyError),
        ({"drop": {"a"}, "rename": {"a": "b"}}, KeyError),
        ({"copy": {"old": "oops", "yes": "oops"}}, ValueError),
        ({"copy": {"old": "oops"}, "rename": {"yes": "oops"}}, KeyError),
        ({"copy": {"old": "oops"}, "keep": {"oops"}}, KeyError),
    ],
)
def test_elements_contradictory_config_raises_at_construction(kwargs, error):
    with pytest.raises(error):
        _transform_base.Elements(**kwargs)


def test_elements_are_hashable_and_compare_by_value():
    a = _transform_base.Elements(keep=["x", "y"], rename={"z": "w"})
    b = _transform_base.Elements(keep={"y", "x"}, rename={"z": "w"})
    assert a == b and hash(a) == hash(b)
    assert a.rename == {"z": "w"} and a.keep == {"x", "y"}
    assert _transform_base.Elements() != a
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.keep = ()


@pytest.mark.parametrize("role", ["keep", "drop", "rename", "copy"])
def test_elements_missing_key_message_names_key_keys_and_near_miss(role):
    arg = {"imgae"} if role in ("keep", "drop") else {"imgae": "out"}
    with pytest.raises(KeyError) as excinfo:
        _transform_base.Elements(**{role: arg}).map({"image": 1, "label": 2})
    message = _message(excinfo)
    assert message.startswith("Elements(")
    assert f"{role}-key 'imgae' not in the element" in message
    assert "['image', 'label']" in message
    assert "did you mean 'image'?" in message


def test_elements_missing_key_message_matches_the_documented_form():
    with pytest.raises(KeyError) as excinfo:
        _transform_base.Elements(keep={"imgae"}).map({"image": 1, "label": 2})
    assert _message(excinfo) == (
        "Elements(keep={'imgae'}): keep-key 'imgae' not in the element; it has ['image', 'label']; "
        "did you mean 'image'?"
    )


def test_missing_keys_error_lists_several_keys_and_their_near_misses():
    err = _transform_base.missing_keys_error(
        _transform_base.Elements(), ["lable", "imgae", "zzz"], ["image", "label"], role="keep"
    )
    message = str(err)
    assert isinstance(err, KeyError)
    assert "keep-keys ['imgae', 'lable', 'zzz']" in message
    assert "'image' for 'imgae'" in message and "'label' for 'lable'" in message
    assert "zzz'?" not in message


def test_missing_keys_error_without_near_miss_has_no_hint():
    message = str(_transform_base.missing_keys_error(_transform_base.Elements(), ["q"], ["image"]))
    assert "key 'q' not in the element; it has ['image']" in message and "did you mean" not in message


# --- ElementWise ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class _AddOne(_transform_base.ElementWiseTransform):
    def map_element(self, element):
        return element + 1


@pytest.mark.parametrize(
    "key, normalised",
    [("a", {"a": "a"}), (["a", "b"], {"a": "a", "b": "b"}), ({"a": "c"}, {"a": "c"})],
)
def test_element_wise_key_is_normalised_to_in_out_keys(key, normalised):
    assert dict(_AddOne(key=key).key) == normalised


def test_element_wise_transforms_only_its_keys():
    assert _AddOne(key=["a", "b"]).map({"a": 1, "b": 2, "c": 3}) == {"a": 2, "b": 3, "c": 3}


def test_element_wise_rename_keeps_the_original_key():
    assert _AddOne(key={"a": "b"}).map({"a": 1, "c": 3}) == {"b": 2, "a": 1, "c": 3}


def test_element_wise_with_one_key_missing_transforms_the_others():
    assert _AddOne(key=["a", "zzz"]).map({"a": 1}) == {"a": 2}


def test_element_wise_with_no_matching_key_names_keys_and_near_miss():
    with pytest.raises(KeyError) as excinfo:
        _AddOne(key="imgae").map({"image": 1, "label": 2})
    message = _message(excinfo)
    assert message.startswith("_AddOne(key='imgae')")
    assert "key 'imgae' not in the element" in message
    assert "['image', 'label']" in message and "did you mean 'image'?" in message


def test_element_wise_empty_key_raises():
    with pytest.raises(KeyError, match="key"):
        _AddOne(key=())


def test_element_wise_subclass_that_skips_super_post_init_gets_a_clear_error():
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Forgetful(_AddOne):
        def __post_init__(self):
            pass

    with pytest.raises(ValueError, match=r"Forgetful.*super\(\).__post_init__\(\)"):
        Forgetful(key="a").map({"a": 1})


def test_element_wise_transforms_are_hashable():
    assert hash(_AddOne(key=["a"])) == hash(_AddOne(key="a")) and _AddOne(key=["a"]) == _AddOne(key="a")


# --- TreeFlattenWithPath, AddConstants ----------------------------------------------------------------


def test_tree_flatten_with_path_flattens_only_its_key():
    element = {"a": {"b": 2, "c": {"d": 3}}, "e": 5, "f": {"g": 6}}
    after = _transform_base.TreeFlattenWithPath(key="a").map(element)
    assert after == {"a_b": 2, "a_c_d": 3, "e": 5, "f": {"g": 6}}


def test_tree_flatten_with_path_separator():
    after = _transform_base.TreeFlattenWithPath(key="a", separator="/").map({"a": {"b": {"c": 1}}})
    assert after == {"a/b/c": 1}


def test_tree_flatten_with_path_missing_key_names_near_miss():
    with pytest.raises(KeyError) as excinfo:
        _transform_base.TreeFlattenWithPath(key="ab").map({"a": {"b": 1}, "e": 2})
    message = _message(excinfo)
    assert "TreeFlattenWithPath" in message and "'ab'" in message and "['a', 'e']" in message
    assert "did you mean 'a'?" in message


def test_add_constants_adds_values_positionally_without_mutating():
    before = {"x": 1}
    add = _transform_base.AddConstants({"w": 1.0, "name": "set"})
    assert add.map(before) == {"x": 1, "w": 1.0, "name": "set"}
    assert before == {"x": 1}
    assert hash(add) == hash(_transform_base.AddConstants({"name": "set", "w": 1.0}))
    assert _transform_base.AddConstants().map({"x": 1}) == {"x": 1}


def test_add_constants_refuses_to_overwrite():
    with pytest.raises(KeyError, match=r"\['x'\]"):
        _transform_base.AddConstants({"x": 2}).map({"x": 1})


# --- Cast, Rearrange, ValueRange, Gather ------------------------------------------------------------


def test_cast_changes_dtype_and_keeps_values():
    after = _map_transforms.Cast(key="x", dtype=np.int32).map({"x": np.array([1.7, -2.2]), "y": 0})
    assert after["x"].dtype == np.int32 and after["x"].tolist() == [1, -2] and after["y"] == 0


def test_cast_takes_python_scalars():
    assert _map_transforms.Cast(key="x", dtype=np.float16).map({"x": 3})["x"].dtype == np.float16


def test_cast_missing_key_message():
    with pytest.raises(KeyError) as excinfo:
        _map_transforms.Cast(key="lable", dtype=np.int32).map({"image": 1, "label": 2})
    message = _message(excinfo)
    assert "Cast(" in message and "'lable'" in message and "['image', 'label']" in message
    assert "did you mean 'label'?" in message


def test_rearrange_transposes_and_keeps_dtype():
    after = _map_transforms.Rearrange(key="values", pattern="h w -> w h").map(
        {"values": np.ones((2, 3), np.uint8)}
    )
    assert after["values"].shape == (3, 2) and after["values"].dtype == np.uint8


def test_rearrange_converts_python_values():
    tr = _map_transforms.Rearrange(key="label", pattern="-> 1")
    assert tr.map({"label": 3})["label"].tolist() == [3]
    tr = _map_transforms.Rearrange(key="l", pattern="(a b) -> a b", axes_lengths={"a": 2})
    assert tr.map({"l": [1, 2, 3, 4]})["l"].tolist() == [[1, 2], [3, 4]]


def test_rearrange_rename_keeps_the_source():
    x = np.arange(6).reshape(2, 3)
    after = _map_transforms.Rearrange(key={"x": "xt"}, pattern="a b -> b a").map({"x": x})
    np.testing.assert_array_equal(after["xt"], x.T)
    assert after["x"] is x


def test_rearrange_bad_pattern_names_key_pattern_and_shapes():
    tr = _map_transforms.Rearrange(key="image", pattern="h w c -> c h w")
    with pytest.raises(ValueError) as excinfo:
        tr.map({"image": np.zeros((4, 5))})
    message = _message(excinfo)
    assert "key 'image'" in message and "(4, 5)" in message and "'h w c -> c h w'" in message
    assert "expects 3 axes (h w c)" in message
    assert type(excinfo.value.__cause__).__name__ == "EinopsError"


def test_rearrange_bad_pattern_with_ellipsis_says_at_least():
    with pytest.raises(ValueError, match="at least 2 axes"):
        _map_transforms.Rearrange(key="x", pattern="... h w -> ... w h").map({"x": np.zeros(3)})


def test_rearrange_is_hashable():
    tr = _map_transforms.Rearrange(key="x", pattern="(a b) -> a b", axes_lengths={"a": 2})
    assert hash(tr) == hash(_map_transforms.Rearrange(key="x", pattern="(a b) -> a b", axes_lengths={"a": 2}))


def test_value_range_maps_and_clips():
    tr = _map_transforms.ValueRange(key="values", in_vrange=(0.0, 255.0), vrange=(0.0, 1.0), clip_values=True)
    after = tr.map({"values": np.array([-100, 0.0, 255.0, 400.0]), "other": 42})
    assert after["other"] == 42
    np.testing.assert_allclose(after["values"], [0.0, 0.0, 1.0, 1.0])


def test_value_range_of_uint8_gives_float32():
    tr = _map_transforms.ValueRange(key="values", vrange=(-1.0, 1.0))
    after = tr.map({"values": np.array([[0, 255, 51]], np.uint8)})
    assert after["values"].dtype == np.float32 and after["values"].shape == (1, 3)
    np.testing.assert_allclose(after["values"], [[-1.0, 1.0, -0.6]], rtol=1e-6)


def test_value_range_without_clipping_extrapolates():
    tr = _map_transforms.ValueRange(key="v", vrange=(0.0, 1.0), in_vrange=(0.0, 10.0), clip_values=False)
    np.testing.assert_allclose(tr.map({"v": np.array([-5.0, 20.0])})["v"], [-0.5, 2.0])


def test_gather_takes_indices_along_axis():
    x = np.arange(12).reshape(3, 4)
    after = _map_transforms.Gather(key="x", axis=1, indices=[3, 0, 0]).map({"x": x})
    np.testing.assert_array_equal(after["x"], x[:, [3, 0, 0]])
    assert after["x"].dtype == x.dtype


# --- Resize --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, in_shape, out_shape",
    [
        ({"size": (12, 12)}, (5, 5, 3), (12, 12, 3)),
        ({"min_size": 10}, (5, 6, 3), (10, 12, 3)),
        ({"max_size": 5}, (8, 10, 3), (4, 5, 3)),
        ({"size": (2, 3)}, (4, 2, 8, 8, 1), (4, 2, 2, 3, 1)),
    ],
)
def test_resize_shapes(kwargs, in_shape, out_shape):
    after = _map_transforms.Resize(key="img", **kwargs).map({"img": np.zeros(in_shape, np.uint8)})
    assert isinstance(after["img"], np.ndarray)
    assert after["img"].shape == out_shape and after["img"].dtype == np.uint8


@pytest.mark.parametrize("kwargs", [{}, {"size": (2, 2), "min_size": 2}, {"min_size": 2, "max_size": 3}])
def test_resize_needs_exactly_one_size(kwargs):
    with pytest.raises(ValueError, match="exactly one"):
        _map_transforms.Resize(key="img", **kwargs)


def test_resize_area_is_refused():
    with pytest.raises(ValueError, match="area"):
        _map_transforms.Resize(key="img", size=(2, 2), method="area")


def test_resize_integers_default_to_nearest():
    img = np.array([[0, 200], [100, 255]], np.uint8)[..., None]
    after = _map_transforms.Resize(key="img", size=(4, 4)).map({"img": img})["img"]
    np.testing.assert_array_equal(after[..., 0], np.repeat(np.repeat(img[..., 0], 2, 0), 2, 1))


def test_resize_floats_default_to_bilinear_like_jax():
    img = np.random.default_rng(0).random((1, 5, 7, 2), dtype=np.float32)
    after = _map_transforms.Resize(key="img", size=(9, 4)).map({"img": img})["img"]
    expected = jax.image.resize(img, (1, 9, 4, 2), method="bilinear", antialias=True)
    assert after.dtype == np.float32
    np.testing.assert_allclose(after, np.asarray(expected), rtol=1e-5, atol=1e-6)


def test_resize_integers_with_bilinear_are_rounded_and_clipped():
    img = np.array([[0, 255], [255, 0]], np.uint8)[..., None]
    tr = _map_transforms.Resize(key="img", size=(5, 5), method="bilinear")
    after = tr.map({"img": img})["img"]
    expected = np.asarray(jax.image.resize(img.astype(np.float32), (5, 5, 1), method="bilinear"))
    assert after.dtype == np.uint8
    np.testing.assert_array_equal(after, np.clip(np.round(expected), 0, 255).astype(np.uint8))


def test_resize_rank_too_small_names_the_shape():
    with pytest.raises(ValueError, match=r"\(4, 4\)"):
        _map_transforms.Resize(key="img", size=(2, 2)).map({"img": np.zeros((4, 4))})


# --- CenterCrop ----------------------------------------------------------------------------------------


def test_center_crop():
    data = np.arange(16 * 16, dtype=np.uint8).reshape(16, 16)
    after = _map_transforms.CenterCrop(key="img", shape=(12, 12)).map({"img": data})["img"]
    np.testing.assert_array_equal(after, data[2:14, 2:14])


def test_center_crop_none_keeps_the_dimension():
    data = np.arange(16 * 16, dtype=np.uint8).reshape(16, 16)
    after = _map_transforms.CenterCrop(key="img", shape=(12, None)).map({"img": data})["img"]
    np.testing.assert_array_equal(after, data[2:14, :])


def test_center_crop_odd_margin_starts_at_the_floor():
    after = _map_transforms.CenterCrop(key="x", shape=(2,)).map({"x": np.arange(5)})["x"]
    assert after.tolist() == [1, 2]


def test_center_crop_rank_mismatch_names_both_shapes():
    with pytest.raises(ValueError) as excinfo:
        _map_transforms.CenterCrop(key="img", shape=(2, 2)).map({"img": np.zeros((4, 4, 3))})
    assert "(2, 2)" in _message(excinfo) and "(4, 4, 3)" in _message(excinfo)


def test_center_crop_larger_than_element_names_both_shapes():
    with pytest.raises(ValueError) as excinfo:
        _map_transforms.CenterCrop(key="img", shape=(8, None)).map({"img": np.zeros((4, 4))})
    assert "(8, None)" in _message(excinfo) and "(4, 4)" in _message(excinfo)


# --- random transforms ---------------------------------------------------------------------------------


def _image(shape=(8, 8, 3)) -> np.ndarray:
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


def test_random_crop_shape_and_is_a_window_of_the_input():
    img = _image()
    out = _random_transforms.RandomCrop(key="image", shape=(4, 5, None)).random_map(
        {"image": img, "label": 1}, np.random.default_rng(0)
    )
    crop = out["image"]
    assert crop.shape == (4, 5, 3) and out["label"] == 1
    i, j = np.argwhere(img[..., 0] == crop[0, 0, 0])[0]
    np.testing.assert_array_equal(crop, img[i : i + 4, j : j + 5])


def test_random_crop_same_seed_same_crop():
    tr = _random_transforms.RandomCrop(key="image", shape=(3, 3, 3))
    first = tr.random_map({"image": _image()}, np.random.default_rng(7))["image"]
    second = tr.random_map({"image": _image()}, np.random.default_rng(7))["image"]
    np.testing.assert_array_equal(first, second)


def test_random_crop_different_seeds_give_different_crops():
    tr = _random_transforms.RandomCrop(key="image", shape=(3, 3, 3))
    corners = {
        float(tr.random_map({"image": _image()}, np.random.default_rng(s))["image"][0, 0, 0])
        for s in range(8)
    }
    assert len(corners) > 1


def test_random_crop_applies_the_same_crop_to_every_key():
    img = _image()
    out = _random_transforms.RandomCrop(key=["image", "mask"], shape=(4, 4, None)).random_map(
        {"image": img, "mask": img[..., :1] + 1000}, np.random.default_rng(3)
    )
    np.testing.assert_array_equal(out["mask"][..., 0] - 1000, out["image"][..., 0])


def test_random_transforms_do_not_advance_the_given_rng():
    rng = np.random.default_rng(5)
    _random_transforms.RandomCrop(key="image", shape=(3, 3, 3)).random_map({"image": _image()}, rng)
    assert rng.integers(1 << 30) == np.random.default_rng(5).integers(1 << 30)


def test_random_crop_called_like_grain_calls_it():
    tr = _random_transforms.RandomCrop(key="image", shape=(3, 3, 3))
    called = tr({"image": _image()}, np.random.default_rng(1))["image"]
    mapped = tr.random_map({"image": _image()}, np.random.default_rng(1))["image"]
    np.testing.assert_array_equal(called, mapped)


@pytest.mark.parametrize("shape", [(-1, 4), (4, -2, None)])
def test_random_crop_negative_shape_raises_at_construction(shape):
    with pytest.raises(ValueError, match=r"-\d"):
        _random_transforms.RandomCrop(key="image", shape=shape)


def test_random_crop_rank_mismatch_names_the_shapes():
    with pytest.raises(ValueError) as excinfo:
        _random_transforms.RandomCrop(key="image", shape=(4, 4)).random_map(
            {"image": _image()}, np.random.default_rng()
        )
    assert (
        "(8, 8, 3)" in _message(excinfo) and "(4, 4)" in _message(excinfo) and "'image'" in _message(excinfo)
    )


def test_random_crop_incompatible_keys_name_the_shapes():
    tr = _random_transforms.RandomCrop(key=["image", "mask"], shape=(4, 4, None))
    with pytest.raises(ValueError) as excinfo:
        tr.random_map({"image": _image(), "mask": _image((8, 9, 1))}, np.random.default_rng())
    message = _message(excinfo)
    assert "(8, 8, 3)" in message and "(8, 9, 1)" in message and "'mask'" in message


def test_random_crop_none_dims_may_differ_between_keys():
    tr = _random_transforms.RandomCrop(key=["image", "mask"], shape=(4, 4, None))
    out = tr.random_map({"image": _image(), "mask": _image((8, 8, 1))}, np.random.default_rng())
    assert out["mask"].shape == (4, 4, 1)


def test_random_crop_larger_than_element_names_the_shapes():
    tr = _random_transforms.RandomCrop(key="image", shape=(9, 4, 3))
    with pytest.raises(ValueError) as excinfo:
        tr.random_map({"image": _image()}, np.random.default_rng())
    assert "(8, 8, 3)" in _message(excinfo) and "(9, 4, 3)" in _message(excinfo)


def test_random_crop_missing_key_message():
    with pytest.raises(KeyError) as excinfo:
        _random_transforms.RandomCrop(key="imgae", shape=(2,)).random_map(
            {"image": np.zeros(4)}, np.random.default_rng()
        )
    message = _message(excinfo)
    assert "RandomCrop" in message and "'imgae'" in message and "['image']" in message
    assert "did you mean 'image'?" in message


def test_random_flip_flips_or_keeps_each_batch_entry():
    imgs = _image((64, 2, 3, 1))
    out = _random_transforms.RandomFlipLeftRight(key="image").random_map(
        {"image": imgs}, np.random.default_rng(0)
    )
    out = out["image"]
    flipped = [bool(np.array_equal(o, i[:, ::-1])) for o, i in zip(out, imgs)]
    kept = [bool(np.array_equal(o, i)) for o, i in zip(out, imgs)]
    assert all(f != k for f, k in zip(flipped, kept))
    assert 10 < sum(flipped) < 54


def test_random_flip_same_rng_flips_every_key_alike():
    img = _image((2, 3, 1))
    tr = _random_transforms.RandomFlipLeftRight(key=["a", "b"])
    for seed in range(6):
        out = tr.random_map({"a": img, "b": img + 100}, np.random.default_rng(seed))
        np.testing.assert_array_equal(out["b"] - 100, out["a"])


def test_random_flip_seeds_give_both_outcomes():
    img = _image((2, 3, 1))
    tr = _random_transforms.RandomFlipLeftRight(key="image")
    outs = {tr.random_map({"image": img}, np.random.default_rng(s))["image"].tobytes() for s in range(16)}
    assert outs == {img.tobytes(), img[:, ::-1].tobytes()}


def test_random_flip_needs_h_w_c():
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        _random_transforms.RandomFlipLeftRight(key="image").random_map(
            {"image": np.zeros((2, 3))}, np.random.default_rng()
        )


# --- in a grain pipeline ---------------------------------------------------------------------------------


class _Images(grain.sources.RandomAccessDataSource):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, index):
        return {"image": _image()}


def _cropped(seed: int = 42) -> grain.MapDataset:
    crop = _random_transforms.RandomCrop(key="image", shape=(4, 4, 3))
    return grain.MapDataset.source(_Images()).seed(seed).random_map(crop)


def test_grain_reading_an_index_twice_gives_the_same_crop():
    ds = _cropped()
    np.testing.assert_array_equal(ds[0]["image"].copy(), ds[0]["image"].copy())


@pytest.mark.parametrize("steps", [1, 2])
def test_grain_pipelines_with_the_same_seed_agree(steps):
    first, second = iter(_cropped()), iter(_cropped())
    for _ in range(steps):
        a, b = next(first), next(second)
    np.testing.assert_array_equal(a["image"], b["image"])


def test_grain_crops_vary_across_indices():
    ds = _cropped()
    assert len({ds[i]["image"].tobytes() for i in range(len(ds))}) > 1


def test_review_edge_cases_keep_one_key_zero_crop_flatten_clash_tiny_resize_array_fields():
    from kd.data import _map_transforms, _transform_base

    element = {"image": np.zeros((4, 6, 1)), "label": 3}
    assert set(_transform_base.Elements(keep="image").map(element)) == {"image"}  # one key, not its letters
    assert _map_transforms.CenterCrop(key="image", shape=(2, 0, None)).map(element)["image"].shape == (
        2,
        6,
        1,
    )
    with pytest.raises(KeyError, match=r"flattening makes the key\(s\) \['a_b'\]"):
        _transform_base.TreeFlattenWithPath(key="a").map({"a": {"b": 1}, "a_b": 2})
    assert _map_transforms.Resize(key="image", max_size=1).map({"image": np.zeros((1, 10, 1))})[
        "image"
    ].shape == (1, 1, 1)

    @dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
    class Scale(_transform_base.ElementWiseTransform):
        mean: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(2))

        def map_element(self, element):
            return element - self.mean

    with pytest.raises(KeyError, match=r"did you mean 'image'"):
        Scale(key="imag", mean=np.ones(2)).map(element)
    with pytest.raises(ValueError, match=r"does not fit the pattern '\(h w\) -> h w'"):
        _map_transforms.Rearrange(key="x", pattern="(h w) -> h w").map({"x": np.zeros(16)})
