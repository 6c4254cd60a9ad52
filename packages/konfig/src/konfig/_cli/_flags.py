"""Command-line configs: `--cfg=path/to/config.py --cfg.a.b[0].c=VALUE`, stdlib only.

    cfg, rest = konfig.parse_flags(sys.argv[1:])      # before argparse / absl see argv
    args = argparse.ArgumentParser(...).parse_args(rest)

Flags (the name `cfg` is a parameter):

- `--cfg=path/to/config.py` (or a module name `mypkg.configs.mnist`, or a
  `.json` file written by `cfg.to_json()`) loads the config; a module's
  `get_config()` is called, with a `ConfigArgs` instance when it defines one.
- `--cfg.__args__.size=3` sets a field of that `ConfigArgs`.
- `--cfg.a.b[0].c=VALUE` overrides a value. VALUE is read as a Python literal,
  else JSON (`true`, `null`), else kept as a string; as with ml_collections'
  flags, a field holding a `str` keeps the text (`--cfg.name=2024`) unless it
  is `None` or `py::...`, and a `float` field reads `inf` / `nan`. `py::mylib.Dense(features=12)`
  is read with `ast` into a config node (see `parse_py_expression`).
- `--cfg.**.batch_size=32` sets every existing `batch_size`; `*` is one level.
- `--cfg.+new_key=1` lets the last key be new on a plain node, `--cfg.+layers[3]=...`
  appends to a list of three; other unknown keys are errors that name the closest
  existing paths.
Each flag may also be written `--cfg.a.b VALUE`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from .._errors import OverrideError, shown, text_nesting_message
from .._json_decode import from_json
from ._override_paths import set_override
from ._py_expr import PY_PREFIX, parse_py_expression

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from types import ModuleType
    from typing import Any

__all__ = [
    "apply_overrides",
    "build_config",
    "load_config_module",
    "parse_flags",
    "split_flags",
    "parse_value",
]

_ARGS_KEY = "__args__"
# Module name -> the file path as the user gave it, for messages ("config file 'configs/mnist.py'").
_FILE_SPECS: dict[str, str] = {}


def parse_value(text: str) -> Any:
    """Reads a command-line value: `py::` expression, Python literal, JSON, else the string.

    Nothing is evaluated (`ast.literal_eval`, `json.loads`; `py::` values are read with
    `ast` into config nodes). A value nested deeper than Python's recursion limit lets
    them read is an `OverrideError`.

    Usage: `parse_value("[1, 2]") == [1, 2]`; `parse_value("relu") == "relu"`.
    """
    if text.startswith(PY_PREFIX):
        return parse_py_expression(text[len(PY_PREFIX) :])
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    import json

    try:
        return json.loads(text)
    except RecursionError:
        shown = text if len(text) <= 60 else f"{text[:40]}…{text[-10:]}"
        raise OverrideError(text_nesting_message(text, f"The value {shown!r}")) from None
    except ValueError:
        return text


def _maybe_py(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(PY_PREFIX):
        return parse_py_expression(value[len(PY_PREFIX) :])
    return value


def apply_overrides(
    cfg: Any,
    overrides: Mapping[str, Any] | Iterable[tuple[str, Any]],
    *,
    from_strings: bool = False,
) -> Any:
    """Applies `{path: value}` overrides to `cfg` in place, in order, and returns `cfg`.

    Paths use the CLI grammar (`a.b[0].c`, `**.batch_size`, `+new`). With
    `from_strings=True` every value is read by `parse_value` (the CLI); otherwise
    values are used as they are, except `"py::..."` strings (sweeps, code).

    Usage: `apply_overrides(cfg, {"optimizer.learning_rate": 1e-3})`.
    """
    items = overrides.items() if isinstance(overrides, Mapping) else overrides
    for path, value in items:
        if not isinstance(path, str):
            raise OverrideError(f"An override path is a str like `'a.b[0]'`, found {path!r}.")
        if path.startswith(_ARGS_KEY + ".") or path == _ARGS_KEY:
            raise OverrideError(
                f"`{path}` sets a `ConfigArgs` field, which only exists before `get_config(args)` "
                "runs; pass it to `build_config(module, args=...)` or on the command line."
            )
        try:
            if from_strings and isinstance(value, str):
                adapt = lambda old, new, text=value: _like(old, new, text)  # noqa: E731
                parsed = parse_value(value)
            else:
                adapt, parsed = None, _maybe_py(value)
        except OverrideError as e:
            raise OverrideError(f"In the override of `{shown(path)}`: {e}") from None
        set_override(cfg, path, parsed, adapt=adapt)
    return cfg


def _like(old: Any, parsed: Any, text: str) -> Any:
    """The command-line value for a field holding `old`, as ml_collections' flags read it.

    A `str` field keeps the text (`--cfg.name=2024` stays `"2024"`, `0,1` stays
    `"0,1"`) unless it reads as `None` or is a `py::` value; a `float` field
    reads `inf`, `-inf` and `nan`. Anything else keeps `parsed`.
    """
    t = type(old)
    if t is str and not isinstance(parsed, str) and parsed is not None and not text.startswith(PY_PREFIX):
        return text
    if t is float and type(parsed) is str:
        try:
            return float(text)
        except ValueError:
            return parsed
    return parsed


def load_config_module(spec: str) -> ModuleType:
    """Imports a config module from a file path (`configs/mnist.py`) or a module name.

    A file is executed afresh under a name unique to its absolute path, which is
    registered in `sys.modules` so dataclasses such as `ConfigArgs` work.

    Usage: `module = load_config_module("configs/mnist.py")`.
    """
    import importlib
    import importlib.util

    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        path = os.path.abspath(spec)
        if not os.path.isfile(path):
            raise OverrideError(f"Config file {spec!r} does not exist" + _close_files(path) + ".")
        import zlib

        stem = "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(path))[0])
        name = f"_konfig_config_{stem}_{zlib.crc32(path.encode()):08x}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        _FILE_SPECS[name] = spec
        try:
            module_spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as e:
        if e.name is None or not (spec == e.name or spec.startswith(e.name + ".")):
            raise  # The config module exists; an import inside it failed.
        raise OverrideError(f"Config {spec!r} is neither a file nor an importable module ({e}).") from e
    except (ValueError, TypeError) as e:  # "", ".relative", "a..b"
        raise OverrideError(f"Config {spec!r} is neither a file path nor a module name ({e}).") from None


def config_name(module: ModuleType) -> str:
    """How messages name a config: the file as given to `load_config_module`, else the module.

    Usage: `config_name(load_config_module("configs/mnist.py")) == "config file 'configs/mnist.py'"`.
    """
    spec = _FILE_SPECS.get(module.__name__)
    if spec is not None and sys.modules.get(module.__name__) is module:
        return f"config file {spec!r}"
    where = getattr(module, "__file__", None)
    return f"config module {module.__name__!r}" + (f" ({where})" if where else "")


def _close_files(path: str, suffix: str = ".py") -> str:
    import difflib

    folder, name = os.path.split(path)
    try:
        siblings = [f for f in os.listdir(folder) if f.endswith(suffix)]
    except OSError:
        return f" (folder {folder!r} does not exist either)"
    close = difflib.get_close_matches(name, siblings, n=3)
    return f"; did you mean {', '.join(repr(os.path.join(folder, c)) for c in close)}?" if close else ""


def build_config(
    module: ModuleType | str,
    *,
    args: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
    from_strings: bool = False,
) -> Any:
    """Runs a config module's `get_config()` (with its `ConfigArgs`) and applies overrides.

    `args` sets fields of the module's `ConfigArgs` dataclass, which is passed
    to `get_config(args)`. A `.json` path is read with `konfig.from_json`.

    Usage: `cfg = build_config("configs/mnist.py", overrides={"batch_size": 64})`.
    """
    if isinstance(module, str) and module.endswith(".json"):
        if args:
            raise OverrideError(
                f"`__args__` overrides {sorted(args)} cannot apply to the JSON config {module!r}."
            )
        if not os.path.isfile(module):
            raise OverrideError(
                f"Config file {module!r} does not exist"
                + _close_files(os.path.abspath(module), ".json")
                + "."
            )
        with open(module, encoding="utf-8") as f:
            cfg = from_json(f.read())
        return apply_overrides(cfg, overrides, from_strings=from_strings)
    if isinstance(module, str):
        module = load_config_module(module)
    if from_strings and args:
        args = parse_config_args(module, args)
    return _build_config(module, args or {}, overrides, from_strings=from_strings)


def _build_config(
    module: ModuleType,
    args: Mapping[str, Any],
    overrides: Mapping[str, Any] | Iterable[tuple[str, Any]],
    *,
    from_strings: bool,
) -> Any:
    """`build_config` with `args` already values (sweeps merge command-line and item args)."""
    get_config = getattr(module, "get_config", None)
    if get_config is None:
        raise OverrideError(f"The {config_name(module)} defines no `get_config()`.")
    config_args = _config_args(module, args)
    try:
        cfg = get_config() if config_args is None else get_config(config_args)
    except Exception as e:
        with_args = "" if config_args is None else f"({config_args!r})"
        e.add_note(f"While running get_config{with_args} of the {config_name(module)}.")
        raise
    return apply_overrides(cfg, overrides, from_strings=from_strings)


def _config_args_fields(module: ModuleType, names: Iterable[str]) -> tuple[type | None, dict[str, Any]]:
    """The module's `ConfigArgs` class and its init fields; unknown `names` are errors."""
    cls = getattr(module, "ConfigArgs", None)
    names = list(names)
    if cls is None:
        if names:
            raise OverrideError(
                f"`__args__` overrides {sorted(names)} given, but the {config_name(module)} "
                "defines no `ConfigArgs` dataclass."
            )
        return None, {}
    import dataclasses
    import difflib

    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for name in names:
        if name not in fields:
            close = difflib.get_close_matches(name, fields, n=3)
            hint = f" Did you mean {', '.join(f'`__args__.{c}`' for c in close)}?" if close else ""
            raise OverrideError(
                f"Unknown config argument `__args__.{name}`: `{cls.__qualname__}` has fields "
                f"{', '.join(f'`{f}`' for f in fields)}.{hint}"
            )
    return cls, fields


