"""Where arrays live: batches split along their first axis over every device, the state replicated.

trainer = kd.train.Trainer(..., sharding=kd.sharding.ShardingStrategy())
batch = strategy.put_batch(host_batch)   # a global jax.Array built from this host's rows
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

AXIS = "devices"


def _mesh() -> Mesh:
    return Mesh(np.asarray(jax.devices()), (AXIS,))


def first_dim() -> NamedSharding:
    """Split the first axis over all devices (of all hosts)."""
    return NamedSharding(_mesh(), PartitionSpec(AXIS))


def replicated() -> NamedSharding:
    """A full copy on every device."""
    return NamedSharding(_mesh(), PartitionSpec())


FIRST_DIM = "first_dim"
REPLICATED = "replicated"
_NAMED = {FIRST_DIM: first_dim, REPLICATED: replicated}


@dataclasses.dataclass(frozen=True, kw_only=True)
class ShardingStrategy:
    """`ds`: the batch's sharding; `params` / `opt_state` / `collections`: the state's (a name or a Sharding).

    Usage: `kd.sharding.ShardingStrategy(ds=kd.sharding.FIRST_DIM, params=kd.sharding.REPLICATED)`.
    """

    ds: Any = FIRST_DIM
    params: Any = REPLICATED
    collections: Any = REPLICATED
    opt_state: Any = REPLICATED

    def __post_init__(self) -> None:
        # A bad name fails at config time. Only names are checked: building a mesh here would query the
        # devices before a multi-host run has called `jax.distributed.initialize`.
        for field in ("ds", "params", "collections", "opt_state"):
            _check(getattr(self, field), field)

    def _sharding(self, value: Any, field: str) -> jax.sharding.Sharding:
        _check(value, field)
        return value if isinstance(value, jax.sharding.Sharding) else _NAMED[value]()

    @functools.cached_property
    def batch_sharding(self) -> jax.sharding.Sharding:
        return self._sharding(self.ds, "ds")

    @functools.cached_property
    def batch_pieces(self) -> int:
        """How many pieces `ds` cuts a batch's first axis into on this host."""
        return _num_shards(self.batch_sharding)

    @functools.cached_property
    def _single_device(self) -> bool:
        return jax.device_count() == 1

    def step_input(self, batch: Any) -> Any:
        """What a jitted step should receive: on one device the host batch itself (the jitted call copies it,
        about 10x cheaper than `device_put` on CPU), on several `put_batch(batch)`."""
        return batch if self._single_device else self.put_batch(batch)

    def step_inputs(self, stacked: Any) -> Any:
        """What a fused call should receive: batches stacked on a new first axis, each split like one batch."""
        if self._single_device:
            if jax.devices()[0].platform == "cpu":
                return stacked  # the call copies host arrays itself, cheaper than device_put on CPU
            return jax.device_put(stacked)  # starts the transfer now, while the previous call runs
        sharding = self.batch_sharding
        if not isinstance(sharding, NamedSharding):
            raise ValueError(
                f"ShardingStrategy.ds={self.ds!r}: fused steps need a NamedSharding for batches on several "
                "devices; set Trainer.steps_per_call=1"
            )
        stacked_sharding = NamedSharding(sharding.mesh, PartitionSpec(None, *sharding.spec))
        if jax.process_count() == 1:
            return jax.device_put(stacked, stacked_sharding)
        return jax.tree.map(
            lambda x: jax.make_array_from_process_local_data(stacked_sharding, np.asarray(x)), stacked
        )

    def put_batch(self, batch: Any) -> Any:
        """This host's rows of the global batch, as global arrays sharded by `ds`."""
        sharding = self.batch_sharding
        if jax.process_count() == 1:  # this host's rows are the whole batch: one transfer for the tree
            if not _splits_evenly(batch, self.batch_pieces):
                # A last, smaller evaluation batch (drop_remainder=False): computed whole on every device.
                sharding = self._sharding(REPLICATED, "ds")
            return jax.device_put(batch, sharding)
        return jax.tree.map(lambda x: jax.make_array_from_process_local_data(sharding, np.asarray(x)), batch)

    def check_batch(self, element_spec: Any) -> None:
        """Raises ValueError when a batch of `element_spec` cannot be split over the devices by `ds`."""
        if not _splits_evenly(element_spec, self.batch_pieces):
            devices = self.batch_pieces
            sizes = sorted({leaf.shape[0] for leaf in jax.tree.leaves(element_spec) if leaf.shape})
            raise ValueError(
                f"batches of {sizes} rows on this host cannot be split over {devices} devices "
                f"(ShardingStrategy.ds={self.ds!r}); use a batch_size divisible by {devices * jax.process_count()}"
            )

    def state_shardings(self, state: Any) -> Any:
        """The sharding of each leaf of a TrainState (a pytree of the same structure)."""
        rep = self._sharding(REPLICATED, "state")
        parts = {
            "params": self._sharding(self.params, "params"),
            "collections": self._sharding(self.collections, "collections"),
            "opt_state": self._sharding(self.opt_state, "opt_state"),
        }
        pieces = {name: _num_shards(sharding) for name, sharding in parts.items()}

        def leaf_sharding(leaf: Any, sharding: jax.sharding.Sharding, n: int) -> jax.sharding.Sharding:
            # A scalar (adam's count) or a leaf whose first axis does not split evenly stays whole.
            shape = np.shape(leaf)
            return sharding if shape and shape[0] % n == 0 else rep

        return type(state)(
            step=rep,
            **{
                name: jax.tree.map(
                    lambda leaf, s=sharding, n=pieces[name]: leaf_sharding(leaf, s, n), getattr(state, name)
                )
                for name, sharding in parts.items()
            },
        )


def _check(value: Any, field: str) -> None:
    if isinstance(value, jax.sharding.Sharding) or (isinstance(value, str) and value in _NAMED):
        return
    raise ValueError(
        f"ShardingStrategy.{field}: expected one of {sorted(_NAMED)} or a jax.sharding.Sharding, got {value!r}"
    )


def _num_shards(sharding: jax.sharding.Sharding) -> int:
    """How many pieces the first axis is cut into on this host's devices."""
    if not sharding.addressable_devices:
        return 1
    shape = (sharding.num_devices * 64,)  # any first axis: the number of distinct pieces of it
    indices = {str(index) for index in sharding.addressable_devices_indices_map(shape).values()}
    return len(indices)


def _splits_evenly(batch: Any, pieces: int) -> bool:
    return all(not np.shape(leaf) or np.shape(leaf)[0] % pieces == 0 for leaf in jax.tree.leaves(batch))
