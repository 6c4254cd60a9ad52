"""From the command line to a checked Trainer, as `train`, `inspect` and `eval` share it: konfig's flags
(the config file's folder on `sys.path`), what the config may build (konfig's safe mode for a run's
config.json), the resolved and checked Trainer, and the open files a run needs.

    source, args, overrides, rest = split_flags(argv)
    trainer = resolve(cfg, allowed=source_policy(source, opts.allowed))
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any

import konfig

from kd._run_policy import RunPolicyError, run_policy

from ._errors import CliError, RunError
from ._stopped import arithmetic_message
from ._track import with_trackers

# The open files a run may need (orbax and tensorstore threads, data loaders, logs); below this, runs fail
# in background threads with hundreds of lines of tracebacks, so the limit is raised or the run refused.
MIN_OPEN_FILES = 256


def split_flags(argv: list[str]) -> tuple[str, dict[str, Any], list[tuple[str, Any]], list[str]]:
    """konfig's flags; the config file's folder goes on `sys.path`, as for `python config.py`, so a config
    imports the modules next to it (`examples/digits.py` imports `digits_data`)."""
    source, args, overrides, rest = konfig.split_flags(argv)
    if source.endswith(".py"):
        folder = os.path.dirname(os.path.abspath(source))
        if folder not in sys.path:
            sys.path.insert(0, folder)
    return source, args, overrides, rest


def source_policy(source: str, flag: str | None) -> list[str] | None:
    """What `train` / `inspect` may build from `--cfg=source`: `--allowed` if given; for a run folder's
    config.json (a `.json` beside a run.json), that run's policy; else None (a config file you chose is code
    you run, as `python config.py` is)."""
    run_record = os.path.join(os.path.dirname(os.path.abspath(source)), "run.json")
    if flag is None and not (source.endswith(".json") and os.path.isfile(run_record)):
        return None
    allowed, policy = policy_of_run(os.path.dirname(os.path.abspath(source)), flag)
    print(f"resolving {source} in safe mode: allowed={allowed} ({policy})", flush=True)
    return allowed


def policy_of_run(workdir: str, flag: str | None) -> tuple[list[str], str]:
    """`kd._run_policy.run_policy` with its refusal as a CliError (one paragraph, exit 2)."""
    try:
        return run_policy(workdir, flag)
    except RunPolicyError as e:
        raise CliError(str(e)) from None


def resolve(
    cfg: Any, *, profile: bool = False, allowed: list[str] | None = None, track: dict[str, Any] | None = None
) -> Any:
    """The checked Trainer of `cfg` (config errors surface here, before anything is written)."""
    import kd.train

    trainer = konfig.resolve(cfg, allowed=allowed)
    if not isinstance(trainer, kd.train.Trainer):
        raise CliError(f"the config's root builds a {type(trainer).__name__}, expected a kd.train.Trainer")
    if profile and trainer.profiler is None:
        trainer = dataclasses.replace(trainer, profiler=kd.train.Profiler())
        trainer.__post_konfig_resolve__(cfg)  # keeps the config it was resolved from (replace drops it)
    if track is not None:
        writer = with_trackers(trainer.writer, **track)
        if writer is not trainer.writer:
            trainer = dataclasses.replace(trainer, writer=writer)
            trainer.__post_konfig_resolve__(cfg)  # keeps the config it was resolved from (replace drops it)
    try:
        trainer.check()  # bad keys and shapes, named, before anything is written
    except ArithmeticError as e:  # a value of the config (a size of 0, a seed of 2**70) broke the init
        raise CliError(
            arithmetic_message(e, cfg, trainer, "initializing the model and the train state")
        ) from None
    return trainer


def enough_open_files() -> None:
    """Raises the soft limit of open files up to `MIN_OPEN_FILES` if the hard limit allows; else RunError."""
    try:
        import resource  # POSIX only
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= MIN_OPEN_FILES:
        return
    wanted = MIN_OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, MIN_OPEN_FILES)
    if wanted > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if wanted < MIN_OPEN_FILES:
        raise RunError(
            f"too few file descriptors: this process may open {hard} files (ulimit -n), and a run needs "
            f"about {MIN_OPEN_FILES} (checkpoint writers, data loaders, logs); raise the limit "
            "(`ulimit -n 4096`) and run the same command again"
        )
