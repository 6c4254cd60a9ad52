"""kd: the training stack. `kd.konfig`, `kd.kontext`, `kd.ktyping` re-export the light packages.

    from kd import konfig
    with konfig.imports():
        from kd import kd  # or: import kd
    cfg = kd.train.Trainer(...)

The namespaces (`kd.train`, `kd.runtime`, `kd.data`, `kd.losses`, `kd.metrics`, `kd.summaries`, `kd.ckpts`,
`kd.evals`, `kd.optim`, `kd.nn`, `kd.sharding`, `kd.writers`, `kd.inspect`, `kd.export`, `kd.xm`, `kd.random`,
`kd.typing`, `kd.utils`, `kd.kdash`, `kd.testing`, `kd.contrib`, `kd.kauldron_alias`) load on
first use, so `import kd` does not import JAX. `kd.kxm` is `kd.xm` under Kauldron's name (`from kd import kxm`).
"""

import importlib as _importlib

import kd_compat as _kd_compat
import konfig as konfig
import kontext as kontext
import ktyping as ktyping

# Before any of kd touches etils: fixes known etils/JAX breakage where installed versions need it.
_kd_compat.apply()

__version__ = "0.1.0"

_NAMESPACES = frozenset(
    {
        "train",
        "runtime",
        "data",
        "losses",
        "metrics",
        "summaries",
        "ckpts",
        "evals",
        "optim",
        "nn",
        "sharding",
        "writers",
        "inspect",
        "export",
        "xm",
        "random",
        "typing",
        "utils",
        "kdash",
        "kauldron_alias",
        "testing",
        "contrib",
    }
)
_ALIASES = {"kxm": "xm"}  # Kauldron's `from kauldron import kxm`

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd import ckpts as ckpts
    from kd import contrib as contrib
    from kd import data as data
    from kd import evals as evals
    from kd import export as export
    from kd import inspect as inspect
    from kd import kauldron_alias as kauldron_alias
    from kd import kdash as kdash
    from kd import losses as losses
    from kd import metrics as metrics
    from kd import nn as nn
    from kd import optim as optim
    from kd import random as random
    from kd import runtime as runtime
    from kd import sharding as sharding
    from kd import summaries as summaries
    from kd import testing as testing
    from kd import train as train
    from kd import typing as typing
    from kd import utils as utils
    from kd import writers as writers
    from kd import xm as kxm
    from kd import xm as xm
del TYPE_CHECKING


def __getattr__(name: str) -> object:
    if name in _NAMESPACES or name in _ALIASES:
        module = _importlib.import_module(f"kd.{_ALIASES.get(name, name)}")
        globals()[name] = module
        return module
    if name == "kd":  # `from kd import kd`, Kauldron's spelling (`from kauldron import kd`).
        import sys

        return sys.modules[__name__]
    raise AttributeError(f"module 'kd' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _NAMESPACES | set(_ALIASES))


__all__ = [
    "ckpts",
    "data",
    "evals",
    "export",
    "inspect",
    "kauldron_alias",
    "kdash",
    "konfig",
    "kontext",
    "ktyping",
    "kxm",
    "losses",
    "metrics",
    "nn",
    "optim",
    "random",
    "runtime",
    "sharding",
    "summaries",
    "train",
    "typing",
    "utils",
    "writers",
    "xm",
]
