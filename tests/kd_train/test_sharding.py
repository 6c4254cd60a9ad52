"""kd.sharding.ShardingStrategy on one device: names, specs or Shardings for the batch and the state, checked at
construction (tests/integration/test_sharded_training.py runs them on 8 simulated devices)."""

from __future__ import annotations

import json
import subprocess
import sys

import jax
import kd
import numpy as np
import pytest
import train_fixtures as lib
from jax.sharding import NamedSharding, PartitionSpec


def test_defaults_split_the_batch_and_replicate_the_state():
    strategy = kd.sharding.ShardingStrategy()
    assert strategy.batch == strategy.ds == "first_dim"
    assert strategy.params == strategy.collections == "replicated"
    assert strategy.opt_state is None  # laid out like the parameter each optimizer leaf mirrors
    assert strategy.batch_sharding.spec == PartitionSpec("devices")


def test_ds_is_kauldrons_older_name_for_batch():
    assert kd.sharding.ShardingStrategy(ds=kd.sharding.REPLICATED).batch is kd.sharding.REPLICATED


def test_first_dim_and_replicated_are_real_jax_shardings_made_once():
    # Kauldron's: `jax.device_put(x, kd.sharding.REPLICATED)` works; every access gives the same object.
    assert isinstance(kd.sharding.FIRST_DIM, NamedSharding) and kd.sharding.FIRST_DIM is kd.sharding.FIRST_DIM
    assert kd.sharding.FIRST_DIM.spec == PartitionSpec("devices")
    assert kd.sharding.REPLICATED.spec == PartitionSpec()
    x = jax.device_put(np.arange(8.0), kd.sharding.REPLICATED)
    assert x.sharding.is_fully_replicated


def test_a_strategy_lays_the_named_shardings_out_on_its_own_mesh():
    # kd.sharding.FIRST_DIM inside a strategy with a mesh of its own: along that mesh's data axis, as the name.
    strategy = kd.sharding.ShardingStrategy(mesh={"data": -1}, batch=kd.sharding.FIRST_DIM)
    assert strategy.batch_sharding.spec == PartitionSpec("data")
    assert strategy.batch_sharding.mesh.axis_names == ("data",)


def test_device_put_places_a_tree_and_refuses_a_bare_partition_spec():
    placed = kd.sharding.device_put(
        {"tokens": np.arange(8).reshape(4, 2), "none": None}, kd.sharding.FIRST_DIM
    )
    assert isinstance(placed["tokens"], jax.Array) and placed["tokens"].sharding == kd.sharding.FIRST_DIM
    assert placed["none"] is None
    step = kd.sharding.device_put(3, "replicated")  # a Python scalar (Kauldron's `step`), a sharding's name
    assert int(step) == 3 and step.sharding.is_fully_replicated
    assert isinstance(kd.sharding.device_put(np.ones(2), None), jax.Array)
    with pytest.raises(TypeError, match="names no devices"):
        kd.sharding.device_put(np.ones(2), PartitionSpec())
    with pytest.raises(TypeError, match="did you mean 'replicated'"):
        kd.sharding.device_put(np.ones(2), "replicatd")


def test_named_shardings_split_the_first_axis_or_replicate():
    assert kd.sharding.first_dim().spec == PartitionSpec("devices")
    assert kd.sharding.replicated().spec == PartitionSpec()
    assert kd.sharding.first_dim().mesh.devices.size == jax.device_count()


@pytest.mark.parametrize("field", ["batch", "ds", "params", "collections", "opt_state"])
def test_bad_name_raises_naming_the_field_and_the_choices(field):
    with pytest.raises(ValueError, match=f"ShardingStrategy.{field}:") as info:
        kd.sharding.ShardingStrategy(**{field: "rows"})
    message = str(info.value)
    assert "'first_dim'" in message and "'replicated'" in message and "'rows'" in message


def test_a_misspelt_name_gets_the_near_miss():
    with pytest.raises(ValueError, match="did you mean 'replicated'"):
        kd.sharding.ShardingStrategy(params="replicatd")


def test_a_tuple_naming_an_unknown_mesh_axis_fails_when_the_mesh_is_built():
    strategy = kd.sharding.ShardingStrategy(batch=("dta",), mesh={"data": -1})
    with pytest.raises(ValueError, match=r"ShardingStrategy.batch: .*'dta'.*did you mean 'data'"):
        strategy.batch_sharding  # noqa: B018


def test_a_value_that_is_no_sharding_names_the_field():
    with pytest.raises(ValueError, match=r"ShardingStrategy.params: expected .* got 3"):
        kd.sharding.ShardingStrategy(params=3)


