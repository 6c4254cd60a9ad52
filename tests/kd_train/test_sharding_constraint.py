"""kd.sharding.with_sharding_constraint: a tree of None / Sharding / lazy shardings, on arrays and specs."""

from __future__ import annotations

import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import kd
import numpy as np
import pytest

_IN_AND_OUT_OF_JIT = pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])


def _apply(x, sharding, jit):
    function = lambda x: kd.sharding.with_sharding_constraint(x, sharding)  # noqa: E731
    return jax.jit(function)(x) if jit else function(x)


def _subtree_is_inner(subtree):
    assert jax.tree.structure(subtree) == jax.tree.structure({"inner": 0})
    return kd.sharding.replicated()


@_IN_AND_OUT_OF_JIT
def test_a_tree_of_shardings_none_and_functions_keeps_the_values_and_structure(jit):
    # Kauldron's test_with_sharding_constraint: a function receives the subtree it stands for.
    x = {"a": {"inner": jnp.ones((1, 2))}, "b": {"inner": jnp.ones((2, 3))}, "c": {"inner": jnp.ones((2, 3))}}
    sharding = {"a": kd.sharding.replicated(), "b": None, "c": _subtree_is_inner}
    out = _apply(x, sharding, jit)
    assert jax.tree.structure(out) == jax.tree.structure(x)
    jax.tree.map(np.testing.assert_array_equal, out, x)


def test_shape_dtype_structs_get_the_sharding_and_none_keeps_theirs():
    # Kauldron's test_with_sharding_constraint_shape_dtype_struct.
    repl = kd.sharding.replicated()
    x = {
        "a": {"inner": jax.ShapeDtypeStruct((1, 2), jnp.float32)},
        "b": {"inner": jax.ShapeDtypeStruct((2, 3), jnp.float32)},
        "c": {"inner": jax.ShapeDtypeStruct((2, 3), jnp.float32)},
    }
    out = kd.sharding.with_sharding_constraint(x, {"a": repl, "b": None, "c": _subtree_is_inner})
    assert out == {
        "a": {"inner": jax.ShapeDtypeStruct((1, 2), jnp.float32, sharding=repl)},
        "b": {"inner": jax.ShapeDtypeStruct((2, 3), jnp.float32, sharding=None)},
        "c": {"inner": jax.ShapeDtypeStruct((2, 3), jnp.float32, sharding=repl)},
    }


def test_a_shape_dtype_struct_keeps_its_shape_dtype_and_weak_type():
    spec = jax.ShapeDtypeStruct((4,), jnp.bfloat16, weak_type=True)
    out = kd.sharding.with_sharding_constraint(spec, kd.sharding.first_dim())
    assert (out.shape, out.dtype, out.weak_type) == ((4,), jnp.bfloat16, True)
    assert out.sharding == kd.sharding.first_dim()


def test_one_sharding_applies_to_a_whole_tree_of_arrays_and_specs():
    tree = {"array": jnp.zeros((2, 2)), "spec": jax.ShapeDtypeStruct((2,), jnp.int32)}
    out = kd.sharding.with_sharding_constraint(tree, kd.sharding.replicated())
    assert out["array"].sharding == kd.sharding.replicated()
    assert out["spec"].sharding == kd.sharding.replicated()


def test_the_named_constants_mean_the_default_mesh_shardings():
    x = {"a": jax.ShapeDtypeStruct((2,), jnp.float32), "b": jax.ShapeDtypeStruct((2,), jnp.float32)}
    out = kd.sharding.with_sharding_constraint(x, {"a": kd.sharding.FIRST_DIM, "b": kd.sharding.REPLICATED})
    assert out["a"].sharding == kd.sharding.first_dim()
    assert out["b"].sharding == kd.sharding.replicated()


def test_none_returns_the_value_itself():
    x = {"a": jnp.ones(3)}
    assert kd.sharding.with_sharding_constraint(x, None)["a"] is x["a"]


