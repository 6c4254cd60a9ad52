"""`FSDPSharding`: each large array split along its largest dimension that the devices divide.

    strategy = kd.sharding.ShardingStrategy(params=kd.sharding.FSDPSharding())

Parameters (and, by default, the optimizer state that mirrors them) are then held once over all devices
instead of once per device; XLA gathers each where a step needs it whole. Small arrays stay replicated:
splitting them saves little memory and costs a gather each step.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from jax.sharding import PartitionSpec


@dataclasses.dataclass(frozen=True, kw_only=True)
class FSDPSharding:
    """Split arrays above `min_size_to_shard_mb` along their largest dimension divisible by the axis size.

    Attributes:
      min_size_to_shard_mb: arrays of at most this size (MiB) stay replicated (Kauldron's default, 4).
      axis: the mesh axis to split over; None: the data axis (the mesh's first).
    """

    min_size_to_shard_mb: float = 4
    axis: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.min_size_to_shard_mb, (int, float)) or self.min_size_to_shard_mb < 0:
            raise ValueError(
                f"FSDPSharding.min_size_to_shard_mb: expected a number >= 0, got {self.min_size_to_shard_mb!r}"
            )

    def spec(self, shape: tuple[int, ...], dtype: object, *, axis: str, axis_size: int) -> PartitionSpec:
        """The PartitionSpec of one array of `shape` and `dtype` (`axis` of `axis_size` devices)."""
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        if nbytes <= self.min_size_to_shard_mb * 2**20 or axis_size == 1:
            return PartitionSpec()
        # The largest dimension first; among equal sizes the earlier one.
        for dim in sorted(range(len(shape)), key=lambda d: (-shape[d], d)):
            if shape[dim] % axis_size == 0:
                return PartitionSpec(*([None] * dim), axis)
        return PartitionSpec()  # no dimension divides: kept whole
