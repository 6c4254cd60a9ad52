"""`Job` and `JobRequirements`: where and on what a run trains, as plain frozen dataclasses konfig captures.

    cfg.xm_job = kd.xm.Job(
        platform="h100=8",                                   # what each process runs on
        requirements=kd.xm.JobRequirements(replicas=2, ram=384 * GiB),  # 2 processes (hosts)
        env_vars={"XLA_FLAGS": "--xla_gpu_enable_latency_hiding_scheduler=true"},
    )

Kauldron's names (`kxm.Job(platform=..., requirements=xm.JobRequirements(...), args=..., env_vars=...)`);
no XManager: `kd.xm.local_processes` and `kd.xm.srun_command` turn a job into processes or an srun line.
"""

from __future__ import annotations

import dataclasses
import json
import numbers
from collections.abc import Mapping
from typing import Any

from ._errors import JobError
from ._platform import Platform, parse_platform


@dataclasses.dataclass(frozen=True, kw_only=True)
class JobRequirements:
    """What each process needs beside its accelerators (XManager's `xm.JobRequirements` names).

    Attributes:
      cpu: CPU cores per process (None: the cluster's default).
      ram: memory per process, in bytes (`384 * 1024**3`).
      tmp_ram_fs: a RAM-backed /tmp per process, in bytes; it is memory too, so an srun line asks for
        `ram + tmp_ram_fs`.
      replicas: the number of processes (hosts) training the run together; None is one.
    """

    cpu: float | None = None
    ram: int | None = None
    tmp_ram_fs: int | None = None
    replicas: int | None = None

    def __post_init__(self) -> None:
        for name in ("cpu", "ram", "tmp_ram_fs"):
            value = getattr(self, name)
            if value is not None and (not _is_number(value) or value <= 0):
                raise JobError(f"JobRequirements.{name}: expected a number > 0 (or None), got {value!r}")
        if self.replicas is not None and (not _is_int(self.replicas) or self.replicas < 1):
            raise JobError(
                f"JobRequirements.replicas: expected an integer >= 1 (the number of processes), got "
                f"{self.replicas!r}"
            )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Job:
    """One training job: its platform, requirements, extra flags and environment (Kauldron's `kxm.Job`).

    Attributes:
      name: the job's name on a cluster (srun's `--job-name`); None leaves it to the cluster.
      platform: what each process runs on: `"cpu"`, `"a100"`, `"h100=8"` (GPUs per process), `"jf=2x2"` (a
        TPU topology); None is `"cpu"`. Checked when the job is built (`PlatformError`).
      requirements: CPU, memory and the number of processes (`replicas`).
      args: extra flags for each process: `{"cfg.num_train_steps": 100}` -> `--cfg.num_train_steps=100`
        (values other than strings as JSON); other keys are kd-train's flags (`{"force": True}` -> `--force`).
      env_vars: environment variables set for each process (values made strings, as Kauldron does).

    Usage: `kd.xm.Job(platform="a100=2", requirements=kd.xm.JobRequirements(replicas=4)).num_processes == 4`.
    """

    name: str | None = None
    platform: str | None = None
    requirements: JobRequirements = dataclasses.field(default_factory=JobRequirements)
    args: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    env_vars: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.platform is not None:
            parse_platform(self.platform)  # a malformed platform fails where the job is built
        if not isinstance(self.requirements, JobRequirements):
            raise JobError(
                f"Job.requirements: expected a kd.xm.JobRequirements, got a {type(self.requirements).__name__}"
            )
        for field in ("args", "env_vars"):
            value = getattr(self, field)
            if not isinstance(value, Mapping) or not all(isinstance(k, str) and k for k in value):
                raise JobError(f"Job.{field}: expected a dict with string keys, got {value!r}")
        object.__setattr__(self, "args", dict(self.args))
        object.__setattr__(self, "env_vars", {k: str(v) for k, v in self.env_vars.items()})

    @property
    def parsed_platform(self) -> Platform:
        """`platform` read: `Platform(kind, count, topology)`."""
        return parse_platform(self.platform or "cpu")

    @property
    def num_processes(self) -> int:
        """How many processes train the run together: `requirements.replicas`, else 1."""
        return self.requirements.replicas or 1

    def flags(self) -> list[str]:
        """`args` as command-line flags, in their order (see `Job.args`)."""
        flags = []
        for key, value in self.args.items():
            name = key if key.startswith("--") else f"--{key}"
            if name.startswith("--cfg"):
                flags.append(f"{name}={value if isinstance(value, str) else json.dumps(value)}")
            elif value is True:
                flags.append(name)
            elif value is not False and value is not None:
                flags.append(f"{name}={value if isinstance(value, str) else json.dumps(value)}")
        return flags


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
