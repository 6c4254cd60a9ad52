"""kd.nn's Vision Transformers (Kauldron's `Vit`, `VitEncoder`, `VitAutoEncoder`) and their blocks."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import kd
import konfig
import numpy as np
import optax
import pytest
import train_fixtures as lib

IMAGES = jnp.linspace(0.0, 1.0, 2 * 8 * 8 * 3, dtype=jnp.float32).reshape(2, 8, 8, 3)


def _tiny_encoder(**kwargs) -> kd.nn.VitEncoder:
    """2 blocks of width 16 over 4x4 patches: 4 tokens for an 8x8 image."""
    return kd.nn.VitEncoder.from_spec(
        num_heads=2, hidden_size=16, num_layers=2, patch_size=4, mlp_size=32, **kwargs
    )


def _apply(model, images=IMAGES, **kwargs):
    variables = model.init(jax.random.key(0), images)
    return model.apply(variables, images, **kwargs)


# ---------------------------------------------------------------------------------------------- shapes


def test_encoder_gives_one_token_per_patch():
    tokens = _apply(_tiny_encoder())
    assert tokens.shape == (2, 4, 16)
    assert tokens.dtype == jnp.float32


def test_encoder_cls_token_comes_first():
    tokens = _apply(_tiny_encoder(prepend_cls_token=True))
    assert tokens.shape == (2, 5, 16)


def test_encoder_takes_any_batch_shape():
    images = jnp.broadcast_to(IMAGES, (3, 2, 8, 8, 3))
    assert _apply(_tiny_encoder(), images).shape == (3, 2, 4, 16)


def test_vit_returns_logits():
    preds = _apply(kd.nn.Vit(image="batch.image", encoder=_tiny_encoder(), num_classes=7))
    assert set(preds) == {"logits"}
    assert preds["logits"].shape == (2, 7)
    assert preds["logits"].dtype == jnp.float32


@pytest.mark.parametrize("mode", ["gap", "cls_token", "cls_token_forced"])
def test_vit_pooling_modes_give_logits(mode):
    encoder = _tiny_encoder(prepend_cls_token=mode == "cls_token")
    preds = _apply(kd.nn.Vit(image="batch.image", encoder=encoder, num_classes=3, mode=mode))
    assert preds["logits"].shape == (2, 3)


def test_vit_cls_token_mode_needs_a_cls_token():
    with pytest.raises(ValueError, match="prepend_cls_token=True"):
        _apply(kd.nn.Vit(image="batch.image", encoder=_tiny_encoder(), mode="cls_token"))


def test_vit_parameters_have_kauldron_names():
    model = kd.nn.Vit(image="batch.image", encoder=_tiny_encoder(), num_classes=3)
    params = model.init(jax.random.key(0), IMAGES)["params"]
    assert set(params) == {"encoder", "pre_logits", "classifier_head"}
    assert set(params["encoder"]) == {"embedding", "pos_embedding", "layers_0", "layers_1", "encoder_norm"}
    assert params["encoder"]["embedding"]["patchifier"]["kernel"].shape == (4, 4, 3, 16)
    assert params["encoder"]["pos_embedding"]["embeddings"].shape == (4, 16)
    layer = params["encoder"]["layers_0"]
    assert set(layer) == {"attention", "mlp", "attention_norm", "mlp_norm"}
    assert set(layer["attention"]) == {"query", "key", "value", "out"}
    assert layer["mlp"]["dense_in"]["kernel"].shape == (16, 32)


def test_autoencoder_reconstructs_the_input_shape():
    preds = _apply(kd.nn.VitAutoEncoder(encoder=_tiny_encoder(), image="batch.image"))
    assert set(preds) == {"image"}
    assert preds["image"].shape == IMAGES.shape
    assert preds["image"].dtype == jnp.float32


def test_autoencoder_rejects_tokens_that_do_not_divide_the_image():
    model = kd.nn.VitAutoEncoder(encoder=_tiny_encoder(prepend_cls_token=True), image="batch.image")
    with pytest.raises(ValueError, match="5 tokens"):
        _apply(model)


def test_patchify_keeps_each_patch_together():
    tokens = kd.nn.Patchify(patch_size=(4, 4)).apply({}, IMAGES)
    assert tokens.shape == (2, 4, 4 * 4 * 3)
    np.testing.assert_array_equal(tokens[:, 1].reshape(2, 4, 4, 3), IMAGES[:, :4, 4:])


def test_attention_weights_are_sown_per_layer():
    _, state = _apply(kd.nn.Vit(image="batch.image", encoder=_tiny_encoder()), mutable=["intermediates"])
    weights = state["intermediates"]["encoder"]["layers_1"]["attention"]["attn_weights"][0]
    assert weights.shape == (2, 2, 4, 4)  # (batch, heads, queries, keys)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-5)


def test_flax_attention_runs_without_dropout_outside_a_trainer():
    attention = kd.nn.MultiHeadDotProductAttention(num_heads=2)
    tokens = jnp.ones((2, 4, 8))
    assert attention.apply(attention.init(jax.random.key(0), tokens), tokens).shape == (2, 4, 8)


def test_flax_attention_rejects_deterministic():
    with pytest.raises(ValueError, match="deterministic"):
        kd.nn.MultiHeadDotProductAttention(num_heads=2, deterministic=True)


@pytest.mark.parametrize(
    "block_type", [kd.nn.PreNormBlock, kd.nn.PostNormBlock, kd.nn.ParallelAttentionBlock]
)
def test_blocks_keep_the_token_shape(block_type):
    block = block_type.from_spec(num_heads=2, mlp_size=16)
    tokens = jnp.ones((2, 4, 8))
    assert block.apply(block.init(jax.random.key(0), tokens), tokens).shape == (2, 4, 8)


# ---------------------------------------------------------------------------------------------- variants


@pytest.mark.parametrize(
    ("variant", "sizes"),
    [
        ("ViT-Ti/8", (192, 12, 768, 3, 8)),
        ("ViT-S/16", (384, 12, 1536, 6, 16)),
        ("ViT-B/16", (768, 12, 3072, 12, 16)),
        ("ViT-L/14", (1024, 24, 4096, 16, 14)),
        ("ViT-H/14", (1280, 32, 5120, 16, 14)),
        ("vit_mu/4", (32, 1, 128, 2, 4)),
        ("g/14", (1408, 40, 6144, 16, 14)),
        ("G", (1664, 48, 8192, 16, None)),
    ],
)
def test_variant_strings_give_kauldron_sizes(variant, sizes):
    spec = kd.nn.ViTSpec.from_variant_string(variant)
    assert (spec.hidden_size, spec.num_layers, spec.mlp_size, spec.num_heads, spec.patch_size) == sizes


def test_encoder_from_variant_has_the_variant_sizes():
    encoder = kd.nn.VitEncoder.from_variant_str("ViT-Ti/8")
    assert len(encoder.layers) == 12
    assert encoder.embedding.patch_size == (8, 8)
    assert encoder.embedding.hidden_size == 192
    assert encoder.layers[0].attention.num_heads == 3
    assert encoder.layers[0].mlp.hidden_size == 768


def test_encoder_from_variant_takes_overrides():
    encoder = kd.nn.VitEncoder.from_variant_str("ViT-mu/4", num_layers=2, prepend_cls_token=True)
    assert len(encoder.layers) == 2
    assert encoder.prepend_cls_token


def test_unknown_variant_names_the_near_miss():
    with pytest.raises(kd.nn.VariantError, match=r"'ViT-T/8'.*did you mean 'ViT-Ti/8'\?"):
        kd.nn.VitEncoder.from_variant_str("ViT-T/8")


def test_spelled_out_variant_names_its_short_form():
    with pytest.raises(kd.nn.VariantError, match=r"did you mean 'ViT-B/16'\?"):
        kd.nn.ViTSpec.from_variant_string("ViT-Base/16")


def test_variant_error_is_a_value_error_listing_the_sizes():
    with pytest.raises(ValueError, match="mu, Ti, S, M, B, L, H, g, G, e"):
        kd.nn.ViTSpec.from_variant_string("ViT-X/16")


def test_variant_without_patch_size_asks_for_one():
    with pytest.raises(kd.nn.VariantError, match=r"no patch size.*'ViT-B/16'"):
        kd.nn.VitEncoder.from_variant_str("ViT-B")


def test_image_not_divisible_by_patch_size_names_both():
    images = jnp.ones((2, 10, 8, 3))
    with pytest.raises(kd.nn.PatchSizeError, match=r"image size 10x8 .* patch size 4x4"):
        _apply(_tiny_encoder(), images)


def test_image_without_channels_is_rejected():
    with pytest.raises(
        kd.nn.PatchSizeError, match=r"\(\*batch, height, width, channels\), got shape \(8, 8\)"
    ):
        kd.nn.Patchify(patch_size=4).apply({}, jnp.ones((8, 8)))


# ---------------------------------------------------------------------------------------------- training


def _images(num: int = 16) -> dict[str, np.ndarray]:
    """Images whose label (0-3) is which quadrant is brightest."""
    rng = np.random.default_rng(0)
    images = rng.uniform(0, 0.2, (num, 8, 8, 3)).astype(np.float32)
    labels = rng.integers(0, 4, (num, 1)).astype(np.int32)
    for image, label in zip(images, labels[:, 0]):
        row, col = divmod(int(label), 2)
        image[4 * row : 4 * row + 4, 4 * col : 4 * col + 4] += 0.8
    return {"image": images, "label": labels}


def _one_block_encoder() -> kd.nn.VitEncoder:
    """One block of width 8: XLA compiles the train step in a few seconds on CPU."""
    return kd.nn.VitEncoder.from_spec(num_heads=2, hidden_size=8, num_layers=1, patch_size=4, mlp_size=16)


def _trainer(model, losses, metrics, writer) -> kd.train.Trainer:
    return lib.make_trainer(
        train_ds=kd.data.InMemoryPipeline(loader=functools.partial(_images, 16), batch_size=8),
        model=model,
        optimizer=optax.adam(3e-3),
        train_losses=losses,
        train_metrics=metrics,
        num_train_steps=6,
        log_metrics_every=1,
        writer=writer,
    )


def test_vit_trains_with_metrics_on_its_intermediates():
    writer = kd.writers.InMemoryWriter()
    trainer = _trainer(
        kd.nn.Vit(image="batch.image", encoder=_one_block_encoder(), num_classes=4),
        {"xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds.logits", labels="batch.label")},
        {
            "attention_std": kd.metrics.Std(values="interms.encoder.layers_0.attention.attn_weights[0]"),
            "latent_norm": kd.metrics.Norm(tensor="interms.encoder.__call__[0]"),
        },
        writer,
    )
    _, aux = trainer.train()
    assert np.isfinite(aux["metrics/attention_std"])
    assert np.isfinite(aux["metrics/latent_norm"]) and aux["metrics/latent_norm"] > 0
    losses = [value for _, value in writer.scalars["losses/xent"]]
    assert all(np.isfinite(losses))
    assert losses[-1] < losses[0]


def test_autoencoder_trains_with_a_metric_on_the_encoder_output():
    writer = kd.writers.InMemoryWriter()
    trainer = _trainer(
        kd.nn.VitAutoEncoder(encoder=_one_block_encoder(), image="batch.image"),
        {"l2": kd.losses.L2(preds="preds.image", targets="batch.image")},
        {"latent_norm": kd.metrics.Norm(tensor="interms.encoder.__call__[0]")},
        writer,
    )
    _, aux = trainer.train()
    assert np.isfinite(aux["metrics/latent_norm"])
    losses = [value for _, value in writer.scalars["losses/l2"]]
    assert all(np.isfinite(losses))
    assert losses[-1] < losses[0]


def test_vit_builds_from_a_konfig_config():
    with konfig.imports():
        import kd as kd_cfg
    cfg = kd_cfg.nn.Vit(image="batch.image", encoder=kd_cfg.nn.VitEncoder.from_variant_str("ViT-mu/4"))
    model = konfig.resolve(cfg)
    assert isinstance(model.encoder, kd.nn.VitEncoder)
    assert model.encoder.embedding.patch_size == (4, 4)


def test_flax_attention_drops_out_only_while_training():
    attention = kd.nn.MultiHeadDotProductAttention(num_heads=2, dropout_rate=0.5)
    tokens = jax.random.normal(jax.random.key(1), (2, 4, 8))
    with kd.nn.training_mode(True):
        variables = attention.init(jax.random.key(0), tokens)
    rngs = {"dropout": jax.random.key(2)}
    with kd.nn.training_mode(False):
        evaluated = [attention.apply(variables, tokens, rngs=rngs) for _ in range(2)]
        plain = attention.apply(variables, tokens)
    with kd.nn.training_mode(True):
        trained = attention.apply(variables, tokens, rngs=rngs)
    np.testing.assert_array_equal(evaluated[0], plain)
    assert not np.allclose(trained, plain)
