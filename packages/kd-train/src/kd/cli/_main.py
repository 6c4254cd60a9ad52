"""`kd-train`: train a config, inspect it, evaluate its checkpoints, plot runs, diff runs.

    kd-train --cfg=examples/digits.py --cfg.num_train_steps=300 --cfg.workdir=/tmp/run
    kd-train --cfg=examples/digits.py --sweep=lr            # each item of sweep_lr() in /tmp/run/<item>
    kd-train inspect --cfg=examples/digits.py              # shapes, parameters, FLOPs, memory; no training
    kd-train eval --workdir=/tmp/run --evals=val      # each checkpoint of the run, as it appears
    kd-train eval --workdir=/tmp/run --no-follow      # the checkpoints there now, without waiting for DONE
    kd-train plot /tmp/run_a /tmp/run_b --out=curves.png
    kd-train diff /tmp/run_a /tmp/run_b

Exit codes: 0 done; 2 a config or usage error, printed as one paragraph (no traceback; a config file that
does not parse: its file, line and text); 1 the machine refused (disk full, a read-only or unwritable
workdir, too few file descriptors, an I/O error), a value broke a computation during training (a NaN loss),
printed as one paragraph saying what to do, or `eval` gave up waiting (--timeout_seconds); 1 a crash in user
code, shown as where in the run it happened and the user's frames (--traceback=full: all of them); 130
Ctrl-C; 143 SIGTERM (preempted).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import konfig

from kd import kauldron_alias
from kd._evaluator_names import names_problem
from kd._phase import during, where_raised
from kd._run_policy import RunPolicyError, run_policy
from kd._run_policy import config_folder_on_path as _config_folder_on_path

from . import _distributed, _launch, _lr_find, _predict
from ._compile_cache import enable_compilation_cache
from ._errors import (
    TRACEBACK_ENV,
    CliError,
    HeldIOErrorNoise,
    RunError,
    describe_os_error,
    describe_syntax_error,
    describe_user_error,
    one_line_warnings,
    operational_cause,
    traceback_frames,
    user_frame_lines,
    user_frames,
)
from ._workdirs import check_workdir

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

# Errors that mean "the config or the command line is wrong": printed as one paragraph, exit 2.
_USER_ERRORS: tuple[type[BaseException], ...] = (CliError, ValueError, TypeError, KeyError, ImportError)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line `argv` (default `sys.argv[1:]`); returns the exit code.

    Usage: `sys.exit(kd.cli.main(["--cfg=examples/digits.py", "--cfg.num_train_steps=100"]))`.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    full = os.environ.get(TRACEBACK_ENV, "").strip().lower() == "full"
    # Kauldron configs and libraries (`from kauldron import kd`) run unchanged, unless Kauldron is installed.
    kauldron_alias.install_if_possible()
    for arg in [a for a in args if a.startswith("--traceback")]:
        args.remove(arg)
        value = arg.partition("=")[2].strip().lower()
        if value not in ("full", "short"):
            return _fail(CliError(f"--traceback: expected 'full' or 'short', got {value!r}\n\n{USAGE}"))
        full = value == "full"
    if args and args[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0
    command = "train"
    if args and not args[0].startswith("-"):
        command = args.pop(0)
    run = _COMMANDS.get(command)
    if run is None:
        return _fail(CliError(_unknown_command(command)))
    enable_compilation_cache()  # a rerun, a resume, eval and a sweep's items reuse earlier compiles
    with (
        HeldIOErrorNoise() as held,
        one_line_warnings(),
    ):  # orbax's logged I/O tracebacks: the paragraph says it
        try:
            return run(args)
        except KeyboardInterrupt as e:  # Ctrl-C: the loop said where it stopped, or a second press stopped it
            if full and not getattr(e, "_kd_announced", False):
                raise
            if not getattr(e, "_kd_announced", False):
                print("interrupted (Ctrl-C): stopped at once", file=sys.stderr, flush=True)
            return 130  # 128 + SIGINT, as a shell reports it
        except CliError as e:
            return _fail(e)
        except RunError as e:
            held.discard()
            return _fail(e, code=1)
        except Exception as e:
            cause = operational_cause(e)
            if cause is not None:  # an I/O error anywhere (an eval's file, a restore) is the machine's
                held.discard()
                flag = _OUTPUT_FLAG.get(command, "--cfg.workdir")
                return _fail(RunError(describe_os_error(cause, flag=flag)), code=1)
            if full:
                raise
            return _report_crash(e)


def _report_crash(error: Exception) -> int:
    """A config file that does not parse: its file and line (exit 2). An error raised through user code (a
    model, a loss, a data loader, the config's `get_config`): where in the run, the error, the user's frames
    (exit 1; 2 while loading the config). A kd error naming the config path: one paragraph (exit 2). Anything
    else keeps its whole traceback."""
    where = where_raised(error)
    loading = where is not None and where.startswith("loading the config")
    if isinstance(error, SyntaxError) and loading:
        print(describe_syntax_error(error), file=sys.stderr, flush=True)
        return 2
    if user_frames(error) is not None:
        print(describe_user_error(error, where), file=sys.stderr, flush=True)
        return 2 if loading else 1
    if isinstance(error, _USER_ERRORS) and not getattr(error, "_kd_raised_in_training", False):
        return _fail(error)
    raise error  # a crash inside the library: its whole traceback


def _unknown_command(command: str) -> str:
    """`kd-train examples/digits.py` (no `--cfg=`) or a mistyped subcommand: what was meant."""
    if command.endswith((".py", ".json")) or os.path.sep in command:
        return f"{command!r} is not a command; to train that config: kd-train --cfg={command}"
    close = difflib.get_close_matches(command, list(_COMMANDS), n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return (
        f"unknown command {command!r}{hint} The commands: {', '.join(_COMMANDS)} (kd-train --help "
        "describes them)"
    )


# The flag naming where a command writes, for the advice of an I/O error ("choose another --workdir").
_OUTPUT_FLAG = {"eval": "--workdir", "plot": "--out"}


def _fail(e: BaseException, code: int = 2) -> int:
    message = str(e) if not isinstance(e, KeyError) or not e.args else str(e.args[0])
    print(f"error: {message}", file=sys.stderr, flush=True)
    return code


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
    started = time.perf_counter()
    source, args, overrides, rest = _split(argv)
    parser = _Parser(prog="kd-train", add_help=False)
    parser.add_argument("--sweep", default=None)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--track", default=None)  # trackers beside the default writers: wandb, mlflow
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--allowed", default=None)
    parser.add_argument("--workdir", default=None)  # a common slip: said what to write instead
    _distributed.add_flags(parser)
    _refuse_track_slips(rest)  # before argparse, which takes `--trac` for `--track`
    opts = parser.parse_args(rest)
    if opts.workdir is not None:
        raise CliError(
            f"--workdir={opts.workdir}: train takes the run's folder as a config field: "
            f"--cfg.workdir={opts.workdir} (--workdir is eval's flag)"
        )
    allowed = _source_policy(source, opts.allowed)
    opts.track = _parse_track(opts.track, source)
    hosts = _distributed.settings(opts)
    with during(f"loading the config {source}"):
        runs = _runs(source, args, overrides, opts.sweep)
    base = _given_workdir(runs[0][1])
    if base is None and hosts is not None:
        raise CliError(
            f"{hosts['num_processes']} processes train one run into one workdir: give the same "
            "--cfg.workdir=PATH (a folder all of them can reach) to each"
        )
    if base is not None:
        check_workdir(base, flag="--cfg.workdir")  # before JAX starts: a run that could not write stops now
    _enough_open_files()
    _distributed.initialize(hosts)
    import jax

    import kd.train  # noqa: F401  (after the flags are known good: importing JAX takes a moment)

    lead = jax.process_index() == 0
    if base is None and lead:
        print(
            "workdir: none, so nothing is saved (no checkpoints, logs or TensorBoard files); "
            "choose one with --cfg.workdir=PATH",
            flush=True,
        )
    items: list[tuple[str, str | None]] = [
        (name or "", None if base is None or name is None else os.path.join(base, _folder_name(name)))
        for name, _ in runs
    ]
    try:
        for index, (name, cfg) in enumerate(runs, start=1):
            code = _train_one(
                name, cfg, index=index, count=len(runs), base=base, opts=opts, allowed=allowed, lead=lead,
                started=started if index == 1 else time.perf_counter(),
            )  # fmt: skip
            if code:
                return code
    finally:  # a sweep ends with its table, also when an item failed or was preempted
        if opts.sweep is not None and base is not None and lead:
            from ._sweep_table import sweep_summary

            print(sweep_summary(items, base), flush=True)
    return 0


def _train_one(
    name: str | None, cfg: Any, *, index: int, count: int, base: str | None, opts: Any, allowed: Any,
    lead: bool, started: float,
) -> int:  # fmt: skip
    """Trains one run (a sweep's item `index` of `count`): 0 when done or already complete, 143 when
    preempted."""
    from kd.train._compiles import CompileLog
    from kd.writers._tracker import close_trackers

    compiling = CompileLog()
    workdir = base if name is None or base is None else os.path.join(base, _folder_name(name))
    cfg.workdir = workdir
    workdir = _eval_only_in_place(cfg, workdir)
    if name is not None and lead:
        print(f"sweep item {index}/{count}: {name} -> {workdir or '(no workdir)'}", flush=True)
    changes = [] if workdir is None else _other_run_changes(workdir, konfig.to_json(cfg), force=opts.force)
    trainer = _resolve(cfg, profile=opts.profile, allowed=allowed, track=_tracking(opts.track, name, base))
    evaluates_only = getattr(trainer.setup, "eval_only", False)  # trains nothing: reruns add their rows
    if workdir is not None and not evaluates_only and not _ready_to_train(
        workdir, trainer, force=opts.force, lead=lead
    ):
        return 0  # already complete: nothing to do
    if changes and lead and _checkpoint_steps(workdir):  # --force continues that run with this config
        print(
            f"--force: continuing the run in {workdir} with this config, which differs from its own: "
            f"{_shown_changes(changes, 4)}. The optimizer and its schedules carry on from the checkpoint's "
            "step: a schedule that depends on a changed value (num_train_steps, warmup, decay) takes its new "
            "value from that step on, so the learning rate may jump there.",
            flush=True,
        )
    try:
        state, logged = trainer.train()
    except KeyboardInterrupt:
        close_trackers(trainer.writer, killed=True)  # Ctrl-C: W&B / MLflow say the run was killed
        raise
    except Exception as e:
        close_trackers(trainer.writer, failed=True)  # W&B / MLflow say the run failed
        stopped = _stopped_training(e, cfg, trainer)
        if stopped is None:
            e._kd_raised_in_training = True  # type: ignore[attr-defined]
            raise
        raise stopped from None
    preempted = int(state.step) < trainer.stop_step and trainer.stopped_early is None
    close_trackers(trainer.writer, killed=preempted)  # each run (a sweep's item) ends its tracker runs
    if preempted:
        return 143  # preempted (SIGTERM): the loop said where it stopped; 128 + SIGTERM, as if killed by it
    if lead:
        seconds = time.perf_counter() - started
        if evaluates_only:  # Trainer.eval_only(): nothing trained
            source = trainer.aux.get("workdir")
            print(f"done: evaluated step {int(state.step)} of {source} in {seconds:.1f}s", flush=True)
        else:
            if compiling.programs():
                print(f"compiled {compiling.summary()}", flush=True)
            print(_done_line(int(state.step), seconds, compiling.seconds(), logged), flush=True)
    return 0


def _ready_to_train(workdir: str, trainer: Any, *, force: bool, lead: bool) -> bool:
    """What the workdir holds decides: a finished run is said and skipped (False); a checkpointing run that
    stopped before its first save completed (logs, no whole checkpoint) is moved to `previous/` and starts
    over, said in one line; logs of a run without checkpoints are never overwritten (CliError); with --force
    any of these is moved to `previous/` and the run starts over. Checkpoints to continue from: True (the
    Trainer says "resuming from step N"; a `ckpt_<N>` folder that is no whole checkpoint is not counted)."""
    from kd.ckpts._orbax import barrier
    from kd.train._run_record import stopped_early

    from ._workdirs import archive_run, checkpointed, last_logged_step, saved_steps

    steps, logged = saved_steps(workdir), last_logged_step(workdir)
    stop = trainer.stop_step
    done = bool(steps) and (steps[-1] >= stop or stopped_early(workdir, step=steps[-1], hooks=trainer.hooks))
    without_checkpoint = not steps and logged is not None
    lost = without_checkpoint and checkpointed(workdir)  # none of its saves survived: nothing to continue
    barrier("kd_cli_workdir_read")  # every host has looked before one moves anything
    if not (done or without_checkpoint):
        return True
    if not force:
        if done:
            if lead:
                print(
                    f"run already complete at step {steps[-1]} ({workdir}): nothing to do; --force starts "
                    "it over (the old files are kept under previous/)",
                    flush=True,
                )
            return False
        if not lost:
            raise CliError(
                f"workdir {workdir} holds the logs of a run (metrics.jsonl up to step {logged}) but no "
                "checkpoint to continue from, so training again would start over and overwrite them. Pass "
                f"--force to start over (the old files move to {os.path.join(workdir, 'previous')}/), or "
                "choose another --cfg.workdir. (Runs checkpoint by default; this one had checkpointer=None.)"
            )
    if lead:
        archived = archive_run(workdir)
        if force:
            print(f"--force: the earlier run's files moved to {archived}; starting over", flush=True)
        else:
            print(
                f"no checkpoint of the earlier run survived (it logged up to step {logged}, then stopped before "
                f"its first save completed): its files moved to {archived}; starting over",
                flush=True,
            )
    barrier("kd_cli_workdir_archived")
    return True


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
    return os.path.expanduser(os.fspath(value))  # `--cfg.workdir=~/runs/a`: the shell leaves `~` after `=`


def _eval_only_in_place(cfg: Any, workdir: str | None) -> str | None:
    """The workdir this run writes: for Kauldron's eval-only form (`Trainer.eval_only()` given the trained run
    as `--cfg.workdir`, no `cfg.aux.workdir`) its `eval_only/` subfolder, the config then naming the trained
    run as `cfg.aux.workdir` (kd's form); else `workdir`."""
    from kd.train._eval_only import in_place

    try:
        qualname = str(cfg["__qualname__"])
    except (KeyError, AttributeError, TypeError):
        return workdir
    if workdir is None or not qualname.endswith("Trainer.eval_only"):
        return workdir
    try:
        aux = cfg["aux"]
    except (KeyError, AttributeError, TypeError):
        return workdir
    if _given_workdir(aux) is not None or _given_value(aux, "xid") is not None:
        return workdir
    source, own = in_place(None, workdir)
    if own != workdir:
        aux["workdir"], cfg.workdir = source, own
    return own


def _given_value(cfg: Any, key: str) -> Any:
    try:
        value = cfg[key]
    except (KeyError, AttributeError, TypeError):
        return None
    return None if isinstance(value, type(konfig.placeholder(str))) else value


def _folder_name(item_name: str) -> str:
    """`lr=0.001,seed=1` -> a folder name safe on every filesystem."""
    return re.sub(r"[^A-Za-z0-9._=,+-]+", "_", item_name).strip("._") or "item"


_SAME_RUN_FIELDS = ("cfg.workdir", "cfg.stop_after_steps")


def _other_run_changes(workdir: str, config_json: str, *, force: bool) -> list[str]:
    """How this config differs from the run in `workdir` that has checkpoints to continue from (none: []). A
    workdir holding another config's run is not mixed with this one unless --force (CliError, the changes
    listed); with --force the changes are returned, to be said. With no checkpoint there is nothing to
    continue: what the workdir holds is decided by `_ready_to_train` (logs kept or moved aside)."""
    path = os.path.join(workdir, "config.json")
    if not os.path.exists(path) or not _checkpoint_steps(workdir):
        return []
    from ._diff import config_changes

    with open(path) as f:
        existing = f.read()
    # The workdir field itself may differ: a run folder that was moved or copied is still that run; and
    # where this invocation stops (`stop_after_steps`) is not part of what the run is.
    changes = [str(c) for c in config_changes(existing, config_json) if c.path not in _SAME_RUN_FIELDS]
    if changes and not force:
        raise CliError(
            f"workdir {workdir} holds a run of another config: {_shown_changes(changes, 6)} (its config.json "
            "-> this one). Resuming it with this config would mix two runs' checkpoints and metrics. Choose "
            "another --cfg.workdir, or pass --force to continue that run with this config."
        )
    return changes


def _checkpoint_steps(workdir: str) -> list[int]:
    from ._workdirs import saved_steps

    return saved_steps(workdir)


def _shown_changes(changes: list[str], limit: int) -> str:
    """`~ cfg.a: 1 -> 2; + cfg.b: 3` (each cut at 100 characters), and how many more."""
    shown = [c if len(c) <= 100 else c[:97] + "..." for c in (c.replace("\n    ", " ") for c in changes[:limit])]
    more = f" (+{len(changes) - limit} more; kd-train diff shows all)" if len(changes) > limit else ""
    return "; ".join(shown) + more


def _parse_track(flag: str | None, source: str) -> dict[str, Any] | None:
    """`--track=wandb,mlflow`: the trackers and the project their runs go to (the config file's name)."""
    if flag is None:
        return None
    from kd.writers._tracker import parse_trackers

    try:
        trackers = parse_trackers(flag)
    except ValueError as e:
        raise CliError(str(e)) from None
    return {"trackers": trackers, "project": _project_of(source)}


def _project_of(source: str) -> str | None:
    """The config's name: a file's name without `.py` (`configs/mnist.py`), a module's last part
    (`pkg.configs.mnist`), as konfig tells the two apart."""
    if source.endswith(".py") or os.sep in source or "/" in source:
        return os.path.splitext(os.path.basename(source))[0] or None
    return source.rpartition(".")[2] or None


def _refuse_track_slips(rest: list[str]) -> None:
    """`--trac=wandb` (argparse would take a prefix for `--track`) and `--tracks=wandb`: a usage error
    saying `--track`."""
    import difflib

    for arg in rest:
        if not arg.startswith("--") or arg == "--":
            continue
        name = arg[2:].partition("=")[0]
        if name == "track":
            continue
        if (name and "track".startswith(name)) or difflib.get_close_matches(name, ["track"], cutoff=0.8):
            raise CliError(
                f"--{name}: unknown flag; did you mean --track (e.g. --track=wandb,mlflow)?\n\n{USAGE}"
            )


def _tracking(track: dict[str, Any] | None, item: str | None, base: str | None) -> dict[str, Any] | None:
    """What `kd.writers._tracker.with_trackers` adds for this run: `--track`'s writers, and for a sweep item
    its name, its overrides as tags and the sweep's folder as the group (also for trackers in the config)."""
    if track is None and item is None:
        return None
    from kd.writers._tracker import sweep_tags

    identity = {"name": item, "tags": sweep_tags(item)}
    if item is not None and base is not None:
        identity["group"] = os.path.basename(os.path.normpath(base))
    return {**(track or {}), **identity}


def _resolve(
    cfg: Any, *, profile: bool = False, allowed: list[str] | None = None, track: dict[str, Any] | None = None
) -> Any:
    """The checked Trainer of `cfg` (config errors surface here, before anything is written)."""
    import kd.train

    trainer = konfig.resolve(cfg, allowed=allowed)
    if not isinstance(trainer, kd.train.Trainer):
        raise CliError(f"the config's root builds a {type(trainer).__name__}, expected a kd.train.Trainer")
    if profile and trainer.profiler is None:
        import dataclasses

        trainer = dataclasses.replace(trainer, profiler=kd.train.Profiler())
        trainer.__post_konfig_resolve__(cfg)  # keeps the config it was resolved from (replace drops it)
    if track is not None:
        import dataclasses

        from kd.writers._tracker import with_trackers

        writer = with_trackers(trainer.writer, **track)
        if writer is not trainer.writer:
            trainer = dataclasses.replace(trainer, writer=writer)
            trainer.__post_konfig_resolve__(cfg)  # keeps the config it was resolved from (replace drops it)
    try:
        trainer.check()  # bad keys and shapes, named, before anything is written
    except ArithmeticError as e:  # a value of the config (a size of 0, a seed of 2**70) broke the init
        raise CliError(
            _arithmetic_message(e, cfg, trainer, "initializing the model and the train state")
        ) from None
    return trainer


# ---------------------------------------------------------------- errors while running


# The open files a run may need (orbax and tensorstore threads, data loaders, logs); below this, runs fail
# in background threads with hundreds of lines of tracebacks, so the limit is raised or the run refused.
_MIN_OPEN_FILES = 256


def _enough_open_files() -> None:
    """Raises the soft limit of open files up to `_MIN_OPEN_FILES` if the hard limit allows; else RunError."""
    try:
        import resource  # POSIX only
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= _MIN_OPEN_FILES:
        return
    wanted = _MIN_OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, _MIN_OPEN_FILES)
    if wanted > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if wanted < _MIN_OPEN_FILES:
        raise RunError(
            f"too few file descriptors: this process may open {hard} files (ulimit -n), and a run needs "
            f"about {_MIN_OPEN_FILES} (checkpoint writers, data loaders, logs); raise the limit "
            "(`ulimit -n 4096`) and run the same command again"
        )


def _stopped_training(error: Exception, cfg: Any, trainer: Any) -> CliError | RunError | None:
    """The one paragraph for an I/O error, a computation that a config value broke (`cfg.seed`, a size
    of 0), or checkpoints of other shapes than the config's model (exit 2), during `train()`; None for
    anything else: a bug in user code keeps its traceback (an arithmetic error gets a note naming the step)."""
    import kd.ckpts
    import kd.train

    if isinstance(error, kd.ckpts.CheckpointStructureError):  # e.g. --force with a layer of another width
        return CliError(_other_shapes(error, str(trainer.workdir)))
    where = _where_stopped(error, trainer)
    if isinstance(error, kd.train.NonFiniteLossError):  # its message says the step, the losses, what to do
        return RunError(str(error))
    if type(error) is kd.train.ConfigError:  # found once the run logged (an early stopping's monitored name)
        return CliError(str(error))
    cause = operational_cause(error)
    if cause is not None:
        saved = _saved_steps(trainer)
        kept = (
            f"the checkpoints up to step {saved[-1]} are intact; run the same command again to continue from there"
            if saved
            else "no checkpoint was saved yet"
        )
        return RunError(
            f"{describe_os_error(cause, flag='--cfg.workdir', where=str(trainer.workdir))}. The run stopped "
            f"{where}; {kept}."
        )
    if isinstance(error, ArithmeticError):
        message = _arithmetic_message(error, cfg, trainer, f"training ({where})")
        if message.startswith("cfg."):  # a config value named: the paragraph says all
            return RunError(message)
        error.add_note(f"kd-train: raised while training, {where}")  # maybe a bug: the traceback stays
    return None


def _where_stopped(error: Exception, trainer: Any) -> str:
    """`after step 2000`: the last step in the run's metrics.jsonl (what the user saw logged), else the step the
    loop's call started from; `before step 1` when neither is known."""
    from ._workdirs import last_logged_step

    step = last_logged_step(trainer.workdir) if trainer.workdir is not None else None
    if step is None:
        call = next(
            (
                frame.f_locals.get("call")
                for frame in reversed(traceback_frames(error))
                if frame.f_code.co_name == "train" and frame.f_code.co_filename.endswith("_trainer.py")
            ),
            None,
        )
        step = getattr(call, "start", None)
    return "before step 1" if not isinstance(step, int) or step <= 0 else f"after step {step}"


def _other_shapes(error: Any, workdir: str) -> str:
    """One paragraph for checkpoints that no longer fit the model: the first path whose shape differs, the
    expected (this config's) and found (the checkpoint's) shapes, how many others differ, and what to do."""
    first, *others = error.differences
    first = first.replace("the template", "this config's model")
    paths = [d.split("'")[1] for d in others if d.count("'") >= 2]
    more = ""
    if paths:
        shown = ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")
        more = f" ({len(paths)} more differ: {shown})"
    return (
        f"the run in {workdir} cannot continue with this config: its checkpoints hold other shapes than the "
        f"config's model. {first}{more}. A run continues only with the shapes it was trained with (--force "
        "continues a run whose config changed, not one whose parameters changed shape): train this config in "
        "another --cfg.workdir, or go back to the shapes in the run's config.json"
    )


def _saved_steps(trainer: Any) -> list[int]:
    """The complete checkpoints in the run's checkpoint folder, read from the disk (the checkpointer may be
    in the state the error left it in)."""
    try:
        names = os.listdir(trainer.checkpointer.directory)
    except (AttributeError, ValueError, OSError):
        return []
    return sorted(int(n[len("ckpt_") :]) for n in names if re.fullmatch(r"ckpt_\d+", n))


def _arithmetic_message(error: ArithmeticError, cfg: Any, trainer: Any, phase: str) -> str:
    """`cfg.seed = 2**70: OverflowError (...) while initializing ...`: the config path where it can be
    known (the seed; a module's field of 0), else the phase and the module it was raised in."""
    kind = f"{type(error).__name__}: {error}"
    frames = traceback_frames(error)
    if any(f.f_code.co_filename.endswith(os.path.join("train", "_rngs.py")) for f in frames):
        return (
            f"cfg.seed = {trainer.seed!r}: {kind} while {phase}; a JAX seed is a 64-bit integer "
            "(-2**63 <= seed < 2**63): choose a smaller one"
        )
    module = next(
        (f.f_locals["self"] for f in reversed(frames) if _is_model_part(f.f_locals.get("self"))), None
    )
    if module is None:
        return (
            f"{kind} while {phase}; check the config's sizes and values (a size of 0, a huge number)"
            + user_frame_lines(error)
        )
    zeros = _zero_fields(module)
    paths = _config_paths(cfg, type(module).__name__, zeros)
    shown = f"{type(module).__name__}" + (
        f" {module.name!r}" if isinstance(getattr(module, "name", None), str) else ""
    )
    if paths:
        return f"{', '.join(paths)} = 0: {kind} while {phase} (in {shown}); give it a positive value"
    hint = f" (its fields equal to 0: {', '.join(zeros)})" if zeros else ""
    return f"{kind} while {phase}, in {shown}{hint}; check the config's values for it" + user_frame_lines(error)


def _is_model_part(obj: Any) -> bool:
    """A user's or a library's module object (not JAX's, konfig's or kd's machinery)."""
    if obj is None:
        return False
    owner = type(obj).__module__ or ""
    return not owner.startswith(
        ("jax", "kd.", "konfig", "flax.core", "numpy", "builtins", "functools", "contextlib")
    )


def _zero_fields(module: Any) -> list[str]:
    import dataclasses

    if not dataclasses.is_dataclass(module):
        return []
    return [
        f.name
        for f in dataclasses.fields(module)
        if type(getattr(module, f.name, None)) is int and getattr(module, f.name) == 0
    ]


def _config_paths(cfg: Any, class_name: str, fields: list[str]) -> list[str]:
    """Paths `cfg.model.layers[0].features` of the config's `class_name(...)` nodes whose `fields` are 0."""
    if not fields:
        return []
    try:
        todo = [("cfg", json.loads(konfig.to_json(cfg)))]
    except (ValueError, TypeError, RecursionError):
        return []
    found = []
    while todo and len(found) < 5:
        path, node = todo.pop()
        if isinstance(node, list):
            todo += [(f"{path}[{i}]", v) for i, v in reversed(list(enumerate(node)))]
        elif isinstance(node, dict):
            target = node.get("__qualname__")
            if isinstance(target, str) and target.rsplit(".", 1)[-1].rsplit(":", 1)[-1] == class_name:
                found += [f"{path}.{f}" for f in fields if node.get(f) == 0 and type(node.get(f)) is int]
            items = [(k, v) for k, v in node.items() if not k.startswith("__")]
            todo += [(f"{path}[{k}]" if k.isdigit() else f"{path}.{k}", v) for k, v in reversed(items)]
    return found


def _done_line(steps: int, seconds: float, compiling: float, logged: dict[str, Any]) -> str:
    """`done: 300 steps in 8.1s (2.3s compiling); xent 0.0312, accuracy 0.91`: the whole command's time
    (start-up, compiling, evaluations, saves included) and the last logged losses and metrics, in at most
    100 columns."""
    import numpy as np

    from kd.writers._base import short_labels

    names = [k for k, v in logged.items() if k.startswith(("losses/", "metrics/")) and np.ndim(v) == 0]
    line = f"done: {steps} steps in {seconds:.1f}s ({compiling:.1f}s compiling)"
    for index, (name, label) in enumerate(zip(names, short_labels(names), strict=True)):
        part = f"{label} {float(logged[name]):.4g}"
        if len(line) + len(part) + 2 > 100:
            break
        line += ("; " if index == 0 else ", ") + part
    return line


# ---------------------------------------------------------------- inspect


def _inspect(argv: list[str]) -> int:
    source, args, overrides, rest = _split(argv)
    parser = _Parser(prog="kd-train inspect", add_help=False)
    parser.add_argument("--allowed", default=None)
    parser.add_argument("--interms", action="store_true")
    opts, unexpected = parser.parse_known_args(rest)
    if unexpected:
        raise CliError(f"inspect: unexpected arguments {unexpected}\n\n{USAGE}")
    allowed = _source_policy(source, opts.allowed)
    with during(f"loading the config {source}"):
        cfg = konfig.build_config(source, args=args, overrides=overrides, from_strings=True)
    from kd.train._inspect import inspect_report, interms_report
    from kd.writers._left_out import leave_out_writers

    # Inspecting writes nothing and reads no run: no workdir, no checkpointer (which would need one), and none
    # of the config's writers (a run's config.json may name a server or folder of someone else's choosing).
    cfg.workdir = None
    if _has_field(cfg, "checkpointer"):
        cfg.checkpointer = None
    leave_out_writers(cfg)
    trainer = _resolve(cfg, allowed=allowed)
    print(interms_report(trainer) if opts.interms else inspect_report(trainer), flush=True)
    return 0


def _has_field(cfg: Any, name: str) -> bool:
    try:
        return cfg[name] is not None
    except (KeyError, AttributeError, TypeError, IndexError):
        return False


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
    parser.add_argument("--follow", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--poll_seconds", type=float, default=10.0)
    parser.add_argument("--timeout_seconds", type=float, default=None)
    parser.add_argument("--allowed", default=None)
    opts = parser.parse_args(rest)
    if opts.poll_seconds < 0:
        raise CliError(f"--poll_seconds: expected a number of seconds >= 0, got {opts.poll_seconds:g}")
    if opts.timeout_seconds is not None and opts.timeout_seconds <= 0:
        raise CliError(f"--timeout_seconds: expected a number of seconds > 0, got {opts.timeout_seconds:g}")
    from ._workdirs import run_file

    _enough_open_files()

    path = run_file(opts.workdir, "config.json", "kd-train writes it when a run starts; was it trained here?")
    cfg = konfig.from_json(path.read_text())  # loading imports and calls nothing
    konfig.apply_overrides(cfg, overrides, from_strings=True)
    cfg.workdir = opts.workdir  # the folder the run is in now (it may have been moved)
    names = None if opts.evals is None else [n.strip() for n in opts.evals.split(",") if n.strip()]
    _check_eval_names(cfg.get("evals"), names, path)
    allowed, policy = _run_policy(opts.workdir, opts.allowed)
    import kd.ckpts
    import kd.train
    from kd.evals._standalone import EVAL_METRICS_FILE, evaluate_checkpoints
    from kd.writers._left_out import leave_out_writers

    leave_out_writers(cfg)  # kd's own writers into the run's folder; never those its config.json names
    _config_folder_on_path(opts.workdir)
    print(f"eval: resolving {path} in safe mode: allowed={allowed} ({policy})", flush=True)
    trainer = _resolve(cfg, allowed=allowed)
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


def _source_policy(source: str, flag: str | None) -> list[str] | None:
    """What `train` / `inspect` may build from `--cfg=source`: `--allowed` if given; for a run folder's
    config.json (a `.json` beside a run.json), that run's policy; else None (a config file you chose is code
    you run, as `python config.py` is)."""
    run_record = os.path.join(os.path.dirname(os.path.abspath(source)), "run.json")
    if flag is None and not (source.endswith(".json") and os.path.isfile(run_record)):
        return None
    allowed, policy = _run_policy(os.path.dirname(os.path.abspath(source)), flag)
    print(f"resolving {source} in safe mode: allowed={allowed} ({policy})", flush=True)
    return allowed


def _run_policy(workdir: str, flag: str | None) -> tuple[list[str], str]:
    """`kd.train._run_record.run_policy` with its refusal as a CliError (one paragraph, exit 2)."""
    try:
        return run_policy(workdir, flag)
    except RunPolicyError as e:
        raise CliError(str(e)) from None


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


# ---------------------------------------------------------------- plot, diff


def _plot(argv: list[str]) -> int:
    parser = _Parser(prog="kd-train plot", add_help=False)
    parser.add_argument("workdirs", nargs="+")
    parser.add_argument("--out", default=None)
    parser.add_argument("--metrics", default=None)
    parser.add_argument("--perf", action="store_true")
    opts = parser.parse_args(argv)
    from ._plot import plot_runs

    metrics = [m for m in opts.metrics.split(",") if m] if opts.metrics else None
    print(plot_runs(opts.workdirs, out=opts.out, metrics=metrics, perf=opts.perf), flush=True)
    return 0


def _diff(argv: list[str]) -> int:
    parser = _Parser(prog="kd-train diff", add_help=False)
    parser.add_argument("workdir_a")
    parser.add_argument("workdir_b")
    opts = parser.parse_args(argv)
    from ._diff import diff_runs

    print(diff_runs(opts.workdir_a, opts.workdir_b), flush=True)
    return 0


def _kauldron_command(noun: str) -> Callable[[list[str]], int]:
    """Kauldron's `<noun> <verb>` commands (kd.cli.commands): config show|resolve, data element_spec, run
    eval_shape, on the config patched for a quick trial (`--patch.<field>=VALUE`)."""

    def run(argv: list[str]) -> int:
        from . import commands

        try:
            args = commands.flag_parser(["kd-train", noun, *argv])
        except SystemExit as e:  # argparse said what is wrong (a missing or unknown verb, a bad flag)
            return e.code if isinstance(e.code, int) else 2
        commands.main(args)
        return 0

    return run


_COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "train": _train,
    "inspect": _inspect,
    "eval": _eval,
    "plot": _plot,
    "diff": _diff,
    "launch": _launch.launch,
    "predict": _predict.predict,
    "lr-find": _lr_find.lr_find,
    "config": _kauldron_command("config"),
    "data": _kauldron_command("data"),
    "run": _kauldron_command("run"),
}
