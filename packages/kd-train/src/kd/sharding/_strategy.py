"""Where arrays live: a mesh of named axes, batches split along its data axis, the state laid out by rules.

    trainer = kd.train.Trainer(..., sharding=kd.sharding.ShardingStrategy())   # data parallel, replicated
    kd.sharding.ShardingStrategy(params=kd.sharding.FSDPSharding())           # parameters split (FSDP)
    kd.sharding.ShardingStrategy(
        mesh={"data": -1, "model": 2},
        rules={"params.**.kernel": P(None, "model")},                           # tensor parallel kernels
    )
    batch = strategy.put_batch(host_batch)   # a global jax.Array built from this host's rows

A leaf of the train state gets, in this order: the first rule whose kontext glob matches its path
(`params.dense.kernel`, `opt_state[0].mu.dense.kernel`, ...); else its part's setting (`params`,
`collections`, `opt_state`); the step is replicated. `opt_state=None` (the default) lays out each
optimizer leaf like the parameter it mirrors (adam's `mu.dense.kernel` like `params.dense.kernel`).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import jax
import kontext
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from kd import _path_trie
from kd.sharding import _mesh
from kd.sharding._fsdp import FSDPSharding

AXIS = _mesh.DEFAULT_AXIS
_Tree = TypeVar("_Tree")  # a TrainState of specs, and the same tree with shardings


def _default_mesh() -> Mesh:
    return _mesh.make_mesh(None)


def first_dim() -> NamedSharding:
    """Split the first axis over all devices (of all hosts)."""
    return NamedSharding(_default_mesh(), PartitionSpec(AXIS))


def replicated() -> NamedSharding:
    """A full copy on every device."""
    return NamedSharding(_default_mesh(), PartitionSpec())


# The names a config may give; `kd.sharding.FIRST_DIM` / `REPLICATED` are the shardings themselves
# (`named_sharding`), made on first use so that importing kd queries no device.
FIRST_DIM = "first_dim"
REPLICATED = "replicated"
_NAMED = (FIRST_DIM, REPLICATED)
_MADE: dict[str, NamedSharding] = {}


def named_sharding(name: str) -> NamedSharding:
    """The one `NamedSharding` over all devices for `FIRST_DIM` / `REPLICATED` (cached: the same object)."""
    made = _MADE.get(name)
    if made is None:
        made = _MADE[name] = first_dim() if name == FIRST_DIM else replicated()
    return made


def name_of(value: Any) -> str | None:
    """`FIRST_DIM` / `REPLICATED` for those names and for the shardings `kd.sharding.FIRST_DIM` /
    `REPLICATED` give (a ShardingStrategy lays them out on its own mesh); None for anything else."""
    if isinstance(value, str):
        return value if value in _NAMED else None
    for name, made in _MADE.items():
        if value is made:
            return name
    return None


_PARTS = ("params", "collections", "opt_state")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ShardingStrategy:
    """How batches and the train state are laid out over the devices (see the module docstring).

    Usage: `kd.sharding.ShardingStrategy(mesh={"data": -1}, params=kd.sharding.FSDPSharding())`.

    Attributes:
      mesh: axis name -> size (one may be -1: the rest of the devices), e.g. `{"data": -1, "model": 2}`;
        None: one axis, "devices", over all devices. The first axis is the data axis.
      batch: how batches are split: FIRST_DIM (along the data axis), REPLICATED, a PartitionSpec or a
        Sharding. `ds` is Kauldron's older name for it.
      params, collections, opt_state: REPLICATED, FIRST_DIM, FSDPSharding(), a PartitionSpec (every
        leaf of the part), a Sharding, or a function of the part's tree returning a tree of those;
        `opt_state=None`: like the parameter each leaf mirrors.
      rules: kontext glob -> PartitionSpec (or a tuple of axis names / None), tried in order over the
        whole state's paths before the part settings; a rule matching no array is an error.
    """

    mesh: Mapping[str, int] | None = None
    batch: Any = FIRST_DIM
    ds: Any = None
    params: Any = REPLICATED
    collections: Any = REPLICATED
    opt_state: Any = None
    rules: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        # Checked at config time without devices: building a mesh here would query them before a
        # multi-host run has called `jax.distributed.initialize`.
        if self.ds is not None:
            _check(self.ds, "ds", allow_function=False)
            object.__setattr__(self, "batch", self.ds)
        object.__setattr__(self, "ds", self.batch)
        _mesh.check_axes(self.mesh, where="ShardingStrategy.mesh")
        _check(self.batch, "batch", allow_function=False)
        for field in _PARTS:
            _check(getattr(self, field), field, allow_none=field == "opt_state")
        if not isinstance(self.rules, Mapping):
            raise ValueError(
                f"ShardingStrategy.rules: expected a dict of glob -> PartitionSpec, got {self.rules!r}"
            )
        for pattern, spec in self.rules.items():
            where = f"ShardingStrategy.rules[{pattern!r}]"
            try:
                kontext.GlobPath.from_str(pattern)
            except (ValueError, TypeError) as e:
                raise ValueError(f"{where}: not a kontext glob path: {e}") from None
            _as_spec(spec, where)

    # ---------------------------------------------------------------- the mesh and the batch

    @functools.cached_property
    def device_mesh(self) -> Mesh:
        """The mesh over every device of every host (built on first use)."""
        return _mesh.make_mesh(self.mesh, where="ShardingStrategy.mesh")

    @property
    def data_axis(self) -> str:
        """The mesh axis batches are split along: the first."""
        return next(iter(self.mesh)) if self.mesh else AXIS

    def _named(self, value: Any, where: str) -> jax.sharding.Sharding:
        value = name_of(value) or value
        if isinstance(value, jax.sharding.Sharding):
            return value
        if value == FIRST_DIM:
            return NamedSharding(self.device_mesh, PartitionSpec(self.data_axis))
        if value == REPLICATED or value is None:
            return NamedSharding(self.device_mesh, PartitionSpec())
        return NamedSharding(self.device_mesh, _check_axes(_as_spec(value, where), self.device_mesh, where))

    @functools.cached_property
    def batch_sharding(self) -> jax.sharding.Sharding:
        return self._named(self.batch, "ShardingStrategy.batch")

    @functools.cached_property
    def batch_pieces(self) -> int:
        """How many pieces `batch` cuts a batch's first axis into on this host."""
        return _num_shards(self.batch_sharding)

    @functools.cached_property
    def _single_device(self) -> bool:
        return jax.device_count() == 1

    def step_input(self, batch: Any) -> Any:
        """What a jitted step should receive: on one device the host batch itself (the jitted call copies it,
        about 10x cheaper than `device_put` on CPU), on several `put_batch(batch)`."""
        return batch if self._single_device else self.put_batch(batch)

    def put_batch(self, batch: Any) -> Any:
        """This host's rows of the global batch, as global arrays sharded by `batch`."""
        sharding = self.batch_sharding
        if jax.process_count() == 1:  # this host's rows are the whole batch: one transfer for the tree
            if not _splits_evenly(batch, self.batch_pieces):
                # A last, smaller evaluation batch (drop_remainder=False): computed whole on every device.
                sharding = self._named(REPLICATED, "batch")
            return jax.device_put(batch, sharding)
        return jax.tree.map(lambda x: jax.make_array_from_process_local_data(sharding, np.asarray(x)), batch)

    def check_batch(self, element_spec: Any) -> None:
        """Raises ValueError when a batch of `element_spec` cannot be split over the devices by `batch`."""
        if not _splits_evenly(element_spec, self.batch_pieces):
            devices = self.batch_pieces
            sizes = sorted({leaf.shape[0] for leaf in jax.tree.leaves(element_spec) if leaf.shape})
            raise ValueError(
                f"batches of {sizes} rows on this host cannot be split over {devices} devices "
                f"(ShardingStrategy.batch={self.batch!r}); use a batch_size divisible by "
                f"{devices * jax.process_count()}"
            )

    # ---------------------------------------------------------------- the state

    def state_template(self, specs: _Tree) -> _Tree:
        """`specs` (a TrainState of `jax.ShapeDtypeStruct`) with the sharding each leaf is placed with: the
        template a checkpoint is restored onto (`Trainer.train()` resuming, `eval_only`, `predict`, `kd-train
        eval`) and a step is lowered on (`kd.inspect.lower_trainstep`), the one place it is built.
        Usage: `ckpt.restore(strategy.state_template(specs), step=8)`."""
        shardings = self.state_shardings(specs)
        return jax.tree.map(
            lambda s, sh: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sh), specs, shardings
        )

    def state_shardings(self, state: Any) -> Any:
        """The sharding of each leaf of a TrainState (a pytree of the same structure; arrays or specs)."""
        trie = _path_trie.PathTrie.of(state)
        mesh = self.device_mesh
        chosen: list[jax.sharding.Sharding | None] = [None] * len(trie.leaves)
        for pattern, spec in self.rules.items():
            where = f"ShardingStrategy.rules[{pattern!r}]"
            selected = trie.select(kontext.GlobPath.from_str(pattern))
            if not selected:
                raise ValueError(f"{where} matches no array of the train state{_near(pattern, trie)}")
            partition = _check_axes(_as_spec(spec, where), mesh, where)
            for index, _ in selected:
                if chosen[index] is None:  # the first matching rule wins
                    path = _path_trie.text(trie.paths[index])
                    chosen[index] = _fitted(partition, trie.leaves[index], mesh, f"{where} at {path}")
        parts = {"params": self.params, "collections": self.collections, "opt_state": self.opt_state}
        for part, setting in parts.items():
            if setting is None or callable(setting):
                continue
            for index, path in enumerate(trie.paths):
                if chosen[index] is None and path[:1] == (part,):
                    chosen[index] = self._leaf_sharding(setting, trie.leaves[index], part, path)
        for part, setting in parts.items():  # functions of the whole part
            if callable(setting):
                self._apply_function(setting, part, state, trie, chosen)
        if self.opt_state is None:
            self._mirror_params(trie, chosen)
        whole = NamedSharding(mesh, PartitionSpec())
        leaves = [whole if s is None else s for s in chosen]
        return jax.tree.unflatten(jax.tree.structure(state), leaves)

    def _leaf_sharding(self, setting: Any, leaf: Any, part: str, path: tuple) -> jax.sharding.Sharding:
        mesh, where = self.device_mesh, f"ShardingStrategy.{part} at {_path_trie.text(path)}"
        shape = np.shape(leaf)
        if isinstance(setting, FSDPSharding):
            axis = setting.axis or self.data_axis
            if axis not in mesh.shape:
                raise ValueError(
                    f"ShardingStrategy.{part}: FSDPSharding(axis={axis!r}) is not a mesh axis {list(mesh.shape)}"
                )
            return NamedSharding(mesh, setting.spec(shape, leaf.dtype, axis=axis, axis_size=mesh.shape[axis]))
        if setting in _NAMED or isinstance(setting, jax.sharding.Sharding):
            sharding = self._named(setting, where)
            # A scalar (adam's count) or a leaf whose first axis does not split evenly stays whole.
            n = _num_shards(sharding)
            return sharding if shape and shape[0] % n == 0 else NamedSharding(mesh, PartitionSpec())
        return _fitted(_check_axes(_as_spec(setting, where), mesh, where), leaf, mesh, where)

    def _apply_function(self, function: Callable, part: str, state: Any, trie: Any, chosen: list) -> None:
        """A part given as a function of its tree (Kauldron's lazy shardings)."""
        subtree = getattr(state, part)
        result = function(subtree)
        sub_leaves = jax.tree.leaves(subtree)
        results = (
            [result] * len(sub_leaves)
            if not isinstance(result, (Mapping, list, tuple)) or isinstance(result, PartitionSpec)
            else jax.tree.leaves(
                result, is_leaf=lambda x: isinstance(x, (PartitionSpec, jax.sharding.Sharding))
            )
        )
        indices = [i for i, path in enumerate(trie.paths) if path[:1] == (part,)]
        if len(results) != len(indices):
            raise ValueError(
                f"ShardingStrategy.{part}: the function returned {len(results)} shardings for {len(indices)} arrays"
            )
        for index, value in zip(indices, results, strict=True):
            if chosen[index] is None:
                chosen[index] = self._leaf_sharding(value, trie.leaves[index], part, trie.paths[index])

    def _mirror_params(self, trie: Any, chosen: list) -> None:
        """Each optimizer leaf whose path ends like a parameter's and has its shape is laid out like it."""
        params = {
            path[1:]: (np.shape(trie.leaves[i]), chosen[i])
            for i, path in enumerate(trie.paths)
            if path[:1] == ("params",)
        }
        by_tail: dict[tuple, Any] = {}
        for tail, value in params.items():
            by_tail.setdefault(tuple(str(p) for p in tail), value)
        for index, path in enumerate(trie.paths):
            if chosen[index] is not None or path[:1] != ("opt_state",):
                continue
            keys = tuple(str(p) for p in path)
            for start in range(1, len(keys)):
                found = by_tail.get(keys[start:])
                if found is not None and found[0] == np.shape(trie.leaves[index]):
                    chosen[index] = found[1]
                    break


