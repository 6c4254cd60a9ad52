"""`kd-train launch`: a config's `cfg.xm_job` (a `kd.xm.Job`) run as processes here, or printed as srun.

    kd-train launch --cfg=cfg.py --cfg.workdir=/tmp/run            # --local: N processes of `kd-train ...`
    kd-train launch --cfg=cfg.py --cfg.workdir=/shared/run --slurm  # prints the srun line, runs nothing

Every flag but launch's own goes to each process unchanged (`--cfg.*`, `--force`, `--sweep`, ...). The job is
read from the config before anything is built: `cfg.xm_job` alone is resolved (the Trainer leaves it
unresolved, as Kauldron's does), after checking that it names kd.xm's classes only (whatever the config
file); a config without one is one process.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys
from collections.abc import Iterator
from typing import Any

import konfig

from kd import xm
from kd._phase import during

from ._distributed import ENVIRONMENT
from ._errors import CliError

USAGE = """\
usage: kd-train launch --cfg=CONFIG.py [--cfg.PATH=VALUE ...] [--local|--slurm] [--coordinator_port=PORT]
                       [train's flags]

  Reads the config's cfg.xm_job (a kd.xm.Job; none: one process) and
  --local   (the default) runs its requirements.replicas processes of `kd-train ARGS` here, joined by
            jax.distributed at 127.0.0.1:PORT (a free port unless --coordinator_port), and exits with 0 or
            the code of the first process that failed (the others are then stopped)
  --slurm   prints the srun line for the job (one task per node, --gpus-per-task from its platform,
            --cpus-per-task and --mem from its requirements); run it inside an allocation
  Every other flag goes to each process unchanged; the job's args and env_vars are added.
"""


def launch(argv: list[str]) -> int:
    """`kd-train launch ARGV`: runs the job's processes (exit code: 0, or the first failure's) or prints srun."""
    if any(arg in ("-h", "--help") for arg in argv):
        print(USAGE, end="")
        return 0
    mode, port, passed = _launch_flags(argv)
    source, args, overrides, _ = konfig.split_flags(passed)
    if source.endswith(".py"):  # the config imports modules beside it, as for `kd-train --cfg=...`
        folder = os.path.dirname(os.path.abspath(source))
        if folder not in sys.path:
            sys.path.insert(0, folder)
    with during(f"loading the config {source}"):
        cfg = konfig.build_config(source, args=args, overrides=overrides, from_strings=True)
    job = job_of(cfg)
    if mode == "slurm":
        print(xm.srun_command(job, passed), flush=True)
        return 0
    count = job.num_processes
    if count > 1 and _given_workdir(cfg) is None:
        raise CliError(
            f"cfg.xm_job runs {count} processes, which train one run into one workdir: give it with "
            "--cfg.workdir=PATH"
        )
    port = port or _free_port()
    processes = xm.local_processes(job, passed, port=port, command=(sys.executable, "-m", "kd"))
    shown = shlex.join(["kd-train", *passed, *job.flags()])
    where = f" (coordinator 127.0.0.1:{port})" if count > 1 else ""
    print(f"launch: {count} process(es) on this machine{where}: {shown}", flush=True)
    return xm.run_processes(processes)


def job_of(cfg: Any) -> xm.Job:
    """The config's `xm_job` resolved on its own (a `kd.xm.Job`); absent or None: `kd.xm.Job()`, one process."""
    try:
        node = cfg["xm_job"]
    except (KeyError, AttributeError, TypeError, IndexError):
        node = None
    if node is None:
        return xm.Job()
    if isinstance(node, xm.Job):
        return node
    others = sorted(set(_targets(json.loads(konfig.to_json(node)))) - {""})
    if others:
        raise CliError(
            f"cfg.xm_job builds {', '.join(others)}: a job is made of kd.xm's classes only "
            "(kxm.Job(platform=..., requirements=xm.JobRequirements(...)))"
        )
    # Resolved under its own name, so an error reads "In cfg.xm_job: ...".
    job = konfig.resolve(konfig.ConfigDict({"xm_job": node}))["xm_job"]
    if not isinstance(job, xm.Job):
        raise CliError(
            f"cfg.xm_job builds a {type(job).__name__}, expected a kd.xm.Job, e.g. "
            'kxm.Job(platform="cpu", requirements=xm.JobRequirements(replicas=2))'
        )
    return job


def _targets(tree: Any) -> Iterator[str]:
    """The targets (`module:name`) a config's JSON names outside kd.xm; "" for each of kd.xm's."""
    if isinstance(tree, list):
        for item in tree:
            yield from _targets(item)
    elif isinstance(tree, dict):
        for key, value in tree.items():
            if key in ("__qualname__", "__const__") and isinstance(value, str):
                module = value.partition(":")[0]
                yield "" if module.split(".")[:2] in (["kd", "xm"], ["kd", "kxm"]) else value
            else:
                yield from _targets(value)


def _launch_flags(argv: list[str]) -> tuple[str, int | None, list[str]]:
    """`(mode, --coordinator_port, the flags for each process)`; `--local` is the default mode."""
    modes, port, passed = [], None, []
    for arg in argv:
        if arg in ("--local", "--slurm"):
            modes.append(arg[2:])
        elif arg.startswith("--coordinator_port="):
            value = arg.partition("=")[2]
            if not value.isdigit() or not 0 < int(value) < 65536:
                raise CliError(f"--coordinator_port: expected a port number (1-65535), got {value!r}")
            port = int(value)
        elif arg.split("=")[0] in {f"--{name}" for name in ENVIRONMENT}:
            raise CliError(
                f"launch: {arg.split('=')[0]} is set by launch for each process (cfg.xm_job says how many); "
                "leave it out (--coordinator_port=PORT chooses the local port)"
            )
        else:
            passed.append(arg)
    if len(set(modes)) > 1:
        raise CliError("launch: --local and --slurm are exclusive; choose one")
    return (modes[0] if modes else "local"), port, passed


def _given_workdir(cfg: Any) -> str | None:
    try:
        value = cfg["workdir"]
    except (KeyError, AttributeError, TypeError, IndexError):
        return None
    if isinstance(value, type(konfig.placeholder(str))):  # an unset placeholder: its default, if any
        value = value.default
    return os.fspath(value) if isinstance(value, (str, os.PathLike)) else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
