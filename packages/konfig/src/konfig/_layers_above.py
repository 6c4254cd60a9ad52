"""The methods of the core types that the layers above them implement: konfig's one back-edge.

`ConfigDict` (`_config_dict`) and references (`_refs`) are the bottom data types, yet `repr(cfg)`,
`repr(ref)`, `cfg == other`, `cfg.to_json()` and `ConfigDict(json_data)` are the work of modules built
on them: the printer (`_repr`), structural equality (`_equality`), the JSON writer and reader
(`_json_writer`, `_json_decode`), which import those types. The core types' methods call the functions here, and here alone konfig imports upward, in one
late import; `import konfig` has loaded those modules already, so it costs a dictionary lookup.

    text = config_repr(cfg)  # what `ConfigDict.__repr__` returns
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any


def _above() -> tuple[ModuleType, ModuleType, ModuleType, ModuleType]:
    """`(_equality, _json_writer, _repr, _json_decode)`."""
    from . import (
        _equality,
        _json_decode,
        _json_writer,
        _repr,
    )  # late import: they import the types whose methods they are

    return _equality, _json_writer, _repr, _json_decode


def config_repr(value: Any) -> str:
    """`repr(cfg)`: `<ConfigDict[...]>` around the Python-like text of a config (`_repr.config_repr`)."""
    return f"<ConfigDict[{_above()[2].config_repr(value)}]>"


def format_ref(ref: Any, root_name: Callable[[Any], str] | None = None) -> str:
    """`repr(ref)`: `cfg.ref.a.b * 2`-style text of a reference expression (`_repr.format_ref`)."""
    return _above()[2].format_ref(ref, root_name)


def config_equal(a: Any, b: Any) -> bool:
    """`cfg == other`: structural equality of config values (`_equality.config_equal`)."""
    return _above()[0].config_equal(a, b)


def decode_if_marked(data: dict[Any, Any], root: Any) -> bool:
    """`ConfigDict(json_data)`: fills `root` from JSON data with markers, else False (`_json_decode`)."""
    return _above()[3].decode_if_marked(data, root)


def to_json(value: Any, **dumps_kwargs: Any) -> str:
    """`cfg.to_json()`: konfig JSON text (`_json_writer.to_json`)."""
    return _above()[1].to_json(value, **dumps_kwargs)