def _check(value: Any, field: str, *, allow_none: bool = False, allow_function: bool = True) -> None:
    where = f"ShardingStrategy.{field}"
    if (value is None and allow_none) or isinstance(
        value, (jax.sharding.Sharding, PartitionSpec, FSDPSharding)
    ):
        return
    if isinstance(value, (tuple, list)):
        _as_spec(value, where)  # a PartitionSpec written as a tuple of axis names
        return
    if (isinstance(value, str) and value in _NAMED) or (allow_function and callable(value)):
        return
    expected = f"one of {sorted(_NAMED)}, a PartitionSpec, FSDPSharding() or a jax.sharding.Sharding"
    near = difflib.get_close_matches(value, _NAMED, n=1) if isinstance(value, str) else []
    hint = f"; did you mean {near[0]!r}?" if near else ""
    raise ValueError(f"{where}: expected {expected}, got {value!r}{hint}")


def _as_spec(value: Any, where: str) -> PartitionSpec:
    """A PartitionSpec from a spec, a tuple/list of axis names (or None, or tuples of names), or a name."""
    if isinstance(value, PartitionSpec):
        return value
    if value is None or value == REPLICATED:
        return PartitionSpec()
    if isinstance(value, (tuple, list)) and all(
        v is None or isinstance(v, (str, tuple, list)) for v in value
    ):
        return PartitionSpec(*(tuple(v) if isinstance(v, list) else v for v in value))
    raise ValueError(
        f"{where}: expected a PartitionSpec such as P(None, 'model') (or a tuple of mesh axis names and "
        f"None), got {value!r}"
    )