def test_put_batch_gives_jax_arrays_with_the_batch_sharding():
    strategy = kd.sharding.ShardingStrategy()
    host = {"x": np.arange(8, dtype=np.float32).reshape(4, 2), "y": np.ones((4, 1), np.int32)}
    batch = strategy.put_batch(host)
    for name in ("x", "y"):
        assert isinstance(batch[name], jax.Array)
        assert batch[name].sharding.is_equivalent_to(kd.sharding.first_dim(), batch[name].ndim)
        np.testing.assert_array_equal(batch[name], host[name])
        assert batch[name].dtype == host[name].dtype


def test_state_shardings_has_the_train_state_structure():
    state = lib.make_trainer().init_state()
    shardings = kd.sharding.ShardingStrategy().state_shardings(state)
    assert isinstance(shardings, kd.train.TrainState)
    is_sharding = lambda x: isinstance(x, jax.sharding.Sharding)  # noqa: E731
    assert jax.tree.structure(shardings, is_leaf=is_sharding) == jax.tree.structure(state)
    assert all(s.spec == PartitionSpec() for s in jax.tree.leaves(shardings, is_leaf=is_sharding))


def test_state_shardings_takes_a_sharding_instance_per_part():
    device = jax.devices()[0]
    own = jax.sharding.SingleDeviceSharding(device)
    strategy = kd.sharding.ShardingStrategy(params=own)
    state = lib.make_trainer().init_state()
    shardings = strategy.state_shardings(state)
    assert all(s is own for s in jax.tree.leaves(shardings.params))
    adam = shardings.opt_state[0]
    assert all(s is own for s in jax.tree.leaves((adam.mu, adam.nu)))  # mirrors the parameters
    assert isinstance(adam.count, NamedSharding) and adam.count.spec == PartitionSpec()
    assert isinstance(shardings.step, NamedSharding) and shardings.step.spec == PartitionSpec()


def test_sharding_instance_is_used_for_the_batch():
    own = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    batch = kd.sharding.ShardingStrategy(ds=own).put_batch({"x": np.zeros((2, 3), np.float32)})
    assert batch["x"].sharding == own


def test_trainer_places_the_state_by_its_strategy():
    trainer = lib.make_trainer(sharding=kd.sharding.ShardingStrategy(params=kd.sharding.REPLICATED))
    state = trainer.init_state()
    kernel = state.params["hidden"]["kernel"]
    assert isinstance(kernel.sharding, NamedSharding) and kernel.sharding.spec == PartitionSpec()


_SPLIT = """
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import numpy as np
import kd
batch = kd.sharding.ShardingStrategy().put_batch({"x": np.arange(8).reshape(4, 2)})
shards = sorted(batch["x"].addressable_shards, key=lambda s: s.index[0].start)
print(json.dumps([np.asarray(s.data).tolist() for s in shards]))
"""


def test_put_batch_splits_the_rows_over_devices():
    proc = subprocess.run([sys.executable, "-c", _SPLIT], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.splitlines()[-1]) == [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]


def test_step_input_on_one_device_is_the_host_batch_itself():
    # One device: the jitted step copies numpy inputs itself (much cheaper than a device_put first).
    strategy = kd.sharding.ShardingStrategy()
    batch = {"x": np.zeros((4, 2), np.float32)}
    assert jax.device_count() == 1
    assert strategy.step_input(batch) is batch


def test_a_first_dim_state_keeps_scalars_and_indivisible_leaves_whole():
    strategy = kd.sharding.ShardingStrategy(params=kd.sharding.FIRST_DIM, opt_state=kd.sharding.FIRST_DIM)
    state = lib.make_trainer(sharding=strategy).init_state()  # adam's scalar count must not be split
    assert int(state.opt_state[0].count) == 0
    assert state.params["hidden"]["kernel"].shape == (2, 16)


def test_a_trainer_sharding_that_is_no_strategy_names_the_field_and_the_cli_spelling():
    with pytest.raises(
        Exception, match=r"sharding: expected a kd.sharding.ShardingStrategy, got 'kd.sharding.*py::"
    ):
        lib.make_trainer(sharding="kd.sharding.ShardingStrategy()")


def test_inspect_lists_each_split_array_with_its_spec_and_bytes_per_device():
    from kd.inspect import sharding_table

    table = sharding_table(lib.make_trainer())
    assert "mesh: devices 1 (1 device); batches split along 'devices'" in table
    assert "arrays replicated" in table  # one device: nothing is split, nothing listed


def _specs(trainer, strategy):
    shardings = strategy.state_shardings(trainer.state_specs)
    return jax.tree.map(lambda s: tuple(s.spec), shardings, is_leaf=lambda x: isinstance(x, NamedSharding))