def test_a_function_may_return_a_tree_for_its_subtree():
    x = {"params": {"kernel": jax.ShapeDtypeStruct((4, 2), jnp.float32), "bias": jnp.zeros(2)}}
    out = kd.sharding.with_sharding_constraint(
        x, {"params": lambda sub: {"kernel": kd.sharding.first_dim(), "bias": None}}
    )
    assert out["params"]["kernel"].sharding == kd.sharding.first_dim()
    assert out["params"]["bias"] is x["params"]["bias"]


def test_a_sharding_tree_that_is_no_prefix_of_the_value_is_an_error():
    x = {"a": {"inner": jnp.ones(2)}, "b": jnp.ones(2)}
    with pytest.raises(ValueError, match=r"prefix of the value's tree.*Dict key mismatch"):
        kd.sharding.with_sharding_constraint(x, {"a": None})


def test_a_leaf_that_is_no_sharding_is_an_error_with_the_nearest_name():
    with pytest.raises(TypeError, match=r"got 'replicatd'; did you mean 'replicated'\?"):
        kd.sharding.with_sharding_constraint({"a": jnp.ones(2)}, {"a": "replicatd"})


_FOUR_DEVICES = """
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
import kd

mesh = kd.sharding.first_dim().mesh
columns = NamedSharding(mesh, P(None, "devices"))
x = {"rows": jnp.arange(16.0).reshape(8, 2), "cols": jnp.ones((2, 8)), "kept": jnp.ones((4, 4))}
shardings = {"rows": kd.sharding.FIRST_DIM, "cols": lambda sub: columns, "kept": None}

def constrain(x):
    return kd.sharding.with_sharding_constraint(x, shardings)

def with_mesh_spec(x):
    with jax.set_mesh(mesh):  # a PartitionSpec names axes of the context mesh, as in JAX
        return jax.jit(lambda x: kd.sharding.with_sharding_constraint(x, {"rows": P("devices")}))({"rows": x["rows"]})

def describe(tree):
    return {
        name: {
            "spec": str(a.sharding.spec) if isinstance(a.sharding, NamedSharding) else None,
            "shard_shapes": sorted({tuple(s.data.shape) for s in a.addressable_shards}),
            "devices": len(a.sharding.device_set),
            "values": np.asarray(a).tolist(),
        }
        for name, a in tree.items()
    }

print(json.dumps({
    "device_count": jax.device_count(),
    "eager": describe(constrain(x)),
    "jit": describe(jax.jit(constrain)(x)),
    "partition_spec": describe(with_mesh_spec(x)),
}))
"""


@pytest.fixture(scope="module")
def four_devices() -> dict:
    proc = subprocess.run([sys.executable, "-c", _FOUR_DEVICES], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_on_four_devices_arrays_are_split_as_constrained(four_devices, mode):
    assert four_devices["device_count"] == 4
    out = four_devices[mode]
    assert out["rows"]["spec"] == str(jax.sharding.PartitionSpec("devices"))
    assert out["rows"]["shard_shapes"] == [[2, 2]]
    assert out["cols"]["spec"] == str(jax.sharding.PartitionSpec(None, "devices"))
    assert out["cols"]["shard_shapes"] == [[2, 2]]
    assert out["rows"]["values"] == np.arange(16.0).reshape(8, 2).tolist()
    assert out["cols"]["values"] == np.ones((2, 8)).tolist()


def test_on_four_devices_none_leaves_an_array_where_it_was(four_devices):
    # Unconstrained, the eager array stays on its one device.
    assert four_devices["eager"]["kept"]["devices"] == 1
    assert four_devices["eager"]["kept"]["shard_shapes"] == [[4, 4]]


def test_on_four_devices_a_partition_spec_applies_on_the_context_mesh(four_devices):
    rows = four_devices["partition_spec"]["rows"]
    assert rows["spec"] == str(jax.sharding.PartitionSpec("devices"))
    assert rows["shard_shapes"] == [[2, 2]]
