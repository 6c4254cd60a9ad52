"""Do the ways kd-train can run updates give the bits of single steps here? Per model of the model suite.

    python3 benchmarks/update_ways_bits.py --models mlp,cnn --steps 8
    python3 benchmarks/update_ways_bits.py --tiny      # the MLP, 3 updates: a smoke test

Trains each model `--steps` updates three ways from the same start: single steps (`steps_per_call=1`), one
compiled loop (`TrainStep.fused_steps`) and updates written out (`TrainStep.unrolled_steps`), the way forced
for the whole run, and prints the largest difference of any parameter from the single steps' (0.0: the same
bits). The default `steps_per_call=None` only keeps a way that gives single steps' bits (checked once per
run, `kd.train`'s runner), so this says which ways a backend can use without changing a run's numbers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import model_suite


def train(model: str, steps: int, way: str) -> tuple[Any, float]:
    """The parameters after `steps` updates run `way` ("single", "fused" or "unrolled"), and the seconds."""
    import kd
    import optax
    from kd.train import _runner

    original = _runner.CallRunner.__init__

    def forced(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.choice = way

    _runner.CallRunner.__init__ = forced
    try:
        x_key, y_key = model_suite._keys(model)
        data = model_suite._data(model)
        if model == "vit":
            network: Any = model_suite._linen(model)
        else:
            network = kd.nn.ExternalModule(model=model_suite._linen(model), keys=f"batch.{x_key}")
        trainer = kd.train.Trainer(
            seed=0,
            train_ds=kd.data.InMemoryPipeline(
                loader=lambda: data, batch_size=model_suite.LM_BATCH if model == "lm" else model_suite.BATCH
            ),
            model=network,
            optimizer=optax.adam(1e-3),
            train_losses={
                "xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(
                    logits="preds.logits" if model == "vit" else "preds", labels=f"batch.{y_key}"
                )
            },
            num_train_steps=steps,
            log_metrics_every=steps,
            writer=kd.writers.InMemoryWriter(),
            steps_per_call=1 if way == "single" else steps,
        )
        began = time.perf_counter()
        state, _ = trainer.train()
        return state.params, time.perf_counter() - began
    finally:
        _runner.CallRunner.__init__ = original


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mlp,cnn,vit,lm")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--tiny", action="store_true", help="--models mlp --steps 3: a smoke test")
    args = parser.parse_args()
    if args.tiny:
        args.models, args.steps = "mlp", 3
    import jax
    import numpy as np

    print(f"backend {jax.default_backend()} ({jax.devices()[0].device_kind}), {args.steps} updates")
    for model in args.models.split(","):
        reference, _ = train(model, args.steps, "single")
        for way in ("fused", "unrolled"):
            params, _ = train(model, args.steps, way)
            worst = max(
                float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))
                for a, b in zip(jax.tree.leaves(reference), jax.tree.leaves(params), strict=True)
            )
            print(f"{model:4} {way:9} max |diff| {worst:.3g}  {'same bits' if worst == 0 else 'ROUNDS OTHERWISE'}")


if __name__ == "__main__":
    main()
