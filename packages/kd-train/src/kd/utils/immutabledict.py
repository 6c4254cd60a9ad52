"""Kauldron's `kauldron.utils.immutabledict`: konfig's frozen mapping and its helpers.

kd.utils.immutabledict.freeze_dict_attrs(self, ["losses", "metrics"])   # in a __post_init__
"""

from konfig import ImmutableDict as ImmutableDict
from konfig import freeze_dict_attrs as freeze_dict_attrs
from konfig import unfreeze as unfreeze

__all__ = ["ImmutableDict", "freeze_dict_attrs", "unfreeze"]
