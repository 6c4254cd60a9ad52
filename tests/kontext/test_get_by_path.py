"""``get_by_path``: item access then attribute access at each step, defaults, and not-found errors."""

from __future__ import annotations

import collections
import dataclasses
import types

import kontext
import pytest
from hypothesis import given
from kontext import Path, PathNotFoundError, flatten_with_path, get_by_path

from .strategies import trees

Pair = collections.namedtuple("Pair", ["first", "second"])


@dataclasses.dataclass
class Output:
    logits: list
    aux: dict


class Plain:
    def __init__(self) -> None:
        self.weights = [1.0, 2.0]
        self._hidden = 0


class Settings(dict):
    """A dict whose keys are also attributes, the way ConfigDict-style containers behave."""

    def __getattr__(self, name: str):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


CONTEXT = {
    "batch": {"image": "img", "label": 3, "a.b": "dotted", ("x", 1): "tuple-key", 7: "int-key"},
    "preds": Output(logits=[10, 20, 30], aux={"loss": 0.5}),
    "pair": Pair(first="f", second=[1, 2]),
    "obj": Plain(),
    "ns": types.SimpleNamespace(inner={"deep": "ns-deep"}),
    "cfg": Settings(lr=0.1, optimizer=Settings(name="adam")),
    "seq": (("t0", "t1"), ["l0"]),
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("batch.image", "img"),
        ("batch['a.b']", "dotted"),
        ("batch[('x', 1)]", "tuple-key"),
        ("batch[7]", "int-key"),
        ("batch.7", "int-key"),
        ("preds.logits[0]", 10),
        ("preds.logits[-1]", 30),
        ("preds.logits.1", 20),
        ("preds.aux.loss", 0.5),
        ("pair.first", "f"),
        ("pair[0]", "f"),
        ("pair.second[-1]", 2),
        ("obj.weights[1]", 2.0),
        ("ns.inner.deep", "ns-deep"),
        ("cfg.optimizer.name", "adam"),
        ("cfg['lr']", 0.1),
        ("seq[0][1]", "t1"),
        ("seq[1].0", "l0"),
        ("preds.logits[1:]", [20, 30]),
        ("preds.logits[::-1]", [30, 20, 10]),
        ("", CONTEXT),
    ],
)
def test_path_reaches_into_every_kind_of_container(path: str, expected: object) -> None:
    assert get_by_path(CONTEXT, path) == expected


def test_item_access_wins_over_attribute_access() -> None:
    both = Settings(items="the key")
    assert get_by_path({"d": both}, "d.items") == "the key"


def test_attribute_is_used_when_item_access_fails() -> None:
    assert get_by_path({"d": {}}, "d.keys")() == {}.keys()


def test_path_may_be_given_as_path_object_or_tuple_of_parts() -> None:
    assert get_by_path(CONTEXT, Path.from_str("preds.logits[2]")) == 30
    assert get_by_path(CONTEXT, ("batch", ("x", 1))) == "tuple-key"


def test_default_is_returned_for_a_missing_path() -> None:
    assert get_by_path(CONTEXT, "batch.missing", default=None) is None
    assert get_by_path(CONTEXT, "preds.logits[99]", default="d") == "d"


def test_none_path_gives_none_or_the_default_for_optional_keys() -> None:
    assert get_by_path(CONTEXT, None) is None
    assert get_by_path(CONTEXT, None, default=0) == 0


def test_missing_path_raises_key_error_naming_the_whole_path_and_the_failing_step() -> None:
    with pytest.raises(KeyError) as info:
        get_by_path(CONTEXT, "batch.lable.extra")
    error = info.value
    assert isinstance(error, PathNotFoundError)
    assert error.path == "batch.lable.extra"
    assert error.failed_part == "lable"
    assert error.parent == "batch"
    assert "'batch.lable.extra'" in str(error)
    assert "step 2 of 3 ('lable')" in str(error)


def test_missing_path_error_lists_what_was_available_at_the_failing_step() -> None:
    with pytest.raises(PathNotFoundError) as info:
        get_by_path(CONTEXT, "batch.lable")
    assert {"image", "label", "'a.b'"} <= set(info.value.available)
    assert "Available keys: image, label" in str(info.value)


