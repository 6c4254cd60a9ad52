"""`konfig.register_default_values`: default fields merged into every later node of a target.

The registry is `_config_dict.DEFAULTS` (qualname -> the registered node), which node creation reads;
this module fills it, refusing anything but a call node and a second, different registration.

    konfig.register_default_values(Trainer(workdir=konfig.placeholder(str)))
    cfg = Trainer()  # cfg.workdir is the placeholder
"""

from __future__ import annotations

from . import _config_dict
from ._config_dict import QUALNAME, ConfigDict
from ._equality import config_equal


def register_default_values(default_values: ConfigDict) -> None:
    """Merges `default_values` under every node later created with its qualname.

    Usage:
        konfig.register_default_values(Trainer(workdir=konfig.placeholder(str)))
        cfg = Trainer()  # cfg.workdir is the placeholder
    """
    if not isinstance(default_values, ConfigDict) or QUALNAME not in default_values._fields:
        raise TypeError(
            "register_default_values expects a captured call node such as"
            f" `Trainer(workdir=...)`, got {default_values!r}"
        )
    qualname = default_values._fields[QUALNAME]
    registered = _config_dict.DEFAULTS.get(qualname)
    if registered is not None and not config_equal(registered, default_values):
        raise ValueError(f"Default values for {qualname!r} are already registered: {registered!r}")
    _config_dict.DEFAULTS[qualname] = default_values
