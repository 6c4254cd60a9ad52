"""The README's main job: the example config trains, and CLI overrides reach derived fields."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("optax")
pytest.importorskip("flax")

REPO = Path(__file__).resolve().parents[2]
TRAIN = REPO / "examples" / "train.py"


def _train(*flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TRAIN), *flags], capture_output=True, text=True, cwd=REPO, timeout=300)


def test_example_config_trains_and_the_loss_falls() -> None:
    proc = _train("--cfg.num_train_steps=150", "--cfg.log_every=50")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    losses = [float(line.split()[3]) for line in proc.stdout.splitlines() if line.startswith("step")]
    assert len(losses) == 4  # steps 0, 50, 100 and the last one
    assert losses[-1] < losses[0] / 4


def test_cli_override_of_num_train_steps_reaches_the_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    import konfig

    monkeypatch.syspath_prepend(str(REPO / "examples"))
    cfg, rest = konfig.parse_flags(["--cfg.num_train_steps=123"], default=str(REPO / "examples" / "mlp_regression.py"))
    assert rest == []
    schedule = konfig.resolve(cfg.schedule)
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
        schedule = konfig.resolve(item.config.schedule)
        assert float(schedule(steps)) == pytest.approx(0.0, abs=1e-9)
        assert float(schedule(steps // 2)) > 1e-4
        # Each item's JSON is a complete config that resolves to the same schedule.
        reloaded = konfig.from_json(item.to_json())
        assert reloaded.num_train_steps == steps
        assert float(konfig.resolve(reloaded.schedule)(steps // 2)) == pytest.approx(float(schedule(steps // 2)))
