"""Trains a config whose root is a `kd.train.Trainer`: `python examples/train.py --cfg=examples/digits.py`.

The README's main job (`hatch run train`) runs this on examples/mlp_regression.py. Any field can be
overridden: `--cfg.num_train_steps=500`, `--cfg.workdir=/tmp/run`.
"""

from __future__ import annotations

import os
import sys
import time

import konfig
import numpy as np

DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlp_regression.py")


def main(argv: list[str]) -> int:
    try:
        cfg, rest = konfig.parse_flags(argv, default=DEFAULT_CONFIG)
    except (ValueError, TypeError) as e:  # konfig's override and argument errors say what to fix
        print(f"error: {e}", file=sys.stderr)
        return 2
    if rest:
        print(f"unknown arguments: {rest}", file=sys.stderr)
        return 2
    import kd  # noqa: F401  (after the flags are known good: importing JAX takes a moment)

    try:
        trainer = konfig.resolve(cfg)
        trainer.check()  # bad keys and shapes, named, before anything is written
    except (ValueError, TypeError, KeyError) as e:  # konfig and kd.train errors name the path / key at fault
        print(f"error: {e}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    state, logged = trainer.train()
    seconds = time.perf_counter() - start
    shown = ", ".join(
        f"{k} {v:.4g}" for k, v in logged.items() if k.startswith(("losses/", "metrics/")) and np.ndim(v) == 0
    )
    print(f"done: {int(state.step)} steps in {seconds:.1f}s; {shown}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
