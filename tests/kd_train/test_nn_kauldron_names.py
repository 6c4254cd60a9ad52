"""Kauldron's `kd.nn` names: layers checked against NumPy / einops, the training mode, intermediates."""

from __future__ import annotations

import einops
import jax
import jax.numpy as jnp
import kd
import kontext
import numpy as np
import pytest
import train_fixtures as lib
from flax import linen as nn
from precision import highest

KEY = jax.random.PRNGKey(0)

# ---------------------------------------------------------------- Fourier features / embedding


def _fourier_reference(coords: np.ndarray, degree: int) -> np.ndarray:
    """[sin(2^i x_d) for i, d] then [cos(...)], i the outer loop: the NeRF encoding, in NumPy."""
    scaled = np.concatenate([coords * 2.0**i for i in range(degree)], axis=-1)
    return np.concatenate([np.sin(scaled), np.cos(scaled)], axis=-1)


def test_fourier_features_match_the_nerf_formula():
    coords = np.random.default_rng(0).uniform(-np.pi, np.pi, size=(5, 7, 3)).astype(np.float32)
    got = kd.nn.convert_to_fourier_features(jnp.asarray(coords), basis_degree=4)
    assert got.shape == (5, 7, 2 * 3 * 4)
    np.testing.assert_allclose(np.asarray(got), _fourier_reference(coords, 4), atol=2e-5)


def test_fourier_features_reject_a_degree_below_one():
    with pytest.raises(ValueError, match=r"basis_degree=0.*int >= 1"):
        kd.nn.convert_to_fourier_features(jnp.ones((2, 2)), basis_degree=0)


def test_fourier_embedding_is_the_dense_projection_of_the_grid_features():
    shape = (2, 4, 3, 6)  # (b, h, w, d): embedded over h and w
    emb = kd.nn.FourierEmbedding(num_fourier_bases=3)
    variables = emb.init(KEY, shape, axis=(-3, -2))
    with highest():  # compared with a float64 reference
        out = emb.apply(variables, shape, axis=(-3, -2))

    h, w = np.meshgrid(np.linspace(-np.pi, np.pi, 4), np.linspace(-np.pi, np.pi, 3), indexing="ij")
    features = _fourier_reference(np.stack([h, w], axis=-1), 3)  # (4, 3, 12)
    dense = variables["params"]["dense_pe"]
    expected = features @ np.asarray(dense["kernel"]) + np.asarray(dense["bias"])
    assert out.shape == shape
    np.testing.assert_allclose(np.asarray(out[1]), expected, atol=1e-4)
    np.testing.assert_array_equal(np.asarray(out[0]), np.asarray(out[1]))  # the same for every example


def test_add_embedding_adds_the_embedding_of_the_inputs_shape():
    tokens = jax.random.normal(KEY, (2, 5, 8))
    add = kd.nn.AddEmbedding(emb=kd.nn.LearnedEmbedding(), axis=-2)
    variables = add.init(KEY, tokens)
    table = np.asarray(variables["params"]["emb"]["embeddings"])
    assert table.shape == (5, 8)
    np.testing.assert_allclose(
        np.asarray(add.apply(variables, tokens)), np.asarray(tokens) + table, rtol=1e-6
    )


def test_add_learned_embedding_warns_and_adds_one_vector_per_token():
    tokens = jnp.zeros((3, 4, 2))
    with pytest.warns(DeprecationWarning, match="AddEmbedding"):
        variables = kd.nn.AddLearnedEmbedding().init(KEY, tokens)
    table = np.asarray(variables["params"]["embeddings"])
    assert table.shape == (4, 2)
    with pytest.warns(DeprecationWarning):
        out = kd.nn.AddLearnedEmbedding().apply(variables, tokens)
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(table, (3, 4, 2)))


# ---------------------------------------------------------------- Rearrange / Reduce / Identity / DummyModel


