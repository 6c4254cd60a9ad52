"""Real, importable targets for the CLI / sweep / JSON example configs (no ML libraries).

`cosine_decay_schedule` stands in for optax's: it records its arguments so a
test can check which `decay_steps` reached it.
"""

from __future__ import annotations

import dataclasses
import enum
import typing


@dataclasses.dataclass(frozen=True)
class Schedule:
    init_value: float
    decay_steps: int
    alpha: float = 0.0


def cosine_decay_schedule(init_value: float, decay_steps: int, alpha: float = 0.0) -> Schedule:
    return Schedule(init_value, decay_steps, alpha)


@dataclasses.dataclass
class Dense:
    features: int
    activation: str = "relu"
    dropout: float = 0.0


@dataclasses.dataclass
class Sequential:
    layers: list
    name: str = ""


class Activation(enum.Enum):
    RELU = "relu"
    GELU = "gelu"


@dataclasses.dataclass
class Trainer:
    num_train_steps: int
    schedule: object = None
    model: object = None
    eval_only: bool = False

    @classmethod
    def for_eval(cls, model: object) -> Trainer:
        return cls(num_train_steps=0, model=model, eval_only=True)


class Point(typing.NamedTuple):
    x: float
    y: float


@dataclasses.dataclass(frozen=True)
class Experiment:
    name: str
    layers: list
    activation: Activation = Activation.RELU
    shape: tuple = (1, 2)
    ids: dict = dataclasses.field(default_factory=dict)
    origin: Point = Point(0.0, 0.0)  # noqa: RUF009  (an immutable named tuple)
    steps: int = dataclasses.field(default=0, init=True)
    derived: int = dataclasses.field(default=0, init=False)


class Vocabulary:
    """Not a dataclass: exports itself through `__konfig_export__`."""

    def __init__(self, words: tuple, lowercase: bool = True) -> None:
        self.words = tuple(words)
        self.lowercase = lowercase

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and (self.words, self.lowercase) == (
            other.words,
            other.lowercase,
        )

    def __konfig_export__(self) -> dict:
        import konfig

        return {
            "__qualname__": konfig.export_qualname(self),
            "words": self.words,
            "lowercase": self.lowercase,
        }


class Access(enum.Flag):
    READ = 1
    WRITE = 2
