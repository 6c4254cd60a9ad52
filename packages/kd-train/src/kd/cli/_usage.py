"""What every `kd-train` command shares at its edges: `USAGE` (what `kd-train --help` prints), `Parser`
(argparse whose errors are one paragraph, exit 2) and `fail` (the `error: ...` line and its exit code).

    parser = Parser(prog="kd-train inspect", add_help=False)
    return fail(CliError("--traceback: expected 'full' or 'short'"))  # prints `error: ...`, returns 2
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._errors import CliError

USAGE = """\
usage: kd-train [train] --cfg=CONFIG.py [--cfg.PATH=VALUE ...] [--sweep=NAME[,NAME]|all] [--profile] [--force]
                       [--allowed=MODULE[,MODULE]] [--track=wandb,mlflow]
                       [--coordinator_address=HOST:PORT --num_processes=N --process_id=I]
       kd-train inspect --cfg=CONFIG.py [--cfg.PATH=VALUE ...] [--interms] [--allowed=MODULE[,MODULE]]
       kd-train eval --workdir=WORKDIR [--evals=NAME[,NAME]] [--follow|--no-follow] [--poll_seconds=S]
                     [--timeout_seconds=S] [--allowed=MODULE[,MODULE]] [--cfg.PATH=VALUE ...]
       kd-train predict --cfg=CONFIG.py [--cfg.PATH=VALUE ...] [--ds=NAME] [--out=FILE.npz] [--batches=N]
       kd-train lr-find --cfg=CONFIG.py [--cfg.PATH=VALUE ...] [--min=1e-7] [--max=1] [--steps=100] [--base-lr=LR]
       kd-train plot WORKDIR [WORKDIR ...] [--out=FILE.png] [--metrics=GLOB[,GLOB]] [--perf]
       kd-train diff WORKDIR_A WORKDIR_B
       kd-train launch --cfg=CONFIG.py [--cfg.PATH=VALUE ...] [--local|--slurm] [--coordinator_port=PORT]
                       [train's flags]
       kd-train config show|resolve --cfg=CONFIG.py [--cfg.PATH=VALUE ...] [--patch.FIELD=VALUE ...]
       kd-train data element_spec --cfg=CONFIG.py [--ds_path=train_ds] [--patch.FIELD=VALUE ...]
       kd-train run eval_shape --cfg=CONFIG.py [--patch.FIELD=VALUE ...]

  train    trains the config (a kd.train.Trainer); the default command. With --cfg.workdir it checkpoints
           (unless cfg.checkpointer=None) and writes metrics.jsonl and TensorBoard files; run again, it
           resumes from the latest checkpoint, or says the run is complete. --force starts a complete run,
           or logs without a checkpoint, over (the old files move to WORKDIR/previous/), and continues a
           run whose config differs. --track=wandb,mlflow also sends the run to Weights & Biases and/or
           MLflow (kd.writers.WandbWriter, MlflowWriter; extras kd-train[wandb], kd-train[mlflow]), beside
           the default writers: project = the config file's name (unless WANDB_PROJECT /
           MLFLOW_EXPERIMENT_NAME say), a sweep item's overrides as its tags; a resume continues that run
  inspect  resolves the config and prints its context paths, parameter table, and the compiled
           step's FLOPs and memory, without training (nor touching any workdir); --interms lists every
           intermediate the model offers (`interms.<path>` keys), with its shape
  eval     evaluates each checkpoint of a run (its config.json, its evaluators) once, as it appears,
           into WORKDIR/eval_metrics.jsonl; stops when the run is DONE and all are evaluated (--follow,
           the default: polls every --poll_seconds; a save still being written waits for a later poll).
           --no-follow evaluates the complete checkpoints there now and exits, DONE or not
           config.json is resolved in konfig's safe mode: only the modules the run recorded in run.json
           (less those that run code: os, subprocess, ...), or exactly those of --allowed; so is a
           --cfg=RUN/config.json of train and inspect (a config.py, or a .json of your own, is code
           you run, unless --allowed is given)
  predict  writes the outputs (preds) of the run's latest checkpoint (in cfg.workdir) on an evaluator's data
           (--ds=NAME, default the first; or train) to WORKDIR/predictions/<ds>_step<N>.npz (--out)
  lr-find  the learning-rate range test: trains the config from its init (no workdir, no checkpoint) with
           the learning rate growing from --min to --max over --steps steps; prints the losses and the
           suggested learning rate; writes WORKDIR/lr_find.json (and .png with matplotlib)
  plot     renders the logged curves of one or several runs to a PNG: a panel per value, train and
           evaluators on the same axes (perf/* with --perf)
  diff     shows what differs between two runs' configs
  launch   runs the config's cfg.xm_job (a kd.xm.Job: platform, requirements.replicas processes, args,
           env_vars; none: one process): --local (the default) starts its processes of `kd-train` here,
           joined by jax.distributed, and exits with the first failure's code; --slurm prints the srun line
  config, data, run
           Kauldron's commands that look into a config patched for a quick trial (kd.cli.PatchConfig:
           stop after 1 step, a batch per device, no checkpointer, evaluators once; --patch.FIELD=VALUE
           changes that, a --cfg.PATH override wins): show its tree or resolve it, print a pipeline's
           element spec, run the state's init and a train step through jax.eval_shape

Config flags are konfig's: --cfg.a.b=VALUE, py:: values, ** globs (see konfig's README).
A crash in your code (model, loss, data, config file) shows your frames only; --traceback=full (any
command) or KD_TRACEBACK=full shows every frame.
Several hosts: run the same command on each with --coordinator_address (process 0's host:port),
--num_processes and --process_id, or JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES and JAX_PROCESS_ID.
"""


class Parser(argparse.ArgumentParser):
    """argparse whose errors are `CliError`s (one paragraph, exit 2) instead of its own exit, followed by the
    command's usage (`usage=`, kd-train's by default)."""

    def __init__(self, *args: Any, usage_text: str = USAGE, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.usage_text = usage_text

    def error(self, message: str) -> Any:
        raise CliError(f"{message}\n\n{self.usage_text}")


def fail(e: BaseException, code: int = 2) -> int:
    """Prints `error: <message>` (a KeyError's key without its quotes) to stderr; returns `code`."""
    message = str(e) if not isinstance(e, KeyError) or not e.args else str(e.args[0])
    print(f"error: {message}", file=sys.stderr, flush=True)
    return code
