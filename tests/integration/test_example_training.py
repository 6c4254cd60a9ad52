"""The README's main job and the examples: each config trains through kd.train.Trainer from the command line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("optax")
pytest.importorskip("flax")

REPO = Path(__file__).resolve().parents[2]
TRAIN = REPO / "examples" / "train.py"


def _train(*flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TRAIN), *flags], capture_output=True, text=True, cwd=REPO, timeout=600
    )


def _logged(stdout: str, name: str) -> dict[int, float]:
    """`{step: value}` of one logged scalar, read from the printed `step N | label value | ...` lines (the
    terminal's short labels: `l2` for `losses/l2`, `test/accuracy` for `test/metrics/accuracy`)."""
    values = {}
    for line in stdout.splitlines():
        match = re.match(r"step (\d+) \|", line)
        if match:
            fields = dict(part.strip().rsplit(" ", 1) for part in line.split("|")[1:] if " " in part.strip())
            if name in fields:
                values[int(match.group(1))] = float(fields[name])
    return values


def test_default_example_trains_and_the_loss_falls() -> None:
    proc = _train("--cfg.num_train_steps=150", "--cfg.log_metrics_every=50")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    losses = _logged(proc.stdout, "l2")
    assert sorted(losses) == [1, 50, 100, 150]  # the first step, every 50 and the last
    assert losses[150] < losses[1] / 4
    assert "done: 150 steps" in proc.stdout


def test_digits_reach_95_percent_test_accuracy() -> None:
    proc = _train("--cfg=examples/digits.py")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    accuracy = _logged(proc.stdout, "test/accuracy")
    assert sorted(accuracy) == [0, 500, 1000]  # step 0: the untrained model
    assert accuracy[1000] >= 0.95


def test_nnx_example_trains_an_nnx_module_configured_by_its_class() -> None:
    proc = _train("--cfg=examples/nnx_digits.py", "--cfg.num_train_steps=400", "--cfg.log_metrics_every=200")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    accuracy = _logged(proc.stdout, "test/accuracy")
    assert accuracy[400] >= 0.9
    hidden_norm = _logged(proc.stdout, "hidden_norm")  # a sown NNX intermediate
    assert set(hidden_norm) == {1, 200, 400} and all(v > 0 for v in hidden_norm.values())


def test_vit_s16_example_learns_the_digits_and_monitors_its_last_attention_weights() -> None:
    proc = _train(
        "--cfg=examples/digits_vit.py",
        "--cfg.num_train_steps=40",
        "--cfg.log_metrics_every=20",
        "--cfg.evals.test.run.n=40",
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    accuracy = _logged(proc.stdout, "test/accuracy")
    assert sorted(accuracy) == [0, 40] and accuracy[40] >= 0.5 > accuracy[0]  # chance is 0.1
    spread = _logged(proc.stdout, "attention_spread")  # interms.encoder.layers_11.attention.attn_weights[0]
    assert set(spread) == {1, 20, 40} and all(0 < v < 1 for v in spread.values())


def test_autoencoder_monitors_the_encoder_and_checkpoints_into_the_workdir(tmp_path: Path) -> None:
    workdir = tmp_path / "ae"
    proc = _train(
        "--cfg=examples/digits_autoencoder.py", f"--cfg.workdir={workdir}", "--cfg.num_train_steps=300"
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    latent = _logged(proc.stdout, "latent_norm")
    assert set(latent) == {1, 100, 200, 300} and all(v > 0 for v in latent.values())
    recon = _logged(proc.stdout, "recon")
    assert recon[300] < recon[1] / 4
    records = [json.loads(line) for line in (workdir / "metrics.jsonl").read_text().splitlines()]
    # decay_steps follows --cfg.num_train_steps=300: the last update (step 299 for optax) is at about 0.
    last = next(r for r in records if r["step"] == 300 and "schedules/learning_rate" in r)
    assert last["schedules/learning_rate"] == pytest.approx(0.0, abs=1e-6)
    assert all(len(line) <= 100 for line in proc.stdout.splitlines())  # what did not fit is in the files
    assert {r["step"] for r in records} >= {1, 100, 200, 300}
    assert (workdir / "checkpoints" / "ckpt_300").is_dir()
    # A second run in the same workdir finds the finished run and does no step.
    again = _train(
        "--cfg=examples/digits_autoencoder.py", f"--cfg.workdir={workdir}", "--cfg.num_train_steps=300"
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.startswith(f"run already complete at step 300 ({workdir})")
    assert _logged(again.stdout, "recon") == {}


def test_cli_override_of_num_train_steps_reaches_the_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    import konfig

    monkeypatch.syspath_prepend(str(REPO / "examples"))
    cfg, rest = konfig.parse_flags(
        ["--cfg.num_train_steps=123"], default=str(REPO / "examples" / "mlp_regression.py")
    )
    assert rest == []
    schedule = konfig.resolve(cfg.schedules["learning_rate"])
    # warmup_cosine_decay_schedule reaches its end value exactly at decay_steps.
    assert float(schedule(123)) == pytest.approx(0.0, abs=1e-9)
    assert float(schedule(61)) > 1e-4


def test_unknown_override_path_fails_with_a_suggestion() -> None:
    proc = _train("--cfg.num_train_step=10")
    assert proc.returncode != 0
    assert "num_train_steps" in proc.stderr


def test_example_sweep_expands_into_configs_whose_schedules_follow_num_train_steps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import konfig

    monkeypatch.syspath_prepend(str(REPO / "examples"))
    items = konfig.expand_sweep(str(REPO / "examples" / "mlp_regression.py"))
    assert [item.config.num_train_steps for item in items] == [200, 400]
    for item in items:
        steps = item.config.num_train_steps
        schedule = konfig.resolve(item.config.schedules["learning_rate"])
        assert float(schedule(steps)) == pytest.approx(0.0, abs=1e-9)
        assert float(schedule(steps // 2)) > 1e-4
        # Each item's JSON is a complete config that resolves to the same schedule.
        reloaded = konfig.from_json(item.to_json())
        assert reloaded.num_train_steps == steps
        assert float(konfig.resolve(reloaded.schedules["learning_rate"])(steps // 2)) == pytest.approx(
            float(schedule(steps // 2))
        )


def test_lm_example_learns_to_copy_its_repeated_segments_on_a_cpu() -> None:
    # examples/lm.py at its CPU size (its docstring's command): random 16-token segments repeated over 128
    # tokens; a model that only learned the token frequencies stays at log(256) = 5.55.
    proc = _train(
        "--cfg=examples/lm.py",
        "--cfg.model.0=LM-mu",
        "--cfg.aux.vocab_size=256",
        "--cfg.aux.sequence_length=128",
        "--cfg.train_ds.loader.period=16",
        "--cfg.train_ds.batch_size=16",
        "--cfg.num_train_steps=300",
        "--cfg.log_metrics_every=100",
        "--cfg.schedules.learning_rate.peak_value=3e-3",
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    losses = _logged(proc.stdout, "xent")
    assert sorted(losses) == [1, 100, 200, 300]
    assert losses[1] > 5.0 and losses[300] < 1.5


def test_the_examples_digits_are_scikit_learns_read_without_importing_it() -> None:
    # examples/digits_data.py reads the file scikit-learn ships (its import is ~1 s of a run's start).
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import digits_data, numpy as np\n"
        "images, labels = digits_data.raw_digits()\n"
        "print('sklearn' in sys.modules)\n"
        "from sklearn.datasets import load_digits\n"
        "d = load_digits()\n"
        "print(np.array_equal(images, d.images), images.dtype == d.images.dtype,\n"
        "      np.array_equal(labels, d.target), labels.dtype == d.target.dtype)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(REPO / "examples")], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True", "True", "True", "True"]
