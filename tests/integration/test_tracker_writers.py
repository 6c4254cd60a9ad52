"""`kd-train --track=wandb,mlflow` end to end: real training processes, W&B offline run files and an MLflow file
store read back; a resume without a step sent twice; trackers that cannot be reached stop nothing.

The run (written beside the test) logs every 5 steps, images and a histogram every 10, an evaluator every 10, and
checkpoints every 10. The resume is made deterministic: a first invocation stops at step 30 and its last
checkpoint is deleted, as if the process had been killed after logging step 30 and before saving it; the same
command then resumes from step 20, computes steps 21..30 again (which the trackers already have) and goes on to 40.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_logs import rows

ROOT = Path(__file__).resolve().parents[2]
NUM_STEPS, STOPPED = 40, 30
LOGGED = [1, 5, 10, 15, 20, 25, 30, 35, 40]  # the first step logs too

_DATA = '''
import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class TinyImages:
    """4x4 grey images, and a target per image."""

    num_examples: int = 64

    def __call__(self):
        image = np.random.default_rng(0).uniform(0.0, 1.0, (self.num_examples, 4, 4, 1)).astype(np.float32)
        return {"image": image}
'''

_CONFIG = """
import konfig

with konfig.imports():
    import kd
    import optax
    import tiny_images
    from flax import linen as nn


def get_config():
    cfg = kd.train.Trainer()
    cfg.seed = 0
    cfg.num_train_steps = 30
    cfg.log_metrics_every = 5
    cfg.log_summaries_every = 10
    cfg.train_ds = kd.data.InMemoryPipeline(loader=tiny_images.TinyImages(), batch_size=8, shuffle=True)
    cfg.eval_ds = kd.data.InMemoryPipeline(loader=tiny_images.TinyImages(), batch_size=8, num_epochs=1)
    cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=1), keys="batch.image")
    cfg.optimizer = optax.adam(1e-2)
    cfg.train_losses = {"l2": kd.losses.L2(preds="preds", targets="batch.image")}
    cfg.train_summaries = {
        "images": kd.summaries.ShowImages(images="batch.image", num_images=2),
        "preds": kd.summaries.Histogram(tensor="preds"),
    }
    cfg.evals = {"val": kd.evals.Evaluator(run=kd.evals.EveryNSteps(10), num_batches=1)}
    cfg.checkpointer = kd.ckpts.Checkpointer(save_interval_steps=10, max_to_keep=5)
    return cfg


def sweep():
    for seed in (1, 2):
        yield {"seed": seed}
