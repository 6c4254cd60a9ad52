"""`konfig.mock_modules()`: modules of the calling code build config nodes inside the block only."""

from __future__ import annotations

import collections
import fractions
import sys

import fake_lib
import konfig
import pytest


def test_module_level_names_build_nodes_inside_and_objects_after():
    with konfig.mock_modules():
        cfg = fake_lib.Dense(features=3)
    assert isinstance(cfg, konfig.ConfigDict)
    assert cfg["__qualname__"] == "fake_lib:Dense"
    assert fake_lib.Dense(features=3) == konfig.resolve(cfg)
    assert type(fake_lib) is type(sys)


def test_function_locals_are_mocked_and_restored():
    import json as local_json

    with konfig.mock_modules():
        cfg = local_json.JSONDecoder(strict=False)
    assert isinstance(cfg, konfig.ConfigDict)
    assert isinstance(local_json.JSONDecoder(strict=False), local_json.JSONDecoder)
    assert konfig.resolve(cfg).strict is False


def test_assignment_into_a_config_inside_the_block():
    cfg = konfig.ConfigDict()
    with konfig.mock_modules():
        cfg.counts = collections.Counter("aab")
    assert konfig.resolve(cfg, freeze=False)["counts"] == collections.Counter("aab")


def test_konfig_itself_is_not_mocked():
    with konfig.mock_modules():
        cfg = fractions.Fraction(1, 3)
        built = konfig.resolve(cfg)
    assert built == fractions.Fraction(1, 3)


def test_modules_are_restored_when_the_block_raises():
    with pytest.raises(RuntimeError), konfig.mock_modules():
        assert isinstance(fractions.Fraction(1, 2), konfig.ConfigDict)
        raise RuntimeError
    assert fractions.Fraction(1, 2) == 0.5


def test_a_name_rebound_inside_the_block_keeps_its_new_value():
    global fractions
    original = fractions
    try:
        with konfig.mock_modules():
            fractions = "rebound"
        assert fractions == "rebound"
    finally:
        fractions = original


def test_nested_blocks_restore_the_real_modules():
    with konfig.mock_modules():
        with konfig.mock_modules():
            inner = fractions.Fraction(1, 4)
        outer = fractions.Fraction(1, 5)
    assert isinstance(inner, konfig.ConfigDict) and isinstance(outer, konfig.ConfigDict)
    assert fractions.Fraction(1, 4) == 0.25


def test_as_a_decorator_the_function_modules_are_mocked_while_it_runs():
    @konfig.mock_modules()
    def make() -> konfig.ConfigDict:
        return collections.OrderedDict(x=1)

    cfg = make()
    assert isinstance(cfg, konfig.ConfigDict)
    assert collections.OrderedDict(x=1) == konfig.resolve(cfg, freeze=False)
