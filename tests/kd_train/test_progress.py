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
    bar.logged({"losses/l2": 1.0, "losses/kl": 0.25, "losses/total": 1.25, "metrics/acc": 0.5})
    _progress.print_line("step 3 | l2 1 | kl 0.25")
    bar.close()
    shown = terminal.getvalue()
    assert "3/3" in shown and "total 1.25" in shown and "step" in shown  # two losses: their total
    assert capsys.readouterr().out == "step 3 | l2 1 | kl 0.25\n"
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


def test_between_logging_steps_the_bar_shows_each_calls_loss_once_computed(monkeypatch):
    shown: list[tuple[str, float]] = []
    steps: list[int] = []
    monkeypatch.setattr("sys.stderr", FakeTerminal())
    monkeypatch.setattr(
        _progress.Progress._Bar, "losses", lambda self, values: shown.extend(values.items()), raising=True
    )
    real_step = _progress.Progress._Bar.step
    monkeypatch.setattr(
        _progress.Progress._Bar, "step", lambda self, n: (steps.append(n), real_step(self, n))[1], raising=True
    )
    # Calls of 3 fused updates between logging steps 1 and 12: they end at steps 1, 4, 7, 10 and 12.
    fields = dict(num_train_steps=12, steps_per_call=3, progress=kd.train.Progress(enabled=True))
    make_trainer(log_metrics_every=1000, **fields).train()  # logs steps 1 and 12 only
    first_run, calls = list(shown), list(steps)
    logged = kd.writers.InMemoryWriter()
    make_trainer(log_metrics_every=1, writer=logged, steps_per_call=1, num_train_steps=12).train()  # every step
    losses = [value for _, value in logged.scalars["losses/l2"]]
    assert calls == [1, 3, 3, 3, 2]
    assert {name for name, _ in first_run} == {"l2"}
    call_ends = [losses[end - 1] for end in (1, 4, 7, 10, 12)]
    values = [value for _, value in first_run]
    # The calls' losses reached the bar in order, each once computed (the previous call's when this one's is
    # still running), not only those of the logging steps 1 and 12.
    assert all(v in call_ends for v in values), (values, call_ends)
    assert [call_ends.index(v) for v in values] == sorted(call_ends.index(v) for v in values)
    assert len(set(values) - {call_ends[0], call_ends[-1]}) >= 1


def test_steps_per_call_1_runs_single_updates_in_calls_from_one_logging_step_to_the_next(monkeypatch):
    steps: list[int] = []
    monkeypatch.setattr("sys.stderr", FakeTerminal())
    real_step = _progress.Progress._Bar.step
    monkeypatch.setattr(
        _progress.Progress._Bar, "step", lambda self, n: (steps.append(n), real_step(self, n))[1], raising=True
    )
    trainer = make_trainer(
        num_train_steps=12, log_metrics_every=6, steps_per_call=1, progress=kd.train.Progress(enabled=True)
    )
    trainer.train()
    assert steps == [1, 5, 6]  # the hooks run after steps 1, 6 and 12, not after every update
    assert trainer.trainstep.num_traces.get(("fused", True), 0) == 0  # every update its own compiled step


def test_the_bar_leaves_compile_time_out_of_its_rate(monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    bar = kd.train.Progress().start(total=10, initial=0)
    started = bar.bar.start_t
    bar.exclude(2.5)  # seconds JAX spent compiling
    assert bar.bar.start_t == started + 2.5
    bar.close()


def test_after_a_compiling_first_step_the_rate_is_that_of_the_later_steps(monkeypatch):
    # A first call of 1.4 s (mostly compiling), then 100 steps every 0.2 s: the bar must not keep showing
    # 1.4 s/step (and an ETA of minutes) for the rest of the run.
    import time as time_module

    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    bar = kd.train.Progress().start(total=1000, initial=0)
    clock = [bar.bar._time()]
    bar.bar._time = lambda: clock[0]
    monkeypatch.setattr(time_module, "time", lambda: clock[0])
    clock[0] += 1.4
    bar.step(1)
    bar.exclude(1.3)
    for _ in range(5):  # 1 s: less than the compile time left out
        clock[0] += 0.2
        bar.step(100)
    rate = bar.bar.format_dict["rate"]
    assert rate is not None and rate > 100, rate  # 500 steps/s measured, not 1 step per 1.4 s
    bar.close()


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


def test_the_bar_shows_the_wall_clock_and_no_rate_until_a_second_call(monkeypatch):
    # A run of 32 s that spent 31 compiling must not end saying [00:01<00:00]; the first call's 1.1 s for one
    # update must not become an ETA of hours.
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    bar = kd.train.Progress().start(total=40000, initial=0)
    clock = [bar.bar._time()]
    bar.bar._time = lambda: clock[0]
    clock[0] += 31.0 + 1.12  # the first call: compiling, then one update
    bar.step(1)
    bar.exclude(31.0)
    first = bar.bar.format_dict
    assert first["rate"] == 0 and round(first["elapsed"], 2) == 32.12  # rate unknown ("?"), the wall's time
    assert "?" in bar.bar.format_meter(**first)
    clock[0] += 2.0
    bar.step(1000)  # the second call: 500 updates a second
    second = bar.bar.format_dict
    assert second["rate"] > 400 and round(second["elapsed"], 2) == 34.12
    bar.close()


def test_a_call_of_no_update_does_not_count_toward_a_measured_rate(monkeypatch):
    # Step 0's evaluations are a call of no update: after it and step 1's call the rate is still unknown.
    monkeypatch.setattr("sys.stderr", FakeTerminal())
    bar = kd.train.Progress().start(total=100, initial=0)
    bar.step(0)
    bar.step(1)
    assert bar.bar.format_dict["rate"] == 0  # shown as "?"
    bar.close()
