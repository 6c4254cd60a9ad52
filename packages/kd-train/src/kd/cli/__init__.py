"""kd.cli: the `kd-train` command (also `python -m kd`): train, inspect, eval, plot, diff; and Kauldron's
commands that look into a config (`kd.cli.config`, `kd.cli.data`, `kd.cli.run`, `kd.cli.PatchConfig`; their
command line is `python -m kd.cli.commands config show --cfg=...`).

kd-train --cfg=examples/digits.py --cfg.num_train_steps=300 --cfg.workdir=/tmp/run
kd.cli.config.Show(cfg=cfg)()
"""

import importlib as _importlib
from typing import Any as _Any

from ._errors import CliError as CliError
from ._errors import RunError as RunError


def main(argv: list[str] | None = None) -> int:
    """Runs `kd-train` with `argv` (default: `sys.argv[1:]`); returns the exit code."""
    from ._main import main as _main

    return _main(argv)


_LAZY = {"PatchConfig": ("patch_config", "PatchConfig")}
_SUBMODULES = ("cmd_utils", "commands", "config", "data", "patch_config", "run")


def __getattr__(name: str) -> _Any:
    if name in _SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(_importlib.import_module(f"{__name__}.{module}"), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CliError", "PatchConfig", "RunError", "cmd_utils", "config", "data", "main", "patch_config", "run"]
