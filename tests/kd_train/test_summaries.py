"""kd.summaries: ShowImages (shapes, ranges, mask, merge) and Histogram (bounded sample)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import konfig
import ktyping
import numpy as np
import pytest
from kd import metrics, summaries


def _computed(summary: summaries.Summary, **inputs):
    return jax.device_get(summary.get_state(**inputs)).compute()


def test_show_images_keeps_the_first_num_images_as_float32_nhwc():
    images = jnp.linspace(0.0, 1.0, 6 * 4 * 4 * 3).reshape(6, 4, 4, 3)
    out = _computed(summaries.ShowImages(images="x", num_images=2), images=images)
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.float32
    assert out.shape == (2, 4, 4, 3)
    np.testing.assert_allclose(out, np.asarray(images[:2]), rtol=1e-6)


def test_show_images_of_nhw_gives_one_channel():
    out = _computed(summaries.ShowImages(images="x"), images=jnp.zeros((3, 4, 5)))
    assert out.shape == (3, 4, 5, 1)


def test_show_images_clips_values_to_0_1():
    out = _computed(summaries.ShowImages(images="x"), images=jnp.array([-1.0, 0.5, 2.0]).reshape(1, 1, 3, 1))
    np.testing.assert_allclose(out.ravel(), [0.0, 0.5, 1.0])


def test_show_images_in_vrange_clips_and_rescales_to_0_1():
    images = jnp.array([-3.0, -1.0, 0.0, 1.0, 3.0]).reshape(1, 1, 5, 1)
    out = _computed(summaries.ShowImages(images="x", in_vrange=(-1.0, 1.0)), images=images)
    np.testing.assert_allclose(out.ravel(), [0.0, 0.0, 0.5, 1.0, 1.0])


def test_show_images_in_vrange_applies_to_uint8_after_dividing_by_255():
    images = jnp.array([0, 51, 255], jnp.uint8).reshape(1, 1, 3, 1)
    out = _computed(summaries.ShowImages(images="x", in_vrange=(0.0, 0.4)), images=images)
    np.testing.assert_allclose(out.ravel(), [0.0, 0.5, 1.0], rtol=1e-6)


def test_show_images_has_no_vrange_field():
    with pytest.raises(TypeError, match="vrange"):
        summaries.ShowImages(images="x", vrange=(0.0, 1.0))  # type: ignore[call-arg]


def test_show_images_of_uint8_are_divided_by_255():
    images = jnp.array([0, 51, 255], jnp.uint8).reshape(1, 1, 3, 1)
    np.testing.assert_allclose(
        _computed(summaries.ShowImages(images="x"), images=images).ravel(), [0, 0.2, 1]
    )


def test_show_images_rejects_four_channels():
    with pytest.raises(ktyping.KTypeCheckError, match="argument images"):
        summaries.ShowImages(images="x").get_state(images=jnp.zeros((2, 4, 4, 4)))


def test_show_images_mask_skips_masked_out_images():
    images = jnp.arange(4.0).reshape(4, 1, 1, 1) / 10
    mask = jnp.array([False, True, False, True])
    out = _computed(summaries.ShowImages(images="x", num_images=3), images=images, mask=mask)
    np.testing.assert_allclose(out.ravel(), [0.1, 0.3])


def test_show_images_merge_in_jit_keeps_valid_images_first():
    summary = summaries.ShowImages(images="x", num_images=2)
    a = summary.get_state(images=jnp.full((2, 1, 1, 1), 0.1), mask=jnp.array([True, False]))
    b = summary.get_state(images=jnp.full((2, 1, 1, 1), 0.7))
    merged = jax.jit(lambda x, y: x.merge(y))(a, b)
    out = jax.device_get(merged).compute()
    np.testing.assert_allclose(out.ravel(), [0.1, 0.7])


def test_show_images_is_an_image_summary_and_a_metric():
    summary = summaries.ShowImages(images="batch.image")
    assert isinstance(summary, summaries.ImageSummary)
    assert isinstance(summary, metrics.Metric)


def test_show_images_from_context():
    ctx = {"batch": {"image": jnp.zeros((7, 2, 2, 3))}}
    state = summaries.ShowImages(images="batch.image").get_state_from_context(ctx)
    assert jax.device_get(state).compute().shape == (5, 2, 2, 3)


def test_show_images_rejects_an_empty_in_vrange():
    with pytest.raises(
        ValueError, match=r"in_vrange must be \(vmin, vmax\) with vmin < vmax, got \(1.0, 1.0\)"
    ):
        summaries.ShowImages(images="x", in_vrange=(1.0, 1.0))


def test_histogram_computes_a_histogram_value_of_the_flat_values():
    tensor = jnp.arange(6.0).reshape(2, 3)
    out = _computed(summaries.Histogram(tensor="x", num_buckets=3), tensor=tensor)
    assert isinstance(out, summaries.HistogramValue)
    assert out.num_buckets == 3
    np.testing.assert_array_equal(out.values, np.arange(6.0))
    counts, edges = out.counts()
    np.testing.assert_array_equal(counts, [2, 2, 2])
    assert edges.shape == (4,)


def test_histogram_state_is_bounded_by_max_values():
    summary = summaries.Histogram(tensor="x", max_values=10)
    state = summary.get_state(tensor=jnp.arange(95.0))
    assert state.values.shape == (10,)
    np.testing.assert_array_equal(np.asarray(state.values), np.arange(0.0, 95.0, 10.0))  # every 10th value
    merged = jax.jit(lambda a, b: a.merge(b))(state, summary.get_state(tensor=jnp.ones(5)))
    assert jax.device_get(merged).compute().values.shape == (10,)


def test_histogram_merges_batches_until_full():
    summary = summaries.Histogram(tensor="x", max_values=4)
    state = summary.get_state(tensor=jnp.array([1.0, 2.0])).merge(
        summary.get_state(tensor=jnp.array([3.0, 4.0, 5.0]))
    )
    np.testing.assert_array_equal(jax.device_get(state).compute().values, [1.0, 2.0, 3.0, 4.0])


def test_histogram_accepts_integer_tensors():
    out = _computed(summaries.Histogram(tensor="x"), tensor=jnp.array([[1, 2], [3, 4]]))
    assert out.values.dtype == np.float32


def test_summary_built_from_a_konfig_config_works():
    with konfig.imports():
        from kd import summaries as cfg_summaries

    cfg = konfig.ConfigDict()
    cfg.images = cfg_summaries.ShowImages(images="batch.image", num_images=2, in_vrange=(0.0, 255.0))
    summary = konfig.resolve(cfg).images
    assert isinstance(summary, summaries.ShowImages)
    out = jax.device_get(summary.get_state_from_context({"batch": {"image": jnp.full((3, 2, 2, 3), 51.0)}}))
    np.testing.assert_allclose(out.compute(), 0.2, rtol=1e-6)
