"""Trains a konfig config on the CPU: `python examples/train.py --cfg=examples/mlp_regression.py`.

This is the repo's main job until `kd.train.Trainer` lands: konfig builds the pieces from the
config, kontext feeds the loss by key paths, ktyping checks the loss's shapes at trace time.
Exits non-zero if the loss did not fall.
"""

from __future__ import annotations

import os
import sys
import time

import jax
import konfig
import kontext
import optax

DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlp_regression.py")


def train(cfg: konfig.ConfigDict) -> list[float]:
    """Resolves `cfg` and runs `cfg.num_train_steps` steps; returns the logged losses."""
    built = konfig.resolve(cfg)
    data = iter(built.train_ds)
    model, optimizer, loss_fn = built.model, built.optimizer, built.loss

    first = next(data)
    params = model.init(jax.random.key(built.seed), first["x"])
    opt_state = optimizer.init(params)

    def loss_of(params, batch):
        context = {"batch": batch, "preds": model.apply(params, batch["x"]), "params": params}
        return loss_fn.get_values(**kontext.resolve_from_keyed_obj(context, loss_fn))

    @jax.jit
    def step(params, opt_state, batch):
        loss, grads = jax.value_and_grad(loss_of)(params, batch)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    losses = []
    start = time.perf_counter()
    for i in range(built.num_train_steps):
        params, opt_state, loss = step(params, opt_state, first if i == 0 else next(data))
        if i % built.log_every == 0 or i == built.num_train_steps - 1:
            losses.append(float(loss))
            print(f"step {i:5d}  loss {losses[-1]:.5f}  ({time.perf_counter() - start:.1f}s)", flush=True)
    return losses


def main(argv: list[str]) -> int:
    try:
        cfg, rest = konfig.parse_flags(argv, default=DEFAULT_CONFIG)
    except ValueError as e:  # konfig's override and config errors say what to fix; no traceback needed
        print(f"error: {e}", file=sys.stderr)
        return 2
    if rest:
        print(f"unknown arguments: {rest}", file=sys.stderr)
        return 2
    print(repr(cfg), flush=True)
    losses = train(cfg)
    if not losses[-1] < losses[0] / 4:
        print(f"training failed: loss went from {losses[0]:.5f} to {losses[-1]:.5f}", file=sys.stderr)
        return 1
    print(f"done: loss {losses[0]:.5f} -> {losses[-1]:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
