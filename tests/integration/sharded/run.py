"""Trains the example MLP under one sharding layout and prints what happened as one JSON line.

    python tests/integration/sharded/run.py --devices 8 --layout fsdp --steps 30 [--workdir DIR --stop 20]

Layouts: `dp` (batch split, state replicated), `rules` (mesh data 4 x model 2, the hidden kernels split
along `model` by kontext-glob rules), `fsdp` (every array split along its largest divisible dimension).
Run by tests/integration/test_sharded_training.py in fresh processes: the device count is fixed at start.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--devices", type=int, required=True)
parser.add_argument("--layout", choices=["dp", "rules", "fsdp"], required=True)
parser.add_argument("--steps", type=int, default=30)
parser.add_argument("--stop", type=int, default=None)
parser.add_argument("--workdir", default=None)
args = parser.parse_args()
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={args.devices}"

import jax  # noqa: E402
import konfig  # noqa: E402

cfg, _ = konfig.parse_flags(
    [f"--cfg.num_train_steps={args.steps}", "--cfg.log_metrics_every=5"], default="examples/mlp_regression.py"
)
with konfig.imports():  # the layouts as a user's config writes them
    import kd
    from jax.sharding import PartitionSpec as P
LAYOUTS = {
    "dp": kd.sharding.ShardingStrategy(),
    "rules": kd.sharding.ShardingStrategy(
        mesh={"data": -1, "model": 2},
        rules={
            "params.**.layers_0.kernel": P(None, "model"),
            "params.model.layers_2.kernel": P("model", None),
        },
    ),
    "fsdp": kd.sharding.ShardingStrategy(params=kd.sharding.FSDPSharding(min_size_to_shard_mb=0)),
}
cfg.sharding = LAYOUTS[args.layout]
cfg.writer = kd.writers.InMemoryWriter()
cfg.workdir = args.workdir
cfg.stop_after_steps = args.stop
if args.workdir:
    cfg.checkpointer = kd.ckpts.Checkpointer(save_interval_steps=10)
trainer = konfig.resolve(cfg)
init_params = trainer.init_state().params  # as created: already laid out
state, logged = trainer.train()


def specs(tree):
    return {
        "/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path): str(tuple(leaf.sharding.spec))
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]
    }


print(
    json.dumps(
        {
            "devices": jax.device_count(),
            "step": int(state.step),
            "losses": {str(s): v for s, v in trainer.writer.scalars["losses/l2"]},
            "params": specs(state.params),
            "init_params": specs(init_params),
            "mu": specs(state.opt_state[0].mu),
            "mesh": dict(trainer.sharding.device_mesh.shape),
        }
    )
)
sys.stdout.flush()
