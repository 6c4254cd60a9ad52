"""`kd-train` as a user runs it: real subprocesses of the console script and of `python -m kd`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "mlp_regression.py")
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"


def kd_train(*args: str, module: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "kd", *args] if module else [KD_TRAIN, *args]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """One short default run with overrides, shared by the tests that read its workdir."""
    workdir = tmp_path_factory.mktemp("cli") / "run"
    result = kd_train(
        f"--cfg={EXAMPLE}",
        "--cfg.num_train_steps=60",
        "--cfg.log_metrics_every=20",
        f"--cfg.workdir={workdir}",
    )
    assert result.returncode == 0, result.stderr
    (workdir / "stdout.txt").write_text(result.stdout)
    (workdir / "stderr.txt").write_text(result.stderr)
    return workdir


def test_train_applies_overrides_and_prints_one_line_per_logging_step(run_dir):
    lines = (run_dir / "stdout.txt").read_text().splitlines()
    # Once, after the first window: how the updates run from then on (fused or single, as measured).
    chosen = [line for line in lines if line.startswith(("fused steps: ", "single steps ("))]
    assert len(chosen) == 1, lines
    lines.remove(chosen[0])
    assert [line.split(" |")[0] for line in lines[:-2]] == ["step 1", "step 20", "step 40", "step 60"]
    assert lines[-2].startswith("compiled ") and "train_step" in lines[-2]  # the programs, each timed
    assert lines[-1].startswith("done: 60 steps in ")


def test_a_default_run_is_quiet_on_stderr(run_dir):
    # At most one line per logging step (4 here) plus a progress bar; no library chatter.
    assert len((run_dir / "stderr.txt").read_text().splitlines()) <= 5


def test_the_workdir_explains_its_run(run_dir):
    import konfig

    cfg = konfig.from_json((run_dir / "config.json").read_text())
    assert cfg.num_train_steps == 60 and cfg.workdir == str(run_dir)
    run = json.loads((run_dir / "run.json").read_text())
    assert "--cfg.num_train_steps=60" in run["argv"] and "jax" in run["versions"] and run["devices"]
    assert "Total" in (run_dir / "params.txt").read_text()
    spec = (run_dir / "element_spec.txt").read_text()
    assert "x " in spec and "(64, " in spec
    assert json.loads((run_dir / "DONE").read_text())["step"] == 60


def test_the_saved_config_resolves_again_into_the_same_trainer(run_dir):
    import kd  # noqa: F401
    import konfig

    trainer = konfig.resolve(konfig.from_json((run_dir / "config.json").read_text()))
    assert type(trainer).__name__ == "Trainer" and trainer.num_train_steps == 60


def test_metrics_jsonl_has_one_parsable_record_per_logging_step(run_dir):
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 20, 40, 60]
    assert all("losses/l2" in r and "losses/total" not in r for r in records)  # one loss: no total
    assert ["perf/steps_per_sec" in r for r in records] == [False, True, True, True]  # the first: start-up


def test_a_workdir_of_another_config_is_refused_unless_forced(run_dir):
    other = run_dir.parent / "other"
    shutil.copytree(run_dir, other)
    refused = kd_train(f"--cfg={EXAMPLE}", "--cfg.num_train_steps=80", f"--cfg.workdir={other}")
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: workdir ") and "num_train_steps" in refused.stderr
    assert "Traceback" not in refused.stderr
    forced = kd_train(
        f"--cfg={EXAMPLE}",
        "--cfg.num_train_steps=80",
        "--cfg.log_metrics_every=40",
        f"--cfg.workdir={other}",
        "--force",
    )
    assert forced.returncode == 0, forced.stderr
    assert json.loads((other / "DONE").read_text())["step"] == 80
    said = [line for line in forced.stdout.splitlines() if line.startswith("--force: continuing")]
    assert len(said) == 1 and "~ cfg.num_train_steps: 60 -> 80" in said[0], forced.stdout
    assert "the learning rate may jump" in said[0]  # a schedule over num_train_steps moves from step 60 on


def test_a_workdir_with_another_config_but_nothing_to_continue_is_not_refused(run_dir):
    # A run that stopped before logging or saving anything (its config.json only): nothing would be mixed.
    other = run_dir.parent / "config_only"
    other.mkdir()
    shutil.copy(run_dir / "config.json", other / "config.json")
    result = kd_train(f"--cfg={EXAMPLE}", "--cfg.num_train_steps=5", f"--cfg.workdir={other}")
    assert result.returncode == 0, result.stderr
    assert json.loads((other / "config.json").read_text())["num_train_steps"] == 5


def test_the_same_config_runs_again_in_its_own_workdir(run_dir):
    again = run_dir.parent / "again"
    shutil.copytree(run_dir, again)
    result = kd_train(
        f"--cfg={EXAMPLE}", "--cfg.num_train_steps=60", "--cfg.log_metrics_every=20", f"--cfg.workdir={again}"
    )
    assert result.returncode == 0, result.stderr


def test_sweep_runs_each_item_into_its_own_sub_workdir_with_python_m_kd(tmp_path):
    result = kd_train(
        f"--cfg={EXAMPLE}",
        "--sweep=width",
        "--cfg.num_train_steps=30",
        f"--cfg.workdir={tmp_path}",
        module=True,
    )
    assert result.returncode == 0, result.stderr
    assert "sweep item 1/2: features=16" in result.stdout and "sweep item 2/2: features=64" in result.stdout
    for features in (16, 64):
        run = tmp_path / f"features={features}"
        assert json.loads((run / "DONE").read_text())["step"] == 30
        assert f"({features},)" in (run / "params.txt").read_text()


def test_sweep_all_runs_the_product_of_every_sweep_of_the_config(tmp_path):
    result = kd_train(
        f"--cfg={EXAMPLE}", "--sweep=all", "--cfg.log_metrics_every=1000", f"--cfg.workdir={tmp_path}"
    )
    assert result.returncode == 0, result.stderr
    folders = sorted(p.name for p in tmp_path.iterdir() if p.is_dir())
    assert folders == [f"num_train_steps={s},features={f}" for s in (200, 400) for f in (16, 64)]
    rows = [json.loads(line) for line in (tmp_path / "sweep_summary.jsonl").read_text().splitlines()]
    assert sorted(row["item"] for row in rows) == folders  # the summary of the items, beside them
    assert (tmp_path / "sweep_summary.csv").read_text().count("\n") == 5  # a header and 4 items


def test_without_a_workdir_nothing_is_written_and_the_first_line_says_so(tmp_path):
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "TMPDIR": str(tmp_path)}
    result = subprocess.run(
        [KD_TRAIN, f"--cfg={EXAMPLE}", "--cfg.num_train_steps=5"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == (
        "workdir: none, so nothing is saved (no checkpoints, logs or TensorBoard files); "
        "choose one with --cfg.workdir=PATH"
    )
    assert result.stdout.splitlines()[-1].startswith("done: 5 steps in ")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("kd-train-")]  # no folder left behind


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--cfg.train_losses.l2.preds=predz",), "predz"),
        (("--cfg.num_train_stepz=5",), "num_train_stepz"),
        (("--cfg=examples/no_such_config.py",), "no_such_config"),
        (("--sweep=nosuchsweep",), "nosuchsweep"),
    ],
)
def test_config_errors_exit_2_with_one_paragraph_and_no_traceback(args, expected, tmp_path):
    result = kd_train(f"--cfg={EXAMPLE}", *args, f"--cfg.workdir={tmp_path / 'w'}")
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and expected in result.stderr
    assert "Traceback" not in result.stderr and "\n\n\n" not in result.stderr


def test_an_unknown_command_exits_2_with_the_closest_and_the_commands():
    result = kd_train("trian", f"--cfg={EXAMPLE}")
    assert result.returncode == 2 and result.stderr == (
        "error: unknown command 'trian'; did you mean 'train'? The commands: train, inspect, eval, plot, diff, launch, predict, lr-find, config, data, run "
        "(kd-train --help describes them)\n"
    )


def test_inspect_prints_shapes_parameters_and_the_compiled_steps_cost_without_training(tmp_path):
    result = kd_train("inspect", f"--cfg={EXAMPLE}", f"--cfg.workdir={tmp_path / 'never'}")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "batch.x" in out and "preds" in out and "Total" in out and "FLOP" in out
    assert not (tmp_path / "never").exists()


def test_plot_renders_two_runs_to_a_png_and_diff_names_what_differs(run_dir, tmp_path):
    other = run_dir.parent / "shorter"
    result = kd_train(f"--cfg={EXAMPLE}", "--cfg.num_train_steps=20", f"--cfg.workdir={other}")
    assert result.returncode == 0, result.stderr
    png = tmp_path / "curves.png"
    plotted = kd_train("plot", str(run_dir), str(other), f"--out={png}")
    assert plotted.returncode == 0, plotted.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000
    diffed = kd_train("diff", str(run_dir), str(other))
    assert diffed.returncode == 0 and "cfg.num_train_steps: 60 -> 20" in diffed.stdout
    missing = kd_train("diff", str(run_dir), str(tmp_path / "nope"))
    assert missing.returncode == 2 and missing.stderr.startswith("error: ") and "nope" in missing.stderr


def test_a_crash_inside_the_training_loop_shows_where_and_the_users_frame(tmp_path):
    # A function of the user's that raises as the loop starts, after the config check passed: not a config error.
    script = tmp_path / "crash.py"
    script.write_text(
        "import sys\n"
        "import kd.cli, kd.train._trainer as t\n"
        "def boom(self, *a, **k):\n"
        "    raise ValueError('exploded in the loop')\n"
        "t.Trainer.restore_or_init = boom\n"
        f"sys.exit(kd.cli.main(['--cfg={EXAMPLE}', '--cfg.num_train_steps=3', '--cfg.workdir={tmp_path / 'w'}']))\n"
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error while initializing the train state") and lines[0].endswith(
        "ValueError: exploded in the loop"
    )
    assert f'  File "{script}", line 4, in boom' in lines and len(lines) <= 15


def test_stopping_earlier_or_later_is_the_same_run(run_dir):
    again = run_dir.parent / "stopped"
    shutil.copytree(run_dir, again)
    result = kd_train(
        f"--cfg={EXAMPLE}",
        "--cfg.num_train_steps=60",
        "--cfg.log_metrics_every=20",
        "--cfg.stop_after_steps=40",
        f"--cfg.workdir={again}",
    )
    assert result.returncode == 0, result.stderr  # not refused as "another config"


def test_a_workdir_under_the_home_folder_is_written_where_the_tilde_says(tmp_path):
    # The shell leaves `~` in `--cfg.workdir=~/runs/a` (it expands only a word's start): kd-train does it.
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    result = subprocess.run(
        [KD_TRAIN, f"--cfg={EXAMPLE}", "--cfg.num_train_steps=2", "--cfg.workdir=~/runs/a"],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "JAX_PLATFORMS": "cpu", "HOME": str(home)},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert (home / "runs" / "a" / "metrics.jsonl").exists()
    assert list(cwd.iterdir()) == []  # no folder named `~`
    recorded = json.loads((home / "runs" / "a" / "config.json").read_text())
    assert recorded["workdir"] == str(home / "runs" / "a")