def test_missing_path_error_suggests_the_closest_existing_paths() -> None:
    with pytest.raises(PathNotFoundError) as info:
        get_by_path(CONTEXT, "batch.lable")
    assert info.value.suggestions[0] == "batch.label"
    assert "did you mean 'batch.label'" in str(info.value).lower()


def test_suggestions_reach_paths_in_other_branches() -> None:
    with pytest.raises(PathNotFoundError) as info:
        get_by_path(CONTEXT, "pred.logits")
    assert "preds.logits" in info.value.suggestions


def test_suggestions_skip_the_parents_the_lookup_went_through() -> None:
    with pytest.raises(PathNotFoundError) as info:
        get_by_path(CONTEXT, "preds.logit")
    assert info.value.suggestions[0] == "preds.logits"
    assert "preds" not in info.value.suggestions


def test_suggestions_under_the_typed_first_part_come_before_closer_ones_elsewhere() -> None:
    tree = {"params": {"logits": {"bias": 0}}, "preds": {"decoder": {"logits": 1}}}
    with pytest.raises(PathNotFoundError) as info:
        get_by_path(tree, "preds.logit")
    # difflib alone ranks 'params.logits' (0.75) above 'preds.decoder.logits' (0.71).
    assert info.value.suggestions == ("preds.decoder.logits", "params.logits", "params.logits.bias")


def test_index_out_of_range_reports_the_valid_range() -> None:
    with pytest.raises(PathNotFoundError) as info:
        get_by_path(CONTEXT, "preds.logits[3]")
    assert info.value.available == ("indices 0..2 (or -3..-1)",)


def test_plain_object_error_lists_its_public_attributes() -> None:
    with pytest.raises(PathNotFoundError) as info:
        get_by_path(CONTEXT, "obj.weight")
    assert info.value.available == ("weights",)
    assert info.value.suggestions == ("obj.weights",)


def test_stepping_into_a_leaf_says_it_is_a_leaf_and_shows_its_value() -> None:
    with pytest.raises(PathNotFoundError, match=r"int is a leaf \(the value is 3\)"):
        get_by_path(CONTEXT, "batch.label.value")


def test_error_message_prints_newlines_not_a_repr() -> None:
    with pytest.raises(PathNotFoundError) as info:
        get_by_path(CONTEXT, "batch.lable")
    assert "\n" in str(info.value)
    assert "\\n" not in str(info.value)


def test_glob_path_is_refused_with_a_pointer_to_filter_by_path() -> None:
    with pytest.raises(kontext.GlobPathError, match="filter_by_path"):
        get_by_path(CONTEXT, "batch.*")


def test_invalid_path_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="Invalid path"):
        get_by_path(CONTEXT, 3.5)


def test_get_from_is_the_method_form() -> None:
    assert Path.from_str("pair.second[0]").get_from(CONTEXT) == 1
    assert Path.from_str("pair.third").get_from(CONTEXT, default=None) is None


@given(trees)
def test_every_flattened_path_leads_back_to_its_leaf(tree: object) -> None:
    for path, leaf in flatten_with_path(tree).items():
        assert get_by_path(tree, path) is leaf


def test_numpy_style_indexing_on_arrays() -> None:
    np = pytest.importorskip("numpy")
    x = np.arange(24).reshape(2, 3, 4)
    context = {"interms": {"encoder": {"__call__": [x]}}}
    got = get_by_path(context, "interms.encoder.__call__[0][..., :3]")
    np.testing.assert_array_equal(got, x[..., :3])
    np.testing.assert_array_equal(get_by_path(context, "interms.encoder.__call__[0][1, -1]"), x[1, -1])
    assert get_by_path(context, "interms.encoder.__call__[0].shape") == (2, 3, 4)


def test_array_error_says_only_indexing_is_possible() -> None:
    np = pytest.importorskip("numpy")
    with pytest.raises(PathNotFoundError, match="array of shape"):
        get_by_path({"x": np.zeros(3)}, "x.nope")


