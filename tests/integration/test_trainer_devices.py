"""The Trainer on several devices: batches split over 4 (fake CPU) devices, the state replicated, same result."""

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
trainer = konfig.resolve(cfg)
state, logged = trainer.train()
batch = trainer.sharding.put_batch(next(iter(trainer.train_ds)))
print(json.dumps({
    "devices": jax.device_count(),
    "step": int(state.step),
    "batch_shards": len(batch["x"].addressable_shards),
    "param_spec": str(jax.tree.leaves(state.params)[0].sharding.spec),
    "loss": logged["losses/l2"],
}))
"""


def _run(num_devices: int) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, str(num_devices)], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_four_devices_split_the_batch_and_reach_the_single_device_loss() -> None:
    one, four = _run(1), _run(4)
    assert (
        four["devices"] == 4
        and four["batch_shards"] == 4
        and four["param_spec"] in ("P()", "PartitionSpec()")
    )
    assert one["step"] == four["step"] == 30
    assert four["loss"] == pytest.approx(one["loss"], rel=1e-4)
