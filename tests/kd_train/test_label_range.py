"""Integer labels outside the logits' classes are named before training (`kd.train._first_batch`) and, under
checkify's user checks, on any batch (`kd._label_range`); a masked padding label is not flagged."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import kd
import kontext
import numpy as np
import pytest
import train_fixtures as lib
from flax import linen as nn
from jax.experimental import checkify
from kd import _label_range
from kd.train import ConfigError
from kd.train._first_batch import check_label_ranges


class Classifier(nn.Module):
    """x (b, 2) -> `features` logits."""

    features: int = 10
    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return nn.Dense(self.features)(x)


def _examples(labels: np.ndarray) -> dict[str, np.ndarray]:
    x = np.random.default_rng(0).normal(size=(len(labels), 2)).astype(np.float32)
    return {"x": x, "label": np.asarray(labels, np.int32)}


class HostBatches:
    """These batches, in order, once each (no position to save)."""

    def __init__(self, *batches: dict[str, np.ndarray]) -> None:
        self.batches = batches
        self.element_spec = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), batches[0])

    def __iter__(self):
        return iter(self.batches)


XENT = kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="batch.label")
SPECS = {"preds": jax.ShapeDtypeStruct((4, 10), jnp.float32)}


def _check(labels, obj=XENT, *, field="train_losses", **batch) -> None:
    groups = {field: {"xent" if field.endswith("losses") else "acc": obj}}
    check_label_ranges(groups, SPECS, {"label": np.asarray(labels), **batch}, seen="the first batch")


# ---------------------------------------------------------------------------------------------- the Trainer


@pytest.mark.parametrize(
    ("train_ds", "steps_per_call", "found"),
    [
        # an InMemoryPipeline's examples sit on the device: every example is checked
        (kd.data.InMemoryPipeline(loader=lambda: _examples(np.arange(64) % 10), batch_size=8), None,
         "hold values 0..9 (all 64 examples)"),
        # host batches stacked for a fused call (the first holds one update, padded)
        (kd.data.InMemoryPipeline(loader=lambda: _examples(np.arange(64) % 10), batch_size=8,
                                  on_device=False), 4, "hold values 0..7 (the first batch)"),
        (HostBatches(*[_examples(np.arange(8) + i) for i in range(4)]), 1,
         "hold values 0..7 (the first batch)"),
    ],
)  # fmt: skip
def test_a_1_output_classifier_on_10_classes_stops_before_its_first_step(train_ds, steps_per_call, found):
    trainer = lib.make_trainer(
        train_ds=train_ds,
        model=Classifier(features=1),
        train_losses={"xent": XENT},
        steps_per_call=steps_per_call,
    )
    with pytest.raises(ConfigError) as info:
        trainer.train()
    message = str(info.value)
    assert message.startswith(
        "train_losses['xent'] (SoftmaxCrossEntropyWithIntLabels): the labels at batch.label"
    )
    assert found in message
    assert "the logits at preds have 1 class on their last axis: a label must be in 0..0" in message
    assert "(cfg.model.features is 1)" in message
    assert trainer.trainstep.num_traces == {}  # named before the step was traced or compiled


def test_an_evaluations_first_batch_is_checked_before_its_step_compiles():
    trainer = lib.make_trainer(
        train_ds=HostBatches(_examples(np.arange(8))),
        model=Classifier(features=8),
        train_losses={"xent": XENT},
    )
    state = trainer.init_state()
    with pytest.raises(ConfigError, match=r"^losses\['xent'\] .* hold values 0\.\.9 \(the first batch\)"):
        trainer.trainstep.eval_step(state, _examples(np.arange(10)))


def test_labels_within_the_classes_train_as_before():
    trainer = lib.make_trainer(
        train_ds=HostBatches(*[_examples(np.arange(8)) for _ in range(2)]),
        model=Classifier(features=8),
        train_losses={"xent": XENT},
        train_metrics={"acc": kd.metrics.Accuracy(logits="preds", labels="batch.label")},
        num_train_steps=2,
        steps_per_call=1,
    )
    state, _ = trainer.train()
    assert int(state.step) == 2


def test_under_checkify_a_later_batch_with_a_label_out_of_range_stops_the_run():
    trainer = lib.make_trainer(
        train_ds=HostBatches(*[_examples(np.arange(8) + (i == 2) * 5) for i in range(4)]),  # batch 3: 5..12
        model=Classifier(features=10),
        train_losses={"xent": XENT},
        steps_per_call=1,
        checkify_error_categories=checkify.user_checks,
    )
    with pytest.raises(checkify.JaxRuntimeError) as info:  # the first batch passed the start-up check
        trainer.train()
    assert (
        "SoftmaxCrossEntropyWithIntLabels: labels at batch.label hold values 5..12, but the logits at preds "
        "have 10 classes on their last axis: a label must be in 0..9"
    ) in str(info.value)


def test_a_step_without_checkify_holds_no_label_check():
    logits, labels = jnp.zeros((4, 10)), jnp.arange(4)
    plain = jax.make_jaxpr(lambda x, y: XENT.get_state(logits=x, labels=y).compute())(logits, labels)
    checked = jax.make_jaxpr(
        _label_range.with_label_checks(lambda x, y: XENT.get_state(logits=x, labels=y).compute())
    )(logits, labels)
    assert "check" not in str(plain)
    assert "check" in str(checked)


def test_under_checkify_a_masked_padding_label_passes_and_an_unmasked_one_fails():
    masked = kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="l", labels="y", mask="m")
    checked = checkify.checkify(
        _label_range.with_label_checks(
            lambda y, m: masked.get_state(logits=jnp.zeros((2, 4)), labels=y, mask=m)
        ),
        errors=checkify.user_checks,
    )
    labels = jnp.array([[3], [-1]])  # a trailing axis, as the loss takes it
    assert checked(labels, jnp.array([[1.0], [0.0]]))[0].get() is None
    assert "hold values -1..3" in checked(labels, jnp.array([[1.0], [1.0]]))[0].get()


# ---------------------------------------------------------------------------------------------- the checker


def test_labels_in_range_pass_with_or_without_a_trailing_axis():
    _check(np.arange(4) + 6)
    _check((np.arange(4) + 6)[:, None])


def test_a_trailing_axis_label_out_of_range_is_named():
    with pytest.raises(ConfigError, match=r"hold values 7\.\.10 \(the first batch\).* \(1 of 4 are not\)"):
        _check((np.arange(4) + 7)[:, None])


def test_a_negative_label_is_named_with_the_mask_that_would_leave_it_out():
    with pytest.raises(ConfigError) as info:
        _check([3, -1, 2, 0])
    assert "hold values -1..3" in str(info.value)
    assert "a padding label such as -1 needs a mask (`mask=`) that is 0 there" in str(info.value)


def test_a_masked_padding_label_is_not_flagged():
    masked = kd.losses.SoftmaxCrossEntropyWithIntLabels(
        logits="preds", labels="batch.label", mask="batch.mask"
    )
    _check([3, -1, 2, -1], masked, mask=np.array([1, 0, 1, 0]))
    with pytest.raises(ConfigError, match=r"hold values -1\.\.3"):  # unmasked there
        _check([3, -1, 2, -1], masked, mask=np.array([1, 1, 1, 0]))


def test_a_mask_the_model_computes_leaves_the_labels_unchecked():
    masked = kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="batch.label", mask="preds")
    _check([30, -1, 2, 0], masked)


def test_a_metric_is_named_with_its_field():
    accuracy = kd.metrics.Accuracy(logits="preds", labels="batch.label")
    with pytest.raises(ConfigError, match=r"^train_metrics\['acc'\] \(Accuracy\): the labels at batch.label"):
        _check([0, 12, 3, 4], accuracy, field="train_metrics")


def test_labels_the_model_computes_are_not_read():
    from_preds = kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="preds.label")
    _check([30, 30, 30, 30], from_preds)


def test_numpys_default_int64_labels_train_without_a_dtype_warning():
    # Labels made with numpy's default integer (int64) become int32 without x64; the Trainer's init says so to
    # JAX instead of asking for int64 zeros (which printed a warning about a dtype the user never asked for).
    import warnings

    import optax

    data = {"x": np.ones((32, 4), np.float32), "label": np.arange(32) % 3}
    assert data["label"].dtype == np.int64
    trainer = kd.train.Trainer(
        train_ds=kd.data.InMemoryPipeline(loader=lambda: data, batch_size=8),
        model=kd.nn.ExternalModule(model=nn.Dense(3), keys="batch.x"),
        optimizer=optax.sgd(0.1),
        train_losses={"xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="batch.label")},
        num_train_steps=2,
        steps_per_call=1,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        state, _ = trainer.train()
    assert int(state.step) == 2
