"""`kd-train [train]`: trains the config, or each item of its sweep (`--sweep`), into its workdir; what the
workdir holds decides whether a run starts, resumes, is complete, or is refused (another config's run).

    kd-train --cfg=examples/digits.py --cfg.workdir=/tmp/run             # train, or resume, or "already complete"
    kd-train --cfg=examples/digits.py --sweep=lr --cfg.workdir=/tmp/run  # each item in /tmp/run/<item>
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

import konfig

from kd._phase import during

from . import _distributed
from ._errors import CliError
from ._resolve import enough_open_files, resolve, source_policy, split_flags
from ._stopped import stopped_training
from ._track import close_trackers, parse_track, refuse_track_slips, tracking
from ._usage import Parser
from ._workdirs import archive_run, check_workdir, checkpointed, last_logged_step, saved_steps


def train(argv: list[str]) -> int:
    """`kd-train [train] ARGV`: 0 when each run is done or already complete, 143 when one was preempted."""
    started = time.perf_counter()
    source, args, overrides, rest = split_flags(argv)
    opts = _train_flags(rest)
    allowed = source_policy(source, opts.allowed)
    opts.track = parse_track(opts.track, source)
    hosts = _distributed.settings(opts)
    with during(f"loading the config {source}"):
        runs = _runs(source, args, overrides, opts.sweep)
    base = given_workdir(runs[0][1])
    if base is None and hosts is not None:
        raise CliError(
            f"{hosts['num_processes']} processes train one run into one workdir: give the same "
            "--cfg.workdir=PATH (a folder all of them can reach) to each"
        )
    if base is not None:
        check_workdir(base, flag="--cfg.workdir")  # before JAX starts: a run that could not write stops now
    enough_open_files()
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
        (name or "", None if base is None or name is None else os.path.join(base, folder_name(name)))
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


def _train_flags(rest: list[str]) -> Any:
    """train's own flags (konfig's `--cfg...` taken out), checked."""
    parser = Parser(prog="kd-train", add_help=False)
    parser.add_argument("--sweep", default=None)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--track", default=None)  # trackers beside the default writers: wandb, mlflow
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--allowed", default=None)
    parser.add_argument("--workdir", default=None)  # a common slip: said what to write instead
    _distributed.add_flags(parser)
    refuse_track_slips(rest)  # before argparse, which takes `--trac` for `--track`
    opts = parser.parse_args(rest)
    if opts.workdir is not None:
        raise CliError(
            f"--workdir={opts.workdir}: train takes the run's folder as a config field: "
            f"--cfg.workdir={opts.workdir} (--workdir is eval's flag)"
        )
    return opts


def _train_one(
    name: str | None, cfg: Any, *, index: int, count: int, base: str | None, opts: Any, allowed: Any,
    lead: bool, started: float,
) -> int:  # fmt: skip
    """Trains one run (a sweep's item `index` of `count`): 0 when done or already complete, 143 when
    preempted."""
    from kd.train import CompileLog

    compiling = CompileLog()
    workdir = base if name is None or base is None else os.path.join(base, folder_name(name))
    cfg.workdir = workdir
    workdir = _eval_only_in_place(cfg, workdir)
    if name is not None and lead:
        print(f"sweep item {index}/{count}: {name} -> {workdir or '(no workdir)'}", flush=True)
    changes = [] if workdir is None else _other_run_changes(workdir, konfig.to_json(cfg), force=opts.force)
    trainer = resolve(cfg, profile=opts.profile, allowed=allowed, track=tracking(opts.track, name, base))
    evaluates_only = getattr(trainer.setup, "eval_only", False)  # trains nothing: reruns add their rows
    if (
        workdir is not None
        and not evaluates_only
        and not ready_to_train(workdir, trainer, force=opts.force, lead=lead)
    ):
        return 0  # already complete: nothing to do
    if changes and lead and saved_steps(workdir):  # --force continues that run with this config
        print(
            f"--force: continuing the run in {workdir} with this config, which differs from its own: "
            f"{_shown_changes(changes, 4)}. The optimizer and its schedules carry on from the checkpoint's "
            "step: a schedule that depends on a changed value (num_train_steps, warmup, decay) takes its new "
            "value from that step on, so the learning rate may jump there.",
            flush=True,
        )
    state, logged = _trained(trainer, cfg)
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
            print(done_line(int(state.step), seconds, compiling.seconds(), logged), flush=True)
    return 0


def _trained(trainer: Any, cfg: Any) -> tuple[Any, dict[str, Any]]:
    """`trainer.train()`; a stop the user can act on as one paragraph (CliError, RunError), the tracker runs
    ended as failed or killed."""
    try:
        return trainer.train()
    except KeyboardInterrupt:
        close_trackers(trainer.writer, killed=True)  # Ctrl-C: W&B / MLflow say the run was killed
        raise
    except Exception as e:
        close_trackers(trainer.writer, failed=True)  # W&B / MLflow say the run failed
        stopped = stopped_training(e, cfg, trainer)
        if stopped is None:
            e._kd_raised_in_training = True  # type: ignore[attr-defined]
            raise
        raise stopped from None


def ready_to_train(workdir: str, trainer: Any, *, force: bool, lead: bool) -> bool:
    """What the workdir holds decides: a finished run is said and skipped (False); a checkpointing run that
    stopped before its first save completed (logs, no whole checkpoint) is moved to `previous/` and starts
    over, said in one line; logs of a run without checkpoints are never overwritten (CliError); with --force
    any of these is moved to `previous/` and the run starts over. Checkpoints to continue from: True (the
    Trainer says "resuming from step N"; a `ckpt_<N>` folder that is no whole checkpoint is not counted)."""
    from kd.ckpts import barrier
    from kd.train import stopped_early

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


def given_workdir(cfg: Any) -> str | None:
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
    from kd.train import eval_only_in_place

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
    if given_workdir(aux) is not None or _given_value(aux, "xid") is not None:
        return workdir
    source, own = eval_only_in_place(None, workdir)
    if own != workdir:
        aux["workdir"], cfg.workdir = source, own
    return own


def _given_value(cfg: Any, key: str) -> Any:
    try:
        value = cfg[key]
    except (KeyError, AttributeError, TypeError):
        return None
    return None if isinstance(value, type(konfig.placeholder(str))) else value


def folder_name(item_name: str) -> str:
    """`lr=0.001,seed=1` -> a folder name safe on every filesystem."""
    return re.sub(r"[^A-Za-z0-9._=,+-]+", "_", item_name).strip("._") or "item"


_SAME_RUN_FIELDS = ("cfg.workdir", "cfg.stop_after_steps")


def _other_run_changes(workdir: str, config_json: str, *, force: bool) -> list[str]:
    """How this config differs from the run in `workdir` that has checkpoints to continue from (none: []). A
    workdir holding another config's run is not mixed with this one unless --force (CliError, the changes
    listed); with --force the changes are returned, to be said. With no checkpoint there is nothing to
    continue: what the workdir holds is decided by `ready_to_train` (logs kept or moved aside)."""
    path = os.path.join(workdir, "config.json")
    if not os.path.exists(path) or not saved_steps(workdir):
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


def _shown_changes(changes: list[str], limit: int) -> str:
    """`~ cfg.a: 1 -> 2; + cfg.b: 3` (each cut at 100 characters), and how many more."""
    shown = [
        c if len(c) <= 100 else c[:97] + "..." for c in (c.replace("\n    ", " ") for c in changes[:limit])
    ]
    more = f" (+{len(changes) - limit} more; kd-train diff shows all)" if len(changes) > limit else ""
    return "; ".join(shown) + more


def done_line(steps: int, seconds: float, compiling: float, logged: dict[str, Any]) -> str:
    """`done: 300 steps in 8.1s (2.3s compiling); xent 0.0312, accuracy 0.91`: the whole command's time
    (start-up, compiling, evaluations, saves included) and the last logged losses and metrics, in at most
    100 columns."""
    import numpy as np

    from kd.writers import short_labels

    names = [k for k, v in logged.items() if k.startswith(("losses/", "metrics/")) and np.ndim(v) == 0]
    line = f"done: {steps} steps in {seconds:.1f}s ({compiling:.1f}s compiling)"
    for index, (name, label) in enumerate(zip(names, short_labels(names), strict=True)):
        part = f"{label} {float(logged[name]):.4g}"
        if len(line) + len(part) + 2 > 100:
            break
        line += ("; " if index == 0 else ", ") + part
    return line
