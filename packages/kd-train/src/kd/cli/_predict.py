"""`kd-train predict`: a trained run's outputs (`preds`) on one of its datasets, written to an `.npz`.

    kd-train predict --cfg=examples/mlp_regression.py --cfg.workdir=/tmp/run             # the first evaluator's ds
    kd-train predict --cfg=/tmp/run/config.json --ds=train --batches=4 --out=preds.npz   # a run's own config

The config is resolved as `kd-train` trains it (`--cfg.PATH=VALUE` overrides; a run's `config.json` in konfig's
safe mode, as `inspect` and `eval` read it); the state is the latest checkpoint in its workdir
(`kd.train.latest_state`: through the Trainer's checkpointer, read-only). `--ds` names an evaluator
(its data and `num_batches`) or `train`. The file holds one array per output, keyed by its context path
(`preds`, or `preds.logits`, ...), every batch concatenated on the first axis; it is written whole or not at all.
"""

from __future__ import annotations

import difflib
import io
import os
from typing import Any

import konfig
import kontext

from kd._phase import during
from kd._run_policy import config_folder_on_path

from ._errors import CliError
from ._resolve import policy_of_run, split_flags
from ._usage import Parser

USAGE = """\
usage: kd-train predict --cfg=CONFIG [--cfg.PATH=VALUE ...] [--ds=NAME] [--out=FILE.npz] [--batches=N]
                        [--allowed=MODULE[,MODULE]]

  Writes the outputs (preds) of the run's latest checkpoint (in cfg.workdir) on a dataset to an .npz:
  --ds       an evaluator of cfg.evals (its ds and num_batches) or `train` (default: the first evaluator,
             else train)
  --out      the file (default WORKDIR/predictions/<ds>_step<N>.npz)
  --batches  at most N batches (needed for endless data)
"""

TRAIN = "train"
"""`--ds=train`: the Trainer's train_ds."""


