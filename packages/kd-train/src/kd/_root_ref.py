"""`ROOT_CFG_REF.<field>`: a default that a sub-object takes from the Trainer holding it.

    @dataclasses.dataclass(frozen=True)
    class Evaluator:
        ds: Any = kd.train.ROOT_CFG_REF.eval_ds   # filled with trainer.eval_ds
        seed: int = kd.train.ROOT_CFG_REF.seed

The Trainer walks its fields (dicts, lists, tuples, dataclasses, however deep) and replaces every
field still holding a `RootRef` by the value at that path of the Trainer. Explicit values win;
`dataclasses.replace(trainer, seed=1)` fills them again from the new Trainer. No list of which
fields receive what is kept anywhere: a field declared tomorrow with this default just works.
This module is the bottom layer of kd-train: it imports nothing of kd.
"""

from __future__ import annotations

from typing import Any


class RootRef:
    """A path into the Trainer (`ROOT_CFG_REF.eval_ds`, `ROOT_CFG_REF.aux.num_classes`)."""

    __slots__ = ("_path",)

    def __init__(self, path: tuple[str, ...] = ()) -> None:
        object.__setattr__(self, "_path", path)

    def __getattr__(self, name: str) -> RootRef:
        if name.startswith("__"):
            raise AttributeError(name)
        return RootRef((*self._path, name))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ROOT_CFG_REF is read-only")

    @property
    def path(self) -> tuple[str, ...]:
        return self._path

    def __repr__(self) -> str:
        return "ROOT_CFG_REF" + "".join(f".{p}" for p in self._path)

    def __eq__(self, other: object) -> bool:
        return type(other) is RootRef and other._path == self._path

    def __hash__(self) -> int:
        return hash(("RootRef", self._path))

    def __reduce__(self) -> Any:
        return (RootRef, (self._path,))


ROOT_CFG_REF = RootRef()
"""The Trainer root: `ROOT_CFG_REF.seed`, `ROOT_CFG_REF.workdir`, `ROOT_CFG_REF.eval_ds`, ..."""

# Set on an object filled from the Trainer: {field name: the RootRef it was filled from}.
INHERITED_ATTR = "__kd_inherited__"
