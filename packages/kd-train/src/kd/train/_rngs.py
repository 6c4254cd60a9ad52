"""Named RNG streams derived from (seed, name, step, mode), so every host derives the same keys.

streams = RngStreams(streams=(RngStream("dropout"),), seed=0)
streams.train_rngs(step)   # {"params": ..., "dropout": ..., "default": ...} inside jit
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import jax

from kd._root_ref import INHERITED_ATTR, ROOT_CFG_REF, RootRef

_MODES = {"init": 0, "train": 1, "eval": 2}


@dataclasses.dataclass(frozen=True)
class RngStream:
    """One stream: in which modes it is given to the model, and whether it changes every step.

    Usage: `RngStream("dropout", init=False, train=True, eval=False)`.
    """

    name: str
    init: bool = True
    train: bool = True
    eval: bool = False
    per_step: bool = True

    def key(self, seed_key: jax.Array, mode: str, step: Any = None) -> jax.Array:
        """The key of this stream for `mode` at `step` (ignored when not `per_step`)."""
        key = jax.random.fold_in(seed_key, zlib.crc32(self.name.encode()) & 0x7FFFFFFF)
        key = jax.random.fold_in(key, _MODES[mode])
        if self.per_step and step is not None:
            key = jax.random.fold_in(key, step)
        return key


_DEFAULT_STREAMS = (
    RngStream("params", init=True, train=False, eval=False),
    RngStream("dropout", init=False, train=True, eval=False),
    RngStream("default", init=True, train=True, eval=True),
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class RngStreams:
    """The streams of a run: `params`, `dropout`, `default` and the user's, by name.

    Usage: `kd.train.RngStreams(streams=[kd.train.RngStream("noise", eval=True)])`. A user stream named like a
    default one replaces it.
    """

    streams: Sequence[RngStream] = ()
    seed: Any = ROOT_CFG_REF.seed

    def __post_init__(self) -> None:
        merged = {s.name: s for s in _DEFAULT_STREAMS}
        for stream in self.streams:
            if not isinstance(stream, RngStream):
                raise TypeError(f"RngStreams.streams: expected kd.train.RngStream items, got {stream!r}")
            merged[stream.name] = stream
        object.__setattr__(self, "_by_name", merged)

    @property
    def by_name(self) -> Mapping[str, RngStream]:
        return self._by_name  # type: ignore[attr-defined]

    def _seed_key(self) -> jax.Array:
        seed = 0 if isinstance(self.seed, RootRef) else self.seed
        return jax.random.key(seed)

    def init_rngs(self) -> dict[str, jax.Array]:
        seed_key = self._seed_key()
        return {s.name: s.key(seed_key, "init") for s in self.by_name.values() if s.init}

    def train_rngs(self, step: Any) -> dict[str, jax.Array]:
        seed_key = self._seed_key()
        return {s.name: s.key(seed_key, "train", step) for s in self.by_name.values() if s.train}

    def eval_rngs(self, step: Any) -> dict[str, jax.Array]:
        seed_key = self._seed_key()
        return {s.name: s.key(seed_key, "eval", step) for s in self.by_name.values() if s.eval}

    def rngs(self, mode: str, step: Any = None) -> dict[str, jax.Array]:
        """`mode` is "init", "train" or "eval"."""
        return {"init": self.init_rngs, "train": self.train_rngs, "eval": self.eval_rngs}[mode](
            *(() if mode == "init" else (step,))
        )


def as_rng_streams(value: Any, seed: int) -> RngStreams:
    """`Trainer.rng_streams` may be an `RngStreams`, a sequence of `RngStream`, or None.

    A seed left to the Trainer (`ROOT_CFG_REF.seed`) is set to `seed` and marked as inherited, so that
    `dataclasses.replace(trainer, seed=1)` reseeds the streams; an explicit `RngStreams(seed=...)` is kept.
    """
    if value is None:
        value = RngStreams()
    elif isinstance(value, RngStream):
        value = RngStreams(streams=(value,))
    elif not isinstance(value, RngStreams):
        value = RngStreams(streams=tuple(value))
    ref = value.seed
    if not (isinstance(ref, RootRef) and ref.path == ("seed",)):
        return value  # explicit, or another root path: filled like any other ROOT_CFG_REF default
    inherited = {**getattr(value, INHERITED_ATTR, {}), "seed": ref}
    value = dataclasses.replace(value, seed=seed)
    object.__setattr__(value, INHERITED_ATTR, inherited)
    return value