def _check_axes(spec: PartitionSpec, mesh: Mesh, where: str) -> PartitionSpec:
    for entry in spec:
        for axis in entry if isinstance(entry, tuple) else (entry,):
            if axis is not None and axis not in mesh.shape:
                near = difflib.get_close_matches(str(axis), list(mesh.shape), n=1)
                hint = f"; did you mean {near[0]!r}?" if near else ""
                raise ValueError(
                    f"{where}: {spec} names the axis {axis!r}, not one of the mesh's {list(mesh.shape)}{hint}"
                )
    return spec


def _fitted(spec: PartitionSpec, leaf: Any, mesh: Mesh, where: str) -> NamedSharding:
    """`spec` on `mesh`, after checking that it fits the leaf's shape."""
    shape = np.shape(leaf)
    if len(spec) > len(shape):
        raise ValueError(f"{where}: {spec} has {len(spec)} entries but the array has shape {shape}")
    for dim, entry in enumerate(spec):
        if entry is None:
            continue
        axes = entry if isinstance(entry, tuple) else (entry,)
        pieces = math.prod(mesh.shape[a] for a in axes)
        if shape[dim] % pieces:
            raise ValueError(
                f"{where}: {spec} splits dimension {dim} (size {shape[dim]}) of shape {shape} into {pieces} "
                f"pieces (mesh {dict(mesh.shape)}), which does not divide it"
            )
    return NamedSharding(mesh, spec)


def _near(pattern: str, trie: Any) -> str:
    paths = trie.node_paths()
    close = difflib.get_close_matches(pattern, paths, n=3, cutoff=0.5)
    shown = ", ".join(repr(p) for p in close) if close else ", ".join(repr(p) for p in sorted(paths)[:8])
    return f"; {'did you mean' if close else 'its paths include'} {shown}"


def _num_shards(sharding: jax.sharding.Sharding) -> int:
    """How many pieces the first axis is cut into on this host's devices."""
    if not sharding.addressable_devices:
        return 1
    shape = (sharding.num_devices * 64,)  # any first axis: the number of distinct pieces of it
    indices = {str(index) for index in sharding.addressable_devices_indices_map(shape).values()}
    return len(indices)


def _splits_evenly(batch: Any, pieces: int) -> bool:
    return all(not np.shape(leaf) or np.shape(leaf)[0] % pieces == 0 for leaf in jax.tree.leaves(batch))
