"""kd.data.SyntheticRegression: y = sin(3 x0) + 0.5 x1 + noise, made on the fly."""

from __future__ import annotations

import numpy as np
import pytest
from kd import data


def test_returns_x_and_y_float32_arrays_of_the_asked_shapes():
    examples = data.SyntheticRegression(num_examples=16, num_features=3)()
    assert (examples["x"].shape, examples["x"].dtype) == ((16, 3), np.float32)
    assert (examples["y"].shape, examples["y"].dtype) == ((16, 1), np.float32)


def test_y_is_the_target_function_of_x_up_to_the_noise():
    examples = data.SyntheticRegression(num_examples=256, noise_std=0.01)()
    x = examples["x"]
    residual = examples["y"][:, 0] - (np.sin(3 * x[:, 0]) + 0.5 * x[:, 1])
    assert 0.005 < residual.std() < 0.02
    assert np.all((x >= -1) & (x < 1))


def test_without_noise_y_is_exact():
    examples = data.SyntheticRegression(num_examples=8, noise_std=0.0)()
    x = examples["x"]
    np.testing.assert_allclose(examples["y"][:, 0], np.sin(3 * x[:, 0]) + 0.5 * x[:, 1], rtol=1e-6)


def test_one_feature_drops_the_linear_term():
    examples = data.SyntheticRegression(num_examples=8, num_features=1, noise_std=0.0)()
    np.testing.assert_allclose(examples["y"][:, 0], np.sin(3 * examples["x"][:, 0]), rtol=1e-6)


def test_the_same_seed_gives_the_same_data_and_another_seed_other_data():
    a, b, c = (data.SyntheticRegression(num_examples=8, seed=s)() for s in (0, 0, 1))
    np.testing.assert_array_equal(a["x"], b["x"])
    assert not np.array_equal(a["x"], c["x"])


@pytest.mark.parametrize(("field", "value"), [("num_examples", 0), ("num_features", 0), ("noise_std", -1.0)])
def test_bad_sizes_are_rejected_naming_the_field(field, value):
    kwargs = {"num_examples": 4, field: value}
    with pytest.raises(ValueError, match=f"{field} must be"):
        data.SyntheticRegression(**kwargs)


def test_feeds_an_in_memory_pipeline():
    pipeline = data.InMemoryPipeline(loader=data.SyntheticRegression(num_examples=64), batch_size=16, seed=0)
    batch = next(iter(pipeline))
    assert batch["x"].shape == (16, 2) and batch["y"].shape == (16, 1)
