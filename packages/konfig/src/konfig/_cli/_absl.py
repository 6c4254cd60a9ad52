"""`DEFINE_config_file`: Kauldron's absl flag for a config file, `--cfg=config.py --cfg.a.b=VALUE`.

    _CFG = konfig.DEFINE_config_file("cfg")      # at module level, before absl parses the command line
    def main(argv):
        cfg = _CFG.value                         # the ConfigDict, overrides applied; resolve it yourself

absl is imported only when this is called (konfig itself needs nothing outside the standard library).
"""

from __future__ import annotations

import sys
from typing import Any

from ._flags import build_config, split_flags


class ConfigFlagHolder:
    """What `DEFINE_config_file` returns: `.value` builds the config from the command line (each time)."""

    def __init__(self, flag_values: Any, name: str, default: str | None) -> None:
        self._flag_values, self._name, self._default = flag_values, name, default

    @property
    def name(self) -> str:
        return self._name

    @property
    def value(self) -> Any:
        source = self._flag_values[self._name].value or self._default
        if source is None:
            raise ValueError(
                f"--{self._name}: no config file given (expected --{self._name}=path/to/config.py)"
            )
        _, args, overrides, _ = split_flags(sys.argv[1:], name=self._name, default=source)
        return build_config(source, args=args, overrides=overrides, from_strings=True)


def DEFINE_config_file(
    name: str = "cfg",
    default: str | None = None,
    help_string: str = "path to config file.",
    *,
    flag_values: Any = None,
    lock_config: bool = False,
) -> ConfigFlagHolder:
    """Defines the absl flag `--<name>` (a config file) and its `--<name>.<path>=VALUE` overrides.

    Usage: `_CFG = konfig.DEFINE_config_file("cfg")`, then `cfg = _CFG.value` inside `main`. The overrides
    on `sys.argv` are declared as flags of their own, so absl accepts them; `.value` applies them in order.
    """
    from absl import flags

    if lock_config:
        raise ValueError("DEFINE_config_file(lock_config=True) is not supported: konfig configs stay mutable")
    flag_values = flags.FLAGS if flag_values is None else flag_values
    flags.DEFINE_string(name, default, help_string, flag_values=flag_values)
    _, _, overrides, _ = split_flags(sys.argv[1:], name=name, default=default or "")
    for path, _text in overrides:
        flag_name = f"{name}.{path}"
        if flag_name not in flag_values:
            flags.DEFINE_string(flag_name, None, f"an override of {name}.{path}", flag_values=flag_values)
    return ConfigFlagHolder(flag_values, name, default)
