"""kd.losses' Value, AbsoluteValue and NegativeCosineSimilarity (Kauldron's names), against numpy."""

from __future__ import annotations

import jax
import ktyping
import numpy as np
import pytest
from kd import losses

_RNG = np.random.default_rng(0)
_VALUES = _RNG.normal(size=(3, 4)).astype(np.float32)
_PREDS = _RNG.normal(size=(2, 3, 5)).astype(np.float32)
_TARGETS = _RNG.normal(size=(2, 3, 5)).astype(np.float32)


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    dot = (a64 * b64).sum(-1)
    return dot / (np.sqrt((a64**2).sum(-1)) * np.sqrt((b64**2).sum(-1)))


def test_value_loss_is_the_mean_of_the_values():
    state = losses.Value(values="preds.aux").get_state(values=_VALUES)
    np.testing.assert_allclose(float(state.compute()), _VALUES.mean(), rtol=1e-6)


def test_value_loss_reads_its_key_from_the_context_and_applies_mask_and_weight():
    mask = np.array([[1.0], [0.0], [1.0]], np.float32)
    loss = losses.Value(values="preds.aux", mask="batch.mask", weight=0.5)
    state = loss.get_state_from_context({"preds": {"aux": _VALUES}, "batch": {"mask": mask}})
    expected = 0.5 * (_VALUES * mask).sum() / np.broadcast_to(mask, _VALUES.shape).sum()
    np.testing.assert_allclose(float(state.compute()), expected, rtol=1e-6)


def test_absolute_value_loss_is_the_mean_absolute_value():
    state = losses.AbsoluteValue(values="v").get_state(values=_VALUES)
    np.testing.assert_allclose(float(state.compute()), np.abs(_VALUES).mean(), rtol=1e-6)
    assert float(state.compute()) > abs(float(_VALUES.mean()))  # not the plain mean: signs do not cancel


def test_value_losses_take_float_arrays_only():
    with pytest.raises(ktyping.KTypeCheckError, match="argument values"):
        losses.Value(values="v").get_state(values=np.ones((2, 2), np.int32))
    with pytest.raises(ktyping.KTypeCheckError, match="argument values"):
        losses.AbsoluteValue(values="v").get_state(values=np.ones((2,), np.int32))


def test_negative_cosine_similarity_is_minus_the_cosine_per_vector():
    loss = losses.NegativeCosineSimilarity(preds="p", targets="t")
    values = np.asarray(loss.get_values(preds=_PREDS, targets=_TARGETS))
    assert values.shape == (2, 3, 1)
    np.testing.assert_allclose(values[..., 0], -_cosine(_PREDS, _TARGETS), rtol=1e-5, atol=1e-6)
    mean = float(loss.get_state(preds=_PREDS, targets=_TARGETS).compute())
    np.testing.assert_allclose(mean, -_cosine(_PREDS, _TARGETS).mean(), rtol=1e-5, atol=1e-6)


def test_negative_cosine_similarity_is_minus_one_when_aligned_and_one_when_opposite():
    loss = losses.NegativeCosineSimilarity(preds="p", targets="t")
    x = _PREDS[0]
    np.testing.assert_allclose(np.asarray(loss.get_values(preds=x, targets=3.0 * x)), -1.0, atol=1e-6)
    np.testing.assert_allclose(np.asarray(loss.get_values(preds=x, targets=-0.5 * x)), 1.0, atol=1e-6)


def test_negative_cosine_similarity_of_a_zero_vector_is_zero_thanks_to_eps():
    loss = losses.NegativeCosineSimilarity(preds="p", targets="t")
    zeros = np.zeros((2, 4), np.float32)
    values = np.asarray(loss.get_values(preds=zeros, targets=_VALUES[:2]))
    np.testing.assert_array_equal(values, np.zeros((2, 1), np.float32))
    grads = jax.grad(lambda p: loss.get_state(preds=p, targets=_VALUES[:2]).compute())(zeros)
    assert np.isfinite(np.asarray(grads)).all()


def test_negative_cosine_similarity_eps_is_added_to_the_norms():
    p = np.array([[3.0, 4.0]], np.float32)  # norm 5
    t = np.array([[1.0, 0.0]], np.float32)  # norm 1
    loss = losses.NegativeCosineSimilarity(preds="p", targets="t", eps=1.0)
    np.testing.assert_allclose(
        np.asarray(loss.get_values(preds=p, targets=t)), [[-3.0 / (6.0 * 2.0)]], rtol=1e-6
    )


def test_negative_cosine_similarity_needs_the_same_last_axis():
    loss = losses.NegativeCosineSimilarity(preds="p", targets="t")
    with pytest.raises(ktyping.KTypeCheckError, match="argument targets"):
        loss.get_values(preds=np.zeros((2, 3), np.float32), targets=np.zeros((2, 4), np.float32))
