"""kd.nn's language model pieces: `dot_product_attention`'s implementations against the einsum reference (the
Pallas splash kernel in its interpreter on a CPU), `SelfAttention`, `DecoderLM`'s variants, dtypes, remat and
causality."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import kd
import numpy as np
import pytest
from precision import ON_CPU, highest, rtol

# The splash kernel's products run at the chip's default precision (bf16 passes), whatever `highest()` says.
SPLASH_ON_CHIP_TOL = 2e-2


def _qkv(shape: tuple[int, ...], dtype: jnp.dtype = jnp.float32) -> tuple[jax.Array, ...]:
    return tuple(jax.random.normal(key, shape, dtype) for key in jax.random.split(jax.random.key(0), 3))


@pytest.mark.parametrize("is_causal", [True, False])
@pytest.mark.parametrize("implementation", ["xla", "auto", "splash"])
def test_each_implementation_matches_the_einsum_reference_values_and_gradients(
    implementation: str, is_causal: bool
) -> None:
    q, k, v = _qkv((2, 128, 2, 64))

    def loss(impl: str) -> tuple[jax.Array, tuple[jax.Array, ...]]:
        def f(q: jax.Array, k: jax.Array, v: jax.Array) -> jax.Array:
            return (kd.nn.dot_product_attention(q, k, v, is_causal=is_causal, implementation=impl) ** 2).sum()

        return jax.value_and_grad(f, argnums=(0, 1, 2))(q, k, v)

    with highest():
        (value, grads), (ref_value, ref_grads) = loss(implementation), loss("einsum")
    on_chip_splash = implementation == "splash" and not ON_CPU
    tol = SPLASH_ON_CHIP_TOL if on_chip_splash else rtol(1e-4)
    np.testing.assert_allclose(value, ref_value, rtol=SPLASH_ON_CHIP_TOL if on_chip_splash else rtol(1e-5))
    for grad, ref_grad in zip(grads, ref_grads):
        np.testing.assert_allclose(grad, ref_grad, rtol=tol, atol=tol)


def test_causal_attention_lets_no_query_see_a_later_key() -> None:
    q, k, v = _qkv((1, 16, 2, 8))
    out = kd.nn.dot_product_attention(q, k, v, is_causal=True, implementation="einsum")
    changed = kd.nn.dot_product_attention(q, k, v.at[:, 9:].set(0.0), is_causal=True, implementation="einsum")
    np.testing.assert_array_equal(out[:, :9], changed[:, :9])
    assert not np.allclose(out[:, 9:], changed[:, 9:])


def test_mask_and_bias_reach_every_implementation_but_splash_which_refuses_them() -> None:
    q, k, v = _qkv((2, 8, 2, 4))
    mask = jnp.tril(jnp.ones((8, 8), bool)) & (jnp.arange(8) != 3)  # key 3 hidden from every query after it
    bias = jax.random.normal(jax.random.key(5), (2, 8, 8))  # per head, broadcast over the batch
    with highest():
        ref = kd.nn.dot_product_attention(q, k, v, mask=mask, bias=bias, implementation="einsum")
        out = kd.nn.dot_product_attention(q, k, v, mask=mask, bias=bias, implementation="xla")
        np.testing.assert_allclose(out, ref, rtol=rtol(1e-5), atol=1e-6)
        unbiased = kd.nn.dot_product_attention(q, k, v, mask=mask, implementation="xla")
    assert not np.allclose(unbiased, ref, atol=1e-3)  # the bias took part
    with pytest.raises(ValueError, match="'splash' cannot run here: it takes no mask or bias"):
        kd.nn.dot_product_attention(q, k, v, mask=mask, implementation="splash")


@pytest.mark.parametrize(
    ("q_len", "k_len", "reason"),
    [
        (100, 100, "the sequence length 100 must be a multiple of 128"),
        (128, 256, "it attends within one sequence, got 128 queries and 256 keys"),
        (640, 640, "the sequence length 640 must be a multiple of 128 \\(and of 512 above it\\)"),
        (128, 128, "its heads must have a multiple of 64 features, got 32"),
    ],
)
def test_splash_says_why_it_cannot_take_a_shape(q_len: int, k_len: int, reason: str) -> None:
    depth = 32 if "features" in reason else 64
    q, k = jnp.zeros((1, q_len, 2, depth)), jnp.zeros((1, k_len, 2, depth))
    with pytest.raises(ValueError, match=reason):
        kd.nn.attention_implementation(q, k, implementation="splash")


def test_splash_refuses_several_devices_which_would_need_a_shard_map(monkeypatch: pytest.MonkeyPatch) -> None:
    q = jnp.zeros((2, 1024, 2, 128))
    monkeypatch.setattr(jax, "device_count", lambda: 4)
    with pytest.raises(
        ValueError, match="'splash' cannot run here: it runs on one device here, and JAX sees 4"
    ):
        kd.nn.attention_implementation(q, q, is_causal=True, implementation="splash")
    assert kd.nn.attention_implementation(q, q, is_causal=True) == "auto"  # auto: jax.nn's own choice


def test_auto_picks_splash_only_on_a_tpu_and_an_unknown_name_is_refused() -> None:
    q = jnp.zeros((1, 1024, 2, 128))
    chosen = kd.nn.attention_implementation(q, q, is_causal=True)
    on_one_tpu = jax.default_backend() == "tpu" and jax.device_count() == 1
    assert chosen == ("splash" if on_one_tpu else "auto")
    assert kd.nn.attention_implementation(q, q, is_causal=True, masked=True) == "auto"
    with pytest.raises(
        ValueError, match=r"attention implementation 'flash': expected one of \('auto', 'einsum'"
    ):
        kd.nn.attention_implementation(q, q, implementation="flash")  # type: ignore[arg-type]


def test_self_attention_computes_in_its_dtype_with_float32_parameters() -> None:
    attention = kd.nn.SelfAttention(num_heads=2, is_causal=True, dtype="bfloat16")
    tokens = jnp.ones((2, 16, 8))
    params = attention.init(jax.random.key(0), tokens)
    assert {leaf.dtype for leaf in jax.tree.leaves(params)} == {jnp.dtype("float32")}
    out = attention.apply(params, tokens)
    assert out.shape == (2, 16, 8) and out.dtype == jnp.bfloat16
    with pytest.raises(ValueError, match="num_heads=3 must divide the tokens' 8 features"):
        kd.nn.SelfAttention(num_heads=3).init(jax.random.key(0), tokens)


def test_variants_size_the_model_and_lm_b_has_164m_parameters_with_a_51200_vocabulary() -> None:
    assert kd.nn.LMSpec.from_variant_string("LM-B") == kd.nn.LMSpec(768, 12, 6, 3072)
    assert kd.nn.LMSpec.from_variant_string("lm_S") == kd.nn.LMSpec.from_variant_string("S")
    model = kd.nn.DecoderLM.from_variant_str("LM-B", vocab_size=51200, tokens="batch.inputs")
    shapes = jax.eval_shape(lambda: model.init(jax.random.key(0), jnp.zeros((1, 1024), jnp.int32)))
    count = sum(int(np.prod(leaf.shape)) for leaf in jax.tree.leaves(shapes))
    assert 160e6 < count < 168e6
    assert shapes["params"]["layers"]["attention"]["qkv"]["kernel"].shape == (12, 768, 3, 6, 128)  # scanned
    with pytest.raises(kd.nn.VariantError, match=r"unknown LM variant 'LM-b'.*did you mean 'LM-B'"):
        kd.nn.DecoderLM.from_variant_str("LM-b", vocab_size=8)


def _tiny_lm(**fields: object) -> kd.nn.DecoderLM:
    return kd.nn.DecoderLM.from_variant_str("mu", vocab_size=32, max_length=16, tokens="batch.x", **fields)


def test_logits_come_out_in_the_compute_dtype_and_no_position_sees_a_later_token() -> None:
    model = _tiny_lm(dtype="bfloat16")
    tokens = jax.random.randint(jax.random.key(1), (2, 16), 0, 32)
    params = model.init(jax.random.key(0), tokens)
    assert {leaf.dtype for leaf in jax.tree.leaves(params)} == {jnp.dtype("float32")}
    logits = model.apply(params, tokens)
    assert logits.shape == (2, 16, 32) and logits.dtype == jnp.bfloat16
    changed = model.apply(params, tokens.at[:, 10:].set((tokens[:, 10:] + 1) % 32))
    np.testing.assert_array_equal(logits[:, :10], changed[:, :10])
    with pytest.raises(ValueError, match="sequences of 17 tokens, above max_length=16"):
        model.apply(params, jnp.zeros((1, 17), jnp.int32))


@pytest.mark.parametrize("remat", ["full", "dots", "dots_no_batch"])
def test_remat_recomputes_the_same_loss_and_gradients(remat: str) -> None:
    tokens = jax.random.randint(jax.random.key(1), (2, 16), 0, 32)
    plain, rematerialized = _tiny_lm(), _tiny_lm(remat=remat)
    params = plain.init(jax.random.key(0), tokens)
    loss = lambda model: jax.value_and_grad(lambda p: model.apply(p, tokens).mean())(params)  # noqa: E731
    with highest():
        (value, grads), (ref_value, ref_grads) = loss(rematerialized), loss(plain)
    np.testing.assert_allclose(value, ref_value, rtol=rtol(1e-6))
    for leaf, ref_leaf in zip(jax.tree.leaves(grads), jax.tree.leaves(ref_grads)):
        np.testing.assert_allclose(leaf, ref_leaf, rtol=rtol(1e-5), atol=1e-7)
    with pytest.raises(ValueError, match=r"DecoderLM\(remat='some'\): expected one of \('none', 'full'"):
        _tiny_lm(remat="some").init(jax.random.key(0), tokens)


def test_unscanned_layers_compute_what_the_scan_computes_with_the_same_weights() -> None:
    tokens = jax.random.randint(jax.random.key(1), (2, 16), 0, 32)
    scanned, unrolled = _tiny_lm(), _tiny_lm(scan_layers=False)
    params = scanned.init(jax.random.key(0), tokens)["params"]
    layers = params.pop("layers")
    per_layer = {f"layers_{i}": jax.tree.map(lambda leaf, i=i: leaf[i], layers) for i in range(2)}
    with highest():
        np.testing.assert_allclose(
            unrolled.apply({"params": {**params, **per_layer}}, tokens),
            scanned.apply({"params": {**params, "layers": layers}}, tokens),
            rtol=rtol(1e-5),
            atol=1e-6,
        )


def test_the_loss_upcasts_bf16_logits_before_its_softmax() -> None:
    logits = jax.random.normal(jax.random.key(0), (4, 8, 512)) * 4
    labels = jax.random.randint(jax.random.key(1), (4, 8), 0, 512)
    loss = kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="batch.y")
    from_bf16 = loss.get_values(logits.astype(jnp.bfloat16), labels)
    reference = loss.get_values(logits.astype(jnp.bfloat16).astype(jnp.float32), labels)
    assert from_bf16.dtype == jnp.float32
    np.testing.assert_allclose(from_bf16, reference, rtol=1e-6)


def test_a_splash_model_is_traced_again_after_its_init_and_differentiated() -> None:
    # The kernel is built in each trace: one kept from init's trace leaked its tracers into apply's.
    model = kd.nn.DecoderLM.from_variant_str(
        "mu", num_heads=1, vocab_size=64, max_length=128, tokens="x", attention="splash"
    )  # one head of 64 features: the kernel's narrowest
    tokens = jax.random.randint(jax.random.key(1), (2, 128), 0, 64)
    params = jax.jit(model.init)(jax.random.key(0), tokens)
    logits = jax.jit(model.apply)(params, tokens)
    reference = model.clone(attention="einsum").apply(params, tokens)
    tol = 1e-4 if ON_CPU else SPLASH_ON_CHIP_TOL
    np.testing.assert_allclose(logits, reference, rtol=tol, atol=tol)
    grads = jax.jit(jax.grad(lambda p: model.apply(p, tokens).mean()))(params)
    assert all(bool(jnp.isfinite(leaf).all()) for leaf in jax.tree.leaves(grads))