def predict(argv: list[str]) -> int:
    """`kd-train predict ARGV`: writes the outputs and prints one line saying what and where."""
    if any(arg in ("-h", "--help") for arg in argv):
        print(USAGE, end="")
        return 0
    source, args, overrides, rest = split_flags(argv)
    parser = Parser(prog="kd-train predict", add_help=False, usage_text=USAGE)
    parser.add_argument("--ds", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--batches", type=int, default=None)
    parser.add_argument("--allowed", default=None)
    opts = parser.parse_args(rest)
    if opts.batches is not None and opts.batches < 1:
        raise CliError(f"--batches: expected a number of batches >= 1, got {opts.batches}")
    # JAX, numpy and the Trainer load only once a command needs them (`kd-train --help` stays fast).
    import numpy as np

    from kd.train import latest_state, predict_batches

    trainer = trainer_from_flags(source, args, overrides, allowed=opts.allowed, command="predict")
    if trainer.workdir is None:
        raise CliError(
            "predict: the config sets no workdir, so there is no trained run to predict with; name the run's folder "
            "with --cfg.workdir=/path/to/run (`kd-train --cfg=CONFIG --cfg.workdir=...` trains it first)"
        )
    name, data, num_batches = _dataset(trainer, opts.ds, opts.batches)
    state = latest_state(trainer)
    step = int(state.step)
    with during(f"predicting on {name} with the checkpoint of step {step}"):
        outputs = list(predict_batches(trainer, data, state=state, num_batches=num_batches))
    if not outputs:
        raise CliError(f"--ds={name}: the data yielded no batch, so there is nothing to predict")
    preds = _joined(outputs)
    path = opts.out or os.path.join(trainer.workdir, "predictions", f"{name}_step{step}.npz")
    _write_npz(path, preds)
    leaves = [leaf for leaf in _flat(preds).values() if np.ndim(leaf)]
    count = len(leaves[0]) if leaves else len(outputs)
    print(f"wrote {count} examples' outputs ({_shapes_text(preds)}) of step {step} to {path}", flush=True)
    return 0


def trainer_from_flags(
    source: str, args: dict[str, Any], overrides: list[tuple[str, Any]], *, allowed: str | None, command: str
) -> Any:
    """The checked Trainer of `--cfg=source` with its overrides, its writers left out (a command that only
    reads a run starts no tracker). A run's `config.json` (beside its run.json) is resolved in safe mode with
    that run's policy (`--allowed` widens it), its workdir the folder it is in unless `--cfg.workdir` says."""
    import kd.train
    from kd.writers import leave_out_writers

    policy = None
    folder = os.path.dirname(os.path.abspath(source))
    run_config = source.endswith(".json") and os.path.isfile(os.path.join(folder, "run.json"))
    if run_config or allowed is not None:  # (split_flags put a .py config's folder on sys.path)
        policy, why = policy_of_run(folder, allowed)
        print(f"{command}: resolving {source} in safe mode: allowed={policy} ({why})", flush=True)
        if run_config:
            config_folder_on_path(folder)
    with during(f"loading the config {source}"):
        cfg = konfig.build_config(source, args=args, overrides=overrides, from_strings=True)
    if run_config and not any(path == "workdir" for path, _ in overrides):
        cfg.workdir = folder  # the folder the run is in now (it may have been moved)
    leave_out_writers(cfg)
    trainer = konfig.resolve(cfg, allowed=policy)
    if not isinstance(trainer, kd.train.Trainer):
        raise CliError(
            f"{command}: the config's root builds a {type(trainer).__name__}, expected a kd.train.Trainer"
        )
    trainer.check()  # bad keys and shapes, named, before anything runs
    return trainer


def _dataset(trainer: Any, name: str | None, batches: int | None) -> tuple[str, Any, int | None]:
    """`(name, data, num_batches)` that `--ds` and `--batches` choose."""
    evals = dict(trainer.evals)
    choices = [str(k) for k in evals] + [TRAIN]
    if name is None:
        name = choices[0]
    if name == TRAIN:
        data, num_batches = trainer.train_ds, batches
        if num_batches is None and getattr(data, "num_epochs", 1) is None:
            raise CliError(
                "--batches: train_ds is endless (num_epochs=None), so predicting on all of it never ends; say how "
                "many batches, e.g. --ds=train --batches=10"
            )
        return name, data, num_batches
    evaluator = evals.get(name)
    if evaluator is None:
        close = difflib.get_close_matches(name, choices, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise CliError(
            f"--ds: no evaluator named {name!r} in cfg.evals, nor {TRAIN!r}; {hint}the choices: {choices}"
        )
    data = getattr(evaluator, "ds", None)
    if data is None:
        raise CliError(
            f"--ds={name}: cfg.evals[{name!r}] has no data (its ds and the Trainer's eval_ds are unset)"
        )
    return name, data, batches if batches is not None else getattr(evaluator, "num_batches", None)


def _joined(outputs: list[Any]) -> Any:
    """Per-batch output trees joined leaf by leaf on the first axis (0-d leaves stacked, one per batch), as
    `Trainer.predict` joins them."""
    import jax
    import numpy as np

    return jax.tree.map(
        lambda *leaves: np.stack(leaves) if np.ndim(leaves[0]) == 0 else np.concatenate(leaves), *outputs
    )


def _shapes_text(preds: Any) -> str:
    """`preds: float32[64,10]` (one array), or each leaf by its path: `preds.logits: float32[64,10], ...`."""
    flat = _flat(preds)
    if not flat:
        return "preds: none"
    return ", ".join(
        f"{path}: {leaf.dtype}[{','.join(str(d) for d in leaf.shape)}]" for path, leaf in flat.items()
    )


def _flat(preds: Any) -> dict[str, Any]:
    """The outputs by context path: `preds`, `preds.logits`, `preds[0]`."""
    import numpy as np

    flat = kontext.flatten_with_path(preds) if preds is not None else {}
    return {f"preds{'' if not p or p.startswith('[') else '.'}{p}": np.asarray(v) for p, v in flat.items()}


def _write_npz(path: str, preds: Any) -> None:
    import numpy as np

    from kd._atomic import write_bytes_atomic

    buffer = io.BytesIO()
    np.savez(buffer, **_flat(preds))
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    write_bytes_atomic(path, buffer.getvalue())

