"""A job as processes on this machine: `kd-train ARGV` once per process, joined by `jax.distributed`.

    processes = kd.xm.local_processes(job, ["--cfg=cfg.py", "--cfg.workdir=/tmp/run"], port=12345)
    code = kd.xm.run_processes(processes)  # 0, or the exit code of the first process that failed

`kd-train launch --local` is these two calls, with `python -m kd` for `kd-train`.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence

from ._job import Job

# How long the other processes get to stop (SIGTERM: they save and exit 143) once one has failed.
_GRACE_SECONDS = 60.0


@dataclasses.dataclass(frozen=True)
class Process:
    """One process of a launch: its command line and the environment variables it adds to the launcher's."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)


def local_processes(
    job: Job,
    argv: Sequence[str],
    *,
    port: int,
    host: str = "127.0.0.1",
    command: Sequence[str] = ("kd-train",),
) -> tuple[Process, ...]:
    """`job.num_processes` processes of `command ARGV JOB_FLAGS`; several get
    `--coordinator_address=HOST:PORT --num_processes=N --process_id=I` (kd-train's jax.distributed flags),
    and on a GPU platform each its own GPUs (`CUDA_VISIBLE_DEVICES`) unless `job.env_vars` chooses them.

    Usage: `local_processes(Job(requirements=JobRequirements(replicas=2)), ["--cfg=c.py"], port=1234)`.
    """
    count = job.num_processes
    base = (*command, *argv, *job.flags())
    if count == 1:
        return (Process(base, dict(job.env_vars)),)
    platform = job.parsed_platform
    processes = []
    for index in range(count):
        env = dict(job.env_vars)
        if platform.is_gpu and "CUDA_VISIBLE_DEVICES" not in env:
            first = index * platform.count
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(first + i) for i in range(platform.count))
        flags = (f"--coordinator_address={host}:{port}", f"--num_processes={count}", f"--process_id={index}")
        processes.append(Process((*base, *flags), env))
    return tuple(processes)


def run_processes(
    processes: Sequence[Process], *, environ: Mapping[str, str] | None = None, cwd: str | None = None
) -> int:
    """Starts every process (the launcher's environment, `os.environ` by default, plus each one's `env`), waits
    for all, and returns 0 when all exit 0, else the exit code of the first that failed (the cause: the others
    are stopped with SIGTERM then, as they would wait for it forever). A SIGTERM to the launcher is passed on.

    Usage: `sys.exit(run_processes(local_processes(job, argv, port=port)))`.
    """
    base = dict(os.environ if environ is None else environ)
    running: list[subprocess.Popen] = []
    restore = _forward_sigterm(running)  # before any starts: a SIGTERM meanwhile reaches each one started
    try:
        for process in processes:
            running.append(subprocess.Popen(process.argv, env={**base, **process.env}, cwd=cwd))
        return _wait(running)
    except BaseException:  # Ctrl-C or an error in the launcher: no process is left behind
        _stop(running, signal.SIGINT)
        raise
    finally:
        restore()


def _wait(running: list[subprocess.Popen]) -> int:
    failed: int | None = None
    deadline: float | None = None
    while True:
        codes = [p.poll() for p in running]
        if failed is None:
            failed = next((_exit_code(c) for c in codes if c is not None and c != 0), None)
            if failed is not None:  # the others would wait for it forever: stopped, given time to finish
                for p, c in zip(running, codes, strict=True):
                    if c is None:
                        p.terminate()
                deadline = time.monotonic() + _GRACE_SECONDS
        if all(c is not None for c in codes):
            return failed or 0
        if deadline is not None and time.monotonic() > deadline:
            for p in running:
                if p.poll() is None:
                    p.kill()
        time.sleep(0.1)


def _exit_code(returncode: int) -> int:
    """Popen's `-15` (killed by a signal) as a shell says it: 128 + the signal."""
    return 128 - returncode if returncode < 0 else returncode


def _stop(running: list[subprocess.Popen], sig: int) -> None:
    for p in running:
        if p.poll() is None:
            p.send_signal(sig)
    for p in running:
        try:
            p.wait(timeout=_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _forward_sigterm(running: list[subprocess.Popen]) -> Callable[[], None]:
    """While the processes run, a SIGTERM to the launcher (a preemption) goes to each of them instead; returns
    what puts the launcher's own handler back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # only the main thread may set handlers

    def forward(signum: int, frame: object) -> None:
        for p in running:
            if p.poll() is None:
                p.terminate()

    previous = signal.signal(signal.SIGTERM, forward)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore
