"""kd.sharding: how batches and the train state are laid out over devices (JAX's own sharding).

trainer = kd.train.Trainer(..., sharding=kd.sharding.ShardingStrategy(params=kd.sharding.FSDPSharding()))
x = kd.sharding.with_sharding_constraint(x, {"images": kd.sharding.first_dim(), "aux": None})
"""

from ._constraint import with_sharding_constraint as with_sharding_constraint
from ._fsdp import FSDPSharding as FSDPSharding
from ._strategy import FIRST_DIM as FIRST_DIM
from ._strategy import REPLICATED as REPLICATED
from ._strategy import ShardingStrategy as ShardingStrategy
from ._strategy import first_dim as first_dim
from ._strategy import replicated as replicated

__all__ = [
    "FIRST_DIM",
    "REPLICATED",
    "FSDPSharding",
    "ShardingStrategy",
    "first_dim",
    "replicated",
    "with_sharding_constraint",
]
