"""kd.contrib.metrics (MeanCov, MultilabelAveragePrecision, RootMeanSquaredError) and kd.contrib.summaries.ConfusionMatrix."""

from __future__ import annotations

import math

import flax.struct
import jax
import jax.numpy as jnp
import ktyping
import numpy as np
import pytest
from kd import metrics, summaries
from kd.contrib import metrics as contrib_metrics
from kd.contrib import summaries as contrib_summaries
from precision import rtol
from sklearn import metrics as sk_metrics

MeanCov = contrib_metrics.MeanCov
RootMeanSquaredError = contrib_metrics.RootMeanSquaredError
MultilabelAveragePrecision = contrib_metrics.MultilabelAveragePrecision
ConfusionMatrix = contrib_summaries.ConfusionMatrix


def _batches(x: np.ndarray, sizes: tuple[int, ...]) -> list[np.ndarray]:
    return np.split(x, np.cumsum(sizes)[:-1])


# ---------------------------------------------------------------- MeanCov


@pytest.mark.parametrize("ddof", [0, 1])
def test_meancov_merged_over_batches_is_np_cov_of_all_samples(ddof):
    samples = np.random.default_rng(0).normal(size=(23, 4)) * [1.0, 2.0, 0.5, 3.0] + [1.0, -2.0, 5.0, 0.0]
    state = MeanCov.empty()
    for batch in _batches(samples, (5, 9, 1, 8)):
        state = state.merge(MeanCov.from_samples(jnp.asarray(batch, jnp.float32), ddof=ddof))
    mean, cov = state.finalize().compute()
    np.testing.assert_allclose(mean, samples.mean(axis=0), rtol=rtol(1e-5), atol=1e-5)
    np.testing.assert_allclose(cov, np.cov(samples, rowvar=False, ddof=ddof), rtol=rtol(1e-5), atol=1e-5)


def test_meancov_fweights_match_np_cov_fweights():
    rng = np.random.default_rng(1)
    samples = rng.normal(size=(12, 3))
    weights = rng.integers(1, 5, size=12)
    first = MeanCov.from_samples(
        jnp.asarray(samples[:7], jnp.float32), fweights=jnp.asarray(weights[:7]), ddof=1
    )
    second = MeanCov.from_samples(
        jnp.asarray(samples[7:], jnp.float32), fweights=jnp.asarray(weights[7:]), ddof=1
    )
    mean, cov = first.merge(second).compute()
    np.testing.assert_allclose(mean, np.average(samples, axis=0, weights=weights), rtol=rtol(1e-5), atol=1e-6)
    np.testing.assert_allclose(
        cov, np.cov(samples, rowvar=False, fweights=weights, ddof=1), rtol=rtol(1e-5), atol=1e-6
    )


def test_meancov_zero_fweights_leave_rows_out():
    samples = np.random.default_rng(2).normal(size=(10, 2)).astype(np.float32)
    keep = np.array([1, 0, 1, 1, 0, 0, 1, 1, 1, 0], np.int32)
    mean, cov = MeanCov.from_samples(jnp.asarray(samples), fweights=jnp.asarray(keep)).compute()
    kept = samples[keep.astype(bool)]
    np.testing.assert_allclose(mean, kept.mean(axis=0), rtol=rtol(1e-5), atol=1e-6)
    np.testing.assert_allclose(cov, np.cov(kept, rowvar=False, ddof=0), rtol=rtol(1e-5), atol=1e-6)


def test_meancov_batch_of_zero_weight_merges_as_nothing():
    samples = jnp.asarray([[1.0, 2.0], [3.0, 5.0], [4.0, 4.0]])
    state = MeanCov.from_samples(samples)
    nothing = MeanCov.from_samples(jnp.ones((2, 2)), fweights=jnp.zeros(2, jnp.int32))
    for merged in (state.merge(nothing), nothing.merge(state)):
        mean, cov = merged.compute()
        np.testing.assert_allclose(mean, state.compute()[0], rtol=1e-6)
        np.testing.assert_allclose(cov, state.compute()[1], rtol=1e-6, atol=1e-6)


