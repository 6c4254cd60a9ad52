"""Properties over generated config trees: JSON round trips, resolve equality, diff."""

from __future__ import annotations

import json

import konfig
from hypothesis import given, settings

from .strategies import configs, values

examples = settings(max_examples=60)


@examples
@given(configs())
def test_json_round_trip_gives_an_equal_config(cfg):
    assert konfig.from_json(cfg.to_json()) == cfg


@examples
@given(configs())
def test_json_round_trip_resolves_to_equal_objects(cfg):
    assert konfig.resolve(konfig.from_json(cfg.to_json())) == konfig.resolve(cfg)


@examples
@given(configs())
def test_plain_json_dict_resolves_like_the_config(cfg):
    assert konfig.resolve(json.loads(cfg.to_json())) == konfig.resolve(cfg)


@examples
@given(configs())
def test_json_text_is_a_fixed_point(cfg):
    text = cfg.to_json()
    assert konfig.from_json(text).to_json() == text


@examples
@given(configs())
def test_round_trip_keeps_shared_nodes_shared(cfg):
    loaded = konfig.from_json(cfg.to_json())
    assert loaded.shared_a is loaded.holder.shared_b is loaded.holder["items"][0]


@examples
@given(configs())
def test_round_trip_keeps_references_live(cfg):
    loaded = konfig.from_json(cfg.to_json())
    loaded.n = 12345
    resolved = konfig.resolve(loaded)
    assert resolved.ref_plain == resolved.ref_to_ref == resolved.ref_to_item == 12345


@examples
@given(configs())
def test_config_has_no_diff_with_its_round_trip(cfg):
    assert not konfig.diff(cfg, konfig.from_json(cfg.to_json()))


@examples
@given(values())
def test_any_value_round_trips(value):
    assert konfig.from_json(konfig.to_json(konfig.ConfigDict(v=value))) == konfig.ConfigDict(v=value)


@examples
@given(configs(), configs())
def test_diff_is_empty_exactly_when_configs_are_equal(a, b):
    assert (not konfig.diff(a, b)) == (a == b)