def parse_config_args(module: ModuleType, args: Mapping[str, str]) -> dict[str, Any]:
    """Reads command-line `__args__` strings like `parse_value`, but a `str` field keeps its text.

    Usage: `parse_config_args(module, {"width": "64"}) == {"width": 64}`.
    """
    _, fields = _config_args_fields(module, args)
    parsed_args = {}
    for name, value in args.items():
        if isinstance(value, str):
            try:
                parsed = parse_value(value)
            except OverrideError as e:
                raise OverrideError(f"In `__args__.{name}`: {e}") from None
            kinds = _annotation_names(fields[name].type)
            keep_text = "str" in kinds and not isinstance(parsed, str)
            value = value if keep_text and not (parsed is None and "None" in kinds) else parsed
            found = type(value).__name__.replace("NoneType", "None")
            if kinds <= _SCALAR_NAMES and found not in kinds and not (found == "int" and "float" in kinds):
                raise OverrideError(
                    f"`__args__.{name}` expects {' | '.join(sorted(kinds))}, found {value!r} ({found})."
                )
        parsed_args[name] = value
    return parsed_args


_SCALAR_NAMES = frozenset({"int", "float", "bool", "str", "None"})


def _annotation_names(annotation: Any) -> set[str]:
    """`{"str", "None"}` for `str | None` or `Optional[str]`, written as a type or as a string."""
    if isinstance(annotation, str):
        text = annotation.replace("typing.", "").replace("Optional[", "None|").replace("Union[", "")
        return {part.strip(" []") for part in text.replace(",", "|").split("|")}
    args = getattr(annotation, "__args__", None)
    if args is not None and type(annotation).__name__ in ("UnionType", "_UnionGenericAlias"):
        return {"None" if a is type(None) else getattr(a, "__name__", "") for a in args}
    return {getattr(annotation, "__name__", "")}