def test_meancov_empty_state_merges_as_nothing_and_computes_none():
    state = MeanCov.from_samples(jnp.asarray([[1.0, 0.0], [0.0, 1.0]]))
    assert MeanCov.empty().compute() == (None, None)
    assert MeanCov.empty().merge(state) is state
    assert state.merge(MeanCov.empty()) is state


def test_meancov_states_of_different_ddof_do_not_merge():
    x = jnp.ones((3, 2))
    with pytest.raises(metrics.StateMergeError, match="ddof"):
        MeanCov.from_samples(x, ddof=0).merge(MeanCov.from_samples(x, ddof=1))


def test_meancov_with_weight_not_above_ddof_has_nan_covariance():
    mean, cov = MeanCov.from_samples(jnp.asarray([[1.0, 2.0]]), ddof=1).compute()
    np.testing.assert_allclose(mean, [1.0, 2.0])
    assert np.isnan(np.asarray(cov)).all()


def test_meancov_finalize_gives_float32_numpy_arrays():
    final = MeanCov.from_samples(jnp.asarray([[1.0, 2.0], [2.0, 1.0]])).finalize()
    for value in (final.total, final.squares, final.weight):
        assert isinstance(value, np.ndarray)
        assert value.dtype == np.float32


def test_meancov_merges_and_computes_inside_jit():
    a = jnp.asarray([[1.0, 2.0], [3.0, 1.0]])
    b = jnp.asarray([[0.0, 0.0], [2.0, 2.0], [5.0, 1.0]])

    @jax.jit
    def merged(a, b):
        return MeanCov.from_samples(a, ddof=1).merge(MeanCov.from_samples(b, ddof=1)).compute()

    mean, cov = merged(a, b)
    both = np.concatenate([a, b])
    np.testing.assert_allclose(mean, both.mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(cov, np.cov(both, rowvar=False, ddof=1), rtol=rtol(1e-5), atol=1e-6)


def test_meancov_rejects_samples_that_are_not_a_matrix():
    with pytest.raises(ktyping.KTypeCheckError, match="samples"):
        MeanCov.from_samples(jnp.ones(4))


def test_meancov_subclass_with_its_own_compute_as_in_kauldron():
    @flax.struct.dataclass
    class Trace(MeanCov):
        def compute(self):
            _, cov = super().compute()
            return float(np.trace(cov))

    samples = np.asarray([[1.0, 2.0], [3.0, 0.0], [2.0, 7.0]], np.float32)
    state = Trace.from_samples(jnp.asarray(samples[:1])).merge(Trace.from_samples(jnp.asarray(samples[1:])))
    assert isinstance(state, Trace)
    np.testing.assert_allclose(state.compute(), np.trace(np.cov(samples, rowvar=False, ddof=0)), rtol=1e-5)


# ---------------------------------------------------------------- MultilabelAveragePrecision


def test_multilabel_average_precision_over_batches_is_sklearns_macro_average():
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(40, 5)).astype(np.float32)
    labels = (rng.random((40, 5)) < 0.4).astype(np.int32)
    metric = MultilabelAveragePrecision(scores="preds.scores", labels="batch.labels")
    state = metric.empty()
    for s, y in zip(_batches(scores, (16, 16, 8)), _batches(labels, (16, 16, 8))):
        state = state.merge(metric.get_state(scores=jnp.asarray(s), labels=jnp.asarray(y)))
    expected = sk_metrics.average_precision_score(labels, scores)
    np.testing.assert_allclose(state.finalize().compute(), expected, rtol=1e-6)


def test_multilabel_average_precision_of_perfect_scores_is_one():
    labels = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]], np.int32)
    scores = labels + np.random.default_rng(4).uniform(0, 0.5, labels.shape)
    metric = MultilabelAveragePrecision(scores="s", labels="y")
    assert metric(scores=jnp.asarray(scores, jnp.float32), labels=jnp.asarray(labels)) == 1.0


