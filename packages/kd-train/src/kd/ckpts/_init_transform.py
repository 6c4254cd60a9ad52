"""`init_transform`: what changes a fresh train state before training starts (e.g. pretrained weights).

    cfg.init_transform = kd.ckpts.MultiTransform(
        encoder=kd.ckpts.PartialLoader(workdir="/runs/pretrain", new_to_old={"params.enc": "params.enc"}),
        bias=ZeroBias(),  # an InitTransform of your own
    )
    state = kd.ckpts.apply_init_transform(trainer.init_transform, state)  # what the Trainer does to a fresh state

`InitTransform` is the protocol (Kauldron's two hooks, `transform` then `transform_after_optimizer`);
`NoopTransform` and `MultiTransform` are its plain implementations. The loaders that read another run's
checkpoint are in `_partial_loader`.
"""

from __future__ import annotations

import abc
from typing import Any, TypeVar

_T = TypeVar("_T")


class InitTransform(abc.ABC):
    """Changes a fresh train state before training starts, e.g. loads pretrained weights.

        class ZeroBias(kd.ckpts.InitTransform):
            def transform(self, state):
                return state.replace(params=zero_biases(state.params))

        trainer = kd.train.Trainer(..., init_transform=ZeroBias())

    The Trainer applies it to a fresh state only (`trainer.init_state()`), never to one restored from
    the run's own checkpoints. `transform` returns a new state with the same structure, shapes and
    dtypes, each leaf placed (sharded) like the leaf it replaces.
    """

    @abc.abstractmethod
    def transform(self, state: _T) -> _T:
        """`state = init_transform.transform(state)`: the state with some values replaced."""

    def transform_after_optimizer(self, state: _T) -> _T:
        """Kauldron's second hook, run once the optimizer state exists: by default the state unchanged.

        The Trainer calls `transform`, then this (`apply_init_transform`). kd's own loaders load everything
        they are asked for, the optimizer state included, in `transform`, and the Trainer calls them once.
        """
        return state

    # kd's loaders: `transform` already did what `transform_after_optimizer` would (see apply_init_transform).
    _complete_in_transform = False


def apply_init_transform(transform: Any, state: _T) -> _T:
    """`transform`'s effect on a fresh state, as the Trainer applies it: a plain function is called; an
    `InitTransform` (or any object with `.transform`) gets `transform`, then `transform_after_optimizer`
    (Kauldron's two hooks, in Kauldron's order), but kd's own loaders `transform` alone (it loads the
    optimizer state too when asked), so a checkpoint is read once.

    Usage: `state = apply_init_transform(trainer.init_transform, state)`.
    """
    if isinstance(transform, MultiTransform):
        for name, each in transform.transforms.items():
            try:
                state = apply_init_transform(each, state)
            except Exception as e:
                e.add_note(f"(in MultiTransform: the init_transform {name!r} failed)")
                raise
        return state
    if not callable(getattr(transform, "transform", None)):
        return transform(state)
    state = transform.transform(state)
    after = getattr(transform, "transform_after_optimizer", None)
    if callable(after) and not getattr(transform, "_complete_in_transform", False):
        state = after(state)
    return state


class NoopTransform(InitTransform):
    """An `init_transform` that changes nothing: `kd.ckpts.NoopTransform().transform(state) is state`."""

    def transform(self, state: _T) -> _T:
        return state

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class MultiTransform(InitTransform):
    """Applies several `init_transform`s in turn, by name; an error names the one that failed.

    cfg.init_transform = kd.ckpts.MultiTransform(
        encoder=kd.ckpts.PartialLoader(workdir="/runs/a", new_to_old={"params.enc": "params.enc"}),
        decoder=kd.ckpts.PartialLoader(workdir="/runs/b", new_to_old={"params.dec": "params.dec"}),
    )
    """

    def __init__(self, **transforms: InitTransform) -> None:
        for name, transform in transforms.items():
            # An InitTransform, or anything with its two methods (kd.optim.UseEmaParams, which kd.optim
            # cannot subclass from here: kd.optim does not import kd.ckpts).
            if not isinstance(transform, InitTransform) and not (
                callable(getattr(transform, "transform", None))
                and callable(getattr(transform, "transform_after_optimizer", None))
            ):
                raise TypeError(
                    f"MultiTransform({name}=...): expected a kd.ckpts.InitTransform (or an object with its "
                    f"transform and transform_after_optimizer methods), got {type(transform).__name__}: "
                    f"{transform!r}."
                )
        self._transforms = dict(transforms)

    @property
    def transforms(self) -> dict[str, InitTransform]:
        """The transforms by name, in the order they run."""
        return dict(self._transforms)

    def transform(self, state: _T) -> _T:
        return self._each(state, "transform")

    def transform_after_optimizer(self, state: _T) -> _T:
        return self._each(state, "transform_after_optimizer")

    def _each(self, state: _T, method: str) -> _T:
        for name, transform in self._transforms.items():
            try:
                state = getattr(transform, method)(state)
            except Exception as e:
                e.add_note(f"(in MultiTransform: the init_transform {name!r} failed, in its {method})")
                raise
        return state

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MultiTransform):
            return NotImplemented
        return list(self._transforms.items()) == list(other._transforms.items())

    def __hash__(self) -> int:
        return hash(tuple(self._transforms.items()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._transforms.items())
        return f"{type(self).__name__}({inner})"

