"""kd.xm's local launch: a job's processes (their flags and GPUs), run as real subprocesses, the first
failure's exit code returned and the others stopped."""

from __future__ import annotations

import signal
import subprocess
import sys

from kd.xm import Job, JobRequirements, Process, local_processes, run_processes


def test_one_process_gets_no_distributed_flags():
    (process,) = local_processes(Job(args={"cfg.seed": 1}), ["--cfg=c.py"], port=1234)
    assert process == Process(("kd-train", "--cfg=c.py", "--cfg.seed=1"), {})


def test_each_of_several_processes_gets_the_coordinator_the_count_and_its_id():
    job = Job(requirements=JobRequirements(replicas=3), env_vars={"A": "1"})
    processes = local_processes(job, ["--cfg=c.py"], port=1234, command=("python", "-m", "kd"))
    assert [p.argv for p in processes] == [
        (
            "python",
            "-m",
            "kd",
            "--cfg=c.py",
            "--coordinator_address=127.0.0.1:1234",
            "--num_processes=3",
            f"--process_id={i}",
        )
        for i in range(3)
    ]
    assert [p.env for p in processes] == [{"A": "1"}] * 3


def test_processes_of_a_gpu_job_each_see_their_own_gpus():
    job = Job(platform="a100=2", requirements=JobRequirements(replicas=2))
    visible = [p.env["CUDA_VISIBLE_DEVICES"] for p in local_processes(job, [], port=1)]
    assert visible == ["0,1", "2,3"]


def test_gpus_the_job_chooses_itself_are_kept():
    job = Job(
        platform="a100=2", requirements=JobRequirements(replicas=2), env_vars={"CUDA_VISIBLE_DEVICES": "5"}
    )
    assert [p.env["CUDA_VISIBLE_DEVICES"] for p in local_processes(job, [], port=1)] == ["5", "5"]


def _python(code: str, **env: str) -> Process:
    return Process((sys.executable, "-c", code), env)


def test_processes_that_all_succeed_give_0_and_see_their_environment(tmp_path):
    code = "import os, pathlib; pathlib.Path(os.environ['OUT']).write_text(os.environ['WHO'])"
    processes = [_python(code, OUT=str(tmp_path / f"p{i}"), WHO=f"process {i}") for i in range(2)]
    assert run_processes(processes) == 0
    assert [(tmp_path / f"p{i}").read_text() for i in range(2)] == ["process 0", "process 1"]


def test_the_first_failure_gives_its_code_and_stops_the_others():
    # The second would wait forever (as a process waits for a peer that crashed): it is stopped.
    code = run_processes([_python("import sys; sys.exit(3)"), _python("import time; time.sleep(3600)")])
    assert code == 3


def test_a_process_killed_by_a_signal_reads_as_a_shell_says_it():
    assert run_processes([_python("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")]) == 137


def test_a_sigterm_to_the_launcher_is_passed_on_to_its_processes(tmp_path):
    marker = tmp_path / "stopped"
    child = (
        "import signal, sys, time\n"
        f"signal.signal(signal.SIGTERM, lambda *_: (open({str(marker)!r}, 'w').close(), sys.exit(143)))\n"
        "print('ready', flush=True)\n"
        "time.sleep(3600)\n"
    )
    launcher = (
        "import sys\n"
        "from kd.xm import Process, run_processes\n"
        f"sys.exit(run_processes([Process((sys.executable, '-c', {child!r}))]))\n"
    )
    with subprocess.Popen([sys.executable, "-c", launcher], stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout.readline() == "ready\n"  # the launcher has started its process
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 143
    assert marker.exists()