def test_rearrange_is_einops_rearrange():
    x = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)
    layer = kd.nn.Rearrange(pattern="b (h p) w c -> b h (w p c)", axes_lengths={"p": 2})
    out = layer.apply({}, jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), einops.rearrange(x, "b (h p) w c -> b h (w p c)", p=2))
    # and, independently of einops: splitting h into (2, 2) then moving p next to c.
    expected = x.reshape(2, 2, 2, 6, 3).transpose(0, 1, 3, 2, 4).reshape(2, 2, 36)
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize(
    ("reduction", "numpy_fn"),
    [("mean", np.mean), ("max", np.max), ("min", np.min), ("sum", np.sum), ("prod", np.prod)],
)
def test_reduce_pools_like_numpy(reduction, numpy_fn):
    x = np.random.default_rng(1).uniform(0.5, 1.5, size=(2, 5, 3)).astype(np.float32)
    out = kd.nn.Reduce(pattern="b n d -> b d", reduction=reduction).apply({}, jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(out), numpy_fn(x, axis=1), rtol=1e-5)


def test_reduce_names_the_near_miss_of_an_unknown_reduction():
    with pytest.raises(ValueError, match=r"reduction='maen'.*did you mean 'mean'"):
        kd.nn.Reduce(pattern="b n d -> b d", reduction="maen")


def test_identity_returns_its_first_input_and_is_captured_by_name():
    x = jnp.arange(6.0).reshape(2, 3)

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            return kd.nn.Identity(name="features")(x * 2, "ignored", also="ignored")

    out, state = Net().apply({}, x, capture_intermediates=True, mutable=["intermediates"])
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) * 2)
    np.testing.assert_array_equal(
        np.asarray(state["intermediates"]["features"]["__call__"][0]), np.asarray(x) * 2
    )


def test_dummy_model_ignores_its_input_and_gives_logits_of_42():
    out = kd.nn.DummyModel(inputs="batch.image").apply({}, jnp.ones((3, 8)))
    assert set(out) == {"logits"}
    np.testing.assert_array_equal(np.asarray(out["logits"]), [42.0])
    assert kontext.get_keypaths(kd.nn.DummyModel(inputs="batch.image")) == {"inputs": "batch.image"}


# ---------------------------------------------------------------- Sequential / WrapperModule


def test_sequential_composes_the_layers_in_order_and_names_the_output():
    x = jax.random.normal(KEY, (4, 3))
    model = kd.nn.Sequential(inputs="batch.x", outputs="logits", layers=[nn.Dense(5), nn.relu, nn.Dense(2)])
    variables = model.init(KEY, x)
    p = variables["params"]
    assert set(p) == {"layers_0", "layers_2"}
    hidden = np.maximum(
        np.asarray(x) @ np.asarray(p["layers_0"]["kernel"]) + np.asarray(p["layers_0"]["bias"]), 0
    )
    expected = hidden @ np.asarray(p["layers_2"]["kernel"]) + np.asarray(p["layers_2"]["bias"])
    with highest():  # compared with a float64 reference
        out = model.apply(variables, x)
    assert set(out) == {"logits"}
    np.testing.assert_allclose(np.asarray(out["logits"]), expected, rtol=1e-5, atol=1e-6)


def test_sequential_spreads_tuples_and_mappings_into_the_next_layer():
    model = kd.nn.Sequential(
        inputs="batch.x",
        layers=[lambda x: (x, 2 * x), lambda a, b: {"a": a, "b": b}, lambda a, b: a - 3 * b],
    )
    np.testing.assert_array_equal(np.asarray(model.apply({}, jnp.ones(3))), [-5.0, -5.0, -5.0])


def test_sequential_from_repeated_copies_or_shares_the_weights():
    x = jnp.ones((2, 4))
    copies = kd.nn.Sequential.from_repeated(nn.Dense(4), 3, inputs="batch.x", suffix=[nn.Dense(1)])
    assert set(copies.init(KEY, x)["params"]) == {"layers_0", "layers_1", "layers_2", "layers_3"}
    dense = nn.Dense(4)
    shared = kd.nn.Sequential.from_repeated(dense, 3, shared_weights=True, inputs="batch.x")
    assert all(layer is dense for layer in shared.layers)
    with pytest.raises(ValueError, match=r"repeats=-1"):
        kd.nn.Sequential.from_repeated(dense, -1)


def test_sequential_is_a_trainer_model_reading_its_inputs_key():
    trainer = lib.make_trainer(model=kd.nn.Sequential(inputs="batch.x", layers=[nn.Dense(1)]))
    state = trainer.init_state()
    assert set(state.params) == {"layers_0"}
    assert state.params["layers_0"]["kernel"].shape == (2, 1)


