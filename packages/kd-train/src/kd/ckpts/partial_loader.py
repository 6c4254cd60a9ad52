"""Kauldron's module path `kd.ckpts.partial_loader`: its public names, for code written against Kauldron.

Usage: `kd.ckpts.partial_loader.PartialKauldronLoader(workdir=..., new_to_old={...})` is
`kd.ckpts.PartialKauldronLoader`; kd's own spelling is the `kd.ckpts` namespace.
"""

from kd.ckpts._init_transform import InitTransform as InitTransform
from kd.ckpts._init_transform import MultiTransform as MultiTransform
from kd.ckpts._init_transform import NoopTransform as NoopTransform
from kd.ckpts._partial_loader import PartialKauldronLoader as PartialKauldronLoader
from kd.ckpts._partial_loader import SimpleCheckpointLoader as SimpleCheckpointLoader
from kd.ckpts._partial_loader import workdir_from_xid as workdir_from_xid

__all__ = [
    "InitTransform",
    "MultiTransform",
    "NoopTransform",
    "PartialKauldronLoader",
    "SimpleCheckpointLoader",
    "workdir_from_xid",
]
