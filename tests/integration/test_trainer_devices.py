"""The Trainer on several devices: batches split over 8 (fake CPU) devices, the state replicated, same result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("flax")

REPO = Path(__file__).resolve().parents[2]

_RUN = """
import json, os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=" + sys.argv[1]
import jax, konfig
import kd
cfg, _ = konfig.parse_flags(["--cfg.num_train_steps=30", "--cfg.log_metrics_every=10"], default="examples/mlp_regression.py")
with konfig.imports():
    import kd as c_kd
# 100 evaluation rows in batches of 64: the last batch (36 rows) does not split over 8 devices.
cfg.eval_ds = c_kd.data.InMemoryPipeline(
    loader=c_kd.data.SyntheticRegression(num_examples=100, seed=1), batch_size=64, shuffle=False,
    num_epochs=1, drop_remainder=False,
)
cfg.evals = {"holdout": c_kd.evals.Evaluator(run=c_kd.evals.Final())}
cfg.writer = c_kd.writers.InMemoryWriter()
trainer = konfig.resolve(cfg)
state, logged = trainer.train()
batch = trainer.sharding.put_batch(next(iter(trainer.train_ds)))
print(json.dumps({
    "devices": jax.device_count(),
    "step": int(state.step),
    "batch_shards": len(batch["x"].addressable_shards),
    "param_spec": str(jax.tree.leaves(state.params)[0].sharding.spec),
    "loss": logged["losses/l2"],
    "eval_loss": trainer.writer.scalars["holdout/losses/l2"][-1][1],
}))
"""


def _run(num_devices: int) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, str(num_devices)], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_eight_devices_split_the_batch_and_reach_the_single_device_losses() -> None:
    one, eight = _run(1), _run(8)
    assert eight["devices"] == 8 and eight["batch_shards"] == 8
    assert eight["param_spec"] in ("P()", "PartitionSpec()")
    assert one["step"] == eight["step"] == 30
    assert eight["loss"] == pytest.approx(one["loss"], rel=1e-4)
    # The evaluation's last, smaller batch runs whole on every device: same mean over the 100 rows.
    assert eight["eval_loss"] == pytest.approx(one["eval_loss"], rel=1e-4)
