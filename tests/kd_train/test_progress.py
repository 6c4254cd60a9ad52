"""The terminal progress bar and the opt-in profiler of `Trainer.train()`."""

from __future__ import annotations

import io

import kd
import pytest
from kd.train import _progress
from train_fixtures import make_trainer


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_shows_steps_and_the_last_loss_and_lines_go_above_it(monkeypatch, capsys):
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    bar = kd.train.Progress().start(total=3, initial=0)  # enabled=None: stderr is a terminal here
    for _ in range(3):
        bar.step()
    bar.logged({"losses/l2": 1.0, "losses/total": 0.25})
    _progress.print_line("step 3 | losses/total 0.25")
    bar.close()
    shown = terminal.getvalue()
    assert "3/3" in shown and "total 0.25" in shown and "step" in shown
    assert capsys.readouterr().out == "step 3 | losses/total 0.25\n"
    assert _progress._ACTIVE == []


def test_no_bar_when_stderr_is_not_a_terminal(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    bar = kd.train.Progress().start(total=3, initial=0)
    bar.step()
    bar.close()
    assert stream.getvalue() == "" and bar.bar is None


def test_a_training_run_moves_the_bar_to_the_last_step(monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    make_trainer(num_train_steps=5, progress=kd.train.Progress(enabled=True)).train()
    assert "5/5" in terminal.getvalue()


def test_nothing_is_profiled_unless_asked(tmp_path):
    make_trainer(workdir=str(tmp_path)).train()
    assert not (tmp_path / "profile").exists()


def test_a_profiler_traces_the_asked_steps_into_the_workdir(tmp_path):
    make_trainer(
        workdir=str(tmp_path), num_train_steps=6, profiler=kd.train.Profiler(first_step=2, num_steps=2)
    ).train()
    traces = [p for p in (tmp_path / "profile").rglob("*") if p.is_file()]
    assert traces and all(p.stat().st_size > 0 for p in traces)


def test_a_profiler_rejects_a_non_positive_step_count():
    with pytest.raises(ValueError, match=r"Profiler\.num_steps: expected an int >= 1, got 0"):
        kd.train.Profiler(num_steps=0)
