"""A custom metric, loss or summary written without `@dataclasses.dataclass`, configured with konfig."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import konfig
import kontext
import numpy as np
import pytest
from kd import losses, metrics, summaries


class UndecoratedAccuracy(metrics.Metric):
    logits: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED

    def get_state(self, logits, labels):
        return metrics.AverageState(total=(logits.argmax(-1) == labels).sum(), count=labels.size)


class UndecoratedL1(losses.Loss):
    preds: kontext.Key = kontext.REQUIRED

    def get_values(self, preds):
        return jnp.abs(preds)


class UndecoratedMean(summaries.Summary):
    tensor: kontext.Key = kontext.REQUIRED

    def get_state(self, tensor):
        return metrics.AverageState(total=tensor.sum(), count=tensor.size)


# What the error message advises.
@dataclasses.dataclass(frozen=True, kw_only=True)
class DecoratedAccuracy(UndecoratedAccuracy):
    logits: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED


def _configured(cls: type, **kwargs: str) -> konfig.ConfigDict:
    return konfig.ConfigDict({"__qualname__": f"{__name__}:{cls.__qualname__}", **kwargs})


@pytest.mark.parametrize(
    ("cls", "key", "base", "takes"),
    [
        (UndecoratedAccuracy, "logits", "Metric", "takes no arguments"),
        (UndecoratedL1, "preds", "Loss", "takes only mask, normalize_by, step, weight"),
        (UndecoratedMean, "tensor", "Summary", "takes no arguments"),
    ],
)
def test_undecorated_subclass_is_told_to_be_a_frozen_keyword_only_dataclass(cls, key, base, takes):
    with pytest.raises(konfig.ArgumentError) as info:
        _configured(cls, **{key: "preds.logits"})
    message = str(info.value)
    assert f"{cls.__name__}() got an unexpected keyword argument {key!r}" in message
    assert f"`{cls.__name__}` declares `{key}` but is not a dataclass itself" in message
    assert f"its dataclass base `{base}`, which {takes}" in message
    assert "`@dataclasses.dataclass(frozen=True, kw_only=True)`" in message


def test_the_advised_decorator_makes_the_metric_configurable():
    metric = konfig.resolve(_configured(DecoratedAccuracy, logits="preds.logits", labels="batch.label"))
    context = {
        "preds": {"logits": jnp.array([[1.0, 0.0], [1.0, 0.0]])},
        "batch": {"label": jnp.array([0, 1])},
    }
    np.testing.assert_allclose(metric(context=context), 0.5)
