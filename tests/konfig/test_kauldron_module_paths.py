"""Kauldron's konfig module paths `konfig.py_flag_parser` / `py_flag_utils`: konfig's `py::` reader with
Kauldron's error type and module aliases, for code written against Kauldron."""

from __future__ import annotations

import konfig
import pytest
from konfig import py_flag_parser, py_flag_utils


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pathlib.Path('a', x=1)", {"__qualname__": "pathlib:Path", "0": "a", "x": 1}),
        ("path.to.Enum.VALUE", {"__const__": "path.to.Enum:VALUE"}),  # no colon: the last name is the attribute
        ("mod.sub:Cls.create(v='a:b')", {"__qualname__": "mod.sub:Cls.create", "v": "a:b"}),
        ("nn.Dense(features=3)", {"__qualname__": "flax.linen:Dense", "features": 3}),  # konfig's aliases
        ("kd.nn.Vit(x=1)", {"__qualname__": "kauldron.kd:nn.Vit", "x": 1}),  # Kauldron's: kd is kauldron.kd
        ("kd.nn.Vit", {"__const__": "kauldron.kd:nn.Vit"}),
        ("kd:train.Trainer.eval_only()", {"__qualname__": "kauldron.kd:train.Trainer.eval_only"}),
    ],
)
def test_parse_reads_calls_and_names_into_nodes(text, expected):
    assert py_flag_parser.parse(text) == konfig.ConfigDict(expected)


def test_parse_reads_literals_and_collections_and_the_nodes_inside():
    value = py_flag_parser.parse("{'k:v': [kd.X(), (1, -2j, 0xff, .5)]}")
    assert value == {"k:v": [konfig.ConfigDict({"__qualname__": "kauldron.kd:X"}), (1, -2j, 255, 0.5)]}


@pytest.mark.parametrize("text", ["not python !!", "Name", "Name()", "a.b(**kwargs)"])
def test_a_text_that_is_no_such_expression_is_a_value_error(text):
    with pytest.raises(ValueError, match=r"Invalid py:: expression"):
        py_flag_parser.parse(text)


def test_maybe_parse_reads_only_py_prefixed_strings():
    assert py_flag_utils.maybe_parse_py_flag_value("py::np.int32") == konfig.ConfigDict({"__const__": "numpy:int32"})
    assert py_flag_utils.maybe_parse_py_flag_value("np.int32") == "np.int32"
    assert py_flag_utils.maybe_parse_py_flag_value(3) == 3
    assert py_flag_utils.parse_py_flag_value is py_flag_parser.parse
