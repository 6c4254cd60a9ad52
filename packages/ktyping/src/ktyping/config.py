"""Kauldron's `ktyping.config`: our settings (`_config`) under Kauldron's names, plus `ReportingPolicy`.

    from ktyping import config
    with config.Config(jaxtyping_annotations=config.ReportingPolicy.WARN):
        ...

`Config`, `CONFIG`, `get_config`, `add_config_override` and `remove_config_override` are ktyping's own
(the same objects as `ktyping.Config` etc.); `get_config` also takes a code location such as
`utils.CodeLocation`. `ReportingPolicy` names the values of `Config.jaxtyping_annotations`.
"""

from __future__ import annotations

import enum

from ._config import CONFIG as CONFIG
from ._config import MISSING as MISSING
from ._config import Config as Config
from ._config import add_config_override as add_config_override
from ._config import get_config as get_config
from ._config import remove_config_override as remove_config_override

__all__ = [
    "CONFIG",
    "MISSING",
    "Config",
    "ReportingPolicy",
    "add_config_override",
    "get_config",
    "remove_config_override",
]


class ReportingPolicy(enum.StrEnum):
    """What ktyping does about an issue it finds (`Config.jaxtyping_annotations`).

    Each member equals its string ("warn"), so plain strings work as well; the strings are
    `_config.REPORTING_POLICIES`, which `Config` checks values against.
    """

    IGNORE = "ignore"
    LOG_INFO = "log_info"
    WARN = "warn"
    ERROR = "error"
