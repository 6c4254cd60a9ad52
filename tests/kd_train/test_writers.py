"""kd.writers: what each writer keeps or prints, and what the Trainer hands them."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import time

import kd
import numpy as np
import pytest
import train_fixtures as lib

# ---------------------------------------------------------------------------------------------- InMemoryWriter


def test_in_memory_writer_keeps_step_and_value_per_name():
    writer = kd.writers.InMemoryWriter()
    writer.write_scalars(1, {"losses/total": 0.5, "metrics/acc": 0.1})
    writer.write_scalars(3, {"losses/total": 0.25})
    assert writer.scalars == {"losses/total": [(1, 0.5), (3, 0.25)], "metrics/acc": [(1, 0.1)]}


def test_in_memory_writer_keeps_summaries_apart_from_scalars():
    writer = kd.writers.InMemoryWriter()
    image = np.zeros((2, 4, 4, 3), np.float32)
    writer.write_summaries(10, {"summaries/images": image})
    assert writer.scalars == {}
    [(step, value)] = writer.summaries["summaries/images"]
    assert step == 10 and value is image


# ---------------------------------------------------------------------------------------------- PrintWriter


def _printed(writer: kd.writers.PrintWriter) -> list[str]:
    return writer.stream.getvalue().splitlines()


def test_print_writer_writes_one_line_of_step_and_values():
    writer = kd.writers.PrintWriter(stream=io.StringIO())
    writer.write_scalars(100, {"losses/xent": 0.0312, "metrics/accuracy": 0.91})
    assert _printed(writer) == ["step 100 | xent 0.0312 | accuracy 0.91"]


def test_print_writer_shortens_names_and_leaves_the_times_to_the_files():
    writer = kd.writers.PrintWriter(stream=io.StringIO())
    writer.write_scalars(
        100,
        {
            "losses/xent": 0.0312,
            "metrics/accuracy": 0.91,
            "schedules/lr": 0.001,
            "val/losses/xent": 0.05,
            "val/metrics/accuracy": 0.89,
            "perf/steps_per_sec": 24000.0,
            "perf/train_seconds": 12.5,
            "perf/compile_seconds": 3.25,
        },
    )
    writer.write_scalars(
        101, {"perf/train_seconds": 13.0, "perf/skipped_updates": 2, "losses/total": 0.0412}
    )  # the other `perf/` values keep their names
    assert _printed(writer) == [
        "step 100 | xent 0.0312 | accuracy 0.91 | lr 0.001 | val/xent 0.05 | val/accuracy 0.89 | 24k step/s",
        "step 101 | perf/skipped_updates 2 | total 0.0412",
    ]


@pytest.mark.parametrize(
    ("rate", "shown"),
    [(24000.0, "24k"), (28512.0, "28.5k"), (392.4, "392"), (0.523, "0.523"), (1.5e6, "1.5M")],
)
def test_print_writer_writes_the_steps_per_second_before_the_label(rate, shown):
    writer = kd.writers.PrintWriter(stream=io.StringIO())
    writer.write_scalars(7, {"perf/steps_per_sec": rate})
    assert _printed(writer) == [f"step 7 | {shown} step/s"]


def test_print_writer_keeps_the_full_names_of_values_whose_short_labels_clash():
    writer = kd.writers.PrintWriter(stream=io.StringIO())
    writer.write_scalars(
        3, {"losses/l2": 0.5, "metrics/l2": 0.25, "val/losses/l2": 0.75, "schedules/lr": 0.1}
    )
    assert _printed(writer) == ["step 3 | losses/l2 0.5 | metrics/l2 0.25 | val/l2 0.75 | lr 0.1"]


def test_print_writer_keeps_lines_within_max_width():
    writer = kd.writers.PrintWriter(stream=io.StringIO())
    long = {f"metrics/accuracy_of_class_{i}": 0.5 for i in range(3)}
    writer.write_scalars(10, {**long, "metrics/accuracy_of_class_3": 0.5, "metrics/x": 1.0, "metrics/y": 2.0})
    writer.write_scalars(11, {**long, "metrics/x": 1.0})  # fits without the room kept for `(+N more)`
    classes = " | ".join(f"accuracy_of_class_{i} 0.5" for i in range(3))
    assert _printed(writer) == [f"step 10 | {classes} | (+3 more)", f"step 11 | {classes} | x 1"]
    assert [len(line) for line in _printed(writer)] == [97, 91]  # max_width=100 by default

    narrow = kd.writers.PrintWriter(stream=io.StringIO(), max_width=40)
    narrow.write_scalars(1, {"metrics/alpha": 0.5, "metrics/beta": 0.25, "metrics/gamma": 0.125})
    narrow.write_scalars(2, {"metrics/a_name_longer_than_the_whole_line": 1.0})
    # `beta 0.25` would fit alone, not with the `(+1 more)` gamma then needs.
    assert _printed(narrow) == ["step 1 | alpha 0.5 | (+2 more)", "step 2 | (+1 more)"]


def test_print_writer_rounds_to_four_significant_digits():
    writer = kd.writers.PrintWriter(stream=io.StringIO())
    writer.write_scalars(1, {"lr": np.float32(0.123456789), "big": 123456789.0})
    assert _printed(writer) == ["step 1 | lr 0.1235 | big 1.235e+08"]


def test_print_writer_truncates_past_max_values():
    writer = kd.writers.PrintWriter(stream=io.StringIO(), max_values=2)
    writer.write_scalars(5, {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0})
    assert _printed(writer) == ["step 5 | a 1 | b 2 | (+2 more)"]


def test_print_writer_shows_arrays_by_shape():
    writer = kd.writers.PrintWriter(stream=io.StringIO())
    writer.write_scalars(2, {"metrics/per_class": np.zeros((3, 2))})
    assert _printed(writer) == ["step 2 | per_class <array (3, 2)>"]


def test_print_writer_writes_a_line_per_call():
    writer = kd.writers.PrintWriter(stream=io.StringIO())
    writer.write_scalars(1, {"a": 1.0})
    writer.write_scalars(2, {"a": 0.5})
    assert _printed(writer) == ["step 1 | a 1", "step 2 | a 0.5"]


# ---------------------------------------------------------------------------------------------- JsonlWriter


def _lines(path) -> list[dict]:
    """Every line of `path` as JSON (each must parse); the file must end with a newline."""
    text = path.read_text()
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def _records(path) -> list[dict]:
    """The lines of `path` without their `wall_time` (checked on its own)."""
    return [{k: v for k, v in record.items() if k != "wall_time"} for record in _lines(path)]


def test_jsonl_writer_appends_one_json_line_per_call(tmp_path):
    writer = kd.writers.JsonlWriter(workdir=str(tmp_path))
    writer.write_scalars(1, {"losses/total": np.float32(0.5)})
    writer.write_scalars(2, {"losses/total": 0.25, "metrics/acc": 1})
    assert _records(tmp_path / "metrics.jsonl") == [
        {"step": 1, "losses/total": 0.5},
        {"step": 2, "losses/total": 0.25, "metrics/acc": 1.0},
    ]


def test_jsonl_writer_leaves_out_non_scalars(tmp_path):
    writer = kd.writers.JsonlWriter(workdir=str(tmp_path))
    writer.write_scalars(3, {"losses/total": 0.5, "metrics/per_class": np.ones((2,))})
    assert _records(tmp_path / "metrics.jsonl") == [{"step": 3, "losses/total": 0.5}]


def test_jsonl_writer_writes_non_finite_values_as_null(tmp_path):
    writer = kd.writers.JsonlWriter(workdir=str(tmp_path))
    writer.write_scalars(1, {"losses/total": float("nan"), "grad_norm": np.float32(np.inf), "lr": 0.1})
    line = (tmp_path / "metrics.jsonl").read_text()

    def refuse(constant):
        raise ValueError(f"not valid JSON: {constant}")

    record = json.loads(line, parse_constant=refuse)
    del record["wall_time"]
    assert record == {
        "step": 1,
        "losses/total": None,
        "grad_norm": None,
        "lr": 0.1,
    }


def test_jsonl_writer_writes_the_wall_time_in_seconds(tmp_path):
    writer = kd.writers.JsonlWriter(workdir=str(tmp_path))
    before = time.time()
    writer.write_scalars(1, {"a": 1.0})
    after = time.time()
    [record] = _lines(tmp_path / "metrics.jsonl")
    assert list(record) == ["step", "wall_time", "a"]
    assert before <= record["wall_time"] <= after


def test_jsonl_writer_drops_a_partial_last_line_before_appending(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "a": 1.0}\n{"step": 2, "a": 0.')  # a run killed mid-line
    kd.writers.JsonlWriter(workdir=str(tmp_path)).write_scalars(3, {"a": 0.25})
    assert _records(path) == [{"step": 1, "a": 1.0}, {"step": 3, "a": 0.25}]


def test_jsonl_writer_keeps_a_whole_last_line_missing_its_newline(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "a": 1.0}\n{"step": 2, "a": 0.5}')
    kd.writers.JsonlWriter(workdir=str(tmp_path)).write_scalars(3, {"a": 0.25})
    assert _records(path) == [{"step": 1, "a": 1.0}, {"step": 2, "a": 0.5}, {"step": 3, "a": 0.25}]


def test_jsonl_writer_drops_a_file_that_is_one_partial_line(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "a": ' + "1" * 70_000)  # longer than one read back
    kd.writers.JsonlWriter(workdir=str(tmp_path)).write_scalars(2, {"a": 0.5})
    assert _records(path) == [{"step": 2, "a": 0.5}]


_WRITE_FOREVER = """
import sys
import kd
writer = kd.writers.JsonlWriter(workdir=sys.argv[1])
scalars = {f"metrics/m{i}": i / 7 for i in range(2000)}  # ~60 kB lines: many pages per write
step = 0
while True:
    step += 1
    writer.write_scalars(step, scalars)
