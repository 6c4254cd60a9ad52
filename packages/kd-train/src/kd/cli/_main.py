"""`kd-train`: train a config, inspect it, evaluate its checkpoints, plot runs, diff runs.

    kd-train --cfg=examples/digits.py --cfg.num_train_steps=300 --cfg.workdir=/tmp/run
    kd-train --cfg=examples/digits.py --sweep=lr            # each item of sweep_lr() in /tmp/run/<item>
    kd-train inspect --cfg=examples/digits.py              # shapes, parameters, FLOPs, memory; no training
    kd-train eval --workdir=/tmp/run --evals=val      # each checkpoint of the run, as it appears
    kd-train plot /tmp/run_a /tmp/run_b --out=curves.png
    kd-train diff /tmp/run_a /tmp/run_b

Exit codes: 0 done; 2 a config or usage error, printed as one paragraph (no traceback); 1 `eval` gave up
waiting (--timeout_seconds).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import konfig

from . import _distributed
from ._errors import CliError

USAGE = """\
usage: kd-train [train] --cfg=CONFIG.py [--cfg.PATH=VALUE ...] [--sweep=NAME[,NAME]|all] [--profile] [--force]
                       [--coordinator_address=HOST:PORT --num_processes=N --process_id=I]
       kd-train inspect --cfg=CONFIG.py [--cfg.PATH=VALUE ...]
       kd-train eval --workdir=WORKDIR [--evals=NAME[,NAME]] [--poll_seconds=S] [--timeout_seconds=S]
                     [--cfg.PATH=VALUE ...]
       kd-train plot WORKDIR [WORKDIR ...] [--out=FILE.png] [--metrics=GLOB[,GLOB]]
       kd-train diff WORKDIR_A WORKDIR_B

  train    trains the config (a kd.train.Trainer); the default command
  inspect  resolves the config and prints its context paths, parameter table, and the compiled
           step's FLOPs and memory, without training
  eval     evaluates each checkpoint of a run (its config.json, its evaluators) once, as it appears,
           into WORKDIR/eval_metrics.jsonl; stops when the run is DONE and all are evaluated
  plot     renders the logged curves of one or several runs to a PNG
  diff     shows what differs between two runs' configs