def test_a_rule_matching_no_array_names_it_and_the_near_miss():
    strategy = kd.sharding.ShardingStrategy(rules={"params.hiden.kernel": PartitionSpec()})
    with pytest.raises(
        ValueError, match=r"rules\['params.hiden.kernel'\] matches no array.*'params.hidden.kernel'"
    ):
        strategy.state_shardings(lib.make_trainer().state_specs)


def test_a_rule_naming_an_axis_the_mesh_lacks_is_refused():
    strategy = kd.sharding.ShardingStrategy(
        mesh={"data": 1}, rules={"params.**.kernel": PartitionSpec(None, "model")}
    )
    with pytest.raises(ValueError, match=r"names the axis 'model', not one of the mesh's \['data'\]"):
        strategy.state_shardings(lib.make_trainer().state_specs)


def test_a_spec_longer_than_the_arrays_rank_names_the_path():
    strategy = kd.sharding.ShardingStrategy(rules={"params.hidden.bias": PartitionSpec(None, None)})
    with pytest.raises(
        ValueError, match=r"at params.hidden.bias: .* has 2 entries but the array has shape \(16,\)"
    ):
        strategy.state_shardings(lib.make_trainer().state_specs)


def test_the_first_matching_rule_wins():
    trainer = lib.make_trainer()
    strategy = kd.sharding.ShardingStrategy(
        rules={
            "params.hidden.kernel": PartitionSpec(None, None),
            "params.**.kernel": PartitionSpec("devices"),
        }
    )
    specs = _specs(trainer, strategy)
    assert specs.params["hidden"]["kernel"] == (None, None)
    assert all(
        spec == ("devices",)
        for name, module in specs.params.items()
        if name != "hidden"
        for spec in [module["kernel"]]
    )


def test_a_part_may_be_a_function_of_its_tree_returning_specs():
    trainer = lib.make_trainer()
    strategy = kd.sharding.ShardingStrategy(
        params=lambda tree: jax.tree.map(
            lambda leaf: PartitionSpec("devices") if leaf.ndim == 2 else PartitionSpec(), tree
        )
    )
    specs = _specs(trainer, strategy)
    assert specs.params["hidden"]["kernel"] == ("devices",) and specs.params["hidden"]["bias"] == ()
    assert specs.opt_state[0].mu["hidden"]["kernel"] == ("devices",)  # mirrored


def test_a_mesh_of_the_wrong_size_says_how_many_devices_there_are():
    strategy = kd.sharding.ShardingStrategy(mesh={"data": 2, "model": 2})
    with pytest.raises(ValueError, match=r"multiply to 4 devices but there are 1; give one axis -1"):
        strategy.device_mesh  # noqa: B018


@pytest.mark.parametrize(
    ("mesh", "message"),
    [
        ({"data": 0}, "size >= 1"),
        ({"a": -1, "b": -1}, "at most one axis can be -1"),
        ("data", "expected a dict"),
    ],
)
def test_a_malformed_mesh_is_refused_at_construction(mesh, message):
    with pytest.raises(ValueError, match=message):
        kd.sharding.ShardingStrategy(mesh=mesh)


def test_fsdp_keeps_small_arrays_whole_and_splits_the_largest_divisible_dimension():
    fsdp = kd.sharding.FSDPSharding(min_size_to_shard_mb=1)
    assert fsdp.spec((1024, 1024), "float32", axis="data", axis_size=8) == PartitionSpec("data")
    assert fsdp.spec((512, 2048), "float32", axis="data", axis_size=8) == PartitionSpec(None, "data")
    assert fsdp.spec((1023, 2047), "float32", axis="data", axis_size=8) == PartitionSpec()  # none divides
    assert fsdp.spec((256, 256), "float32", axis="data", axis_size=8) == PartitionSpec()  # 256 KiB <= 1 MiB


def test_naming_first_dim_in_a_config_starts_no_jax_backend():
    # A multi-host run loads its config, then calls jax.distributed.initialize (before any backend starts).
    import subprocess
    import sys

    code = (
        "import konfig, jax._src.xla_bridge as xb\n"
        "with konfig.imports():\n"
        "    import kd\n"
        "cfg = kd.train.Trainer(sharding=kd.sharding.ShardingStrategy(batch=kd.sharding.FIRST_DIM))\n"
        "assert not xb.backends_are_initialized(), 'capturing kd.sharding.FIRST_DIM started a backend'\n"
        "strategy = konfig.resolve(cfg.sharding)\n"
        "print(strategy.batch.spec)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "P('devices',)"
