"""`kd-train lr-find`: a config's learning-rate range test (`kd.train.lr_find`), printed and saved.

    kd-train lr-find --cfg=examples/mlp_regression.py                       # 100 steps, 1e-7 -> 1
    kd-train lr-find --cfg=examples/mlp_regression.py --min=1e-5 --max=10 --steps=60 --base-lr=3e-3

It trains a copy of the config from its fresh init without a workdir, checkpointer, evaluators or hooks, prints
the learning rate and loss every ~10 steps and the suggestion; with a `cfg.workdir` it writes only
`<workdir>/lr_find.json` (and `lr_find.png` where matplotlib is installed): the run's checkpoints and logs are
never touched.
"""

from __future__ import annotations

import os
from typing import Any

from ._predict import trainer_from_flags
from ._resolve import split_flags
from ._usage import Parser

USAGE = """\
usage: kd-train lr-find --cfg=CONFIG [--cfg.PATH=VALUE ...] [--min=1e-7] [--max=1] [--steps=100] [--base-lr=LR]
                        [--allowed=MODULE[,MODULE]]

  Trains the config from its init with the learning rate growing exponentially from --min to --max over
  --steps steps (stopping once the loss diverges) and suggests the learning rate at the steepest descent of
  the smoothed loss. The optimizer's own learning rate is read from optax.inject_hyperparams, the config's
  cfg.optimizer learning_rate or cfg.schedules['learning_rate']; --base-lr gives it where none says.
  With a cfg.workdir, writes WORKDIR/lr_find.json (and lr_find.png with matplotlib); nothing else.
"""

JSON_FILE = "lr_find.json"
PLOT_FILE = "lr_find.png"


def lr_find(argv: list[str]) -> int:
    """`kd-train lr-find ARGV`: runs the range test; prints its table and the suggested learning rate."""
    if any(arg in ("-h", "--help") for arg in argv):
        print(USAGE, end="")
        return 0
    source, args, overrides, rest = split_flags(argv)
    parser = Parser(prog="kd-train lr-find", add_help=False, usage_text=USAGE)
    parser.add_argument("--min", type=float, default=1e-7)
    parser.add_argument("--max", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--base-lr", type=float, default=None)
    parser.add_argument("--allowed", default=None)
    opts = parser.parse_args(rest)
    import kd.train  # JAX loads only once a command needs it (`kd-train --help` stays fast)

    trainer = trainer_from_flags(source, args, overrides, allowed=opts.allowed, command="lr-find")
    # A bad range (naming its flag) or no learning rate found: a ValueError, printed as one paragraph (exit 2).
    result = kd.train.lr_find(
        trainer, min_lr=opts.min, max_lr=opts.max, num_steps=opts.steps, base_lr=opts.base_lr
    )
    print(
        f"lr-find: {len(result.lrs)} of {opts.steps} steps, learning rate {opts.min:g} -> {opts.max:g} "
        f"({result.imposed}); nothing checkpointed",
        flush=True,
    )
    print(result.table(), flush=True)
    if result.stopped:
        print(result.stopped, flush=True)
    print(result.suggestion_line(), flush=True)
    if trainer.workdir is not None:
        print(f"wrote {', '.join(_save(result, trainer.workdir))}", flush=True)
    return 0


def _save(result: Any, workdir: str) -> list[str]:
    """Writes `lr_find.json` (whole or not at all) and, with matplotlib, `lr_find.png`; their paths."""
    from kd._atomic import write_text_atomic

    os.makedirs(workdir, exist_ok=True)
    written = [os.path.join(workdir, JSON_FILE)]
    write_text_atomic(written[0], result.to_json())
    try:
        written.append(result.plot(os.path.join(workdir, PLOT_FILE)))
    except ImportError:  # matplotlib is optional: the table and the JSON say it all
        pass
    return written

