"""``resolve_from_keyed_obj`` / ``resolve_from_keypaths``: keys to kwargs, and every error case."""

from __future__ import annotations

import dataclasses
import functools
import pickle

import pytest
from kontext import (
    REQUIRED,
    Key,
    KeySignatureError,
    KeyTree,
    Path,
    PathNotFoundError,
    PathSyntaxError,
    RequiredKeyError,
    UnresolvedKeysError,
    path_builder_from,
    resolve_from_keyed_obj,
    resolve_from_keypaths,
)

CONTEXT = {
    "batch": {"image": "IMG", "label": "LBL", "mask": "MSK"},
    "preds": {"logits": "LOGITS", "aux": ["A0", "A1"]},
}


@dataclasses.dataclass
class CrossEntropy:
    logits: Key = REQUIRED
    labels: Key = REQUIRED
    mask: Key | None = None

    def get_values(self, logits, labels, mask=None):
        return logits, labels, mask


def test_keys_resolve_to_the_values_at_their_paths() -> None:
    loss = CrossEntropy(logits="preds.logits", labels="batch.label", mask="batch.mask")
    assert resolve_from_keyed_obj(CONTEXT, loss) == {"logits": "LOGITS", "labels": "LBL", "mask": "MSK"}


def test_none_keys_are_skipped_so_the_function_default_applies() -> None:
    loss = CrossEntropy(logits="preds.logits", labels="batch.label")
    kwargs = resolve_from_keyed_obj(CONTEXT, loss, func=loss.get_values)
    assert kwargs == {"logits": "LOGITS", "labels": "LBL"}
    assert loss.get_values(**kwargs) == ("LOGITS", "LBL", None)


def test_func_may_be_passed_positionally_or_by_keyword() -> None:
    loss = CrossEntropy(logits="preds.logits", labels="batch.label")
    assert resolve_from_keyed_obj(CONTEXT, loss, loss.get_values) == resolve_from_keyed_obj(
        CONTEXT, loss, func=loss.get_values
    )


def test_unset_required_key_raises_naming_it_and_the_class() -> None:
    with pytest.raises(
        RequiredKeyError,
        match=r"^CrossEntropy: cannot resolve required keys 'labels': they are still kontext.REQUIRED",
    ) as info:
        resolve_from_keyed_obj(CONTEXT, CrossEntropy(logits="preds.logits"))
    assert isinstance(info.value, ValueError)


def test_every_unset_required_key_is_named() -> None:
    with pytest.raises(RequiredKeyError, match="'logits', 'labels'"):
        resolve_from_keyed_obj(CONTEXT, CrossEntropy())


def test_missing_function_argument_is_reported() -> None:
    @dataclasses.dataclass
    class OnlyLogits:
        logits: Key = "preds.logits"

    def fn(logits, labels):
        return logits, labels

    with pytest.raises(KeySignatureError) as info:
        resolve_from_keyed_obj(CONTEXT, OnlyLogits(), func=fn)
    message = str(info.value)
    assert message.startswith("OnlyLogits: the signature does not match its keys: ")
    assert "fn(logits, labels)" in message
    assert "which no key provides: 'labels'" in message
    assert isinstance(info.value, TypeError)


def test_extra_key_is_reported_with_the_close_argument_name() -> None:
    @dataclasses.dataclass
    class Typo:
        logits: Key = "preds.logits"
        label: Key = "batch.label"

    def fn(logits, labels):
        return logits, labels

    with pytest.raises(KeySignatureError) as info:
        resolve_from_keyed_obj(CONTEXT, Typo(), func=fn)
    message = str(info.value)
    assert "key 'label' is not an argument of" in message
    assert "did you mean 'labels'?" in message
    assert "which no key provides: 'labels'" in message


def test_var_keyword_function_accepts_any_key() -> None:
    loss = CrossEntropy(logits="preds.logits", labels="batch.label")
    assert resolve_from_keyed_obj(CONTEXT, loss, func=lambda logits, **rest: None) == {
        "logits": "LOGITS",
        "labels": "LBL",
    }


def test_positional_only_argument_cannot_be_fed_by_a_key() -> None:
    @dataclasses.dataclass
    class One:
        x: Key = "batch.image"

    def fn(x, /):
        return x

    with pytest.raises(KeySignatureError, match="positional-only"):
        resolve_from_keyed_obj(CONTEXT, One(), func=fn)


def test_partial_functions_are_checked_against_their_remaining_signature() -> None:
    loss = CrossEntropy(logits="preds.logits", labels="batch.label")

    def fn(scale, logits, labels):
        return scale

    assert resolve_from_keyed_obj(CONTEXT, loss, func=functools.partial(fn, 2.0)) == {
        "logits": "LOGITS",
        "labels": "LBL",
    }


def test_every_missing_path_is_reported_at_once_with_suggestions_and_the_class_name() -> None:
    loss = CrossEntropy(logits="preds.logit", labels="batch.lable", mask="batch.mask")
    with pytest.raises(UnresolvedKeysError) as info:
        resolve_from_keyed_obj(CONTEXT, loss)
    message = str(info.value)
    assert message.startswith("CrossEntropy: Invalid keys: 2 keys could not be resolved")
    assert "logits = 'preds.logit'" in message
    assert "labels = 'batch.lable'" in message
    assert "Did you mean 'preds.logits'" in message
    assert "Did you mean 'batch.label'" in message
    assert set(info.value.errors) == {"logits", "labels"}
    assert all(isinstance(e, PathNotFoundError) for e in info.value.errors.values())
    assert isinstance(info.value, KeyError)