def test_multilabel_average_precision_reads_its_inputs_from_the_context():
    context = {
        "preds": {"s": jnp.asarray([[0.9, 0.1], [0.2, 0.8]])},
        "batch": {"y": jnp.asarray([[1, 0], [0, 1]])},
    }
    metric = MultilabelAveragePrecision(scores="preds.s", labels="batch.y")
    assert metric(context=context) == 1.0


def test_multilabel_average_precision_of_no_examples_is_nan():
    assert math.isnan(MultilabelAveragePrecision().empty().compute())


def test_multilabel_average_precision_rejects_float_labels():
    with pytest.raises(ktyping.KTypeCheckError, match="labels"):
        MultilabelAveragePrecision().get_state(scores=jnp.ones((2, 3)), labels=jnp.ones((2, 3)))


# ---------------------------------------------------------------- RootMeanSquaredError


def _rmse_reference(preds: np.ndarray, targets: np.ndarray, mode: str) -> float:
    per_sample = ((preds - targets) ** 2).reshape(len(preds), -1).sum(axis=1)
    if mode == "trad":
        return float(np.sqrt(per_sample.mean()))
    if mode == "average_all":
        return float(np.sqrt(((preds - targets) ** 2).mean()))
    return float(np.sqrt(per_sample).mean())


@pytest.mark.parametrize("mode", contrib_metrics.RMSE_MODES)
def test_rmse_merged_over_batches_matches_numpy_in_each_mode(mode):
    rng = np.random.default_rng(5)
    targets = rng.normal(size=(11, 3, 2)).astype(np.float32)
    preds = (targets + rng.normal(scale=0.3, size=targets.shape)).astype(np.float32)
    metric = RootMeanSquaredError(preds="p", targets="t", rmse_mode=mode)
    get_state = jax.jit(metric.get_state)
    state = metric.empty()
    for p, t in zip(_batches(preds, (4, 4, 3)), _batches(targets, (4, 4, 3))):
        state = state.merge(get_state(preds=p, targets=t))
    np.testing.assert_allclose(state.compute(), _rmse_reference(preds, targets, mode), rtol=rtol(1e-5))


def test_rmse_modes_differ_as_documented():
    preds = np.array([[3.0, 4.0], [0.0, 0.0]], np.float32)
    targets = np.zeros_like(preds)
    values = {
        mode: RootMeanSquaredError(rmse_mode=mode)(preds=preds, targets=targets)
        for mode in contrib_metrics.RMSE_MODES
    }
    assert values == pytest.approx(
        {"trad": math.sqrt(12.5), "average_all": math.sqrt(6.25), "per_sample_sqrt": 2.5}
    )


def test_rmse_unknown_mode_is_refused_when_the_metric_is_made():
    with pytest.raises(ValueError, match="rmse_mode must be one of"):
        RootMeanSquaredError(rmse_mode="mean")


def test_rmse_of_no_examples_is_nan():
    assert math.isnan(RootMeanSquaredError().empty().compute())


def test_rmse_rejects_predictions_and_targets_of_different_batch_sizes():
    with pytest.raises(ktyping.KTypeCheckError):
        RootMeanSquaredError().get_state(preds=jnp.ones((3, 2)), targets=jnp.ones((4, 2)))


def test_rmse_states_of_different_modes_do_not_merge():
    x = jnp.ones((2, 2))
    with pytest.raises(metrics.StateMergeError):
        RootMeanSquaredError(rmse_mode="trad").get_state(preds=x, targets=x).merge(
            RootMeanSquaredError(rmse_mode="average_all").get_state(preds=x, targets=x)
        )


# ---------------------------------------------------------------- ConfusionMatrix


def _random_classification(seed: int, n: int = 30, classes: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, classes)).astype(np.float32)
    labels = rng.integers(0, classes, size=(n, 1)).astype(np.int32)
    return logits, labels