def test_wrapper_module_is_transparent_for_params_and_keys():
    class Net(nn.Module):
        x: kontext.Key = "batch.x"

        @nn.compact
        def __call__(self, x):
            return nn.Dense(3, name="out")(x)

    wrapped = kd.nn.WrapperModule(model=Net())
    x = jax.random.normal(KEY, (2, 4))
    variables = wrapped.init(KEY, x)
    assert set(variables["params"]) == {"out"}  # not {"model": {"out": ...}}
    assert kontext.get_keypaths(wrapped) == {"x": "batch.x"}
    np.testing.assert_array_equal(
        np.asarray(wrapped.apply(variables, x)), np.asarray(Net().apply(variables, x))
    )


def test_wrapper_subclass_changes_the_call_and_keeps_the_params():
    class Doubled(kd.nn.WrapperModule):
        def __call__(self, *args, **kwargs):
            return 2 * self.model(*args, **kwargs)

    x = jnp.ones((5,))
    variables = Doubled(model=nn.Dense(2)).init(KEY, x)
    assert list(variables["params"]) == ["kernel", "bias"]
    np.testing.assert_allclose(
        np.asarray(Doubled(model=nn.Dense(2)).apply(variables, x)),
        2 * np.asarray(nn.Dense(2).apply(variables, x)),
        rtol=1e-6,
    )


# ---------------------------------------------------------------- training mode


def test_dropout_follows_is_training_property():
    x = jnp.ones((64,))
    train = kd.nn.Dropout(0.5).apply({}, x, is_training_property=True, rngs={"dropout": KEY})
    evaluation = kd.nn.Dropout(0.5).apply({}, x, is_training_property=False)
    assert set(np.unique(np.asarray(train))) == {0.0, 2.0}  # dropped, or scaled by 1 / (1 - rate)
    np.testing.assert_array_equal(np.asarray(evaluation), np.asarray(x))


def test_dropout_equals_flax_dropout_with_the_same_key():
    x = jax.random.normal(KEY, (32,))
    ours = kd.nn.Dropout(0.3).apply({}, x, is_training_property=True, rngs={"dropout": KEY})
    flax_one = nn.Dropout(0.3, deterministic=False).apply({}, x, rngs={"dropout": KEY})
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(flax_one))


def test_dropout_refuses_deterministic():
    with pytest.raises(ValueError, match=r"deterministic=True.*leave `deterministic` unset"):
        kd.nn.Dropout(0.5, deterministic=True)


class _Switching(nn.Module):
    """Dropout on everything, then `set_train_property(False)` for a second copy: only one is dropped."""

    is_training = kd.nn.train_property()

    @nn.compact
    def __call__(self, x):
        dropped = kd.nn.Dropout(0.5)(x)
        with kd.nn.set_train_property(False):
            kept = kd.nn.Dropout(0.5)(x)
            assert self.is_training is False
        return dropped, kept, self.is_training


def test_set_train_property_switches_dropout_inside_a_forward_pass():
    x = jnp.ones((64,))
    dropped, kept, mode = _Switching().apply({}, x, is_training_property=True, rngs={"dropout": KEY})
    assert mode is True  # restored after the block
    assert (np.asarray(dropped) == 0).any()
    np.testing.assert_array_equal(np.asarray(kept), np.asarray(x))


def test_set_train_property_takes_only_a_bool():
    with pytest.raises(ValueError, match=r"expects a bool.*int32"), kd.nn.set_train_property(np.int32(1)):
        pass
    with pytest.raises(kd.nn.TrainingModeError):
        _Switching().apply({}, jnp.ones(2), is_training_property="yes")


def test_a_class_with_train_property_takes_is_training_property_and_flax_is_untouched():
    assert _Switching.apply is not nn.Module.apply
    assert nn.Module.apply.__module__ == "flax.linen.module"
    with pytest.raises(TypeError):  # a plain flax module is not given the argument
        nn.Dense(2).init(KEY, jnp.ones(2), is_training_property=True)