"""


def test_jsonl_file_stays_valid_json_lines_when_the_writing_process_is_killed(tmp_path):
    path = tmp_path / "metrics.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", _WRITE_FOREVER, str(tmp_path)])
    try:
        deadline = time.monotonic() + 60
        while not (path.exists() and path.read_bytes().count(b"\n") >= 3):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the writing process did not write 3 lines (exit code {proc.poll()})")
            time.sleep(0.02)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    kd.writers.JsonlWriter(workdir=str(tmp_path)).write_scalars(10**6, {"a": 1.0})  # resumed run
    records = _lines(path)
    assert len(records) >= 4
    assert [r["step"] for r in records[:-1]] == list(range(1, len(records)))
    assert records[-1] == {"step": 10**6, "wall_time": records[-1]["wall_time"], "a": 1.0}


def test_jsonl_writer_creates_the_workdir(tmp_path):
    workdir = tmp_path / "run" / "0"
    kd.writers.JsonlWriter(workdir=str(workdir), filename="eval.jsonl").write_scalars(1, {"a": 1.0})
    assert _records(workdir / "eval.jsonl") == [{"step": 1, "a": 1.0}]


def test_jsonl_writer_writes_the_config(tmp_path):
    writer = kd.writers.JsonlWriter(workdir=str(tmp_path))
    writer.write_config('{"seed": 1}')
    writer.write_config('{"seed": 2}')
    assert json.loads((tmp_path / "config.json").read_text()) == {"seed": 2}


# ---------------------------------------------------------------------------------------------- MultiWriter


def test_multi_writer_sends_everything_to_each_writer(tmp_path):
    first, second = kd.writers.InMemoryWriter(), kd.writers.InMemoryWriter()
    jsonl = kd.writers.JsonlWriter(workdir=str(tmp_path))
    writer = kd.writers.MultiWriter(writers=[first, second, jsonl])
    writer.write_scalars(4, {"a": 1.0})
    writer.write_summaries(4, {"summaries/s": "text"})
    writer.write_config("{}")
    writer.close()
    for w in (first, second):
        assert w.scalars == {"a": [(4, 1.0)]}
        assert w.summaries == {"summaries/s": [(4, "text")]}
    assert _records(tmp_path / "metrics.jsonl") == [{"step": 4, "a": 1.0}]
    assert (tmp_path / "config.json").read_text() == "{}"


def test_base_writer_accepts_every_call_and_does_nothing():
    writer = kd.writers.Writer()
    writer.write_scalars(1, {"a": 1.0})
    writer.write_summaries(1, {"b": np.zeros(2)})
    writer.write_config("{}")
    writer.close()


# ---------------------------------------------------------------------------------------------- with the Trainer


def test_trainer_writes_scalars_on_logging_steps():
    trainer = lib.make_trainer(num_train_steps=5, log_metrics_every=2)
    trainer.train()
    scalars = trainer.writer.scalars
    assert {"losses/l2", "perf/steps_per_sec"} <= set(scalars)
    assert "losses/total" not in scalars  # one loss is its own total
    # The first step, every `log_metrics_every`, and the last; the rate from the second on (not start-up's).
    assert [step for step, _ in scalars["losses/l2"]] == [1, 2, 4, 5]
    assert [step for step, _ in scalars["perf/steps_per_sec"]] == [2, 4, 5]
    assert all(np.isfinite(value) for _, value in scalars["losses/l2"])


def test_trainer_writes_eval_values_under_the_eval_name():
    evaluator = kd.evals.Evaluator(run=kd.evals.EveryNSteps(2), num_batches=1, ds=lib.Regression(seed=1))
    trainer = lib.make_trainer(num_train_steps=4, log_metrics_every=100, evals={"val": evaluator})
    trainer.train()
    scalars = trainer.writer.scalars
    assert [step for step, _ in scalars["val/losses/l2"]] == [0, 2, 4]  # step 0: before training
    assert not any(name.startswith("val/perf") for name in scalars)


@dataclasses.dataclass
class _CollectScalars(kd.writers.Writer):
    """A user's writer, as the `Writer` docstring shows (collecting instead of posting)."""

    rows: list = dataclasses.field(default_factory=list)

    def write_scalars(self, step, scalars):
        self.rows.append((step, {k: float(v) for k, v in scalars.items() if np.ndim(v) == 0}))


