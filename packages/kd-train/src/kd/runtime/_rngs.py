"""Named RNG streams derived from (seed, name, step, mode), so every host derives the same keys.

streams = RngStreams(streams=(RngStream("dropout"),), seed=0)
streams.train_rngs(step)   # {"params": ..., "dropout": ..., "default": ...} inside jit
"""

from __future__ import annotations

import dataclasses
import functools
import zlib
from collections.abc import Mapping, Sequence

import jax

from kd._root_ref import ROOT_CFG_REF, RootRef

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

    def key(self, seed_key: jax.Array, mode: str, step: jax.Array | int | None = None) -> jax.Array:
        """The key of this stream for `mode` at `step` (ignored when not `per_step`)."""
        key = jax.random.fold_in(seed_key, zlib.crc32(self.name.encode()) & 0x7FFFFFFF)
        key = jax.random.fold_in(key, _MODES[mode])
        if self.per_step and step is not None:
            key = jax.random.fold_in(key, step)
        return key


# Kauldron's defaults: `params` only at init (the same key every step), `dropout` and `default` in init and train.
_DEFAULT_STREAMS = (
    RngStream("params", init=True, train=False, eval=False, per_step=False),
    RngStream("dropout"),
    RngStream("default"),
)


@dataclasses.dataclass(frozen=True)
class RngStreams:
    """The streams of a run: `params`, `dropout`, `default`, replaced or extended by `stream_overwrites`.

    Usage: `kd.train.RngStreams([kd.train.RngStream("noise", eval=True)])`; `streams` is the merged
    `{name: RngStream}`. The seed is the Trainer's unless given.
    """

    stream_overwrites: Sequence[RngStream] = ()
    _: dataclasses.KW_ONLY
    seed: int | RootRef = ROOT_CFG_REF.seed

    def __post_init__(self) -> None:
        overwrites = tuple(self.stream_overwrites)
        for stream in overwrites:
            if not isinstance(stream, RngStream):
                raise TypeError(
                    f"RngStreams.stream_overwrites: expected kd.train.RngStream items, got {stream!r}"
                )
        object.__setattr__(self, "stream_overwrites", overwrites)

    @functools.cached_property
    def streams(self) -> Mapping[str, RngStream]:
        """The streams by name (a dict of `RngStream`), the defaults merged with `stream_overwrites`."""
        return {**{s.name: s for s in _DEFAULT_STREAMS}, **{s.name: s for s in self.stream_overwrites}}

    def _seed_key(self) -> jax.Array:
        if isinstance(self.seed, RootRef):
            raise ValueError("RngStreams.seed: not set (build it inside a Trainer, or pass seed=...)")
        return jax.random.key(self.seed)

    def init_rngs(self) -> dict[str, jax.Array]:
        seed_key = self._seed_key()
        return {s.name: s.key(seed_key, "init") for s in self.streams.values() if s.init}

    def train_rngs(self, step: jax.Array | int | None) -> dict[str, jax.Array]:
        seed_key = self._seed_key()
        return {s.name: s.key(seed_key, "train", step) for s in self.streams.values() if s.train}

    def eval_rngs(self, step: jax.Array | int | None) -> dict[str, jax.Array]:
        seed_key = self._seed_key()
        return {s.name: s.key(seed_key, "eval", step) for s in self.streams.values() if s.eval}

    def rngs(self, mode: str, step: jax.Array | int | None = None) -> dict[str, jax.Array]:
        """`mode` is "init", "train" or "eval"."""
        if mode == "init":
            return self.init_rngs()
        if mode == "train":
            return self.train_rngs(step)
        if mode == "eval":
            return self.eval_rngs(step)
        raise ValueError(f"RngStreams.rngs: mode must be 'init', 'train' or 'eval', got {mode!r}")


def as_rng_streams(value: RngStreams | RngStream | Sequence[RngStream] | None) -> RngStreams:
    """`Trainer.rng_streams` may be an `RngStreams`, a sequence of `RngStream`, or None.

    The seed stays `ROOT_CFG_REF.seed` unless given, so the Trainer fills it (and refills it after
    `dataclasses.replace(trainer, seed=1)`).
    """
    if value is None:
        return RngStreams()
    if isinstance(value, RngStream):
        return RngStreams((value,))
    if isinstance(value, RngStreams):
        return value
    return RngStreams(tuple(value))