def test_train_property_unbound_and_unset_raise_a_value_error_that_is_also_a_runtime_error():
    with pytest.raises(ValueError, match=r"`is_training` property can only be called"):
        _Switching().is_training  # noqa: B018
    with pytest.raises(RuntimeError, match=r"`is_training_property=` kwargs was not set"):
        _Switching().init({}, jnp.ones(2))


def test_is_training_property_and_training_mode_set_the_same_mode():
    x = jnp.ones((64,))
    with kd.nn.training_mode(True):
        from_context = kd.nn.Dropout(0.5).apply({}, x, rngs={"dropout": KEY})
    from_kwarg = kd.nn.Dropout(0.5).apply({}, x, is_training_property=True, rngs={"dropout": KEY})
    np.testing.assert_array_equal(np.asarray(from_context), np.asarray(from_kwarg))
    with kd.nn.training_mode(True):  # the argument wins for its call
        off = kd.nn.Dropout(0.5).apply({}, x, is_training_property=False)
        assert kd.nn.is_training() is True
    np.testing.assert_array_equal(np.asarray(off), np.asarray(x))


def test_external_module_passes_the_mode_from_is_training_property():
    model = kd.nn.ExternalModule(
        model=nn.Dropout(0.5), keys={"inputs": "a"}, train_kwarg_name="~deterministic"
    )
    kwargs = kontext.resolve_from_keyed_obj({"a": jnp.ones((8, 8)), "b": jnp.zeros(())}, model)
    train = model.apply({}, **kwargs, is_training_property=True, rngs={"dropout": KEY})
    np.testing.assert_array_equal(
        np.asarray(model.apply({}, **kwargs, is_training_property=False)), np.ones((8, 8))
    )
    assert (np.asarray(train) == 0).any()


def test_kd_dropout_in_a_trainer_model_is_on_in_training_only():
    model = kd.nn.Sequential(inputs="batch.x", layers=[kd.nn.Dropout(0.5)])
    trainer = lib.make_trainer(model=model)
    state = trainer.init_state()
    batch = {"x": jnp.ones((8, 2)), "y": jnp.zeros((8, 1))}
    train = trainer.trainstep.forward(state.params, state.collections, batch, state.step, is_training=True)
    evaluation = trainer.trainstep.forward(
        state.params, state.collections, batch, state.step, is_training=False
    )
    assert (np.asarray(train.preds) == 0).any()
    np.testing.assert_array_equal(np.asarray(evaluation.preds), np.ones((8, 2)))


# ---------------------------------------------------------------- interms_property


class _Recorder(nn.Module):
    """Records `hidden` (3 x the output of `hidden_layer`) with `self.interms`."""

    x: kontext.Key = "batch.x"
    interms = kd.nn.interms_property()

    @nn.compact
    def __call__(self, x):
        h = 3 * nn.Dense(4, name="hidden_layer")(x)
        self.interms["hidden"] = h
        return nn.Dense(1, name="out")(h)


class _ReadsBack(nn.Module):
    """Records `h`, then reads it back, and its child's output by relative and absolute path."""

    interms = kd.nn.interms_property()

    @nn.compact
    def __call__(self, x):
        self.interms["h"] = nn.Dense(3, name="dense")(x)
        return (
            self.interms["h"],
            self.interms.get_by_path(".dense.__call__[0]"),
            self.interms.get_by_path("dense.__call__[0]"),
        )


def test_interms_property_reads_back_what_it_recorded_and_children_by_path():
    x = jax.random.normal(KEY, (2, 4))
    params = _ReadsBack().init(KEY, x, mutable=True, capture_intermediates=True)["params"]
    (h, relative, absolute), state = _ReadsBack().apply(
        {"params": params}, x, mutable=["intermediates"], capture_intermediates=True
    )
    expected = np.asarray(nn.Dense(3).apply({"params": params["dense"]}, x))
    for got in (h, relative, absolute, state["intermediates"]["h"][0]):
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


