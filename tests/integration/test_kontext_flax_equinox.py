"""kontext keys wiring a real flax model, flax structs and an equinox-style pytree (no equinox needed).

The equinox-style modules are dataclasses registered with ``jax.tree_util.register_dataclass`` (array
fields are children, configuration fields are static), which is how equinox modules flatten.
"""

from __future__ import annotations

import dataclasses

import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
nn = pytest.importorskip("flax.linen")
struct = pytest.importorskip("flax.struct")
flax = pytest.importorskip("flax")

import kontext  # noqa: E402
from kontext import REQUIRED, Key, Path  # noqa: E402


class Classifier(nn.Module):
    """A flax model whose inputs are named by keys, the way Kauldron models are."""

    image: Key = REQUIRED
    num_classes: int = 3

    @nn.compact
    def __call__(self, image):
        hidden = nn.relu(nn.Dense(8, name="encoder")(image))
        return ModelOutput(logits=nn.Dense(self.num_classes, name="head")(hidden), hidden=hidden)


@struct.dataclass
class ModelOutput:
    logits: jax.Array
    hidden: jax.Array


@dataclasses.dataclass
class SoftmaxCrossEntropy:
    logits: Key = REQUIRED
    labels: Key = REQUIRED
    mask: Key | None = None

    def get_values(self, logits, labels, mask=None):
        losses = -jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=-1)[:, 0]
        return losses.mean() if mask is None else (losses * mask).sum() / mask.sum()


def _batch():
    return {
        "image": jnp.arange(2 * 5, dtype=jnp.float32).reshape(2, 5) / 10,
        "label": jnp.array([0, 2]),
        "mask": jnp.array([1.0, 0.0]),
    }


def test_flax_model_inputs_and_loss_inputs_come_from_keys() -> None:
    model = Classifier(image="batch.image")
    context = {"batch": _batch()}
    model_kwargs = kontext.resolve_from_keyed_obj(context, model, func=model.__call__)
    assert list(model_kwargs) == ["image"]
    params = model.init(jax.random.PRNGKey(0), **model_kwargs)
    context["preds"] = model.apply(params, **model_kwargs)

    loss = SoftmaxCrossEntropy(logits="preds.logits", labels="batch.label", mask="batch.mask")
    loss_kwargs = kontext.resolve_from_keyed_obj(context, loss, func=loss.get_values)
    value = loss.get_values(**loss_kwargs)
    assert value.shape == ()
    assert loss_kwargs["logits"] is context["preds"].logits


def test_keys_resolve_inside_jit() -> None:
    model = Classifier(image="batch.image")
    params = model.init(jax.random.PRNGKey(0), _batch()["image"])
    loss = SoftmaxCrossEntropy(logits="preds.logits", labels="batch.label")

    @jax.jit
    def step(params, batch):
        context = {"batch": batch, "params": params}
        context["preds"] = model.apply(params, **kontext.resolve_from_keyed_obj(context, model))
        return loss.get_values(**kontext.resolve_from_keyed_obj(context, loss, func=loss.get_values))

    assert jnp.isfinite(step(params, _batch()))


def test_flax_params_flatten_set_and_filter_by_path() -> None:
    params = Classifier().init(jax.random.PRNGKey(0), _batch()["image"])
    flat = kontext.flatten_with_path(params)
    assert sorted(flat) == [
        "params.encoder.bias",
        "params.encoder.kernel",
        "params.head.bias",
        "params.head.kernel",
    ]
    assert flat["params.head.kernel"].shape == (8, 3)

    changed = kontext.set_by_path(params, "**.bias", jnp.ones(1))
    assert changed == ["params.encoder.bias", "params.head.bias"]
    assert float(kontext.get_by_path(params, "params.head.bias")[0]) == 1.0

    kernels = kontext.filter_by_path(params, "params.*.kernel")
    assert kontext.flatten_with_path(kernels, separator="/").keys() == {
        "params/encoder/kernel",
        "params/head/kernel",
    }


def test_intermediates_are_reached_with_call_index_and_array_slicing() -> None:
    model = Classifier()
    params = model.init(jax.random.PRNGKey(0), _batch()["image"])
    _, state = model.apply(params, _batch()["image"], capture_intermediates=True, mutable=["intermediates"])
    context = {"interms": state["intermediates"]}
    sliced = kontext.get_by_path(context, "interms.encoder.__call__[0][..., :3]")
    assert sliced.shape == (2, 3)
    builder = kontext.path_builder_from("interms")
    assert str(builder.encoder.__call__[0]) == "interms.encoder.__call__[0]"


def test_missing_key_in_a_flax_struct_suggests_its_fields() -> None:
    context = {"preds": ModelOutput(logits=jnp.zeros(3), hidden=jnp.zeros(2)), "batch": _batch()}
    loss = SoftmaxCrossEntropy(logits="preds.logit", labels="batch.labels")
    with pytest.raises(kontext.UnresolvedKeysError) as info:
        kontext.resolve_from_keyed_obj(context, loss)
    message = str(info.value)
    assert message.startswith("SoftmaxCrossEntropy: Invalid keys: 2 keys could not be resolved")
    assert "Did you mean 'preds.logits'" in message
    assert "Did you mean 'batch.label'" in message
    assert info.value.errors["logits"].available == ("logits", "hidden")


def test_path_builder_checks_flax_struct_fields() -> None:
    preds = kontext.path_builder_from("preds", ModelOutput)
    assert str(preds.logits) == "preds.logits"
    with pytest.raises(AttributeError, match="Did you mean 'logits'"):
        _ = preds.logit


