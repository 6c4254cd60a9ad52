"""kd.xm: a run's job spec (Kauldron's `kxm.Job`), launched as local processes or printed as an srun line.

    with konfig.imports():
        from kd import kxm          # Kauldron's `from kauldron import kxm`; kd.kxm is kd.xm
        from kd.xm import xm        # Kauldron's `from xmanager import xm`
    cfg.xm_job = kxm.Job(platform="cpu", requirements=xm.JobRequirements(replicas=2))

    kd-train launch --cfg=cfg.py --cfg.workdir=/tmp/run --local   # 2 processes here, joined by jax.distributed
    kd-train launch --cfg=cfg.py --cfg.workdir=/shared/run --slurm  # prints the srun line

Plain standard library (no XManager, no JAX): `import kd.xm` is cheap.
"""

from . import xm as xm
from ._errors import JobError as JobError
from ._errors import PlatformError as PlatformError
from ._job import Job as Job
from ._job import JobRequirements as JobRequirements
from ._local import Process as Process
from ._local import local_processes as local_processes
from ._local import run_processes as run_processes
from ._platform import Platform as Platform
from ._platform import parse_platform as parse_platform
from ._slurm import srun_command as srun_command

__all__ = [
    "Job",
    "JobError",
    "JobRequirements",
    "Platform",
    "PlatformError",
    "Process",
    "local_processes",
    "parse_platform",
    "run_processes",
    "srun_command",
    "xm",
]
