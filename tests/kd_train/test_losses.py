"""kd.losses: values against hand-computed numpy, mask / normalize_by / weight semantics, shape errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import konfig
import kontext
import ktyping
import numpy as np
import optax
import pytest
from kd import losses, metrics
from precision import rtol

_PREDS = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
_TARGETS = np.array([[0.0, 2.5], [1.0, 1.0]], np.float32)
_LOGITS = np.array([[2.0, 1.0, 0.1], [0.5, 2.5, 0.0]], np.float32)
_INT_LABELS = np.array([0, 2])


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _value(loss: losses.Loss, **inputs) -> float:
    return float(loss.get_state(**inputs).compute())


def test_l1_is_the_mean_absolute_error():
    value = _value(losses.L1(preds="p", targets="t"), preds=_PREDS, targets=_TARGETS)
    np.testing.assert_allclose(value, np.abs(_PREDS - _TARGETS).mean(), rtol=1e-6)


def test_l2_is_the_mean_squared_error_without_a_half():
    value = _value(losses.L2(preds="p", targets="t"), preds=_PREDS, targets=_TARGETS)
    np.testing.assert_allclose(value, ((_PREDS - _TARGETS) ** 2).mean(), rtol=1e-6)


def test_huber_is_quadratic_below_delta_and_linear_above():
    delta = 1.0
    err = np.abs(_PREDS - _TARGETS)
    expected = np.where(err <= delta, 0.5 * err**2, delta * (err - 0.5 * delta)).mean()
    value = _value(losses.Huber(preds="p", targets="t", delta=delta), preds=_PREDS, targets=_TARGETS)
    np.testing.assert_allclose(value, expected, rtol=rtol(1e-6))


def test_softmax_cross_entropy_with_probability_labels():
    labels = np.array([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]], np.float32)
    expected = -(labels * _log_softmax(_LOGITS)).sum(-1).mean()
    value = _value(losses.SoftmaxCrossEntropy(logits="l", labels="y"), logits=_LOGITS, labels=labels)
    np.testing.assert_allclose(value, expected, rtol=rtol(1e-6))


@pytest.mark.parametrize("labels", [_INT_LABELS, _INT_LABELS[:, None]], ids=["b", "b_1"])
def test_softmax_cross_entropy_with_int_labels_shaped_b_or_b_1(labels):
    expected = -_log_softmax(_LOGITS)[np.arange(2), _INT_LABELS].mean()
    loss = losses.SoftmaxCrossEntropyWithIntLabels(logits="l", labels="y")
    np.testing.assert_allclose(_value(loss, logits=_LOGITS, labels=labels), expected, rtol=rtol(1e-6))


def test_softmax_cross_entropy_with_int_labels_keeps_the_labels_shape():
    loss = losses.SoftmaxCrossEntropyWithIntLabels(logits="l", labels="y")
    assert loss.get_values(logits=_LOGITS, labels=_INT_LABELS).shape == (2,)
    assert loss.get_values(logits=_LOGITS, labels=_INT_LABELS[:, None]).shape == (2, 1)


def test_int_label_cross_entropy_equals_optaxs_and_its_gradient_traces_under_checkify():
    from jax.experimental import checkify

    logits = jax.random.normal(jax.random.key(0), (64, 37)) * 5
    labels = jax.random.randint(jax.random.key(1), (64,), 0, 37)
    loss = losses.SoftmaxCrossEntropyWithIntLabels(logits="l", labels="y")
    ours = lambda x: loss.get_values(logits=x, labels=labels).sum()  # noqa: E731
    theirs = lambda x: optax.softmax_cross_entropy_with_integer_labels(x, labels).sum()  # noqa: E731
    np.testing.assert_array_equal(
        loss.get_values(logits=logits, labels=labels),
        optax.softmax_cross_entropy_with_integer_labels(logits, labels),
    )
    np.testing.assert_allclose(jax.grad(ours)(logits), jax.grad(theirs)(logits), rtol=1e-6, atol=1e-7)
    error, grad = jax.jit(checkify.checkify(jax.grad(ours), errors=checkify.all_checks))(logits)
    error.throw()  # optax's gather-based gradient raises IndexError inside checkify (jax 0.10)
    np.testing.assert_allclose(grad, jax.grad(theirs)(logits), rtol=1e-6, atol=1e-7)
    # a padding label (-1) under a zero mask adds nothing: the loss is the other examples' mean, finite
    padded = _value(loss, logits=logits[:2], labels=jnp.array([3, -1]), mask=np.array([True, False]))
    np.testing.assert_allclose(
        padded,
        optax.softmax_cross_entropy_with_integer_labels(logits[:1], labels=jnp.array([3]))[0],
        rtol=1e-6,
    )


def test_int_labels_of_the_wrong_shape_name_labels_and_both_shapes():
    loss = losses.SoftmaxCrossEntropyWithIntLabels(logits="l", labels="y")
    with pytest.raises(ktyping.KTypeCheckError) as info:
        loss.get_state(logits=np.zeros((4, 10), np.float32), labels=np.zeros((4, 3), np.int32))
    message = str(info.value)
    assert "argument labels" in message
    assert "(4, 3)" in message
    assert "f32[4 10]" in message  # the logits


def test_l2_of_mismatched_shapes_names_both_shapes():
    loss = losses.L2(preds="p", targets="t")
    with pytest.raises(ktyping.KTypeCheckError) as info:
        loss.get_state(preds=np.zeros((2, 3), np.float32), targets=np.zeros((2, 4), np.float32))
    message = str(info.value)
    assert "argument targets" in message
    assert "f32[2 3]" in message
    assert "(2, 4)" in message


def test_sigmoid_binary_cross_entropy_with_int_labels():
    labels = np.array([[1, 0, 1], [0, 1, 0]])
    probs = 1 / (1 + np.exp(-_LOGITS))
    expected = -(labels * np.log(probs) + (1 - labels) * np.log(1 - probs)).mean()
    value = _value(losses.SigmoidBinaryCrossEntropy(logits="l", labels="y"), logits=_LOGITS, labels=labels)
    np.testing.assert_allclose(value, expected, rtol=1e-5)


def test_loss_state_is_an_average_state_that_computes_inside_jit():
    loss = losses.L2(preds="p", targets="t")
    value = jax.jit(lambda p, t: loss.get_state(preds=p, targets=t).compute())(_PREDS, _TARGETS)
    np.testing.assert_allclose(value, ((_PREDS - _TARGETS) ** 2).mean(), rtol=1e-6)
    assert isinstance(loss.get_state(preds=_PREDS, targets=_TARGETS), metrics.AverageState)


def test_mask_normalized_by_mask_is_the_mean_over_kept_values():
    mask = np.array([[1.0], [0.0]], np.float32)  # broadcasts over the trailing axis
    value = _value(losses.L1(preds="p", targets="t"), preds=_PREDS, targets=_TARGETS, mask=mask)
    np.testing.assert_allclose(value, np.abs(_PREDS - _TARGETS)[0].mean(), rtol=1e-6)


def test_mask_normalized_by_values_divides_by_the_number_of_values():
    mask = np.array([[1.0], [0.0]], np.float32)
    loss = losses.L1(preds="p", targets="t", normalize_by="values")
    value = _value(loss, preds=_PREDS, targets=_TARGETS, mask=mask)
    np.testing.assert_allclose(value, np.abs(_PREDS - _TARGETS)[0].sum() / 4, rtol=1e-6)


def test_int_label_loss_with_a_per_example_mask_shaped_like_the_labels():
    loss = losses.SoftmaxCrossEntropyWithIntLabels(logits="l", labels="y")
    value = _value(loss, logits=_LOGITS, labels=_INT_LABELS, mask=np.array([True, False]))
    np.testing.assert_allclose(value, -_log_softmax(_LOGITS)[0, 0], rtol=rtol(1e-6))


def test_mask_that_does_not_broadcast_names_both_shapes():
    with pytest.raises(
        ValueError, match=r"mask of shape \(3,\) does not broadcast to the loss values of shape \(2, 2\)"
    ):
        losses.L1(preds="p", targets="t").get_state(preds=_PREDS, targets=_TARGETS, mask=np.ones(3))


def test_normalize_by_must_be_mask_or_values():
    with pytest.raises(ValueError, match="normalize_by must be 'mask' or 'values'"):
        losses.L1(preds="p", targets="t", normalize_by="batch")  # type: ignore[arg-type]


def test_constant_weight_scales_the_loss():
    base = _value(losses.L2(preds="p", targets="t"), preds=_PREDS, targets=_TARGETS)
    weighted = _value(losses.L2(preds="p", targets="t", weight=0.25), preds=_PREDS, targets=_TARGETS)
    np.testing.assert_allclose(weighted, 0.25 * base, rtol=1e-6)


def test_schedule_weight_is_evaluated_at_the_contexts_step():
    schedule = optax.linear_schedule(init_value=1.0, end_value=0.0, transition_steps=10)
    loss = losses.L2(preds="preds", targets="batch.y", weight=schedule)
    ctx = {"step": jnp.asarray(5), "preds": _PREDS, "batch": {"y": _TARGETS}}
    value = jax.jit(lambda c: loss.get_state_from_context(c).compute())(ctx)
    np.testing.assert_allclose(value, 0.5 * ((_PREDS - _TARGETS) ** 2).mean(), rtol=1e-6)


def test_schedule_weight_without_a_step_raises():
    loss = losses.L2(preds="p", targets="t", weight=optax.constant_schedule(2.0))
    with pytest.raises(ValueError, match="the weight is a schedule, so a step is needed"):
        loss.get_state(preds=_PREDS, targets=_TARGETS)


def test_constant_weight_loss_does_not_need_a_step_in_the_context():
    loss = losses.L1(preds="preds", targets="batch.y")
    state = loss.get_state_from_context({"preds": _PREDS, "batch": {"y": _TARGETS}})
    np.testing.assert_allclose(state.compute(), np.abs(_PREDS - _TARGETS).mean(), rtol=1e-6)


def test_loss_mask_is_looked_up_by_its_key():
    loss = losses.L1(preds="preds", targets="batch.y", mask="batch.mask")
    ctx = {"preds": _PREDS, "batch": {"y": _TARGETS, "mask": np.array([[0.0], [1.0]], np.float32)}}
    np.testing.assert_allclose(loss(context=ctx), np.abs(_PREDS - _TARGETS)[1].mean(), rtol=1e-6)


def test_loss_missing_input_raises_unresolved_keys_error():
    with pytest.raises(kontext.UnresolvedKeysError, match=r"batch\.y"):
        losses.L1(preds="preds", targets="batch.y").get_state_from_context({"preds": _PREDS, "batch": {}})


def test_loss_states_merge_into_the_mean_over_both_batches():
    loss = losses.L1(preds="p", targets="t")
    a = loss.get_state(preds=_PREDS[:1], targets=_TARGETS[:1])
    b = loss.get_state(preds=_PREDS[1:], targets=_TARGETS[1:])
    merged = jax.device_get(jax.jit(lambda x, y: x.merge(y))(a, b))
    np.testing.assert_allclose(merged.compute(), np.abs(_PREDS - _TARGETS).mean(), rtol=1e-6)


def test_compute_losses_sums_the_weighted_losses():
    tree = {"l1": losses.L1(preds="p", targets="t"), "l2": losses.L2(preds="p", targets="t", weight=2.0)}
    total, states = losses.compute_losses(tree, {"p": _PREDS, "t": _TARGETS})
    err = _PREDS - _TARGETS
    np.testing.assert_allclose(total, np.abs(err).mean() + 2 * (err**2).mean(), rtol=1e-6)
    assert set(states) == {"l1", "l2"}


def test_loss_built_from_a_konfig_config_works():
    with konfig.imports():
        import optax as cfg_optax
        from kd import losses as cfg_losses

    cfg = konfig.ConfigDict()
    cfg.loss = cfg_losses.L2(
        preds="preds",
        targets="batch.y",
        weight=cfg_optax.linear_schedule(init_value=1.0, end_value=0.0, transition_steps=4),
    )
    loss = konfig.resolve(cfg).loss
    assert isinstance(loss, losses.L2)
    ctx = {"step": 2, "preds": _PREDS, "batch": {"y": _TARGETS}}
    np.testing.assert_allclose(loss(context=ctx), 0.5 * ((_PREDS - _TARGETS) ** 2).mean(), rtol=1e-6)