def test_jax_key_paths_are_accepted_as_paths() -> None:
    jax = pytest.importorskip("jax")
    tree = {"a": [1, {"b": 2}]}
    leaves, _ = jax.tree_util.tree_flatten_with_path(tree)
    for key_path, leaf in leaves:
        assert get_by_path(tree, key_path) == leaf


def test_looking_up_a_defaultdict_does_not_insert_the_missing_key() -> None:
    counts = collections.defaultdict(int, {"seen": 1})
    assert get_by_path({"c": counts}, "c.seen") == 1
    assert get_by_path({"c": counts}, "c.unseen", default=None) is None
    assert "unseen" not in counts


def test_slotted_object_error_lists_its_slots() -> None:
    class Slotted:
        __slots__ = ("alpha", "beta")

        def __init__(self) -> None:
            self.alpha = 1
            self.beta = 2

    with pytest.raises(PathNotFoundError) as info:
        get_by_path({"s": Slotted()}, "s.alhpa")
    assert info.value.available == ("alpha", "beta")
    assert info.value.suggestions[0] == "s.alpha"


def test_available_keys_are_written_as_path_parts_so_str_and_int_keys_differ() -> None:
    with pytest.raises(PathNotFoundError) as info:
        get_by_path({"a": {"0": "str zero", 1: "int one"}}, "a.2")
    assert info.value.available == ("'0'", "1")
    assert "Available keys: '0', 1." in str(info.value)


def test_what_a_node_that_is_not_a_mapping_offers_is_listed_as_available_there() -> None:
    with pytest.raises(PathNotFoundError, match=r"\nAvailable there: indices 0\.\.1 \(or -2\.\.-1\)\."):
        get_by_path({"xs": [1, 2]}, "xs.first")


def test_numeric_name_on_a_string_keyed_dict_suggests_the_quoted_key() -> None:
    with pytest.raises(PathNotFoundError) as info:
        get_by_path({"layers": {"0": {"w": 1}}}, "layers.0.w")
    assert info.value.suggestions[0] == "layers['0'].w"


def test_empty_container_says_it_is_empty() -> None:
    with pytest.raises(PathNotFoundError) as info:
        get_by_path({"a": {}}, "a.b")
    assert info.value.available == ("nothing (empty dict)",)


class WithProperties:
    threshold = 0.5

    def __init__(self) -> None:
        self.weights = [1.0]

    @property
    def scale(self) -> float:
        return 2.0

    @property
    def broken(self) -> float:
        raise AttributeError("no cache yet")

    def method(self) -> None:
        pass


def test_plain_object_error_lists_properties_and_class_attributes_but_not_methods() -> None:
    with pytest.raises(PathNotFoundError) as info:
        get_by_path({"o": WithProperties()}, "o.scal")
    assert set(info.value.available) == {"weights", "threshold", "scale", "broken"}
    assert info.value.suggestions[0] == "o.scale"


def test_property_raising_attribute_error_is_reported_as_such() -> None:
    with pytest.raises(PathNotFoundError, match=r"reading it raised AttributeError: no cache yet"):
        get_by_path({"o": WithProperties()}, "o.broken")


def test_error_inside_user_code_names_the_path_being_looked_up() -> None:
    class Exploding:
        @property
        def value(self) -> int:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom") as info:
        get_by_path({"batch": {"e": Exploding()}}, "batch.e.value")
    assert any("'batch.e.value'" in note and "step 3 of 3" in note for note in info.value.__notes__)


def test_pytree_dataclass_error_lists_its_static_fields_too() -> None:
    jax = pytest.importorskip("jax")

    @dataclasses.dataclass
    class Out:
        logits: int
        name: str

    jax.tree_util.register_dataclass(Out, data_fields=["logits"], meta_fields=["name"])
    with pytest.raises(PathNotFoundError) as info:
        get_by_path({"o": Out(1, "x")}, "o.nme")
    assert info.value.available == ("logits", "name")
    assert info.value.suggestions[0] == "o.name"


def test_glob_path_is_refused_even_with_a_default() -> None:
    with pytest.raises(kontext.GlobPathError):
        get_by_path(CONTEXT, "batch.*", default=None)