def test_a_user_writer_of_a_few_lines_receives_the_trainers_scalars():
    trainer = lib.make_trainer(num_train_steps=3, log_metrics_every=2, writer=_CollectScalars())
    _, logged = trainer.train()
    rows = trainer.writer.rows
    assert [step for step, _ in rows] == [1, 2, 3]
    assert {"losses/l2", "perf/steps_per_sec"} <= set(rows[-1][1])
    assert rows[-1][1]["losses/l2"] == pytest.approx(logged["losses/l2"])


# A run resumed from a checkpoint


def test_jsonl_resume_drops_the_lines_after_the_restored_step(tmp_path):
    writer = kd.writers.JsonlWriter(workdir=str(tmp_path))
    for step in (1, 2, 3, 4):
        writer.write_scalars(step, {"losses/total": float(step)})

    writer.resume_from(2)
    writer.write_scalars(3, {"losses/total": -3.0})

    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [(r["step"], r["losses/total"]) for r in rows] == [(1, 1.0), (2, 2.0), (3, -3.0)]


def test_jsonl_resume_without_a_file_writes_nothing(tmp_path):
    kd.writers.JsonlWriter(workdir=str(tmp_path)).resume_from(5)

    assert not (tmp_path / "metrics.jsonl").exists()


def test_in_memory_resume_drops_later_points():
    writer = kd.writers.InMemoryWriter()
    for step in (1, 2, 3):
        writer.write_scalars(step, {"a": float(step)})

    writer.resume_from(1)

    assert writer.scalars == {"a": [(1, 1.0)]}


def test_a_multi_writer_resumes_each_of_its_writers():
    inner = [kd.writers.InMemoryWriter(), kd.writers.InMemoryWriter()]
    writer = kd.writers.MultiWriter(writers=inner)
    writer.write_scalars(3, {"a": 1.0})

    writer.resume_from(2)

    assert [w.scalars["a"] for w in inner] == [[], []]
