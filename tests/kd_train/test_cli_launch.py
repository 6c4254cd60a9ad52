"""`kd-train launch`: the config's `cfg.xm_job` read (resolved alone), printed as srun, refused by name when
it is wrong, and the processes' exit code passed on. The real two-process training run is
tests/integration/test_xm_launch.py."""

from __future__ import annotations

import shlex
import textwrap

import pytest
from kd.cli import main

CONFIG = """
import konfig

with konfig.imports():
    from kd import kxm
    from kd.xm import xm

GiB = 1024**3


def get_config():
    cfg = konfig.ConfigDict()
    cfg.workdir = "/shared/run"
    cfg.seed = 0
    {job}
    return cfg
"""


def _config(
    tmp_path,
    job: str = 'cfg.xm_job = kxm.Job(platform="a100=2", requirements=xm.JobRequirements(replicas=2, ram=64 * GiB))',
) -> str:
    path = tmp_path / "cfg.py"
    path.write_text(textwrap.dedent(CONFIG).replace("{job}", job))
    return str(path)


def test_slurm_prints_the_srun_line_of_the_configs_job(tmp_path, capsys):
    source = _config(tmp_path)
    assert main(["launch", f"--cfg={source}", "--cfg.seed=1", "--slurm"]) == 0
    words = shlex.split(capsys.readouterr().out)
    assert words[:7] == [
        "srun",
        "--nodes=2",
        "--ntasks=2",
        "--ntasks-per-node=1",
        "--gpus-per-task=2",
        "--mem=64G",
        "bash",
    ]
    assert words[8].startswith(f"exec kd-train --cfg={source} --cfg.seed=1 --coordinator_address=")


def test_the_job_follows_the_command_lines_overrides(tmp_path, capsys):
    source = _config(tmp_path)
    assert main(["launch", f"--cfg={source}", "--cfg.xm_job.requirements.replicas=1", "--slurm"]) == 0
    assert capsys.readouterr().out.startswith("srun --nodes=1 --ntasks=1 ")


def test_a_config_without_a_job_is_one_process(tmp_path, capsys):
    source = _config(tmp_path, job="")
    assert main(["launch", f"--cfg={source}", "--slurm"]) == 0
    assert (
        capsys.readouterr().out == f"srun --nodes=1 --ntasks=1 --ntasks-per-node=1 kd-train --cfg={source}\n"
    )


def test_a_malformed_platform_is_a_usage_error_naming_the_near_miss(tmp_path, capsys):
    source = _config(tmp_path)
    assert main(["launch", f"--cfg={source}", "--cfg.xm_job.platform=a10O=1", "--slurm"]) == 2
    err = capsys.readouterr().err
    assert "cfg.xm_job" in err and "did you mean 'a10' or 'a100'?" in err


def test_a_job_naming_anything_but_kd_xm_is_refused_before_it_is_built(tmp_path, capsys):
    source = _config(tmp_path)
    assert main(["launch", f"--cfg={source}", "--cfg.xm_job.name=py::os.getcwd()", "--slurm"]) == 2
    assert "cfg.xm_job builds os:getcwd: a job is made of kd.xm's classes only" in capsys.readouterr().err


def test_a_job_that_is_not_a_job_is_refused(tmp_path, capsys):
    source = _config(tmp_path, job='cfg.xm_job = "a100=2"')
    assert main(["launch", f"--cfg={source}", "--slurm"]) == 2
    assert "cfg.xm_job builds a str, expected a kd.xm.Job" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--local", "--slurm"], "--local and --slurm are exclusive"),
        (["--process_id=1"], "--process_id is set by launch for each process"),
        (["--coordinator_address=h:1"], "--coordinator_address is set by launch"),
        (["--coordinator_port=http"], "--coordinator_port: expected a port number"),
    ],
)
def test_launch_refuses_flags_it_sets_or_cannot_read(tmp_path, capsys, flags, said):
    assert main(["launch", f"--cfg={_config(tmp_path)}", *flags]) == 2
    assert said in capsys.readouterr().err


def test_several_local_processes_need_a_workdir(tmp_path, capsys):
    source = _config(tmp_path, job="cfg.xm_job = kxm.Job(requirements=xm.JobRequirements(replicas=2))")
    assert main(["launch", f"--cfg={source}", "--cfg.workdir=None"]) == 2
    assert "give it with --cfg.workdir=PATH" in capsys.readouterr().err


def test_local_exits_with_the_code_of_the_processes_that_failed(tmp_path, capfd):
    # Each process of `kd-train --no_such_flag` stops with a usage error (2) before it loads anything.
    source = _config(tmp_path, job="cfg.xm_job = kxm.Job(requirements=xm.JobRequirements(replicas=2))")
    assert main(["launch", f"--cfg={source}", "--no_such_flag", "--local"]) == 2
    out, err = capfd.readouterr()
    assert "launch: 2 process(es) on this machine (coordinator 127.0.0.1:" in out
    assert f"kd-train --cfg={source} --no_such_flag" in out
    assert "unrecognized arguments: --no_such_flag" in err


def test_launch_help_says_what_it_does(capsys):
    assert main(["launch", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: kd-train launch --cfg=CONFIG.py") and "--slurm" in out
