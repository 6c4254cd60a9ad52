"""`kd.ckpts.items`: Kauldron's checkpoint items, the objects that say how they are saved.

    @flax.struct.dataclass
    class MyState(kd.ckpts.items.StandardCheckpointItem):
        x: jax.Array

    ckpt.save(MyState(x=x), step=1)
    state = ckpt.restore(MyState(x=jnp.zeros_like(x)), step=1)        # a MyState
    tree = ckpt.restore(kd.ckpts.items.StandardCheckpointItem(), step=1)  # {"x": array}: no template

A `StandardCheckpointItem` is any pytree of arrays: `kd.ckpts.Checkpointer` saves it as the checkpoint's
`state` (with its digests), exactly as it saves a plain train state, so either kind restores the other.

A `CheckpointItem` with its own orbax handler (Kauldron's `kd.train.PerformanceTimer`, a JSON item) is
saved as an orbax item of its own beside them: alone as `item`, in a `TopLevelCheckpointItem` under its
field's name. kd's digests cover the state and kd's JSON items, not such items (their handler is theirs).
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

        class _Saved(typing.NamedTuple):
            state: MyState
            timer: kd.train.PerformanceTimer
            DEFAULT_ITEM = "state"

        class Saved(_Saved, kd.ckpts.items.TopLevelCheckpointItem):  # a NamedTuple first, then the item
            pass

    `kd.ckpts.Checkpointer` saves the `DEFAULT_ITEM` field as its state and each other field (a
    `CheckpointItem` with its own handler) as an item named by the field.
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


RESERVED = ("state", "data", "info", "digests")
"""Item names kd.ckpts writes itself; a `TopLevelCheckpointItem` field may not take one of them."""

LONE_ITEM = "item"
"""The item name of a `CheckpointItem` with its own handler saved alone."""


def split(state: Any, *, method: str) -> tuple[Any, dict[str, CheckpointItem]]:
    """`(tree, extras)`: what kd.ckpts saves as the checkpoint's `state` (a pytree or StandardCheckpointItem;
    None when there is none) and the items with their own orbax handlers, by item name.

    A `TopLevelCheckpointItem`'s `DEFAULT_ITEM` field is the state when it is a pytree; every other field
    (and a `DEFAULT_ITEM` with its own handler) is an item of its own, named by its field.
    """
    if isinstance(state, TopLevelCheckpointItem):
        fields = {name: getattr(state, name) for name in type(state)._fields}  # type: ignore[attr-defined]
        tree, extras = None, {}
        for name, value in fields.items():
            if name == state.DEFAULT_ITEM and not _own_handler(value):
                tree = value
            elif _own_handler(value):
                extras[name] = value
            else:
                raise TypeError(
                    f"Checkpointer.{method}: {type(state).__name__}.{name} is a {type(value).__name__}, not a "
                    "kd.ckpts.items.CheckpointItem; only the DEFAULT_ITEM field may be a plain pytree."
                )
        clashes = [name for name in extras if name in RESERVED]
        if clashes:
            raise TypeError(
                f"Checkpointer.{method}: {type(state).__name__} has the fields {clashes}, names kd.ckpts uses "
                f"for its own items ({', '.join(RESERVED)}); rename those fields."
            )
        return tree, extras
    if _own_handler(state):
        return None, {LONE_ITEM: state}
    return state, {}


def is_checkpoint_item(value: Any) -> bool:
    """A `CheckpointItem`, or an object with its protocol (`__kd_ocp_handlers__`, ...: kd.data's iterators)."""
    return isinstance(value, CheckpointItem) or (
        not isinstance(value, type) and callable(getattr(value, "__kd_ocp_handlers__", None))
    )


def _own_handler(value: Any) -> bool:
    return is_checkpoint_item(value) and not isinstance(value, StandardCheckpointItem)


def join(template: Any, tree: Any, extras: dict[str, Any]) -> Any:
    """The restored value in the form the caller passed (`template`): a TopLevelCheckpointItem of its fields,
    each own-handler item through its `__kd_ocp_restore_post__`."""
    if isinstance(template, TopLevelCheckpointItem):
        values = {}
        for name in type(template)._fields:  # type: ignore[attr-defined]
            item = getattr(template, name)
            values[name] = item.__kd_ocp_restore_post__(extras[name]) if name in extras else tree
        return type(template)(**values)
    if LONE_ITEM in extras:
        return template.__kd_ocp_restore_post__(extras[LONE_ITEM])
    return tree