def test_interms_property_is_read_by_a_trainer_key():
    trainer = lib.make_trainer(model=_Recorder(), train_metrics={"h": lib.Mean(values="interms.hidden[0]")})
    state = trainer.init_state()
    batch = {"x": jax.random.normal(KEY, (8, 2)), "y": jnp.zeros((8, 1))}
    with highest():  # compared with a float64 reference
        context = trainer.trainstep.forward(state.params, state.collections, batch, state.step, is_training=True)
    p = state.params["hidden_layer"]
    expected = 3 * (np.asarray(batch["x"]) @ np.asarray(p["kernel"]) + np.asarray(p["bias"]))
    np.testing.assert_allclose(np.asarray(context.interms["hidden"][0]), expected, rtol=1e-5, atol=1e-6)
    assert "hidden" not in state.collections.get("intermediates", {})  # not kept as state


def test_interms_property_through_kd_train_forward():
    trainer = lib.make_trainer(model=_Recorder())
    state = trainer.init_state()
    batch = {"x": jnp.ones((8, 2)), "y": jnp.zeros((8, 1))}
    context = kd.train.Context(step=0, batch=batch, params=state.params, collections=state.collections)
    context = kd.train.forward(context, model=trainer.model, rngs={}, is_training=False)
    assert context.interms["hidden"][0].shape == (8, 4)
    assert kontext.get_by_path(context, "interms.hidden[0]").shape == (8, 4)


def test_interms_property_outside_apply_raises():
    with pytest.raises(ValueError, match=r"_Recorder.interms can only be used inside"):
        _Recorder().interms  # noqa: B018


def test_interms_read_of_an_unrecorded_name_says_why():
    class Reads(nn.Module):
        interms = kd.nn.interms_property()

        def __call__(self, x):
            return self.interms["missing"]

    with pytest.raises(KeyError, match=r"nothing was recorded under 'missing'"):
        Reads().apply({}, jnp.ones(2))


def test_interms_property_in_an_nnx_model_matches_linen():
    from flax import nnx

    class NnxRecorder(nnx.Module):
        x: kontext.Key = "batch.x"
        interms = kd.nn.interms_property()

        def __init__(self, rngs: nnx.Rngs):
            self.linear = nnx.Linear(2, 4, rngs=rngs)

        def __call__(self, x):
            self.interms["hidden"] = 3 * self.linear(x)
            return jnp.sum(self.interms["hidden"], axis=-1, keepdims=True)

    trainer = lib.make_trainer(model=NnxRecorder, train_metrics={"h": lib.Mean(values="interms.hidden[0]")})
    state = trainer.init_state()
    batch = {"x": jax.random.normal(KEY, (8, 2)), "y": jnp.zeros((8, 1))}
    with highest():  # compared with a float64 reference
        context = trainer.trainstep.forward(state.params, state.collections, batch, state.step, is_training=True)
    p = state.params["linear"]
    expected = 3 * (np.asarray(batch["x"]) @ np.asarray(p["kernel"]) + np.asarray(p["bias"]))
    np.testing.assert_allclose(np.asarray(context.interms["hidden"][0]), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(context.preds), expected.sum(-1, keepdims=True), rtol=1e-5, atol=1e-5
    )


# ---------------------------------------------------------------- the module types


def test_protocols_describe_kds_modules():
    assert kd.nn.TransformerBlock.__call__.__code__.co_varnames[1:3] == ("tokens", "attention_mask")
    assert kd.nn.AttentionModule.__annotations__ == {"num_heads": "int"}
    for protocol in (kd.nn.TransformerBlock, kd.nn.AttentionModule, kd.nn.ImageTokenizer, kd.nn.NormModule):
        with pytest.raises(TypeError):
            protocol()


def test_every_linen_module_of_kd_nn_takes_is_training_property():
    from flax import linen

    classes = [getattr(kd.nn, name) for name in kd.nn.__all__]
    linen_classes = [c for c in classes if isinstance(c, type) and issubclass(c, linen.Module)]
    assert len(linen_classes) > 20
    refusing = [
        c.__name__
        for c in linen_classes
        if not all(getattr(getattr(c, m), "accepts_training_property", False) for m in ("init", "apply"))
    ]
    assert refusing == []
    attention = kd.nn.MultiHeadDotProductAttention(num_heads=2, dropout_rate=0.5)
    x = jnp.ones((1, 3, 4))
    params = attention.init(jax.random.PRNGKey(0), x, x, is_training_property=False)
    out = attention.apply(params, x, x, is_training_property=False)
    assert out.shape == (1, 3, 4)