def test_frozen_flax_params_are_read_but_a_write_names_the_path() -> None:
    params = flax.core.freeze(Classifier().init(jax.random.PRNGKey(0), _batch()["image"]))
    assert kontext.get_by_path(params, "params.head.kernel").shape == (8, 3)
    with pytest.raises(kontext.PathMutationError, match=r"Cannot set 'params.encoder.bias'.*FrozenDict"):
        kontext.set_by_path(params, "**.bias", 0.0)


# Equinox-style modules: dataclasses registered as pytrees, arrays as children, config as static metadata.
@dataclasses.dataclass
class Linear:
    weight: jax.Array
    bias: jax.Array

    def __call__(self, x):
        return x @ self.weight + self.bias


@dataclasses.dataclass
class MLP:
    layers: list[Linear]
    activation: str = "relu"

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = jax.nn.relu(layer(x))
        return self.layers[-1](x)


jax.tree_util.register_dataclass(Linear, data_fields=["weight", "bias"], meta_fields=[])
jax.tree_util.register_dataclass(MLP, data_fields=["layers"], meta_fields=["activation"])


def _mlp() -> MLP:
    k1, k2 = jax.random.split(jax.random.PRNGKey(1))
    return MLP(
        layers=[
            Linear(jax.random.normal(k1, (5, 4)), jnp.zeros(4)),
            Linear(jax.random.normal(k2, (4, 2)), jnp.zeros(2)),
        ]
    )


def test_equinox_style_pytree_flattens_exactly_like_jax_key_paths() -> None:
    mlp = _mlp()
    ours = kontext.flatten_with_path(mlp)
    leaves, _ = jax.tree_util.tree_flatten_with_path(mlp)
    theirs = {str(Path.from_jax_path(key_path)): leaf for key_path, leaf in leaves}
    assert (
        list(ours)
        == list(theirs)
        == ["layers[0].weight", "layers[0].bias", "layers[1].weight", "layers[1].bias"]
    )
    assert all(ours[k] is theirs[k] for k in ours)


def test_equinox_style_static_fields_are_not_leaves_but_still_reachable() -> None:
    mlp = _mlp()
    assert "activation" not in kontext.flatten_with_path(mlp)
    assert kontext.get_by_path({"model": mlp}, "model.activation") == "relu"


def test_keys_point_into_an_equinox_style_model() -> None:
    @dataclasses.dataclass
    class WeightDecay:
        weights: kontext.KeyTree[list] = dataclasses.field(
            default_factory=lambda: ["model.layers[0].weight", "model.layers[-1].weight"]
        )

        def get_values(self, weights):
            return sum((w**2).sum() for w in weights)

    mlp = _mlp()
    decay = WeightDecay()
    kwargs = kontext.resolve_from_keyed_obj({"model": mlp}, decay, func=decay.get_values)
    assert kwargs["weights"][1] is mlp.layers[1].weight
    assert float(decay.get_values(**kwargs)) > 0


def test_set_by_path_edits_an_equinox_style_model_in_place_and_it_still_jits() -> None:
    mlp = _mlp()
    changed = kontext.set_by_path(mlp, "layers.*.bias", jnp.full((1,), 0.5))
    assert changed == ["layers[0].bias", "layers[1].bias"]
    out = jax.jit(lambda m, x: m(x))(mlp, jnp.ones((3, 5)))
    assert out.shape == (3, 2)


def test_filter_equinox_style_weights_by_glob() -> None:
    weights = kontext.filter_by_path(_mlp(), "**.weight")
    assert set(kontext.flatten_with_path(weights)) == {"layers[0].weight", "layers[1].weight"}


@jax.tree_util.register_pytree_with_keys_class
class NamedArrays:
    """A pytree whose children are reachable only through its JAX key paths (no attributes, no items)."""

    def __init__(self, names, arrays):
        self._names = tuple(names)
        self._arrays = tuple(arrays)

    def tree_flatten_with_keys(self):
        return [(jax.tree_util.DictKey(n), a) for n, a in zip(self._names, self._arrays)], self._names

    def tree_flatten(self):
        return self._arrays, self._names

    @classmethod
    def tree_unflatten(cls, names, arrays):
        return cls(names, arrays)


def test_children_only_known_to_jax_are_reached_through_their_key_paths() -> None:
    arrays = NamedArrays(["w", "b"], [jnp.ones(2), jnp.zeros(1)])
    assert kontext.flatten_with_path({"p": arrays}).keys() == {"p.w", "p.b"}
    assert kontext.get_by_path({"p": arrays}, "p.w") is arrays._arrays[0]
    with pytest.raises(kontext.PathNotFoundError) as info:
        kontext.get_by_path({"p": arrays}, "p.ww")
    assert info.value.available == ("w", "b")


def test_konfig_config_dicts_are_looked_up_by_item_and_attribute() -> None:
    import konfig

    cfg = konfig.ConfigDict({"optimizer": {"lr": 0.1}, "layers": [1, 2]})
    assert kontext.get_by_path(cfg, "optimizer.lr") == 0.1
    assert kontext.get_by_path(cfg, "layers[-1]") == 2
    assert kontext.set_by_path(cfg, "optimizer.lr", 0.5) == ["optimizer.lr"]
    assert cfg.optimizer.lr == 0.5
    assert kontext.flatten_with_path(cfg) == {"optimizer.lr": 0.5, "layers[0]": 1, "layers[1]": 2}


def test_writing_a_child_only_jax_can_reach_is_a_mutation_error_not_a_silent_skip() -> None:
    tree = {"p": NamedArrays(["w", "b"], [jnp.ones(2), jnp.zeros(1)])}
    assert [str(p) for p in kontext.GlobPath.from_str("**.w").match(tree)] == ["p.w"]
    for path in ("p.w", "**.w"):
        with pytest.raises(kontext.PathMutationError, match=r"Cannot set 'p.w'.*only through JAX"):
            kontext.set_by_path(tree, path, 0.0)
