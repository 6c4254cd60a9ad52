"""`cfg.to_json()` writes most configs directly; the text is exactly `json.dumps` of `encode`."""

from __future__ import annotations

import json
import operator
import pathlib

import konfig
from hypothesis import given, settings
from hypothesis import strategies as st
from konfig import _json_encode, _json_writer

from .strategies import configs, values


def _dumped(cfg: konfig.ConfigDict) -> str:
    return json.dumps(_json_encode.encode(cfg), check_circular=False)


@settings(max_examples=300)
@given(configs())
def test_default_text_is_json_dumps_of_the_encoded_data(cfg):
    assert cfg.to_json() == _dumped(cfg)


@settings(max_examples=300)
@given(st.dictionaries(st.text(max_size=6), values(), max_size=5))
def test_default_text_of_any_values_is_json_dumps_of_the_encoded_data(fields):
    cfg = konfig.ConfigDict(fields)
    assert cfg.to_json() == _dumped(cfg)


def _common_config() -> konfig.ConfigDict:
    cfg = konfig.ConfigDict(n=3, name="é\n", none=None, flags=[True, False], rate=0.5)
    layer = konfig.ConfigDict({"__qualname__": "types:SimpleNamespace", "x": -0.0, "y": float("nan")})
    cfg.model = konfig.ConfigDict(
        layers=[layer, (konfig.ConfigDict(layer), ()), []], empty={}, inf=[float("inf"), -float("inf")]
    )
    cfg.ref_n = cfg.ref.n
    cfg.expr = cfg.ref.n * 2 + 1
    cfg.call = konfig.ref_fn(operator.add, cfg.ref.n, 1)
    cfg.leaves = [
        b"x",
        {1, 2},
        frozenset({3}),
        range(3),
        1j,
        ...,
        slice(1, None),
        pathlib.PurePosixPath("a/b"),
    ]
    cfg.placeholder = konfig.placeholder(int, default=3)
    return cfg


def test_common_configs_are_written_directly_with_refs_and_marked_leaves():
    cfg = _common_config()
    text = _json_writer.write_default(cfg)
    assert text is not None
    assert text == _dumped(cfg)


def test_shared_nodes_and_cycles_take_the_general_path_with_the_same_text():
    cfg = _common_config()
    cfg.model.layers.append(cfg.model.layers[0])
    cfg.me = cfg
    cfg.outside = konfig.ConfigDict(z=1).ref.z  # Another root: its value (the root is not written).
    assert _json_writer.write_default(cfg) is None
    assert cfg.to_json() == _dumped(cfg)


def test_empty_shared_node_and_shared_root_get_their_ids_last():
    cfg = konfig.ConfigDict()
    empty = konfig.ConfigDict()
    cfg.a = empty
    cfg.b = [empty, cfg]
    text = cfg.to_json()
    # `empty` is repeated in full (no fields, then its id); the root, inside itself, is a back-reference.
    assert (
        text
        == '{"__konfig_version__": 1, "a": {"__id__": 0}, "b": [{"__id__": 0}, {"__id__": 1}], "__id__": 1}'
    )
    assert text == _dumped(cfg)


def test_unusual_keys_and_values_take_the_general_path_with_the_same_text():
    cfg = konfig.ConfigDict({1: "one", "__tuple__": 2, "__raw__=x": 3})
    assert _json_writer.write_default(cfg) is None
    assert cfg.to_json() == _dumped(cfg)


def test_dumps_options_take_the_general_path():
    cfg = _common_config()
    assert cfg.to_json(indent=2) == json.dumps(_json_encode.encode(cfg), indent=2)
