"""Annotation helpers kept for Kauldron compatibility: `ConfigDictLike`, `WithRef`."""

from __future__ import annotations


class _PassThrough(type):
    def __getitem__(cls, item: object) -> object:
        return item


class ConfigDictLike(metaclass=_PassThrough):
    """`x: konfig.ConfigDictLike[Model]` marks a config that resolves to a `Model`.

    At runtime `ConfigDictLike[T]` is just `T`.
    """


class WithRef:
    """Mixin giving classes a typed `.ref` for auto-complete in configs.

    Usage: `class Trainer(WithRef): ...`; in a config `cfg.trainer.ref.workdir`.
    Only captured nodes (ConfigDicts) have a working `.ref`.
    """

    @property
    def ref(self) -> object:
        raise RuntimeError(
            f"{type(self).__name__}.ref only works on configs: capture the class with"
            " `konfig.imports()` and use `.ref` on the resulting ConfigDict"
        )