@pytest.mark.parametrize("normalize", [None, "true", "pred", "all"])
def test_confusion_matrix_over_batches_is_sklearns(normalize):
    logits, labels = _random_classification(6)
    weights = np.random.default_rng(7).uniform(size=(30, 1)).astype(np.float32)
    summary = ConfusionMatrix(logits="l", labels="y", sample_weight="w", normalize=normalize, precision=4)
    state = summary.empty()
    for x, y, w in zip(*(_batches(a, (10, 15, 5)) for a in (logits, labels, weights))):
        state = state.merge(
            summary.get_state(logits=jnp.asarray(x), labels=jnp.asarray(y), sample_weight=jnp.asarray(w))
        )
    expected = sk_metrics.confusion_matrix(
        labels[:, 0], logits.argmax(-1), labels=np.arange(4), sample_weight=weights[:, 0], normalize=normalize
    )
    with np.printoptions(threshold=np.inf, precision=4):
        assert state.finalize().compute() == repr(expected)


def test_confusion_matrix_counts_are_integers_without_weights():
    logits, labels = _random_classification(8)
    value = ConfusionMatrix()(logits=jnp.asarray(logits), labels=jnp.asarray(labels))
    assert value == repr(sk_metrics.confusion_matrix(labels[:, 0], logits.argmax(-1), labels=np.arange(4)))
    assert "." not in value


def test_confusion_matrix_flattens_batch_axes():
    logits, labels = _random_classification(9, n=24)
    value = ConfusionMatrix()(
        logits=jnp.asarray(logits.reshape(4, 6, 4)), labels=jnp.asarray(labels.reshape(4, 6, 1))
    )
    assert value == repr(sk_metrics.confusion_matrix(labels[:, 0], logits.argmax(-1), labels=np.arange(4)))


def test_confusion_matrix_zero_weight_masks_examples_out():
    logits = jnp.asarray([[2.0, 0.0], [0.0, 2.0], [2.0, 0.0]])
    labels = jnp.asarray([[0], [1], [1]], jnp.int32)
    value = ConfusionMatrix()(logits=logits, labels=labels, sample_weight=jnp.asarray([[1.0], [1.0], [0.0]]))
    assert value == repr(np.eye(2))


def test_confusion_matrix_shows_every_class_even_unseen_ones():
    value = ConfusionMatrix()(logits=jnp.asarray([[0.0, 1.0, 0.0]]), labels=jnp.asarray([[1]], jnp.int32))
    assert value == repr(np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]]))


def test_confusion_matrix_precision_sets_the_printed_digits():
    logits = jnp.asarray([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    labels = jnp.asarray([[0], [0], [0]], jnp.int32)
    value = ConfusionMatrix(normalize="true", precision=3)(logits=logits, labels=labels)
    assert "0.333" in value
    assert "0.3333" not in value


def test_confusion_counts_leave_out_labels_outside_the_classes():
    counts = contrib_summaries.confusion_counts(
        np.array([0, -1, 1, 5]), np.array([1, 0, 1, 0]), num_classes=2
    )
    np.testing.assert_array_equal(counts, [[0, 1], [0, 1]])


def test_confusion_matrix_states_of_different_class_counts_do_not_merge():
    summary = ConfusionMatrix()
    two = summary.get_state(logits=jnp.ones((1, 2)), labels=jnp.zeros((1, 1), jnp.int32))
    three = summary.get_state(logits=jnp.ones((1, 3)), labels=jnp.zeros((1, 1), jnp.int32))
    with pytest.raises(metrics.StateMergeError, match="num_classes"):
        two.merge(three)


def test_confusion_matrix_unknown_normalize_is_refused():
    with pytest.raises(ValueError, match="normalize must be one of"):
        ConfusionMatrix(normalize="rows")


def test_confusion_matrix_is_a_summary_whose_state_is_made_inside_jit():
    summary = ConfusionMatrix(logits="l", labels="y")
    assert isinstance(summary, summaries.Summary)
    state = jax.jit(summary.get_state)(logits=jnp.eye(3), labels=jnp.asarray([[0], [1], [2]], jnp.int32))
    assert state.finalize().compute() == repr(np.eye(3, dtype=int))
