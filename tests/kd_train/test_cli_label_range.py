"""`kd-train` on a classifier with fewer outputs than its labels' classes: a real subprocess, the user's
files in a folder of theirs. It stops before the first step with one paragraph naming the loss and the
model's field."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"

MODELS = """\
import jax
import kontext
from flax import linen as nn


class MLP(nn.Module):
    hidden: int = 16
    features: int = 10
    image: kontext.Key = "batch.image"

    @nn.compact
    def __call__(self, image: jax.Array) -> jax.Array:
        h = nn.relu(nn.Dense(self.hidden)(image.reshape((image.shape[0], -1))))
        return nn.Dense(self.features)(h)
"""

DATA = """\
import numpy as np


def digits():
    rng = np.random.default_rng(0)
    return {"image": rng.uniform(size=(256, 8, 8)).astype(np.float32), "label": np.arange(256) % 10}
"""

CONFIG = """\
import konfig

with konfig.imports():
    import kd
    import my_data
    import my_models
    import optax


def get_config():
    cfg = kd.train.Trainer()
    cfg.num_train_steps = 20
    cfg.train_ds = kd.data.InMemoryPipeline(loader=my_data.digits, batch_size=32)
    cfg.model = my_models.MLP(features=1)  # the slip: 10 classes need 10 outputs
    cfg.optimizer = optax.adam(1e-3)
    cfg.train_losses = {
        "xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="batch.label"),
    }
    return cfg
"""


def test_a_1_output_classifier_on_10_classes_stops_with_one_paragraph(tmp_path):
    (tmp_path / "my_models.py").write_text(MODELS)
    (tmp_path / "my_data.py").write_text(DATA)
    (tmp_path / "digits.py").write_text(CONFIG)
    environment = {**{k: v for k, v in os.environ.items() if k != "KD_TRACEBACK"}, "JAX_PLATFORMS": "cpu"}
    result = subprocess.run(
        [KD_TRAIN, f"--cfg={tmp_path / 'digits.py'}"],
        capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=600,
    )  # fmt: skip

    assert result.returncode == 2, result.stderr
    output = (result.stdout + result.stderr).strip().splitlines()
    assert len(output) <= 6, output
    assert "Traceback" not in result.stderr
    (error,) = [line for line in output if line.startswith("error:")]
    assert error.startswith(
        "error: train_losses['xent'] (SoftmaxCrossEntropyWithIntLabels): the labels at batch.label"
    )
    assert "hold values 0..9 (all 256 examples)" in error
    assert "1 class on their last axis: a label must be in 0..0" in error
    assert "cfg.model.features is 1" in error
