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
    with pytest.raises(TypeError, match=r"Evaluator.name is a str, not a dict: 'eval'"):
        konfig.freeze_dict_attrs(evaluator, ["name"])


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
