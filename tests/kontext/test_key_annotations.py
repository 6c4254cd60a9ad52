"""``Key``, ``KeyTree``, ``REQUIRED`` and ``get_keypaths`` / ``is_key_annotated``."""

from __future__ import annotations

import dataclasses
import typing

import kontext
from kontext import REQUIRED, Key, KeyTree, get_keypaths, is_key_annotated


@dataclasses.dataclass
class Loss:
    preds: Key = REQUIRED
    targets: Key = REQUIRED
    mask: Key | None = None
    weight: float = 1.0


@dataclasses.dataclass
class Everything:
    plain: Key = "a"
    optional: Key | None = None
    union: Key | int = "b"
    pep604: Key | None = None
    mapping: dict[str, Key] = dataclasses.field(default_factory=dict)
    listed: list[Key] = dataclasses.field(default_factory=list)
    tree: KeyTree[dict[str, str]] = dataclasses.field(default_factory=dict)
    not_a_key: int = 0
    other_annotated: typing.Annotated[int, "meta"] = 0


def test_key_fields_are_found_in_declaration_order() -> None:
    assert get_keypaths(Loss(preds="p", targets="t")) == {"preds": "p", "targets": "t", "mask": None}


def test_keys_are_found_through_optional_union_and_containers() -> None:
    assert list(get_keypaths(Everything())) == [
        "plain",
        "optional",
        "union",
        "pep604",
        "mapping",
        "listed",
        "tree",
    ]


def test_required_is_the_default_value_of_an_unset_key() -> None:
    assert get_keypaths(Loss()) == {"preds": REQUIRED, "targets": REQUIRED, "mask": None}


def test_key_is_an_annotated_marker() -> None:
    assert typing.get_origin(Key) is typing.Annotated
    assert typing.get_args(Key)[0] is typing.Any


def test_inherited_key_fields_are_included() -> None:
    @dataclasses.dataclass
    class WeightedLoss(Loss):
        weights: Key = "batch.weights"

    assert list(get_keypaths(WeightedLoss())) == ["preds", "targets", "mask", "weights"]


def test_plain_annotated_classes_work_without_dataclasses() -> None:
    class Metric:
        values: Key

        def __init__(self, values: str) -> None:
            self.values = values

    assert get_keypaths(Metric("preds.x")) == {"values": "preds.x"}


def test_kontext_keys_protocol_lets_wrappers_expose_inner_keys() -> None:
    @dataclasses.dataclass
    class Scaled:
        inner: Loss
        scale: float = 2.0

        def __kontext_keys__(self) -> dict[str, object]:
            return get_keypaths(self.inner)

    wrapped = Scaled(Loss(preds="p", targets="t"))
    assert get_keypaths(wrapped) == {"preds": "p", "targets": "t", "mask": None}
    assert is_key_annotated(wrapped)


def test_is_key_annotated_accepts_classes_and_instances() -> None:
    assert is_key_annotated(Loss)
    assert is_key_annotated(Loss())

    @dataclasses.dataclass
    class NoKeys:
        x: int = 0

    assert not is_key_annotated(NoKeys)
    assert not is_key_annotated(3)


def test_string_annotations_that_cannot_be_evaluated_still_reveal_keys() -> None:
    class Local:
        pass

    class WithForwardRefs:
        __annotations__ = {"image": "Key", "other": "Local", "tree": "KeyTree[dict[str, Local]]"}
        image = "batch.image"
        other = None
        tree = {"a": "x"}

    assert get_keypaths(WithForwardRefs()) == {"image": "batch.image", "tree": {"a": "x"}}


def test_named_tuple_forward_references_that_cannot_be_evaluated_still_reveal_keys() -> None:
    class Local:
        pass

    class Pair(typing.NamedTuple):
        first: Key
        other: Local

    assert get_keypaths(Pair("a.b", Local())) == {"first": "a.b"}


def test_key_and_required_are_the_lazily_loaded_public_names() -> None:
    assert kontext.Key is Key
    assert kontext.REQUIRED == "__KEY_REQUIRED__"
    assert {"Key", "KeyTree", "REQUIRED", "path_builder_from"} <= set(dir(kontext))
