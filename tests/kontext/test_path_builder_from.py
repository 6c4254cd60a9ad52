"""``path_builder_from``: typed, IDE-completable path building."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Generic, NamedTuple, TypedDict, TypeVar

import pytest
from kontext import PathBuilder, get_by_path, path_builder_from


@dataclasses.dataclass
class Meta:
    id: str
    tags: list[str]


@dataclasses.dataclass
class Batch:
    image: object
    label: object
    meta: Meta | None
    crops: list[Meta]
    by_name: dict[str, Meta]


class Pred(NamedTuple):
    logits: object


class Features(TypedDict):
    rgb: object
    depth: object


def test_attribute_access_builds_the_dotted_path() -> None:
    assert str(path_builder_from("batch", Batch).image) == "batch.image"


def test_builder_equals_its_path_string() -> None:
    assert path_builder_from("batch", Batch).label == "batch.label"
    assert hash(path_builder_from("batch", Batch).label) == hash("batch.label")


def test_unknown_attribute_is_rejected_with_close_matches() -> None:
    batch = path_builder_from("batch", Batch)
    with pytest.raises(AttributeError, match=r"Batch has no field 'imag'.*Did you mean 'image'\?"):
        _ = batch.imag


def test_nested_annotated_fields_are_checked_through_optional() -> None:
    batch = path_builder_from("batch", Batch)
    assert str(batch.meta.id) == "batch.meta.id"
    with pytest.raises(AttributeError, match="Meta has no field 'idd'"):
        _ = batch.meta.idd


def test_items_follow_list_and_dict_element_types() -> None:
    batch = path_builder_from("batch", Batch)
    assert str(batch.crops[0].tags[-1]) == "batch.crops[0].tags[-1]"
    assert str(batch.by_name["a b"].id) == "batch.by_name['a b'].id"
    with pytest.raises(AttributeError):
        _ = batch.crops[0].nope


def test_named_tuples_are_annotated_classes() -> None:
    preds = path_builder_from("preds", Pred)
    assert str(preds.logits) == "preds.logits"
    with pytest.raises(AttributeError):
        _ = preds.logit


def test_typed_dict_keys_are_checked_for_items_and_attributes() -> None:
    feats = path_builder_from("feats", Features)
    assert str(feats["rgb"]) == "feats.rgb"
    assert str(feats.depth) == "feats.depth"
    with pytest.raises(KeyError, match="no field 'rbg'"):
        _ = feats["rbg"]


def test_unannotated_class_or_none_builds_any_path() -> None:
    anything = path_builder_from("preds")
    assert str(anything.encoder["x"][0, ...]) == "preds.encoder.x[0,...]"
    assert str(anything.interms.encoder.__call__[0]) == "preds.interms.encoder.__call__[0]"
    assert str(path_builder_from("ctx", dict).anything) == "ctx.anything"


def test_built_path_resolves_in_a_context() -> None:
    batch = path_builder_from("batch", Batch)
    context = {"batch": Batch(image=1, label=2, meta=Meta("m", ["t"]), crops=[], by_name={})}
    assert get_by_path(context, batch.meta.tags[0]) == "t"


def test_dir_lists_the_fields_for_completion() -> None:
    assert dir(path_builder_from("batch", Batch)) == ["by_name", "crops", "image", "label", "meta"]


def test_builders_are_read_only_and_repr_shows_the_path() -> None:
    batch = path_builder_from("batch", Batch)
    with pytest.raises(AttributeError, match="read-only"):
        batch.image = 3
    assert repr(batch.image) == "PathBuilder('batch.image')"


def test_builders_copy_and_pickle_as_their_path() -> None:
    built = path_builder_from("batch", Batch).meta.id
    assert copy.deepcopy(built) == "batch.meta.id"
    restored = pickle.loads(pickle.dumps(built))
    assert isinstance(restored, PathBuilder)
    assert restored == "batch.meta.id"


T = TypeVar("T")


@dataclasses.dataclass
class Box(Generic[T]):
    item: T
    items: list[T]

    @property
    def first(self) -> T:
        return self.items[0]


def test_parameterized_generic_checks_its_fields_and_follows_type_arguments() -> None:
    box = path_builder_from("box", Box[Meta])
    assert str(box.item.id) == "box.item.id"
    assert str(box.items[0].tags) == "box.items[0].tags"
    with pytest.raises(AttributeError, match="Box has no field 'itme'"):
        _ = box.itme
    with pytest.raises(AttributeError, match="Meta has no field 'idd'"):
        _ = box.items[0].idd


def test_unparameterized_generic_field_accepts_any_name() -> None:
    assert str(path_builder_from("box", Box).item.anything) == "box.item.anything"


def test_properties_are_valid_steps_typed_by_their_return_annotation() -> None:
    @dataclasses.dataclass
    class Crops:
        all: list[Meta]

        @property
        def main(self) -> Meta:
            return self.all[0]

    crops = path_builder_from("crops", Crops)
    assert str(crops.main.id) == "crops.main.id"
    with pytest.raises(AttributeError, match="Meta has no field 'idd'"):
        _ = crops.main.idd
    assert "main" in dir(crops)


def test_named_tuple_items_follow_the_field_types() -> None:
    class Pair(NamedTuple):
        name: str
        meta: Meta

    pair = path_builder_from("pair", Pair)
    assert str(pair[1].id) == "pair[1].id"
    with pytest.raises(AttributeError, match="Meta has no field 'idd'"):
        _ = pair[-1].idd
