"""`DEFINE_config_file`: Kauldron's absl flag for a config file, `--cfg=config.py --cfg.a.b=VALUE`.

    _CFG = konfig.DEFINE_config_file("cfg")      # at module level, before absl parses the command line
    def main(argv):
        cfg = _CFG.value                         # the ConfigDict, overrides applied; resolve it yourself
    FLAGS.cfg, FLAGS["cfg"].config_filename  # the same config; the file's path (`.override_values`)

absl is imported only when this is called (konfig itself needs nothing outside the standard library).
"""

from __future__ import annotations

import sys
from typing import Any

from ._flags import _ARGS_KEY, build_config, parse_value


class ConfigFlagHolder:
    """What `DEFINE_config_file` returns: `.value` builds the config from the parsed flags (each time)."""

    def __init__(self, flag_values: Any, name: str, default: str | None) -> None:
        self._flag_values, self._name, self._default = flag_values, name, default

    @property
    def name(self) -> str:
        return self._name

    @property
    def value(self) -> Any:
        flag = self._flag_values[self._name]
        source = flag.config_filename or self._default
        if source is None:
            raise ValueError(f"--{self._name}: no config file given (expected --{self._name}=path/to/config.py)")
        return flag.build(source)


def _config_file_flag(flag_values: Any, name: str, default: str | None, help_string: str) -> Any:
    """The absl flag `--<name>=path`: its value is the config built from the file and the overrides (as
    ml_collections' and Kauldron's config flags: `FLAGS.cfg.seed`), with `config_filename` (the path) and
    `override_values` (`{path: value}` of the overrides given, values read as on the command line)."""
    from absl import flags

    class ConfigFileFlag(flags.Flag):
        def __init__(self) -> None:
            self.override_paths: list[str] = []  # command-line order
            super().__init__(flags.ArgumentParser(), flags.ArgumentSerializer(), name, default, help_string)

        @property
        def value(self) -> Any:
            return None if self._value is None else self.build(self._value)

        @value.setter
        def value(self, value: Any) -> None:
            self._value = value

        @property
        def config_filename(self) -> str | None:
            return self._value

        @property
        def override_values(self) -> dict[str, Any]:
            return {path: parse_value(v) if isinstance(v, str) else v for path, v in self._given(args=False)}

        def serialize(self) -> str:
            return self._serialize(self._value)

        def build(self, source: str) -> Any:
            args = {path[len(_ARGS_KEY) + 1 :]: value for path, value in self._given(args=True)}
            return build_config(source, args=args, overrides=self._given(args=False), from_strings=True)

        def _given(self, *, args: bool) -> list[tuple[str, Any]]:
            given = []
            for path in self.override_paths:
                flag = flag_values[f"{name}.{path}"]
                if (flag.present or flag.value is not None) and path.startswith(_ARGS_KEY + ".") == args:
                    given.append((path, flag.value))
            return given

        def define_overrides(self, argv: list[str]) -> None:
            """Defines `--<name>.<path>` for each such argument of `argv` (absl knows only flags defined
            before it parses): `FLAGS(argv)` then accepts them, and the config takes these overrides only."""
            self.override_paths = _override_paths(argv, name)  # a new command line: its overrides only
            for path in self.override_paths:
                if f"{name}.{path}" not in flag_values:
                    flags.DEFINE_string(
                        f"{name}.{path}", None, f"an override of {name}.{path}", flag_values=flag_values
                    )

    return ConfigFileFlag()


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

    Usage: `_CFG = konfig.DEFINE_config_file("cfg")`, then `cfg = _CFG.value` (or `FLAGS.cfg`) inside `main`.
    absl knows only flags defined before it parses, so the overrides on `sys.argv` are defined here as flags
    of their own (`FLAGS["cfg"].define_overrides(argv)` for another argv); `.value` applies them in
    command-line order. Overrides given only in a `--flagfile` are not seen.
    """
    from absl import flags

    if lock_config:
        raise ValueError("DEFINE_config_file(lock_config=True) is not supported: konfig configs stay mutable")
    flag_values = flags.FLAGS if flag_values is None else flag_values
    flag = _config_file_flag(flag_values, name, default, help_string)
    flags.DEFINE_flag(flag, flag_values)
    flag.define_overrides(sys.argv[1:])
    return ConfigFlagHolder(flag_values, name, default)
