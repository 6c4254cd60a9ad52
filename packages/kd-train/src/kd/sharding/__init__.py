"""kd.sharding: how batches and the train state are laid out over devices (JAX's own sharding).

trainer = kd.train.Trainer(..., sharding=kd.sharding.ShardingStrategy(params=kd.sharding.FSDPSharding()))
x = kd.sharding.with_sharding_constraint(x, {"images": kd.sharding.first_dim(), "aux": None})
tokens = kd.sharding.device_put(tokens, kd.sharding.FIRST_DIM)

`FIRST_DIM` (the first axis split over all devices) and `REPLICATED` (a copy on each) are real
`jax.sharding.NamedSharding`s, made on first use: importing kd.sharding queries no device.
"""

from ._constraint import ShardingTree as ShardingTree
from ._constraint import device_put as device_put
from ._constraint import with_sharding_constraint as with_sharding_constraint
from ._fsdp import FSDPSharding as FSDPSharding
from ._strategy import ShardingStrategy as ShardingStrategy
from ._strategy import first_dim as first_dim
from ._strategy import replicated as replicated

__all__ = [
    "FIRST_DIM",
    "REPLICATED",
    "FSDPSharding",
    "ShardingStrategy",
    "ShardingTree",
    "device_put",
    "first_dim",
    "replicated",
    "with_sharding_constraint",
]

# Made on first use (they need the devices); konfig captures them by name, so a config naming them
# starts no JAX backend before `jax.distributed.initialize`.
__konfig_deferred__ = ("FIRST_DIM", "REPLICATED")


def __getattr__(name: str) -> object:
    if name in ("FIRST_DIM", "REPLICATED"):
        from ._strategy import named_sharding

        return named_sharding(name.lower())
    raise AttributeError(f"module 'kd.sharding' has no attribute {name!r}")
