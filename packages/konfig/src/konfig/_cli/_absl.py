"""`DEFINE_config_file`: Kauldron's absl flag for a config file, `--cfg=config.py --cfg.a.b=VALUE`.

    _CFG = konfig.DEFINE_config_file("cfg")      # at module level, before absl parses the command line
    def main(argv):
        cfg = _CFG.value                         # the ConfigDict, overrides applied; resolve it yourself

absl is imported only when this is called (konfig itself needs nothing outside the standard library).
"""

from __future__ import annotations

import sys
from typing import Any

from ._flags import _ARGS_KEY, build_config


class ConfigFlagHolder:
    """What `DEFINE_config_file` returns: `.value` builds the config from the parsed flags (each time)."""

    def __init__(self, flag_values: Any, name: str, default: str | None, paths: list[str]) -> None:
        self._flag_values, self._name, self._default, self._paths = flag_values, name, default, paths

    @property
    def name(self) -> str:
        return self._name

    @property
    def value(self) -> Any:
        flag_values, name = self._flag_values, self._name
        source = flag_values[name].value or self._default
        if source is None:
            raise ValueError(f"--{name}: no config file given (expected --{name}=path/to/config.py)")
        args: dict[str, Any] = {}
        overrides: list[tuple[str, Any]] = []
        for path in self._paths:  # command-line order
            flag = flag_values[f"{name}.{path}"]
            if flag.present or flag.value is not None:
                if path.startswith(_ARGS_KEY + "."):
                    args[path[len(_ARGS_KEY) + 1 :]] = flag.value
                else:
                    overrides.append((path, flag.value))
        return build_config(source, args=args, overrides=overrides, from_strings=True)


def _override_paths(argv: list[str], name: str) -> list[str]:
    """The `<path>` of each `--<name>.<path>[=VALUE]` (or `-<name>.<path>`) in `argv`, in order, once."""
    paths: list[str] = []
    for arg in argv:
        key = arg.partition("=")[0]
        for prefix in (f"--{name}.", f"-{name}."):
            if key.startswith(prefix) and key[len(prefix) :] not in paths:
                paths.append(key[len(prefix) :])
                break
    return paths


def DEFINE_config_file(
    name: str = "cfg",
    default: str | None = None,
    help_string: str = "path to config file.",
    *,
    flag_values: Any = None,
    lock_config: bool = False,
) -> ConfigFlagHolder:
    """Defines the absl flag `--<name>` (a config file) and its `--<name>.<path>=VALUE` overrides
    (`--<name>.__args__.<field>=VALUE` for the config's `ConfigArgs`).

    Usage: `_CFG = konfig.DEFINE_config_file("cfg")`, then `cfg = _CFG.value` inside `main`. absl knows only
    flags defined before it parses, so the overrides on `sys.argv` are defined here as flags of their own;
    `.value` applies them in command-line order. Overrides given only in a `--flagfile` are not seen.
    """
    from absl import flags

    if lock_config:
        raise ValueError("DEFINE_config_file(lock_config=True) is not supported: konfig configs stay mutable")
    flag_values = flags.FLAGS if flag_values is None else flag_values
    flags.DEFINE_string(name, default, help_string, flag_values=flag_values)
    paths = _override_paths(sys.argv[1:], name)
    for path in paths:
        if f"{name}.{path}" not in flag_values:
            flags.DEFINE_string(
                f"{name}.{path}", None, f"an override of {name}.{path}", flag_values=flag_values
            )
    return ConfigFlagHolder(flag_values, name, default, paths)
