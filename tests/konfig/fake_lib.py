"""Capture targets for konfig tests: no third-party library needed."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Dense:
    features: int
    use_bias: bool = True
    activation: Any = None


@dataclasses.dataclass
class Sequential:
    layers: Any
    name: str = "seq"


@dataclasses.dataclass
class Model:
    encoder: Any
    decoder: Any = None
    num_layers: int = 2

    @property
    def depth(self) -> int:
        return self.num_layers * 10


class Trainer:
    def __init__(self, model: Any = None, workdir: str | None = None, steps: int = 10) -> None:
        self.model = model
        self.workdir = workdir
        self.steps = steps

    @classmethod
    def eval_only(cls, model: Any, steps: int = 1) -> Trainer:
        return cls(model=model, steps=steps)


def add(a: int, b: int = 0) -> int:
    return a + b


def anything(*args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return args, kwargs


def fail(message: str = "boom") -> None:
    raise RuntimeError(message)


class Recorder:
    """Counts builds and records the config it came from."""

    builds = 0
    __konfig_resolve_exclude_fields__ = ("raw",)

    def __init__(self, value: Any = None, raw: Any = None) -> None:
        type(self).builds += 1
        self.value = value
        self.raw = raw
        self.source: Any = None

    def __post_konfig_resolve__(self, cfg: Any) -> None:
        self.source = cfg


class Point:
    def __init__(self, x: int = 0, y: int = 0) -> None:
        self.x = x
        self.y = y

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)

    __hash__ = None  # type: ignore[assignment]


MAX_STEPS = 1000


class Job:
    """Only used by the default-values tests (the registry is global)."""

    def __init__(self, workdir: str | None = None, cpus: int = 1) -> None:
        self.workdir = workdir
        self.cpus = cpus


class Launcher:
    """Only used by the default-values conflict test."""

    def __init__(self, name: str = "") -> None:
        self.name = name


def dumps_with_lazy_import(value: Any) -> str:
    import json

    return json.dumps(value)


def scale(x: float, factor: float = 1.0, /, *, offset: float = 0.0) -> float:
    return x * factor + offset