def _config_args(module: ModuleType, args: Mapping[str, Any]) -> Any:
    cls, _ = _config_args_fields(module, args)
    return None if cls is None else cls(**args)


def split_flags(
    argv: Sequence[str], *, name: str = "cfg", default: str | None = None
) -> tuple[str, dict[str, Any], list[tuple[str, Any]], list[str]]:
    """Sorts `--<name>=...` / `--<name>.<path>=...` flags out of `argv`, building nothing.

    Returns `(source, args, overrides, other_args)`: the config file, its `__args__` fields,
    the `(path, text)` overrides in order, and the arguments that are not config flags (a
    launcher expands sweeps from these with `konfig.expand_sweep(source, ..., args=args,
    overrides=overrides, from_strings=True)`).

    Usage: `source, args, overrides, rest = konfig.split_flags(sys.argv[1:])`.
    """
    source = default
    args: dict[str, Any] = {}
    overrides: list[tuple[str, Any]] = []
    rest: list[str] = []
    flag, prefix = f"--{name}", f"--{name}."
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            rest.extend(argv[i - 1 :])
            break
        if arg != flag and not arg.startswith((flag + "=", prefix)):
            rest.append(arg)
            continue
        key, has_value, value = arg.partition("=")
        if not has_value:
            if i >= len(argv) or argv[i].startswith("--"):
                raise OverrideError(f"Flag `{key}` has no value; write `{key}=VALUE`.")
            value = argv[i]
            i += 1
        if key == flag:
            source = value
        elif key.startswith(f"{prefix}{_ARGS_KEY}."):
            args[key[len(prefix) + len(_ARGS_KEY) + 1 :]] = value
        else:
            overrides.append((key[len(prefix) :], value))
    if source is None:
        raise OverrideError(f"No config given: pass `{flag}=path/to/config.py`.")
    return source, args, overrides, rest


def parse_flags(
    argv: Sequence[str],
    *,
    name: str = "cfg",
    default: str | None = None,
) -> tuple[Any, list[str]]:
    """Reads `--<name>=...` and `--<name>.<path>=...` flags; returns `(cfg, other_args)`.

    Usage with argparse (absl: call it from `app.run(main, flags_parser=...)`
    and hand the rest to `absl.flags.FLAGS`):

        cfg, rest = konfig.parse_flags(sys.argv[1:])
        args = parser.parse_args(rest)
    """
    source, args, overrides, rest = split_flags(argv, name=name, default=default)
    cfg = build_config(source, args=args, overrides=overrides, from_strings=True)
    return cfg, rest
