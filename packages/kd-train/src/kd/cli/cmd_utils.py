"""Kauldron's command classes (`kauldron.cli.cmd_utils`): a command group holds one sub-command, a sub-command is a
frozen dataclass that gets the config and runs with `cmd()`; what they share (timing, tracked updates, specs).

    kd.cli.config.Show(cfg=cfg)()            # prints the config tree
    kd.cli.cmd_utils.tracked_update(cfg, "train_ds.**.batch_size", 8)   # {"train_ds.batch_size": 8, ...}
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import functools
import time
from collections.abc import Iterator
from typing import Any

import konfig
import kontext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .patch_config import ConfigOrigin


@dataclasses.dataclass(frozen=True, kw_only=True)
class CommandGroup:
    """A noun of the command line (`config`, `data`, `run`): `sub_command` is one of its verbs, and a subclass's
    other fields are flags every verb of the group shares."""

    sub_command: SubCommand


@dataclasses.dataclass(frozen=True, kw_only=True)
class SubCommand(abc.ABC):
    """A verb (`config show`): a frozen dataclass whose fields are its flags; `cmd()` runs it on `cfg`."""

    cfg: konfig.ConfigDict | None = dataclasses.field(default=None, metadata={"cmd": False})
    origin: ConfigOrigin | None = dataclasses.field(default=None, metadata={"cmd": False})
    group: CommandGroup | None = dataclasses.field(default=None, metadata={"cmd": False})

    @functools.cached_property
    def trainer(self) -> Any:
        """The resolved config (resolved once, when first asked)."""
        if self.cfg is None:
            raise ValueError(f"{type(self).__name__}: no config to resolve (pass cfg=...)")
        with timed("Resolving config"):
            return konfig.resolve(self.cfg, freeze=False)

    def print_config_origin(self) -> None:
        if self.origin is not None:
            print(self.origin.summary())

    @abc.abstractmethod
    def __call__(self) -> None:
        """Runs the command."""


def execute_command(group: CommandGroup, cfg: konfig.ConfigDict, origin: ConfigOrigin) -> None:
    """Runs `group.sub_command` on `cfg` (and says where the config came from)."""
    command = dataclasses.replace(group.sub_command, cfg=cfg, origin=origin, group=group)
    command()


def tracked_update(cfg: Any, path: str, value: Any) -> dict[str, Any]:
    """Sets `path` (a kontext path, globs allowed) to `value`; returns `{each concrete path set: value}`."""
    return dict.fromkeys(kontext.set_by_path(cfg, path, value), value)


@contextlib.contextmanager
def timed(action: str) -> Iterator[None]:
    """Prints `action...` then `done (1.2 sec)` around the block."""
    start = time.time()
    print(f"{action}...", end="", flush=True)
    yield
    print(f"done ({time.time() - start:.1f} sec)")


def print_spec(obj: Any) -> None:
    """Pretty-prints a tree with each array (or `ShapeDtypeStruct`) as its dtype and shape."""
    import jax
    from etils import enp, epy

    def as_spec(x: Any) -> Any:
        return enp.ArraySpec.from_array(x) if isinstance(x, jax.ShapeDtypeStruct) or enp.is_array(x) else x

    epy.pprint(_plain(jax.tree.map(as_spec, obj)))


def _plain(tree: Any) -> Any:
    if isinstance(tree, dict) or type(tree).__name__ in ("ImmutableDict", "FrozenDict"):
        return {k: _plain(v) for k, v in tree.items()}
    return tree
