"""kd.contrib.nn.KdNnxModule / LinenModuleFromNnxDef: NNX modules built, applied and trained through linen's API."""

from __future__ import annotations

import dataclasses
import functools
import warnings

import jax
import jax.numpy as jnp
import kd
import numpy as np
import optax
import pytest
from flax import nnx

KdNnxModule = kd.contrib.nn.KdNnxModule
LinenModuleFromNnxDef = kd.contrib.nn.LinenModuleFromNnxDef


@dataclasses.dataclass(kw_only=True)
class Regressor(KdNnxModule):
    """Linear -> dropout -> linear, sowing its hidden values."""

    din: int = 2
    hidden: int = 64
    dropout: float = 0.5

    def setup(self, rngs: nnx.Rngs | None = None) -> None:
        self.up = nnx.Linear(self.din, self.hidden, rngs=rngs)
        self.drop = nnx.Dropout(self.dropout, rngs=rngs)
        self.down = nnx.Linear(self.hidden, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        hidden = nnx.relu(self.up(x))
        self.sow(nnx.Intermediate, "hidden", hidden)
        return self.down(self.drop(hidden))

    def features(self, x: jax.Array) -> jax.Array:
        return self.up(x)


@dataclasses.dataclass(kw_only=True)
class Normed(KdNnxModule):
    """A BatchNorm: its running statistics are variables other than params."""

    def setup(self, rngs: nnx.Rngs | None = None) -> None:
        self.norm = nnx.BatchNorm(3, momentum=0.5, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.norm(x)


class PlainNnx(nnx.Module):
    """An NNX module written with no knowledge of kd."""

    def __init__(self, din: int, dout: int, rngs: nnx.Rngs) -> None:
        self.linear = nnx.Linear(din, dout, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear(x)


X = jnp.linspace(-1.0, 1.0, 16, dtype=jnp.float32).reshape(8, 2)
KEYS = {"params": kd.random.PRNGKey(0), "dropout": kd.random.PRNGKey(1)}


def _init(module: KdNnxModule, rngs=None) -> dict:
    return module.init(KEYS if rngs is None else rngs, X)


def _data(leaf):
    """A leaf's numbers (a typed key array's key data)."""
    return jax.random.key_data(leaf) if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key) else leaf


def _same(a, b) -> bool:
    return all(jax.tree.leaves(jax.tree.map(lambda u, v: bool(np.array_equal(_data(u), _data(v))), a, b)))


# ---------------------------------------------------------------------------------------------- init


def test_init_gives_linen_collections_with_params_as_plain_arrays():
    variables = _init(Regressor())
    assert set(variables) == {"params", "nnx", "intermediates"}
    assert set(variables["nnx"]) == {"graphdef", "rng_vars", "attributes"}
    assert jax.tree.map(jnp.shape, variables["params"]) == {
        "up": {"kernel": (2, 64), "bias": (64,)},
        "down": {"kernel": (64, 1), "bias": (1,)},
    }
    assert variables["intermediates"] == {}


def test_init_leaves_the_module_a_configuration():
    module = Regressor()
    _init(module)
    assert not hasattr(module, "up")  # a copy was built, not the module itself


def test_init_takes_kd_keys_jax_keys_and_seeds_alike():
    from_kd = _init(Regressor(), {"params": kd.random.PRNGKey(0), "dropout": kd.random.PRNGKey(1)})
    from_raw = _init(Regressor(), {"params": jax.random.PRNGKey(0), "dropout": jax.random.PRNGKey(1)})
    from_typed = _init(Regressor(), {"params": jax.random.key(0), "dropout": jax.random.key(1)})
    from_seed = _init(Regressor(), {"params": 0, "dropout": 1})
    assert _same(from_kd, from_raw) and _same(from_kd, from_typed) and _same(from_kd, from_seed)


def test_init_is_deterministic_and_depends_on_the_params_key():
    first, again = _init(Regressor())["params"], _init(Regressor())["params"]
    other = _init(Regressor(), {**KEYS, "params": kd.random.PRNGKey(7)})["params"]
    assert _same(first, again)
    assert not np.array_equal(first["up"]["kernel"], other["up"]["kernel"])


def test_a_single_key_seeds_every_stream():
    assert _same(_init(Regressor(), jax.random.key(3)), _init(Regressor(), {"default": jax.random.key(3)}))


# ---------------------------------------------------------------------------------------------- apply


def test_apply_computes_what_the_nnx_module_computes():
    module = LinenModuleFromNnxDef(nnx_init=functools.partial(PlainNnx, din=2, dout=3))
    variables = module.init({"params": jax.random.key(4)}, X)
    direct = PlainNnx(din=2, dout=3, rngs=nnx.Rngs(params=jax.random.key(4)))
    np.testing.assert_allclose(module.apply(variables, X), direct(X), rtol=1e-6)


def test_apply_calls_a_method_named_or_given():
    module = Regressor()
    variables = _init(module)
    by_name = module.apply(variables, X, method="features")
    by_function = module.apply(variables, X, method=Regressor.features)
    assert by_name.shape == (8, 64)
    np.testing.assert_array_equal(by_name, by_function)


def test_the_same_dropout_key_gives_the_same_output_and_another_key_another():
    module = Regressor()
    variables = _init(module)
    first = module.apply(variables, X, rngs={"dropout": kd.random.PRNGKey(1)})
    again = module.apply(variables, X, rngs={"dropout": kd.random.PRNGKey(1)})
    other = module.apply(variables, X, rngs={"dropout": kd.random.PRNGKey(2)})
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first, other)


def test_the_output_does_not_depend_on_how_often_the_variables_were_applied_before():
    module = Regressor()
    variables = _init(module)
    _, advanced = module.apply(variables, X, rngs={"dropout": jax.random.key(5)}, mutable=True)
    np.testing.assert_array_equal(
        module.apply(variables, X, rngs={"dropout": jax.random.key(9)}),
        module.apply(advanced, X, rngs={"dropout": jax.random.key(9)}),
    )


def test_evaluation_turns_dropout_off():
    module = Regressor()
    variables = _init(module)
    outputs = [
        module.apply(variables, X, rngs={"dropout": jax.random.key(seed)}, is_training_property=False)
        for seed in (1, 2)
    ]
    np.testing.assert_array_equal(outputs[0], outputs[1])


def test_kds_training_mode_is_followed_when_the_call_does_not_say():
    module = Regressor()
    variables = _init(module)
    with kd.nn.training_mode(False):
        evaluated = module.apply(variables, X, rngs={"dropout": jax.random.key(1)})
    np.testing.assert_array_equal(evaluated, module.apply(variables, X, is_training_property=False))


def test_without_mutable_only_the_output_comes_back():
    out = Regressor().apply(_init(Regressor()), X)
    assert isinstance(out, jax.Array) and out.shape == (8, 1)


def test_mutable_returns_the_updated_running_statistics_in_training_only():
    module = Normed()
    variables = module.init({"params": jax.random.key(0)}, X)
    batch = jnp.full((4, 3), 2.0)
    _, trained = module.apply(variables, batch, mutable=True)
    _, evaluated = module.apply(variables, batch, mutable=True, is_training_property=False)
    # momentum 0.5: the running mean moves halfway from 0 to the batch's mean, 2
    np.testing.assert_allclose(trained["nnx"]["attributes"]["norm"]["mean"], np.full(3, 1.0))
    np.testing.assert_array_equal(evaluated["nnx"]["attributes"]["norm"]["mean"], np.zeros(3))


def test_mutable_names_the_collections_returned():
    module = Regressor()
    _, updated = module.apply(_init(module), X, mutable=["nnx"])
    assert set(updated) == {"nnx"}


def test_capture_intermediates_returns_the_sown_values():
    module = Regressor()
    variables = _init(module)
    _, captured = module.apply(variables, X, mutable=True, capture_intermediates=True)
    _, plain = module.apply(variables, X, mutable=True)
    (hidden,) = captured["intermediates"]["hidden"]
    assert hidden.shape == (8, 64)
    assert plain["intermediates"] == {}


def test_sowing_raises_no_deprecation_warning():
    module = Regressor()
    variables = _init(module)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module.apply(variables, X, mutable=True, capture_intermediates=True)


def test_a_module_with_a_fixed_structure_keeps_its_graphdef():
    @dataclasses.dataclass(kw_only=True)
    class Fixed(Regressor):
        __dynamic_module__ = False

    module = Fixed()
    variables = _init(module)
    _, updated = module.apply(variables, X, mutable=True)
    assert updated["nnx"]["graphdef"] is variables["nnx"]["graphdef"]
    assert _same(updated["params"], variables["params"])


# ---------------------------------------------------------------------------------------------- training


def test_training_through_the_linen_interface_fits_a_regression():
    module = Regressor(dropout=0.0)
    variables = _init(module)
    y = 0.5 * X[:, :1] - X[:, 1:]
    optimizer = optax.adam(1e-2)

    def loss(params, key):
        preds = module.apply({**variables, "params": params}, X, rngs={"dropout": key})
        return jnp.mean((preds - y) ** 2)

    @jax.jit
    def step(params, opt_state, key):
        value, grads = jax.value_and_grad(loss)(params, key)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    params, opt_state = variables["params"], optimizer.init(variables["params"])
    first = None
    for i in range(200):
        params, opt_state, value = step(params, opt_state, jax.random.key(i))
        first = value if first is None else first
    assert float(value) < 0.01 * float(first)


def test_apply_runs_under_jit_with_the_variables_as_an_argument():
    module = Regressor()
    variables = _init(module)
    apply = jax.jit(lambda v, x: module.apply(v, x, is_training_property=False, mutable=True))
    out, updated = apply(variables, X)
    np.testing.assert_allclose(out, module.apply(variables, X, is_training_property=False), rtol=1e-6)
    assert set(updated) == {"params", "nnx", "intermediates"}


# ---------------------------------------------------------------------------------------------- LinenModuleFromNnxDef


def test_a_wrapped_nnx_module_has_its_params_under_module():
    module = LinenModuleFromNnxDef(nnx_init=functools.partial(PlainNnx, din=2, dout=3))
    variables = module.init({"params": kd.random.PRNGKey(0)}, X)
    assert jax.tree.map(jnp.shape, variables["params"]) == {
        "module": {"linear": {"kernel": (2, 3), "bias": (3,)}}
    }
    assert module.apply(variables, X).shape == (8, 3)


def test_a_builder_without_rngs_is_called_without_them():
    def build() -> nnx.Module:
        return PlainNnx(2, 4, rngs=nnx.Rngs(11))

    module = LinenModuleFromNnxDef(nnx_init=build)
    variables = module.init({"params": jax.random.key(0)}, X)
    expected = PlainNnx(2, 4, rngs=nnx.Rngs(11)).linear.kernel[...]
    np.testing.assert_array_equal(variables["params"]["module"]["linear"]["kernel"], expected)


def test_a_type_error_inside_the_builder_is_not_hidden():
    def build(rngs: nnx.Rngs) -> nnx.Module:
        raise TypeError("bad shape")

    with pytest.raises(TypeError, match="bad shape"):
        LinenModuleFromNnxDef(nnx_init=build).init({"params": jax.random.key(0)}, X)


# ---------------------------------------------------------------------------------------------- errors


def test_a_module_without_setup_says_what_to_define():
    @dataclasses.dataclass(kw_only=True)
    class NoSetup(KdNnxModule):
        pass

    with pytest.raises(NotImplementedError, match=r"NoSetup must define `setup\(self, rngs\)`"):
        NoSetup().init({"params": jax.random.key(0)}, X)


def test_a_setup_without_rngs_warns_that_the_keys_are_unused():
    @dataclasses.dataclass(kw_only=True)
    class Fixed(KdNnxModule):
        def setup(self) -> None:
            self.linear = nnx.Linear(2, 2, rngs=nnx.Rngs(0))

        def __call__(self, x):
            return self.linear(x)

    with pytest.warns(UserWarning, match="takes no `rngs`"):
        variables = Fixed().init({"params": jax.random.key(0)}, X)
    assert Fixed().apply(variables, X).shape == (8, 2)


def test_a_key_of_the_wrong_type_names_the_stream():
    with pytest.raises(TypeError, match=r"rngs\['dropout'\] is a str"):
        Regressor().init({"params": jax.random.key(0), "dropout": "seed"}, X)


def test_an_unknown_method_name_is_an_attribute_error():
    module = Regressor()
    with pytest.raises(AttributeError, match="Regressor has no method 'encode'"):
        module.apply(_init(module), X, method="encode")


def test_kauldrons_module_path_gives_these_classes():
    installed_before = kd.kauldron_alias.is_installed()
    kd.kauldron_alias.install()
    try:
        from kauldron.contrib.modules import knnx

        assert knnx.KdNnxModule is KdNnxModule
        assert knnx.LinenModuleFromNnxDef is LinenModuleFromNnxDef
    finally:
        if not installed_before:
            kd.kauldron_alias.uninstall()
