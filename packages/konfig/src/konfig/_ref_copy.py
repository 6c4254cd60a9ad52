"""`konfig.ref_copy`: a one-way copy of a config, each of whose leaves refers to the original.

    test_ds = konfig.ref_copy(train_ds)
    test_ds.split = "test"        # train_ds unchanged
    train_ds.batch_size = 128     # test_ds.batch_size follows

Each leaf of the copy is a `PathRef` rooted at the original, nested configs are copied.
"""

from __future__ import annotations

from ._config_dict import CONST, QUALNAME, ConfigDict
from ._errors import NestingError, nesting_message
from ._keys import is_positional_key
from ._refs import PathRef, Ref

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def ref_copy(cfg: Any) -> Any:
    """One-way copy: the copy follows later changes of `cfg`, not the reverse.

    Every leaf of the copy is a reference to the same path of `cfg`; nested
    configs are copied recursively, so fields of the copy can be overridden.
    References are rooted at `cfg` itself, so replacing a whole sub-config of
    `cfg` (`train_ds.src = {...}`) is followed too.

    Usage:
        test_ds = konfig.ref_copy(train_ds)
        test_ds.split = "test"        # train_ds unchanged
        train_ds.batch_size = 128     # test_ds.batch_size follows
    """
    if not isinstance(cfg, ConfigDict):
        raise TypeError(f"ref_copy expects a konfig.ConfigDict, got {type(cfg).__name__}")
    try:
        return _ref_copy(cfg, cfg, ())
    except RecursionError:
        raise NestingError(nesting_message(cfg, "The config given to ref_copy")) from None


def _ref_copy(node: Any, root: Any, path: tuple[Any, ...]) -> Any:
    fields: dict[Any, Any] = {}
    is_call = QUALNAME in node._fields
    for key, value in node._fields.items():
        if key == QUALNAME or key == CONST:
            fields[key] = value
            continue
        step = int(key) if is_call and is_positional_key(key) else key
        if isinstance(value, ConfigDict):
            fields[key] = _ref_copy(value, root, (*path, step))
        elif isinstance(value, Ref):
            fields[key] = value
        else:
            fields[key] = PathRef(root, (*path, step))
    return ConfigDict._raw(fields, node._origin)