Config flags are konfig's: --cfg.a.b=VALUE, py:: values, ** globs (see konfig's README).
Several hosts: run the same command on each with --coordinator_address (process 0's host:port),
--num_processes and --process_id, or JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES and JAX_PROCESS_ID.
"""

# Errors that mean "the config or the command line is wrong": printed as one paragraph, exit 2.
_USER_ERRORS: tuple[type[BaseException], ...] = (CliError, ValueError, TypeError, KeyError, ImportError)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line `argv` (default `sys.argv[1:]`); returns the exit code.

    Usage: `sys.exit(kd.cli.main(["--cfg=examples/digits.py", "--cfg.num_train_steps=100"]))`.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0
    command = "train"
    if args and not args[0].startswith("-"):
        command = args.pop(0)
    run = _COMMANDS.get(command)
    if run is None:
        print(
            f"error: unknown command {command!r}; expected one of {sorted(_COMMANDS)}\n\n{USAGE}",
            file=sys.stderr,
        )
        return 2
    try:
        return run(args)
    except _USER_ERRORS as e:
        if getattr(e, "_kd_raised_in_training", False):
            raise  # a crash inside the training loop keeps its traceback
        return _fail(e)


def _fail(e: BaseException) -> int:
    message = str(e) if not isinstance(e, KeyError) or not e.args else str(e.args[0])
    print(f"error: {message}", file=sys.stderr, flush=True)
    return 2


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are `CliError`s (one paragraph, exit 2) instead of its own exit."""

    def error(self, message: str) -> Any:
        raise CliError(f"{message}\n\n{USAGE}")


# ---------------------------------------------------------------- train


def _split(argv: list[str]) -> tuple[str, dict[str, Any], list[tuple[str, Any]], list[str]]:
    """konfig's flags; the config file's folder goes on `sys.path`, as for `python config.py`, so a config
    imports the modules next to it (`examples/digits.py` imports `digits_data`)."""
    source, args, overrides, rest = konfig.split_flags(argv)
    if source.endswith(".py"):
        folder = os.path.dirname(os.path.abspath(source))
        if folder not in sys.path:
            sys.path.insert(0, folder)
    return source, args, overrides, rest


def _train(argv: list[str]) -> int:
    source, args, overrides, rest = _split(argv)
    parser = _Parser(prog="kd-train", add_help=False)
    parser.add_argument("--sweep", default=None)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--force", action="store_true")
    _distributed.add_flags(parser)
    opts = parser.parse_args(rest)
    hosts = _distributed.settings(opts)
    runs = _runs(source, args, overrides, opts.sweep)
    base = _given_workdir(runs[0][1])
    if base is None and hosts is not None:
        raise CliError(
            f"{hosts['num_processes']} processes train one run into one workdir: give the same "
            "--cfg.workdir=PATH (a folder all of them can reach) to each"
        )
    _distributed.initialize(hosts)
    import kd  # noqa: F401  (after the flags are known good: importing JAX takes a moment)

    if base is None:
        base = tempfile.mkdtemp(prefix="kd-train-")
        print(f"workdir: {base} (a fresh temporary folder; choose one with --cfg.workdir=PATH)", flush=True)
    for index, (name, cfg) in enumerate(runs, start=1):
        workdir = base if name is None else os.path.join(base, _folder_name(name))
        cfg.workdir = workdir
        if name is not None:
            print(f"sweep item {index}/{len(runs)}: {name} -> {workdir}", flush=True)
        if not opts.force:
            _refuse_other_run(workdir, konfig.to_json(cfg))
        trainer = _resolve(cfg, profile=opts.profile)
        start = time.perf_counter()
        try:
            state, logged = trainer.train()
        except Exception as e:
            e._kd_raised_in_training = True  # type: ignore[attr-defined]
            raise
        if int(state.step) < min(
            trainer.num_train_steps, trainer.stop_after_steps or trainer.num_train_steps
        ):
            return (
                143  # preempted (SIGTERM): the loop said where it stopped; 128 + SIGTERM, as if killed by it
            )
        import jax

        if jax.process_index() == 0:
            print(_done_line(int(state.step), time.perf_counter() - start, logged), flush=True)
    return 0


def _runs(
    source: str, args: dict[str, Any], overrides: list[tuple[str, Any]], sweep: str | None
) -> list[tuple[str | None, Any]]:
    """`(item name or None, config)` for each run the command line asks for."""
    if sweep is None:
        return [(None, konfig.build_config(source, args=args, overrides=overrides, from_strings=True))]
    module = konfig.load_config_module(source)
    if sweep == "all":
        names: list[str] = sorted(n for n in vars(module) if n == "sweep" or n.startswith("sweep_"))
        if not names:
            raise CliError(f"--sweep=all: {source} defines no sweep() or sweep_<name>() function")
    else:
        names = [n.strip() for n in sweep.split(",") if n.strip()]
    items = konfig.expand_sweep(module, names, args=args, overrides=overrides, from_strings=True)
    if not items:
        raise CliError(f"--sweep={sweep}: the sweep of {source} yields no items")
    return [(item.name or f"item{i}", item.config) for i, item in enumerate(items)]


def _given_workdir(cfg: Any) -> str | None:
    """The workdir the config sets, or None when it is unset (or an unset placeholder)."""
    try:
        value = cfg["workdir"]
    except (KeyError, AttributeError, TypeError):
        return None
    if isinstance(value, type(konfig.placeholder(str))):  # `konfig.placeholder(str)`: its default, if any
        value = value.default
    if value is None or not isinstance(value, (str, os.PathLike)):
        return None
    return os.fspath(value)


def _folder_name(item_name: str) -> str:
    """`lr=0.001,seed=1` -> a folder name safe on every filesystem."""
    return re.sub(r"[^A-Za-z0-9._=,+-]+", "_", item_name).strip("._") or "item"


_SAME_RUN_FIELDS = ("cfg.workdir", "cfg.stop_after_steps")


def _refuse_other_run(workdir: str, config_json: str) -> None:
    """A workdir holding another config's run is not mixed with this one (unless --force)."""
    path = os.path.join(workdir, "config.json")
    if not os.path.exists(path):
        return
    from ._diff import config_differences

    with open(path) as f:
        existing = f.read()
    # The workdir field itself may differ: a run folder that was moved or copied is still that run; and
    # where this invocation stops (`stop_after_steps`) is not part of what the run is.
    differences = [d for d in config_differences(existing, config_json) if d not in _SAME_RUN_FIELDS]
    if differences:
        shown = ", ".join(differences[:8]) + (
            f" (+{len(differences) - 8} more)" if len(differences) > 8 else ""
        )
        raise CliError(
            f"workdir {workdir} holds a run of another config (differing: {shown}). Resuming it with this "
            "config would mix two runs' checkpoints and metrics. Choose another --cfg.workdir, or pass --force "
            "to continue that run with this config."
        )


def _resolve(cfg: Any, *, profile: bool = False) -> Any:
    """The checked Trainer of `cfg` (config errors surface here, before anything is written)."""
    import kd

    trainer = konfig.resolve(cfg)
    if not isinstance(trainer, kd.train.Trainer):
        raise CliError(f"the config's root builds a {type(trainer).__name__}, expected a kd.train.Trainer")
    if profile and trainer.profiler is None:
        import dataclasses

        trainer = dataclasses.replace(trainer, profiler=kd.train.Profiler())
    trainer.check()  # bad keys and shapes, named, before anything is written
    return trainer


def _done_line(steps: int, seconds: float, logged: dict[str, Any]) -> str:
    import numpy as np

    shown = ", ".join(
        f"{k} {float(v):.4g}"
        for k, v in logged.items()
        if k.startswith(("losses/", "metrics/")) and np.ndim(v) == 0
    )
    return f"done: {steps} steps in {seconds:.1f}s" + (f"; {shown}" if shown else "")


# ---------------------------------------------------------------- inspect


def _inspect(argv: list[str]) -> int:
    source, args, overrides, rest = _split(argv)
    if rest:
        raise CliError(f"inspect: unexpected arguments {rest}\n\n{USAGE}")
    cfg = konfig.build_config(source, args=args, overrides=overrides, from_strings=True)
    import kd  # noqa: F401
    from kd.train._inspect import inspect_report

    cfg.workdir = None  # inspecting writes nothing
    print(inspect_report(_resolve(cfg)), flush=True)
    return 0


# ---------------------------------------------------------------- eval

_RUN_CONFIG = "WORKDIR/config.json"  # what `eval` reads instead of a --cfg=FILE


def _eval(argv: list[str]) -> int:
    source, args, overrides, rest = konfig.split_flags(argv, default=_RUN_CONFIG)
    if source != _RUN_CONFIG or args:
        raise CliError(
            "eval: the config is the run's own (WORKDIR/config.json), so --cfg=FILE and --cfg.__args__ are not "
            "taken; change its fields with --cfg.PATH=VALUE, e.g. --cfg.evals.val.num_batches=10"
        )
    parser = _Parser(prog="kd-train eval", add_help=False)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--evals", default=None)
    parser.add_argument("--poll_seconds", type=float, default=10.0)
    parser.add_argument("--timeout_seconds", type=float, default=None)
    opts = parser.parse_args(rest)
    if opts.poll_seconds < 0:
        raise CliError(f"--poll_seconds: expected a number of seconds >= 0, got {opts.poll_seconds:g}")
    if opts.timeout_seconds is not None and opts.timeout_seconds <= 0:
        raise CliError(f"--timeout_seconds: expected a number of seconds > 0, got {opts.timeout_seconds:g}")
    from ._workdirs import run_file

    path = run_file(opts.workdir, "config.json", "kd-train writes it when a run starts; was it trained here?")
    cfg = konfig.from_json(path.read_text())
    konfig.apply_overrides(cfg, overrides, from_strings=True)
    cfg.workdir = opts.workdir  # the folder the run is in now (it may have been moved)
    names = None if opts.evals is None else [n.strip() for n in opts.evals.split(",") if n.strip()]
    _check_eval_names(cfg.get("evals"), names, path)
    import kd
    from kd.evals._standalone import EVAL_METRICS_FILE, evaluate_checkpoints

    _config_folder_on_path(opts.workdir)
    trainer = _resolve(cfg)
    try:
        results = evaluate_checkpoints(
            trainer, evals=names, poll_seconds=opts.poll_seconds, timeout_seconds=opts.timeout_seconds
        )
    except TimeoutError as e:
        print(f"error: {e}", file=sys.stderr, flush=True)
        return 1
    except Exception as e:
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
    if names is not None and not names:
        raise CliError(f"--evals: expected evaluator names, got none; the config's evaluators: {available}")
    for name in names or ():
        if name not in available:
            close = difflib.get_close_matches(name, available, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise CliError(
                f"--evals: no evaluator named {name!r} in the run's config; {hint}its evaluators: {available}"
            )


def _config_folder_on_path(workdir: str) -> None:
    """The folder of the config file the run trained from goes on `sys.path`, as it did for the training
    (`kd-train --cfg=examples/digits.py` names modules beside it); read from `run.json`, best effort."""
    try:
        with open(os.path.join(workdir, "run.json")) as f:
            argv = list(json.load(f)["argv"])
    except (OSError, ValueError, KeyError, TypeError):
        return
    for index, arg in enumerate(argv):
        source = arg[len("--cfg=") :] if arg.startswith("--cfg=") else None
        if arg == "--cfg" and index + 1 < len(argv):
            source = argv[index + 1]
        if source and source.endswith(".py") and os.path.isfile(source):
            folder = os.path.dirname(os.path.abspath(source))
            if folder not in sys.path:
                sys.path.insert(0, folder)


# ---------------------------------------------------------------- plot, diff


def _plot(argv: list[str]) -> int:
    parser = _Parser(prog="kd-train plot", add_help=False)
    parser.add_argument("workdirs", nargs="+")
    parser.add_argument("--out", default=None)
    parser.add_argument("--metrics", default=None)
    opts = parser.parse_args(argv)
    from ._plot import plot_runs

    metrics = [m for m in opts.metrics.split(",") if m] if opts.metrics else None
    print(plot_runs(opts.workdirs, out=opts.out, metrics=metrics), flush=True)
    return 0


def _diff(argv: list[str]) -> int:
    parser = _Parser(prog="kd-train diff", add_help=False)
    parser.add_argument("workdir_a")
    parser.add_argument("workdir_b")
    opts = parser.parse_args(argv)
    from ._diff import diff_runs

    print(diff_runs(opts.workdir_a, opts.workdir_b), flush=True)
    return 0


_COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "train": _train,
    "inspect": _inspect,
    "eval": _eval,
    "plot": _plot,
    "diff": _diff,
}
