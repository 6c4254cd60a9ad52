"""kd.metrics.Psnr and kd.metrics.Ssim: per-image values against NumPy references, masks, ranges, bad input."""

from __future__ import annotations

import jax
import kd
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view


def _images(shape=(3, 16, 20, 2), noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    target = rng.uniform(0, 1, shape).astype(np.float32)
    pred = np.clip(target + rng.normal(0, noise, shape), 0, 1).astype(np.float32)
    return pred, target


def _reference_psnr(pred, target, peak=1.0):
    """Per image, in float64."""
    mse = np.mean((pred.astype(np.float64) - target) ** 2, axis=(-3, -2, -1))
    return 10 * np.log10(peak**2 / mse)


def _reference_ssim(pred, target, size=11, sigma=1.5, k1=0.01, k2=0.03, peak=1.0):
    """Per image, in float64: every size x size window weighted by a 2-D Gaussian, per channel."""
    offsets = np.arange(size) - (size - 1) / 2
    g = np.exp(-(offsets**2) / (2 * sigma**2))
    weights = np.outer(g, g) / np.outer(g, g).sum()

    def local_mean(img):  # windows: (*b, h', w', c, size, size)
        windows = sliding_window_view(img.astype(np.float64), (size, size), axis=(-3, -2))
        return np.einsum("...ij,ij->...", windows, weights)

    mu_p, mu_t = local_mean(pred), local_mean(target)
    var_p = np.maximum(local_mean(pred * pred.astype(np.float64)) - mu_p**2, 0)
    var_t = np.maximum(local_mean(target * target.astype(np.float64)) - mu_t**2, 0)
    cov = local_mean(pred * target.astype(np.float64)) - mu_p * mu_t
    cov = np.sign(cov) * np.minimum(np.abs(cov), np.sqrt(var_p * var_t))
    c1, c2 = (k1 * peak) ** 2, (k2 * peak) ** 2
    ssim_map = ((2 * mu_p * mu_t + c1) * (2 * cov + c2)) / ((mu_p**2 + mu_t**2 + c1) * (var_p + var_t + c2))
    return ssim_map.mean(axis=(-3, -2, -1))


# ---------------------------------------------------------------------------------------------- Psnr


def test_psnr_is_the_mean_of_the_per_image_psnr():
    pred, target = _images()
    value = kd.metrics.Psnr(pred="p", target="t")(pred=pred, target=target)
    np.testing.assert_allclose(value, _reference_psnr(pred, target).mean(), rtol=1e-5)


def test_psnr_of_identical_images_is_inf():
    _, target = _images()
    assert kd.metrics.Psnr(pred="p", target="t")(pred=target, target=target) == np.inf


def test_psnr_clip_caps_each_image():
    pred, target = _images(shape=(2, 8, 8, 3))
    pred[0] = target[0]  # image 0: inf, capped at 60
    value = kd.metrics.Psnr(pred="p", target="t", clip=60.0)(pred=pred, target=target)
    expected = np.minimum(_reference_psnr(pred[1:], target[1:]), 60.0)
    np.testing.assert_allclose(value, (60.0 + expected[0]) / 2, rtol=1e-5)


def test_psnr_peak_is_the_width_of_in_vrange():
    pred, target = _images()
    pred, target = pred * 255, target * 255
    value = kd.metrics.Psnr(pred="p", target="t", in_vrange=(0.0, 255.0))(pred=pred, target=target)
    np.testing.assert_allclose(value, _reference_psnr(pred, target, peak=255.0).mean(), rtol=1e-5)


def test_psnr_mask_leaves_out_images_even_identical_ones():
    pred, target = _images(shape=(3, 8, 8, 1))
    pred[2] = target[2]  # inf, masked out: must not make the average nan
    mask = np.array([1.0, 1.0, 0.0], np.float32)
    for m in (mask, mask[:, None]):
        value = kd.metrics.Psnr(pred="p", target="t", mask="m")(pred=pred, target=target, mask=m)
        np.testing.assert_allclose(value, _reference_psnr(pred[:2], target[:2]).mean(), rtol=1e-5)


def test_psnr_over_extra_batch_axes():
    pred, target = _images(shape=(2, 3, 8, 8, 3))
    state = kd.metrics.Psnr(pred="p", target="t").get_state(pred=pred, target=target)
    assert float(state.count) == 6
    np.testing.assert_allclose(state.compute(), _reference_psnr(pred, target).mean(), rtol=1e-5)


# ---------------------------------------------------------------------------------------------- Ssim


@pytest.mark.parametrize("filter_size", [11, 4, 7])
def test_ssim_matches_a_windowed_numpy_reference(filter_size):
    pred, target = _images()
    value = kd.metrics.Ssim(pred="p", target="t", filter_size=filter_size)(pred=pred, target=target)
    np.testing.assert_allclose(value, _reference_ssim(pred, target, size=filter_size).mean(), rtol=1e-5)


def test_ssim_settings_reach_the_formula():
    pred, target = _images(noise=0.3)
    metric = kd.metrics.Ssim(pred="p", target="t", filter_size=5, filter_sigma=0.8, k1=0.05, k2=0.1)
    expected = _reference_ssim(pred, target, size=5, sigma=0.8, k1=0.05, k2=0.1).mean()
    np.testing.assert_allclose(metric(pred=pred, target=target), expected, rtol=1e-5)


def test_ssim_of_identical_images_is_one():
    _, target = _images()
    np.testing.assert_allclose(
        kd.metrics.Ssim(pred="p", target="t")(pred=target, target=target), 1.0, rtol=1e-6
    )


def test_ssim_rescales_from_in_vrange():
    pred, target = _images()
    metric = kd.metrics.Ssim(pred="p", target="t", in_vrange=(-1.0, 1.0))
    value = metric(pred=pred * 2 - 1, target=target * 2 - 1)
    np.testing.assert_allclose(value, _reference_ssim(pred, target).mean(), rtol=1e-5)


def test_ssim_mask_weights_the_images():
    pred, target = _images()
    mask = np.array([True, False, True])
    value = kd.metrics.Ssim(pred="p", target="t", mask="m")(pred=pred, target=target, mask=mask)
    np.testing.assert_allclose(value, _reference_ssim(pred[mask], target[mask]).mean(), rtol=1e-5)


def test_ssim_states_merge_across_batches_like_one_batch():
    pred, target = _images(shape=(4, 12, 12, 3))
    metric = kd.metrics.Ssim(pred="p", target="t")
    merged = metric.get_state(pred=pred[:1], target=target[:1]).merge(
        metric.get_state(pred=pred[1:], target=target[1:])
    )
    np.testing.assert_allclose(merged.compute(), _reference_ssim(pred, target).mean(), rtol=1e-5)


# ---------------------------------------------------------------------------------------------- both


@pytest.mark.parametrize("metric_type", [kd.metrics.Psnr, kd.metrics.Ssim])
def test_runs_in_jit_from_a_context(metric_type):
    pred, target = _images(shape=(2, 12, 12, 3))
    metric = metric_type(pred="preds.image", target="batch.image")
    context = {"preds": {"image": pred}, "batch": {"image": target}}
    state = jax.jit(metric.get_state_from_context)(context)
    assert isinstance(state, kd.metrics.AverageState)
    np.testing.assert_allclose(jax.device_get(state).compute(), metric(context=context), rtol=1e-6)


@pytest.mark.parametrize("metric_type", [kd.metrics.Psnr, kd.metrics.Ssim])
def test_pred_and_target_of_different_shapes_name_both(metric_type):
    pred, _ = _images(shape=(2, 12, 12, 3))
    _, target = _images(shape=(2, 12, 14, 3))
    with pytest.raises(ValueError, match=r"pred \(2, 12, 12, 3\) and target \(2, 12, 14, 3\)"):
        metric_type(pred="p", target="t").get_state(pred=pred, target=target)


def test_ssim_of_images_smaller_than_the_window_is_an_error():
    pred, target = _images(shape=(2, 8, 16, 1))
    with pytest.raises(ValueError, match=r"8x16 pixels .* smaller than the 11x11 window.*at most 8"):
        kd.metrics.Ssim(pred="p", target="t").get_state(pred=pred, target=target)


def test_images_without_a_channel_axis_are_a_type_error():
    pred, target = _images(shape=(12, 12, 1))
    with pytest.raises(TypeError, match="pred"):
        kd.metrics.Psnr(pred="p", target="t").get_state(pred=pred[..., 0], target=target[..., 0])


@pytest.mark.parametrize("metric_type", [kd.metrics.Psnr, kd.metrics.Ssim])
def test_an_empty_in_vrange_is_an_error(metric_type):
    with pytest.raises(ValueError, match=r"in_vrange must be \(min, max\) with max > min, got \(1.0, 1.0\)"):
        metric_type(pred="p", target="t", in_vrange=(1.0, 1.0))


def test_a_window_of_no_pixels_is_an_error():
    with pytest.raises(ValueError, match="filter_size=0"):
        kd.metrics.Ssim(pred="p", target="t", filter_size=0)
