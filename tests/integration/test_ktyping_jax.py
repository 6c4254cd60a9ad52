# ruff: noqa: F821 - single-name shape specs like Float["n"] are not forward references
"""ktyping with JAX: concrete arrays, traced arrays under jit, symbolic dims from jax.export."""

import dataclasses

import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import ktyping  # noqa: E402
from ktyping import Float, Int, KTypeCheckError, PRNGKey, PyTree  # noqa: E402


@ktyping.typechecked
def attend(q: Float["*b n d"], k: Float["*b m d"], v: Float["*b m dv"]) -> Float["*b n dv"]:
    weights = jax.nn.softmax(jnp.einsum("...nd,...md->...nm", q, k), axis=-1)
    ktyping.check_type(weights, Float["*b n m"])
    return jnp.einsum("...nm,...mv->...nv", weights, v)


def test_jax_arrays_are_checked_and_bind_dims() -> None:
    out = attend(jnp.zeros((2, 4, 8)), jnp.zeros((2, 5, 8)), jnp.zeros((2, 5, 3)))
    assert out.shape == (2, 4, 3)
    with pytest.raises(KTypeCheckError, match="argument v"):
        attend(jnp.zeros((2, 4, 8)), jnp.zeros((2, 5, 8)), jnp.zeros((2, 6, 3)))


def test_jax_dtypes_map_to_families() -> None:
    assert isinstance(jnp.zeros(3, jnp.bfloat16), Float["n"])
    assert isinstance(jnp.zeros(3, jnp.uint8), Int["n"])
    assert not isinstance(jnp.zeros(3, jnp.int32), Float["n"])


def test_jit_checks_traced_arrays() -> None:
    jitted = jax.jit(attend)
    assert jitted(jnp.zeros((4, 8)), jnp.zeros((5, 8)), jnp.zeros((5, 3))).shape == (4, 3)
    with pytest.raises(KTypeCheckError, match=r"jax\.f32\[6 3\]\(traced\)"):
        jitted(jnp.zeros((4, 8)), jnp.zeros((5, 8)), jnp.zeros((6, 3)))


class Probe:
    """A static jit argument whose `size` counts how often a spec reads it."""

    def __init__(self, size: int) -> None:
        self._size = size
        self.reads = 0

    @property
    def size(self) -> int:
        self.reads += 1
        return self._size

    def __hash__(self) -> int:
        return id(self)


def test_under_jit_the_check_runs_once_at_trace_time() -> None:
    @ktyping.typechecked
    def step(x: Float["n {probe.size}"], probe: Probe) -> Float["n {probe.size}"]:
        return x * 2

    probe = Probe(3)
    jitted = jax.jit(step, static_argnames="probe")
    for _ in range(5):
        jitted(jnp.ones((2, 3)), probe=probe)
    assert probe.reads == 2  # argument and return, once, while tracing


def test_checks_work_under_vmap() -> None:
    @ktyping.typechecked
    def per_example(x: Float["n d"], w: Float["d"]) -> Float["n"]:
        return x @ w

    assert jax.vmap(per_example)(jnp.zeros((7, 4, 3)), jnp.zeros((7, 3))).shape == (7, 4)


def test_export_symbolic_dims_bind_and_solve_backwards() -> None:
    from jax import export

    @ktyping.typechecked
    def f(x: Float["b 3"], y: Float["b+1"]) -> Float["b"]:
        ktyping.check_type(x[:, 0], Float["b"])
        return x.sum(-1)

    (b,) = export.symbolic_shape("b")
    exported = export.export(jax.jit(f))(
        jax.ShapeDtypeStruct((b, 3), jnp.float32), jax.ShapeDtypeStruct((b + 1,), jnp.float32)
    )
    assert str(exported.out_avals[0].shape[0]) == "b"


def test_export_symbolic_dims_that_disagree_fail() -> None:
    from jax import export

    @ktyping.typechecked
    def f(x: Float["n n"]) -> Float["n"]:
        return x[0]

    a, b = export.symbolic_shape("a, b")
    with pytest.raises(KTypeCheckError, match="argument x"):
        export.export(jax.jit(f))(jax.ShapeDtypeStruct((a, b), jnp.float32))


def test_prng_keys_typed_and_raw() -> None:
    assert isinstance(jax.random.key(0), PRNGKey)
    assert isinstance(jax.random.PRNGKey(0), PRNGKey)
    assert isinstance(jax.random.split(jax.random.key(0), 4), PRNGKey["n"])
    assert not isinstance(jnp.zeros(2), PRNGKey)


def test_pytree_uses_jax_flattening() -> None:
    @ktyping.typechecked
    def f(params: PyTree[Float["d"]]) -> int:
        return len(jax.tree_util.tree_leaves(params))

    assert f({"w": jnp.zeros(3), "b": (jnp.zeros(3),)}) == 2
    with pytest.raises(KTypeCheckError, match="argument params"):
        f({"w": jnp.zeros(3), "b": (jnp.zeros(4),)})


def test_dataclass_built_inside_jit() -> None:
    @ktyping.typechecked
    @dataclasses.dataclass
    class Batch:
        x: Float["b n"]
        y: Int["b"]

    @jax.jit
    def make(x: jax.Array) -> jax.Array:
        return Batch(x, jnp.zeros(x.shape[0], jnp.int32)).x

    assert make(jnp.zeros((2, 3))).shape == (2, 3)


def test_pytree_dataclass_rebuilt_by_jax_is_not_rechecked() -> None:
    struct = pytest.importorskip("flax.struct")

    @ktyping.typechecked
    @struct.dataclass
    class Batch:
        x: Float["b n"]
        y: Float["b"]

    batch = Batch(jnp.zeros((2, 3)), jnp.zeros(2))
    assert jax.vmap(lambda b: b.x.sum() + b.y)(batch).shape == (2,)
    assert jax.tree.map(lambda v: None, batch).x is None
    with pytest.raises(KTypeCheckError, match="field y"):
        Batch(jnp.zeros((2, 3)), jnp.zeros(3))


def test_decorating_a_jitted_function_checks_its_calls() -> None:
    def total(x: Float["b n"]) -> Float["b"]:
        return x.sum(-1)

    checked = ktyping.typechecked(jax.jit(total))
    assert checked(jnp.zeros((2, 3))).shape == (2,)
    with pytest.raises(KTypeCheckError, match=r"argument x = jax.f32\[2\]"):
        checked(jnp.zeros(2))


def test_numpy_arrays_of_ml_dtypes_bfloat16_count_as_float() -> None:
    import numpy as np

    x = np.zeros((2, 3), jnp.bfloat16)  # numpy array with the ml_dtypes extension dtype
    assert isinstance(x, Float["b n"])
    assert isinstance(x, ktyping.BFloat16["b n"])
    assert not isinstance(x, ktyping.Float32["b n"])
    assert not isinstance(x, Int["b n"])


def test_vmap_of_a_checked_function_with_an_unbatched_argument() -> None:
    @ktyping.typechecked
    def per_example(x: Float["n d"], w: Float["d"]) -> Float["n"]:
        return x @ w

    out = jax.vmap(per_example, in_axes=(0, None))(jnp.zeros((7, 4, 3)), jnp.zeros(3))
    assert out.shape == (7, 4)
    with pytest.raises(KTypeCheckError, match=r"argument w = jax.f32\[2\]\(traced\)"):
        jax.vmap(per_example)(jnp.zeros((7, 4, 3)), jnp.zeros((7, 2)))
