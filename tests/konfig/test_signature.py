"""Argument checks against a target's signature: what an unknown keyword argument says."""

from __future__ import annotations

import dataclasses

import konfig
import pytest


@dataclasses.dataclass(frozen=True, kw_only=True)
class Base:
    """A frozen keyword-only dataclass without fields, like `kd.metrics.Metric`."""


class Undecorated(Base):
    logits: str = "preds.logits"
    labels = "batch.label"

    def compute(self) -> None:
        pass


@dataclasses.dataclass
class PositionalBase:
    weight: float = 1.0


class UndecoratedOfPositional(PositionalBase):
    preds: str = "preds.y"


class HandWrittenInit(Base):
    logits: str = "preds.logits"

    def __init__(self) -> None:
        pass


@dataclasses.dataclass(frozen=True, kw_only=True)
class Decorated(Base):
    logits: str = "preds.logits"


def _node(cls: type, **kwargs: object) -> konfig.ConfigDict:
    return konfig.ConfigDict({"__qualname__": f"{__name__}:{cls.__qualname__}", **kwargs})


def test_field_of_an_undecorated_dataclass_subclass_says_to_declare_a_dataclass():
    with pytest.raises(konfig.ArgumentError) as info:
        _node(Undecorated, logits="preds.logits")
    message = str(info.value)
    assert "unexpected keyword argument 'logits': `Undecorated` declares `logits`" in message
    assert "not a dataclass itself" in message
    assert "its dataclass base `Base`, which takes no arguments" in message
    assert "`@dataclasses.dataclass(frozen=True, kw_only=True)` like `Base`" in message
    assert "accepted: none" not in message


def test_unannotated_class_attribute_counts_as_a_declared_field():
    with pytest.raises(konfig.ArgumentError, match="`Undecorated` declares `labels`"):
        _node(Undecorated, labels="batch.label")


def test_suggested_decorator_follows_the_base_and_lists_what_it_takes():
    with pytest.raises(konfig.ArgumentError) as info:
        _node(UndecoratedOfPositional, preds="preds.y")
    message = str(info.value)
    assert "`PositionalBase`, which takes only weight" in message
    assert message.split(" (node created")[0].endswith("with `@dataclasses.dataclass` like `PositionalBase`")


def test_set_field_of_an_undecorated_subclass_names_the_config_path():
    cfg = konfig.ConfigDict(metric=_node(Undecorated))
    with pytest.raises(konfig.ArgumentError, match=r"^In cfg\.metric: .*`Undecorated` declares `logits`"):
        cfg.metric.logits = "preds.logits"


def test_name_the_class_does_not_declare_keeps_the_plain_message():
    with pytest.raises(konfig.ArgumentError, match=r"'compute' \(accepted: none\)"):
        _node(Undecorated, compute=1)


def test_hand_written_init_keeps_the_plain_message():
    with pytest.raises(konfig.ArgumentError, match=r"'logits' \(accepted: none\)"):
        _node(HandWrittenInit, logits="preds.logits")


def test_decorated_subclass_takes_its_fields():
    node = _node(Decorated, logits="preds.x")
    assert konfig.resolve(node) == Decorated(logits="preds.x")
