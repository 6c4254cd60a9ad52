"""`konfig.export` data placed inside a larger config or JSON document still resolves (issue 26)."""

from __future__ import annotations

import dataclasses
import json

import konfig
import pytest


@dataclasses.dataclass(frozen=True)
class Inner:
    x: int = 1


@dataclasses.dataclass
class Outer:
    sizes: tuple[int, ...] = (1, 2)
    inner: Inner = Inner()
    items: list = dataclasses.field(default_factory=lambda: [1, Inner(3), (4, Inner(5))])


def _round_trip(data):
    return json.loads(json.dumps(data))


def test_export_json_round_trip_resolves_to_the_original():
    obj = Outer()
    assert konfig.resolve(_round_trip(konfig.export(obj)), freeze=False) == obj


@pytest.mark.parametrize(
    "wrap",
    [
        lambda d: {"a": d},
        lambda d: [d],
        lambda d: {"a": [{"b": d}]},
    ],
    ids=["dict", "list", "deep"],
)
def test_exported_data_nested_in_json_resolves(wrap):
    obj = Outer()
    data = _round_trip(wrap(konfig.export(obj)))
    built = konfig.resolve(data, freeze=False)
    while not isinstance(built, Outer):
        built = built[0] if isinstance(built, list) else next(iter(built.values()))
    assert built == obj


def test_exported_data_given_to_config_dict_resolves():
    obj = Outer()
    cfg = konfig.ConfigDict({"model": konfig.export(obj)})
    assert "__konfig_version__" not in cfg.model
    assert konfig.resolve(cfg, freeze=False)["model"] == obj


def test_exported_data_assigned_to_a_field_resolves():
    obj = Outer()
    cfg = konfig.ConfigDict()
    cfg.model = konfig.export(obj)
    assert "__konfig_version__" not in cfg.model
    assert cfg.model.sizes == (1, 2)
    assert konfig.resolve(cfg, freeze=False)["model"] == obj


def test_a_nested_document_of_a_newer_version_is_refused():
    data = {"a": {"__konfig_version__": 99, "__qualname__": "builtins:dict"}}
    with pytest.raises(konfig.JsonFormatError, match=r"At cfg\.a: .*version 99"):
        konfig.from_json(json.dumps(data))


def test_a_nested_document_with_a_list_root_resolves():
    document = json.loads(konfig.to_json([1, (2, 3)]))
    assert "__root__" in document
    assert konfig.resolve({"a": document}, freeze=False) == {"a": [1, (2, 3)]}
    assert konfig.from_json(json.dumps({"a": document})).a == [1, (2, 3)]


def test_a_shared_nested_document_is_built_once():
    document = konfig.export(Outer())
    first, second = konfig.resolve([document, document], freeze=False)
    assert first is second and first == Outer()


def test_a_nested_document_with_a_marker_root_resolves():
    document = {"__konfig_version__": 1, "__tuple__": [1, {"__tuple__": [2]}]}
    assert konfig.resolve({"a": document}, freeze=False) == {"a": (1, (2,))}
    assert konfig.from_json(json.dumps([document])) == [(1, (2,))]
