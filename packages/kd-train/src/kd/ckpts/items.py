"""`kd.ckpts.items`: Kauldron's checkpoint items, the objects that say how they are saved.

    @flax.struct.dataclass
    class MyState(kd.ckpts.items.StandardCheckpointItem):
        x: jax.Array

    ckpt.save(MyState(x=x), step=1)
    state = ckpt.restore(MyState(x=jnp.zeros_like(x)), step=1)        # a MyState
    tree = ckpt.restore(kd.ckpts.items.StandardCheckpointItem(), step=1)  # {"x": array}: no template

A `StandardCheckpointItem` is any pytree of arrays: `kd.ckpts.Checkpointer` saves it as the checkpoint's
`state` (with its digests), exactly as it saves a plain train state, so either kind restores the other.

Differences from Kauldron: kd.ckpts keeps one layout (`state`, `data`, `info`, `digests` per step), so a
`CheckpointItem` that brings its own orbax handler (Kauldron's `PerformanceTimer`), or a
`TopLevelCheckpointItem` whose fields are such items, is refused with a TypeError saying so, not saved
beside the state. The `__kd_ocp_*__` methods are kept for code that calls them on orbax directly.
"""

from __future__ import annotations

import abc
import functools
from typing import Any, ClassVar


def _ocp() -> Any:
    import orbax.checkpoint  # on first use, as in _orbax: `import kd.ckpts` does not load orbax

    return orbax.checkpoint


class CheckpointItem(abc.ABC):
    """Something that says how orbax saves and restores it (Kauldron's protocol).

    mgr = ocp.CheckpointManager(directory, item_handlers=item.__kd_ocp_handlers__())
    mgr.save(step, args=item.__kd_ocp_save_args__())
    item = item.__kd_ocp_restore_post__(mgr.restore(step, args=item.__kd_ocp_restore_args__()))
    """

    @abc.abstractmethod
    def __kd_ocp_handlers__(self) -> Any:
        """The handler(s) for `ocp.CheckpointManager(item_handlers=...)`."""

    @abc.abstractmethod
    def __kd_ocp_save_args__(self) -> Any:
        """The args of `ocp.CheckpointManager.save(args=...)`."""

    @abc.abstractmethod
    def __kd_ocp_restore_args__(self) -> Any:
        """The args of `ocp.CheckpointManager.restore(args=...)`."""

    def __kd_ocp_restore_post__(self, value: Any) -> Any:
        """The restored object, from what orbax gave back (by default that value itself)."""
        return value


class TopLevelCheckpointItem(CheckpointItem):
    """A named tuple of checkpoint items, each an orbax item of its own; `DEFAULT_ITEM` names the main one.

        class Saved(typing.NamedTuple, kd.ckpts.items.TopLevelCheckpointItem):
            state: MyState
            DEFAULT_ITEM = "state"

    `kd.ckpts.Checkpointer` saves the `DEFAULT_ITEM` field as its state; other fields are refused (see
    the module docstring).
    """

    DEFAULT_ITEM: ClassVar[str | None] = None

    @functools.cached_property
    def _items_fields(self) -> dict[str, CheckpointItem]:
        fields = {name: getattr(self, name) for name in type(self)._fields}  # type: ignore[attr-defined]
        if self.DEFAULT_ITEM is not None:
            fields[_ocp().checkpoint_manager.DEFAULT_ITEM_NAME] = fields.pop(self.DEFAULT_ITEM)
        return fields

    def __kd_ocp_handlers__(self) -> Any:
        return {name: item.__kd_ocp_handlers__() for name, item in self._items_fields.items()}

    def __kd_ocp_save_args__(self) -> Any:
        fields = self._items_fields.items()
        return _ocp().args.Composite(**{name: item.__kd_ocp_save_args__() for name, item in fields})

    def __kd_ocp_restore_args__(self) -> Any:
        fields = self._items_fields.items()
        return _ocp().args.Composite(**{name: item.__kd_ocp_restore_args__() for name, item in fields})

    def __kd_ocp_restore_post__(self, value: Any) -> Any:
        kwargs = {
            name: item.__kd_ocp_restore_post__(value[name]) for name, item in self._items_fields.items()
        }
        if self.DEFAULT_ITEM is not None:
            kwargs[self.DEFAULT_ITEM] = kwargs.pop(_ocp().checkpoint_manager.DEFAULT_ITEM_NAME)
        return type(self)(**kwargs)


class StandardCheckpointItem(CheckpointItem):
    """A pytree of arrays, saved with orbax's standard handler; the bare class restores without a template.

    @flax.struct.dataclass
    class MyState(kd.ckpts.items.StandardCheckpointItem):
        params: Any

    ckpt.restore(kd.ckpts.items.StandardCheckpointItem(), step=10)  # nested dicts of numpy arrays
    """

    def __kd_ocp_handlers__(self) -> Any:
        return _ocp().StandardCheckpointHandler()

    def __kd_ocp_save_args__(self) -> Any:
        return _ocp().args.StandardSave(self)

    def __kd_ocp_restore_args__(self) -> Any:
        structure = None if type(self) is StandardCheckpointItem else self  # the bare class: no template
        return _ocp().args.StandardRestore(structure)


def is_bare(state: Any) -> bool:
    """Whether `state` is `StandardCheckpointItem()` itself (restore without a template)."""
    return type(state) is StandardCheckpointItem


def state_of(state: Any, *, method: str) -> Any:
    """What kd.ckpts saves as the checkpoint's `state` for `state`: a pytree, a StandardCheckpointItem, or
    the `DEFAULT_ITEM` of a TopLevelCheckpointItem holding nothing else; TypeError for other items."""
    if isinstance(state, TopLevelCheckpointItem):
        fields = list(type(state)._fields)  # type: ignore[attr-defined]
        others = [f for f in fields if f != state.DEFAULT_ITEM]
        if state.DEFAULT_ITEM is None or others:
            raise TypeError(
                f"Checkpointer.{method}: {type(state).__name__} holds the items {fields}; kd.ckpts saves one "
                f"state per checkpoint (the DEFAULT_ITEM), so items other than it ({others}) cannot be saved "
                "beside it. Save the train state alone and put small values in `info=` (JSON)."
            )
        return state_of(getattr(state, state.DEFAULT_ITEM), method=method)
    if isinstance(state, CheckpointItem) and not isinstance(state, StandardCheckpointItem):
        raise TypeError(
            f"Checkpointer.{method}: {type(state).__name__} is a kd.ckpts.items.CheckpointItem with its own "
            "orbax handler; kd.ckpts saves pytrees of arrays (a StandardCheckpointItem or a plain pytree) "
            "as the checkpoint's state. Put small values in `info=` (JSON) instead."
        )
    return state


def rewrap(template: Any, restored: Any) -> Any:
    """The restored state in the form the caller passed: a TopLevelCheckpointItem gets its DEFAULT_ITEM back."""
    if isinstance(template, TopLevelCheckpointItem):
        inner = rewrap(getattr(template, template.DEFAULT_ITEM), restored)  # type: ignore[arg-type]
        return template._replace(**{template.DEFAULT_ITEM: inner})  # type: ignore[attr-defined]
    return restored