def test_a_key_may_hold_a_tree_of_paths() -> None:
    @dataclasses.dataclass
    class Multi:
        inputs: KeyTree[dict] = dataclasses.field(
            default_factory=lambda: {"img": "batch.image", "aux": ["preds.aux[0]", ("preds.aux[-1]", None)]}
        )

    assert resolve_from_keyed_obj(CONTEXT, Multi()) == {"inputs": {"img": "IMG", "aux": ["A0", ("A1", None)]}}


def test_missing_paths_inside_a_tree_are_named_by_their_position() -> None:
    @dataclasses.dataclass
    class Multi:
        inputs: KeyTree[dict] = dataclasses.field(
            default_factory=lambda: {"img": "batch.imag", "xs": ["nope"]}
        )

    with pytest.raises(UnresolvedKeysError) as info:
        resolve_from_keyed_obj(CONTEXT, Multi())
    assert set(info.value.errors) == {"inputs.img", "inputs.xs[0]"}


def test_a_key_holding_a_non_path_is_a_type_error() -> None:
    @dataclasses.dataclass
    class Bad:
        x: Key = 3  # type: ignore[assignment]

    with pytest.raises(TypeError, match="Bad: key 'x' must be a path string"):
        resolve_from_keyed_obj(CONTEXT, Bad())


def test_keys_may_be_path_objects_and_path_builders() -> None:
    batch = path_builder_from("batch")
    loss = CrossEntropy(logits=Path.from_str("preds.logits"), labels=batch.label)
    assert resolve_from_keyed_obj(CONTEXT, loss) == {"logits": "LOGITS", "labels": "LBL"}


def test_resolve_from_keypaths_without_an_object() -> None:
    assert resolve_from_keypaths(CONTEXT, {"x": "batch.image", "y": {"z": "preds.aux[1]"}}) == {
        "x": "IMG",
        "y": {"z": "A1"},
    }
    with pytest.raises(UnresolvedKeysError, match=r"^Invalid keys: 1 key could not be resolved"):
        resolve_from_keypaths(CONTEXT, {"x": "batch.imagee"})


def test_kontext_keys_protocol_is_resolved_too() -> None:
    class Wrapper:
        def __init__(self, inner: CrossEntropy) -> None:
            self.inner = inner

        def __kontext_keys__(self):
            return {"logits": self.inner.logits, "labels": self.inner.labels}

    wrapper = Wrapper(CrossEntropy(logits="preds.logits", labels="batch.label"))
    assert resolve_from_keyed_obj(CONTEXT, wrapper) == {"logits": "LOGITS", "labels": "LBL"}


def test_a_key_with_invalid_path_syntax_names_the_class_and_the_key() -> None:
    loss = CrossEntropy(logits="preds..logits", labels="batch.label")
    with pytest.raises(
        PathSyntaxError, match=r"^CrossEntropy: key 'logits': Invalid path 'preds..logits'"
    ) as info:
        resolve_from_keyed_obj(CONTEXT, loss)
    assert info.value.position == 6


def test_resolution_errors_survive_pickling_with_their_details() -> None:
    loss = CrossEntropy(logits="preds.logit", labels="batch.label")
    with pytest.raises(UnresolvedKeysError) as info:
        resolve_from_keyed_obj(CONTEXT, loss)
    restored = pickle.loads(pickle.dumps(info.value))
    assert str(restored) == str(info.value)
    assert restored.errors["logits"].suggestions == info.value.errors["logits"].suggestions
    assert restored.errors["logits"].path == "preds.logit"


def test_a_key_with_a_wildcard_is_reported_as_needing_a_concrete_path() -> None:
    loss = CrossEntropy(logits="preds.*", labels="batch.label")
    with pytest.raises(UnresolvedKeysError, match=r"wildcard '\*'.*concrete path"):
        resolve_from_keyed_obj(CONTEXT, loss)


def test_positional_only_argument_cannot_be_fed_by_a_key_even_with_var_keyword() -> None:
    @dataclasses.dataclass
    class One:
        x: Key = "batch.image"

    def fn(x, /, **rest):  # `x=...` would land in `rest`, and `x` would be missing.
        return x

    with pytest.raises(KeySignatureError, match="key 'x' names a positional-only argument"):
        resolve_from_keyed_obj(CONTEXT, One(), func=fn)


def test_function_without_a_readable_signature_is_not_checked() -> None:
    loss = CrossEntropy(logits="preds.logits", labels="batch.label")
    assert resolve_from_keyed_obj(CONTEXT, loss, func=dict) == {"logits": "LOGITS", "labels": "LBL"}


def test_required_inside_a_key_tree_is_named_by_its_position() -> None:
    @dataclasses.dataclass
    class Multi:
        inputs: KeyTree[dict] = dataclasses.field(
            default_factory=lambda: {"a": "batch.image", "b": ["batch.label", REQUIRED]}
        )

    with pytest.raises(RequiredKeyError, match=r"'inputs.b\[1\]'"):
        resolve_from_keyed_obj(CONTEXT, Multi())


def test_annotated_key_never_assigned_is_reported_as_required() -> None:
    class Metric:
        values: Key

    with pytest.raises(RequiredKeyError, match=r"Metric: cannot resolve required keys 'values'"):
        resolve_from_keyed_obj(CONTEXT, Metric())
