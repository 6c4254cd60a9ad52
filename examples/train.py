"""Trains a config whose root is a `kd.train.Trainer`: `python examples/train.py --cfg=examples/digits.py`.

The same as the `kd-train` command (which the README's main job, `hatch run train`, runs), with
examples/mlp_regression.py as the default config. Any field can be overridden: `--cfg.num_train_steps=500`,
`--cfg.workdir=/tmp/run`.
"""

from __future__ import annotations

import os
import sys

from kd.cli import main as kd_train

DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlp_regression.py")


def main(argv: list[str]) -> int:
    return kd_train([f"--cfg={DEFAULT_CONFIG}", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
