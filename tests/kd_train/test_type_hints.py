"""The public classes' annotations resolve at run time (`typing.get_type_hints`), as tools that read them expect
(dataclass-aware validators, kontext's key discovery, documentation): a name imported only for type checkers
would make them fail with a NameError."""

from __future__ import annotations

import importlib
import inspect
import typing

import pytest

NAMESPACES = (
    "kd.train", "kd.runtime", "kd.ckpts", "kd.evals", "kd.inspect", "kd.data", "kd.optim", "kd.typing", "kd.nn",
    "kd.losses", "kd.metrics", "kd.summaries", "kd.writers", "kd.sharding", "kd.random", "kd.export", "kd.utils",
    "kd.contrib", "kd.xm", "kd.testing", "kd.kdash",
)  # fmt: skip


def test_the_namespaces_checked_are_every_public_subpackage_of_kd():
    import pkgutil

    import kd

    public = {f"kd.{m.name}" for m in pkgutil.iter_modules(kd.__path__) if not m.name.startswith("_")}
    assert public - set(NAMESPACES) == {"kd.cli", "kd.kauldron_alias"}  # a command and an import hook: no classes


def _public_classes(namespace: str) -> list[tuple[str, type]]:
    module = importlib.import_module(namespace)
    return [(name, obj) for name in module.__all__ if inspect.isclass(obj := getattr(module, name))]


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_public_classs_annotations_resolve(namespace):
    unresolved = []
    for name, cls in _public_classes(namespace):
        try:
            typing.get_type_hints(cls)
        except Exception as e:  # NameError for a name imported under TYPE_CHECKING only
            unresolved.append(f"{namespace}.{name}: {type(e).__name__}: {e}")
    assert unresolved == []


def test_the_trainers_fields_resolve_to_the_types_it_documents():
    import kd
    import optax

    hints = typing.get_type_hints(kd.train.Trainer)
    assert hints["optimizer"] == optax.GradientTransformation | None
    assert hints["precision"] == kd.train.MixedPrecision | str | None
