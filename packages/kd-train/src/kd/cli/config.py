"""Kauldron's `config` commands (`kauldron.cli.config`): show the config tree, or resolve it.

    kd.cli.config.Show(cfg=cfg)()                   # the tree, unresolved
    kd.cli.config.Resolve(cfg=cfg, verbose=False)() # resolves it: "Successfully resolved config!"
"""

from __future__ import annotations

import dataclasses

from . import cmd_utils as cu


@dataclasses.dataclass(frozen=True, kw_only=True)
class Show(cu.SubCommand):
    """Prints the config tree, unresolved."""

    def __call__(self) -> None:
        from etils import epy

        self.print_config_origin()
        epy.pprint(self.cfg)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Resolve(cu.SubCommand):
    """Resolves the config and prints what it built."""

    verbose: bool = True

    def __call__(self) -> None:
        from etils import epy

        self.print_config_origin()
        trainer = self.trainer
        if self.verbose:
            print("======== Resolved Config ========")
            epy.pprint(trainer)
        print("Successfully resolved config!")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Config(cu.CommandGroup):
    """`config show` / `config resolve`."""

    sub_command: Show | Resolve