"""


def _unit_helpers():
    """tests/kd_train/test_tracker_writers.py: its reader of W&B run files (`wandb_runs`) and `closed_port`."""
    path = ROOT / "tests" / "kd_train" / "test_tracker_writers.py"
    spec = importlib.util.spec_from_file_location("_kd_tracker_writer_tests", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their class's module up
    spec.loader.exec_module(module)
    return module


helpers = _unit_helpers()


def _config(folder: Path) -> Path:
    (folder / "tiny_images.py").write_text(_DATA)
    (folder / "tracked_config.py").write_text(_CONFIG)
    return folder / "tracked_config.py"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WANDB_", "MLFLOW_"))}
    return {**env, "JAX_PLATFORMS": "cpu", "WANDB_SILENT": "true", "WANDB_ERROR_REPORTING": "false", **extra}


def _train(config: Path, workdir: Path, *flags: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "kd", f"--cfg={config}", f"--cfg.workdir={workdir}", *flags]
    proc = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _lose_last_checkpoint(workdir: Path) -> None:
    """As if killed after logging step 30 and before its checkpoint: the rerun resumes from step 20."""
    shutil.rmtree(workdir / "checkpoints" / f"ckpt_{STOPPED}")


@pytest.fixture(scope="module")
def resumed_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    """A run sent to W&B (offline) and MLflow (file store), its last checkpoint lost, then resumed."""
    folder = tmp_path_factory.mktemp("tracked")
    config, workdir, store = _config(folder), folder / "run", (folder / "mlruns").as_uri()
    env = _env(WANDB_MODE="offline", MLFLOW_TRACKING_URI=store, MLFLOW_ALLOW_FILE_STORE="true")
    steps = f"--cfg.num_train_steps={NUM_STEPS}"
    _train(config, workdir, "--track=wandb,mlflow", steps, f"--cfg.stop_after_steps={STOPPED}", env=env)
    first_ids = {
        name: json.loads((workdir / f"{name}_run.json").read_text())["run_id"] for name in ("wandb", "mlflow")
    }
    _lose_last_checkpoint(workdir)
    second = _train(config, workdir, "--track=wandb,mlflow", steps, env=env)
    assert "resuming from step 20" in second.stdout + second.stderr
    return {"workdir": workdir, "store": store, **first_ids}


def _jsonl(workdir: Path, key: str) -> list[tuple[int, float]]:
    return [(r["step"], r[key]) for r in rows(workdir) if key in r]


# ---------------------------------------------------------------------------------------------- W&B


def test_wandb_gets_every_logged_step_once_across_the_resume(resumed_run):
    first, second = helpers.wandb_runs(resumed_run["workdir"])
    assert first.run_id == second.run_id == resumed_run["wandb"]
    sent = first.steps("losses/l2") + second.steps("losses/l2")
    assert [s for s, _ in sent] == LOGGED
    assert dict(sent) == pytest.approx(
        dict(_jsonl(resumed_run["workdir"], "losses/l2"))
    )  # as in metrics.jsonl
    assert [s for s, _ in second.steps("losses/l2")] == [
        35,
        40,
    ]  # 25 and 30 were computed again, not sent again


def test_wandb_has_the_evaluators_values_under_their_names(resumed_run):
    runs = helpers.wandb_runs(resumed_run["workdir"])
    steps = [s for run in runs for s, _ in run.steps("val/losses/l2")]
    assert steps == sorted(set(steps)) and {10, 20, 30, 40} <= set(steps)


def test_wandb_has_the_config_identity_and_an_image(resumed_run):
    first, _ = helpers.wandb_runs(resumed_run["workdir"])
    assert (first.project, first.name) == ("tracked_config", "run")
    assert first.config["num_train_steps"] == NUM_STEPS
    assert first.config["train_summaries.images.num_images"] == 2
    images = [row for row in first.rows if row.get("summaries/images/_type") == "image-file"]
    assert [row["step"] for row in images] == [1, 10, 20, 30]  # the first invocation's; 40 is the second's
    assert any(row.get("summaries/preds/_type") == "histogram" for row in first.rows)


# ---------------------------------------------------------------------------------------------- MLflow


def _client(store: str):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=store)


def test_mlflow_gets_every_logged_step_once_across_the_resume(resumed_run, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client, run_id = _client(resumed_run["store"]), resumed_run["mlflow"]
    assert json.loads((resumed_run["workdir"] / "mlflow_run.json").read_text())["run_id"] == run_id
    history = sorted((m.step, m.value) for m in client.get_metric_history(run_id, "losses/l2"))
    assert [s for s, _ in history] == LOGGED
    assert dict(history) == pytest.approx(dict(_jsonl(resumed_run["workdir"], "losses/l2")))
    val = [m.step for m in client.get_metric_history(run_id, "val/losses/l2")]
    assert len(val) == len(set(val)) and {10, 20, 30, 40} <= set(val)
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED"
    assert len(client.search_runs([run.info.experiment_id])) == 1  # the resume continued it


def test_mlflow_has_the_config_as_params_and_the_images(resumed_run, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client, run_id = _client(resumed_run["store"]), resumed_run["mlflow"]
    run = client.get_run(run_id)
    assert client.get_experiment(run.info.experiment_id).name == "tracked_config"
    assert run.data.params["num_train_steps"] == str(NUM_STEPS)
    assert run.data.params["train_summaries.images"] == "kd.summaries:ShowImages"
    images = [a.path for a in client.list_artifacts(run_id, "images")]
    train = [p for p in images if p.startswith("images/summaries~images+") and p.endswith(".png")]
    assert sorted(int(p.split("+step+")[1].split("+")[0]) for p in train) == [1, 10, 20, 30, 40]
    assert any(p.startswith("images/val~summaries~images+step+") for p in images)  # the evaluator's


# ---------------------------------------------------------------------------------------------- selecting, failing


def test_cfg_writer_selects_a_tracker_without_editing_the_config(tmp_path, monkeypatch):
    store = (tmp_path / "mlruns").as_uri()
    writer = "py::kd.writers.MultiWriter(writers=[kd.writers.KDMetricWriter(), kd.writers.MlflowWriter(project='cli')])"
    env = _env(MLFLOW_TRACKING_URI=store, MLFLOW_ALLOW_FILE_STORE="true")
    _train(_config(tmp_path), tmp_path / "run", f"--cfg.writer={writer}", "--cfg.num_train_steps=10", env=env)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client = _client(store)
    (run,) = client.search_runs([client.get_experiment_by_name("cli").experiment_id])
    assert [m.step for m in client.get_metric_history(run.info.run_id, "losses/l2")] == [1, 5, 10]
    assert (tmp_path / "run" / "metrics.jsonl").exists()  # the default writers are kept beside it


def test_a_sweeps_items_are_tracked_with_their_overrides_as_tags(tmp_path, monkeypatch):
    store = (tmp_path / "mlruns").as_uri()
    env = _env(MLFLOW_TRACKING_URI=store, MLFLOW_ALLOW_FILE_STORE="true")
    _train(
        _config(tmp_path),
        tmp_path / "sweep",
        "--sweep=sweep",
        "--track=mlflow",
        "--cfg.num_train_steps=5",
        env=env,
    )
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client = _client(store)
    runs = client.search_runs([client.get_experiment_by_name("tracked_config").experiment_id])
    identity = sorted((r.info.run_name, r.data.tags["seed"], r.data.tags["group"]) for r in runs)
    assert identity == [("seed=1", "1", "sweep"), ("seed=2", "2", "sweep")]
    assert [r.info.status for r in runs] == ["FINISHED", "FINISHED"]  # each ended with its item


def test_trackers_that_cannot_be_reached_do_not_stop_training(tmp_path):
    port = helpers.closed_port()
    env = _env(
        WANDB_MODE="online",
        WANDB_BASE_URL=f"http://127.0.0.1:{port}",
        WANDB_API_KEY="k" * 40,
        MLFLOW_TRACKING_URI=f"http://127.0.0.1:{port}",
    )
    workdir = tmp_path / "run"
    proc = _train(_config(tmp_path), workdir, "--track=wandb,mlflow", env=env)
    assert "done: 30 steps" in proc.stdout  # the config's 30
    assert proc.stderr.count("W&B cannot be reached") == 1 and "wandb sync" in proc.stderr
    assert proc.stderr.count("MLflow cannot be reached") == 1
    assert [s for s, _ in _jsonl(workdir, "losses/l2")] == LOGGED[:7]  # the workdir's own files are whole
    (offline,) = helpers.wandb_runs(workdir)  # W&B queued the run offline, for `wandb sync`
    assert [s for s, _ in offline.steps("losses/l2")] == LOGGED[:7]
    assert not (workdir / "mlflow_run.json").exists()


def test_an_unknown_tracker_is_a_usage_error_naming_the_choices(tmp_path):
    command = [sys.executable, "-m", "kd", f"--cfg={_config(tmp_path)}", "--track=wandb,comet"]
    proc = subprocess.run(
        command, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 2
    assert "--track: expected mlflow or wandb (comma-separated), found 'comet'" in proc.stderr


def test_an_abbreviated_track_flag_is_refused(tmp_path):
    command = [sys.executable, "-m", "kd", f"--cfg={_config(tmp_path)}", "--trac=wandb"]
    proc = subprocess.run(
        command, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 2
    assert "--trac: unknown flag; did you mean --track" in proc.stderr


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_run_stopped_by_ctrl_c_or_a_preemption_is_killed_in_mlflow(tmp_path, monkeypatch, sig, code):
    store = (tmp_path / "mlruns").as_uri()
    env = _env(MLFLOW_TRACKING_URI=store, MLFLOW_ALLOW_FILE_STORE="true")
    workdir = tmp_path / "run"
    command = [
        sys.executable, "-m", "kd", f"--cfg={_config(tmp_path)}", f"--cfg.workdir={workdir}",
        "--cfg.num_train_steps=1000000", "--track=mlflow",
    ]  # fmt: skip
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while not ((workdir / "metrics.jsonl").exists() and rows(workdir)):  # training, the run open
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in (code, -sig, 1), stderr[-3000:]
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    run_id = json.loads((workdir / "mlflow_run.json").read_text())["run_id"]
    assert _client(store).get_run(run_id).info.status == "KILLED", stderr[-3000:]
