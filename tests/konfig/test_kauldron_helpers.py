"""konfig's helpers for Kauldron code: `freeze_dict_attrs`, `dict | ImmutableDict`, and the message of a
submodule that exists but whose own imports fail."""

from __future__ import annotations

import dataclasses
import sys

import konfig
import pytest


def test_freeze_dict_attrs_freezes_dict_fields_of_a_frozen_dataclass() -> None:
    @dataclasses.dataclass(frozen=True)
    class Evaluator:
        losses: dict
        name: str = "eval"

        def __post_init__(self) -> None:
            konfig.freeze_dict_attrs(self, ["losses"])

    evaluator = Evaluator(losses={"l2": 1})
    assert isinstance(evaluator.losses, konfig.ImmutableDict)
    with pytest.raises(TypeError):
        evaluator.losses["l1"] = 2  # type: ignore[index]
    konfig.freeze_dict_attrs(evaluator, ["name"])  # not a dict: left alone, as Kauldron's
    assert evaluator.name == "eval"
    holder = Evaluator(losses=None)  # type: ignore[arg-type]  # e.g. a field the Trainer fills later
    assert holder.losses is None


def test_or_merges_frozen_and_plain_dicts_keeping_the_left_type() -> None:
    frozen = konfig.ImmutableDict({"a": 1, "b": 2})
    merged = {"a": 0, "c": 3} | frozen
    assert type(merged) is dict and merged == {"a": 1, "c": 3, "b": 2}
    right = frozen | {"b": 5}
    assert isinstance(right, konfig.ImmutableDict) and dict(right) == {"a": 1, "b": 5}


def test_a_submodule_whose_dependency_is_missing_says_so(tmp_path, monkeypatch) -> None:
    package = tmp_path / "evals_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "text_metric.py").write_text("import a_dependency_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(konfig.TargetNotFoundError) as raised:
        with konfig.imports():
            import evals_pkg  # type: ignore[import-not-found]

        evals_pkg.text_metric.Bleu()
    message = str(raised.value)
    assert "evals_pkg.text_metric exists but cannot be imported" in message
    assert "No module named 'a_dependency_not_installed'" in message
    assert "has no attribute or submodule" not in message
    sys.modules.pop("evals_pkg", None)


def test_a_modules_deferred_attribute_is_captured_by_name_not_computed(tmp_path, monkeypatch) -> None:
    # kd.sharding.FIRST_DIM needs the devices: naming it in a config must not compute it (a multi-host run
    # calls jax.distributed.initialize after loading the config).
    (tmp_path / "lazy_values.py").write_text(
        "computed = []\n"
        "__konfig_deferred__ = ('EXPENSIVE',)\n"
        "def __getattr__(name):\n"
        "    if name == 'EXPENSIVE':\n"
        "        computed.append(name)\n"
        "        return 42\n"
        "    raise AttributeError(name)\n"
        "def pair(a, b):\n"
        "    return (a, b)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with konfig.imports():
        import lazy_values  # type: ignore[import-not-found]
    cfg = konfig.ConfigDict({"value": lazy_values.pair(lazy_values.EXPENSIVE, 1)})
    module = sys.modules["lazy_values"]
    assert module.computed == []
    assert '"__const__": "lazy_values:EXPENSIVE"' in konfig.to_json(cfg)
    assert konfig.resolve(cfg)["value"] == (42, 1) and module.computed == ["EXPENSIVE"]
    sys.modules.pop("lazy_values", None)
