"""kd.xm's job spec: platforms parsed or refused by name, jobs captured by konfig (Kauldron's imports), JSON
round trips, and the srun line a job prints."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import konfig
import pytest
from hypothesis import given
from hypothesis import strategies as st
from kd.xm import Job, JobError, JobRequirements, Platform, PlatformError, parse_platform, srun_command
from kd.xm._platform import GPU_KINDS, TPU_KINDS

GiB = 1024**3


# ---------------------------------------------------------------- platforms


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("cpu", Platform("cpu", 0)),
        ("a100", Platform("a100", 1)),
        ("h100=8", Platform("h100", 8)),
        ("  H100 = 8 ", Platform("h100", 8)),
        ("jf=2x2", Platform("jf", 4, "2x2")),
        ("v4=2x2x4", Platform("v4", 16, "2x2x4")),
    ],
)
def test_a_platform_reads_as_kind_count_and_topology(spec, expected):
    assert parse_platform(spec) == expected


def test_gpu_and_tpu_kinds_say_which_they_are():
    assert parse_platform("a100=2").is_gpu and not parse_platform("a100=2").is_tpu
    assert parse_platform("df=4x4").is_tpu and not parse_platform("df=4x4").is_gpu
    cpu = parse_platform("cpu")
    assert not cpu.is_gpu and not cpu.is_tpu


_gpu_specs = st.builds(lambda k, n: f"{k}={n}", st.sampled_from(sorted(GPU_KINDS)), st.integers(1, 64))
_tpu_specs = st.builds(
    lambda k, dims: f"{k}={'x'.join(map(str, dims))}",
    st.sampled_from(sorted(TPU_KINDS)),
    st.lists(st.integers(1, 16), min_size=2, max_size=3),
)


@given(st.one_of(st.just("cpu"), _gpu_specs, _tpu_specs))
def test_a_platform_prints_as_the_spec_it_was_read_from(spec):
    platform = parse_platform(spec)
    assert str(platform) == spec
    assert parse_platform(str(platform)) == platform


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("a10O=1", "did you mean 'a10' or 'a100'?"),
        ("h10=2", "did you mean 'h100'"),
        ("h100=eight", "KIND=COUNT with COUNT >= 1"),
        ("h100=0", "e.g. 'h100=1'"),
        ("a100=2x2", "e.g. 'a100=4'"),
        ("jf", "e.g. 'jf=2x2'; got '' (no topology)"),
        ("jf=4", "KIND=TOPOLOGY"),
        ("cpu=2", "'cpu' takes no count"),
        ("tpu=2x2", "name the TPU's kind"),
    ],
)
def test_a_malformed_platform_is_refused_with_the_near_miss(spec, said):
    with pytest.raises(PlatformError, match="platform=") as info:
        parse_platform(spec)
    assert repr(spec) in str(info.value)
    assert said in str(info.value)


def test_a_platform_error_is_a_job_error_and_a_value_error():
    assert issubclass(PlatformError, JobError) and issubclass(JobError, ValueError)
    with pytest.raises(PlatformError, match="expected a string"):
        parse_platform(8)


# ---------------------------------------------------------------- jobs


def test_a_job_refuses_a_malformed_platform_where_it_is_built():
    with pytest.raises(PlatformError, match="did you mean 'a100'"):
        Job(platform="a1000=2")


def test_a_default_job_is_one_cpu_process():
    job = Job()
    assert job.num_processes == 1
    assert job.parsed_platform == Platform("cpu", 0)


def test_replicas_is_the_number_of_processes():
    assert Job(requirements=JobRequirements(replicas=4)).num_processes == 4


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"ram": -1}, "ram"),
        ({"cpu": 0}, "cpu"),
        ({"tmp_ram_fs": "8G"}, "tmp_ram_fs"),
        ({"replicas": 0}, "replicas"),
        ({"replicas": 1.5}, "replicas"),
        ({"replicas": True}, "replicas"),
    ],
)
def test_requirements_refuse_a_bad_size_naming_the_field(kwargs, field):
    with pytest.raises(JobError, match=f"JobRequirements.{field}:"):
        JobRequirements(**kwargs)


def test_env_vars_become_strings_as_kauldrons_do():
    assert Job(env_vars={"N": 1, "ON": True}).env_vars == {"N": "1", "ON": "True"}


def test_args_become_flags_config_values_as_json():
    job = Job(
        args={"cfg.num_train_steps": 10, "cfg.name": "a b", "cfg.sizes": [1, 2], "force": True, "x": False}
    )
    assert job.flags() == ["--cfg.num_train_steps=10", "--cfg.name=a b", "--cfg.sizes=[1, 2]", "--force"]


def test_a_job_is_frozen():
    with pytest.raises(AttributeError):
        Job().platform = "cpu"  # type: ignore[misc]


# ---------------------------------------------------------------- konfig


def _kauldron_style_job():
    with konfig.imports():
        from kd import kxm
        from kd.xm import xm
    return kxm.Job(
        platform="jf=2x2",
        requirements=xm.JobRequirements(ram=384 * GiB, tmp_ram_fs=8 * GiB),
        args={"cfg.seed": 3},
        env_vars={"XLA_FLAGS": "--xla_dump_to=/tmp/hlo"},
    )


def test_a_kauldron_config_ports_by_swapping_its_import_lines():
    job = konfig.resolve(_kauldron_style_job())
    assert job == Job(
        platform="jf=2x2",
        requirements=JobRequirements(ram=384 * GiB, tmp_ram_fs=8 * GiB),
        args={"cfg.seed": 3},
        env_vars={"XLA_FLAGS": "--xla_dump_to=/tmp/hlo"},
    )


def test_kxm_is_kd_xm_and_its_targets_are_kd_xms():
    import kd

    assert kd.kxm is kd.xm
    assert kd.xm.xm.JobRequirements is JobRequirements
    tree = json.loads(konfig.to_json(_kauldron_style_job()))
    assert tree["__qualname__"] == "kd.xm:Job"
    assert tree["requirements"]["__qualname__"] == "kd.xm.xm:JobRequirements"


def test_a_job_survives_a_json_round_trip():
    cfg = konfig.ConfigDict()
    cfg.xm_job = _kauldron_style_job()
    loaded = konfig.from_json(konfig.to_json(cfg))
    assert konfig.resolve(loaded.xm_job) == konfig.resolve(cfg.xm_job)


def test_a_job_is_captured_through_import_kd_and_changed_before_resolving():
    with konfig.imports():
        import kd
    cfg = konfig.ConfigDict()
    cfg.xm_job = kd.xm.Job(platform="a100=2", requirements=kd.xm.JobRequirements(replicas=2))
    cfg.xm_job.platform = "h100=8"
    job = konfig.resolve(cfg.xm_job)
    assert job.parsed_platform == Platform("h100", 8) and job.num_processes == 2


def test_importing_kd_xm_imports_no_jax():
    code = "import sys, kd.xm; print('jax' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


# ---------------------------------------------------------------- srun


def test_one_process_is_one_srun_task():
    job = Job(platform="a100=4", requirements=JobRequirements(cpu=7.5, ram=64 * GiB, tmp_ram_fs=8 * GiB))
    assert srun_command(job, ["--cfg=c.py", "--cfg.workdir=/shared/run"]) == (
        "srun --nodes=1 --ntasks=1 --ntasks-per-node=1 --gpus-per-task=4 --cpus-per-task=8 --mem=72G "
        "kd-train --cfg=c.py --cfg.workdir=/shared/run"
    )


def test_memory_not_in_whole_gib_is_rounded_up_in_mib():
    line = srun_command(Job(requirements=JobRequirements(ram=1.5 * GiB + 1)), ["--cfg=c.py"])
    assert "--mem=1537M" in line


def test_a_cpu_job_asks_for_no_gpus_and_names_itself():
    line = srun_command(Job(name="mnist", platform="cpu"), ["--cfg=c.py"])
    assert line == "srun --job-name=mnist --nodes=1 --ntasks=1 --ntasks-per-node=1 kd-train --cfg=c.py"


def test_env_vars_and_args_go_on_the_tasks_command():
    job = Job(env_vars={"A": "x y"}, args={"cfg.seed": 1})
    assert shlex.split(srun_command(job, ["--cfg=c.py"]))[4:] == [
        "env",
        "A=x y",
        "kd-train",
        "--cfg=c.py",
        "--cfg.seed=1",
    ]


def test_several_processes_are_one_task_per_node_joined_through_slurms_variables():
    job = Job(platform="h100=8", requirements=JobRequirements(replicas=2))
    words = shlex.split(srun_command(job, ["--cfg=c.py"]))
    assert words[:6] == [
        "srun",
        "--nodes=2",
        "--ntasks=2",
        "--ntasks-per-node=1",
        "--gpus-per-task=8",
        "bash",
    ]
    assert words[6] == "-c" and len(words) == 8
    script = words[7]
    assert script.startswith("exec kd-train --cfg=c.py --coordinator_address=")
    assert '--num_processes="$SLURM_NTASKS" --process_id="$SLURM_PROCID"' in script


def test_the_srun_script_expands_each_tasks_rank_and_keeps_the_arguments_whole():
    # What each task runs, with `printf` for kd-train and SLURM's variables as srun sets them (no scontrol
    # here: the coordinator's host part is empty, its port follows the job id).
    job = Job(requirements=JobRequirements(replicas=2))
    words = shlex.split(
        srun_command(job, ["--cfg=c.py", "--cfg.workdir=/a b/it's"], command=("printf", "%s\\n"))
    )
    env = {
        **os.environ,
        "SLURM_JOB_NODELIST": "node[1-2]",
        "SLURM_NTASKS": "2",
        "SLURM_PROCID": "1",
        "SLURM_JOB_ID": "7",
    }
    proc = subprocess.run(["bash", "-c", words[-1]], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:2] == ["--cfg=c.py", "--cfg.workdir=/a b/it's"]
    assert lines[2].startswith("--coordinator_address=") and lines[2].endswith(":10007")
    assert lines[3:] == ["--num_processes=2", "--process_id=1"]


def test_a_tpu_job_has_no_srun_line():
    with pytest.raises(JobError, match="TPU, which SLURM does not schedule"):
        srun_command(Job(platform="jf=2x2"), ["--cfg=c.py"])
