"""A job as one `srun` command line (printed for you to run on a SLURM cluster; nothing here runs it).

    print(kd.xm.srun_command(job, ["--cfg=cfg.py", "--cfg.workdir=/shared/run"]))
    # srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --gpus-per-task=8 --mem=384G bash -c 'exec kd-train ...
    #   --coordinator_address=<first node>:<port> --num_processes="$SLURM_NTASKS" --process_id="$SLURM_PROCID"'

`kd-train launch --slurm` prints it; run it inside an allocation (salloc, or an sbatch script).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence

from ._errors import JobError
from ._job import Job

# Each task reads its own rank and the job's first node from SLURM's variables (so the line is `bash -c`:
# the variables expand in each task, not where srun is typed); the port follows the job id, so two jobs
# sharing a node do not collide.
_DISTRIBUTED_FLAGS = (
    '--coordinator_address="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"'
    ":$((10000 + SLURM_JOB_ID % 50000))",
    '--num_processes="$SLURM_NTASKS"',
    '--process_id="$SLURM_PROCID"',
)

_GIB, _MIB = 1024**3, 1024**2


def srun_command(job: Job, argv: Sequence[str], *, command: Sequence[str] = ("kd-train",)) -> str:
    """The srun line running `command ARGV JOB_FLAGS` as `job` says: one task per process and per node, each
    with the platform's GPUs, `cpu` cores and `ram + tmp_ram_fs` memory, and its env_vars; several processes
    join through kd-train's `--coordinator_address/--num_processes/--process_id` from SLURM's variables.

    A TPU platform raises `JobError` (SLURM schedules CPUs and GPUs).
    Usage: `srun_command(kd.xm.Job(platform="a100=4"), ["--cfg=c.py"])`.
    """
    platform = job.parsed_platform
    if platform.is_tpu:
        raise JobError(
            f"Job.platform={job.platform!r} is a TPU, which SLURM does not schedule: an srun line is for "
            "'cpu' and GPU platforms ('a100=4'); on TPU VMs run `kd-train launch --local` on each host"
        )
    count = job.num_processes
    options = []
    if job.name:
        options.append(f"--job-name={job.name}")
    options += [f"--nodes={count}", f"--ntasks={count}", "--ntasks-per-node=1"]
    if platform.is_gpu:
        options.append(f"--gpus-per-task={platform.count}")
    requirements = job.requirements
    if requirements.cpu is not None:
        options.append(f"--cpus-per-task={math.ceil(requirements.cpu)}")
    memory = (requirements.ram or 0) + (requirements.tmp_ram_fs or 0)
    if memory:
        options.append(f"--mem={_slurm_size(memory)}")
    env = [f"{key}={value}" for key, value in job.env_vars.items()]
    program = [*(["env", *env] if env else []), *command, *argv, *job.flags()]
    if count == 1:
        return shlex.join(["srun", *options, *program])
    script = " ".join(["exec", shlex.join(program), *_DISTRIBUTED_FLAGS])
    return " ".join([shlex.join(["srun", *options]), "bash", "-c", shlex.quote(script)])


def _slurm_size(size: float) -> str:
    """Bytes as SLURM's `--mem` reads them (binary units): `384G`, or `1537M` rounded up."""
    if size % _GIB == 0:
        return f"{int(size // _GIB)}G"
    return f"{math.ceil(size / _MIB)}M"
