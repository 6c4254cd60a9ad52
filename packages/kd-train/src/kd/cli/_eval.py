"""`kd-train eval`: evaluates each checkpoint of a run (its config.json, its evaluators) once, as it appears,
into WORKDIR/eval_metrics.jsonl (`kd.evals.evaluate_checkpoints`); the run's config.json is resolved in
konfig's safe mode with the modules its run.json recorded.

    kd-train eval --workdir=/tmp/run --evals=val      # until the run is DONE and every checkpoint evaluated
    kd-train eval --workdir=/tmp/run --no-follow      # the complete checkpoints there now
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import konfig

from kd._evaluator_names import names_problem
from kd._run_policy import config_folder_on_path

from ._errors import CliError, RunError, operational_cause
from ._resolve import enough_open_files, policy_of_run, resolve
from ._usage import Parser
from ._workdirs import run_file

_RUN_CONFIG = "WORKDIR/config.json"  # what `eval` reads instead of a --cfg=FILE


def evaluate(argv: list[str]) -> int:
    """`kd-train eval ARGV`: 0 once the checkpoints are evaluated, 1 when `--timeout_seconds` passed first."""
    source, args, overrides, rest = konfig.split_flags(argv, default=_RUN_CONFIG)
    if source != _RUN_CONFIG or args:
        raise CliError(
            "eval: the config is the run's own (WORKDIR/config.json), so --cfg=FILE and --cfg.__args__ are not "
            "taken; change its fields with --cfg.PATH=VALUE, e.g. --cfg.evals.val.num_batches=10"
        )
    opts = _eval_flags(rest)
    enough_open_files()

    path = run_file(opts.workdir, "config.json", "kd-train writes it when a run starts; was it trained here?")
    cfg = konfig.from_json(path.read_text())  # loading imports and calls nothing
    konfig.apply_overrides(cfg, overrides, from_strings=True)
    cfg.workdir = opts.workdir  # the folder the run is in now (it may have been moved)
    names = None if opts.evals is None else [n.strip() for n in opts.evals.split(",") if n.strip()]
    _check_eval_names(cfg.get("evals"), names, path)
    allowed, policy = policy_of_run(opts.workdir, opts.allowed)
    import kd.ckpts
    import kd.train
    from kd.evals import EVAL_METRICS_FILE, evaluate_checkpoints
    from kd.writers import leave_out_writers

    leave_out_writers(cfg)  # kd's own writers into the run's folder; never those its config.json names
    config_folder_on_path(opts.workdir)
    print(f"eval: resolving {path} in safe mode: allowed={allowed} ({policy})", flush=True)
    trainer = resolve(cfg, allowed=allowed)
    try:
        results = evaluate_checkpoints(
            trainer,
            evals=names,
            follow=opts.follow,
            poll_seconds=opts.poll_seconds,
            timeout_seconds=opts.timeout_seconds,
        )
    except TimeoutError as e:
        print(f"error: {e}", file=sys.stderr, flush=True)
        return 1
    except Exception as e:
        if operational_cause(e) is not None or isinstance(e, RunError):
            raise  # one paragraph, exit 1 (main)
        if not isinstance(e, (kd.train.ConfigError, kd.ckpts.CheckpointStructureError)):
            e._kd_raised_in_training = True  # type: ignore[attr-defined]  # an evaluation crash keeps its traceback
        raise
    steps = ", ".join(map(str, sorted(results))) or "none new"
    print(
        f"eval: {len(results)} checkpoint(s) evaluated (steps {steps}) -> "
        f"{os.path.join(opts.workdir, EVAL_METRICS_FILE)}",
        flush=True,
    )
    return 0


def _eval_flags(rest: list[str]) -> Any:
    """eval's own flags (konfig's `--cfg.PATH=VALUE` taken out), checked."""
    parser = Parser(prog="kd-train eval", add_help=False)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--evals", default=None)
    parser.add_argument("--follow", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--poll_seconds", type=float, default=10.0)
    parser.add_argument("--timeout_seconds", type=float, default=None)
    parser.add_argument("--allowed", default=None)
    opts = parser.parse_args(rest)
    if opts.poll_seconds < 0:
        raise CliError(f"--poll_seconds: expected a number of seconds >= 0, got {opts.poll_seconds:g}")
    if opts.timeout_seconds is not None and opts.timeout_seconds <= 0:
        raise CliError(f"--timeout_seconds: expected a number of seconds > 0, got {opts.timeout_seconds:g}")
    return opts


def _check_eval_names(evals: Any, names: list[str] | None, config_path: Any) -> None:
    """Fails early (before JAX is imported) on a config without evaluators or an unknown --evals name."""
    available = [str(k) for k in (evals or {})] if hasattr(evals, "keys") or evals is None else None
    if available is None:
        return  # not a plain dict of evaluators (e.g. a reference): the Trainer checks it when resolved
    if not available:
        raise CliError(
            f"eval: the run's config ({config_path}) has no evaluators (cfg.evals is empty), so there is nothing "
            'to evaluate its checkpoints with; add one to the config, e.g. cfg.evals = {"val": '
            "kd.evals.Evaluator(ds=..., num_batches=...)}, and train it again"
        )
    problem = None if names is None else names_problem(names, available, source=" in the run's config")
    if problem is not None:
        raise CliError(f"--evals: {problem}")
