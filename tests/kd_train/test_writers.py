"""kd.writers: what each writer keeps or prints, and what the Trainer hands them."""

from __future__ import annotations

import io
import json

import kd
import numpy as np
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
    writer.write_scalars(100, {"losses/total": 0.0312, "metrics/accuracy": 0.91})
    assert _printed(writer) == ["step 100 | losses/total 0.0312 | metrics/accuracy 0.91"]


def test_print_writer_rounds_to_five_significant_digits():
    writer = kd.writers.PrintWriter(stream=io.StringIO())
    writer.write_scalars(1, {"lr": np.float32(0.123456789), "big": 123456789.0})
    assert _printed(writer) == ["step 1 | lr 0.12346 | big 1.2346e+08"]


def test_print_writer_truncates_past_max_values():
    writer = kd.writers.PrintWriter(stream=io.StringIO(), max_values=2)
    writer.write_scalars(5, {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0})
    assert _printed(writer) == ["step 5 | a 1 | b 2 | (+2 more)"]


def test_print_writer_shows_arrays_by_shape():
    writer = kd.writers.PrintWriter(stream=io.StringIO())
    writer.write_scalars(2, {"metrics/per_class": np.zeros((3, 2))})
    assert _printed(writer) == ["step 2 | metrics/per_class <array (3, 2)>"]


def test_print_writer_writes_a_line_per_call():
    writer = kd.writers.PrintWriter(stream=io.StringIO())
    writer.write_scalars(1, {"a": 1.0})
    writer.write_scalars(2, {"a": 0.5})
    assert _printed(writer) == ["step 1 | a 1", "step 2 | a 0.5"]


# ---------------------------------------------------------------------------------------------- JsonlWriter


def _records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


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

    assert json.loads(line, parse_constant=refuse) == {
        "step": 1,
        "losses/total": None,
        "grad_norm": None,
        "lr": 0.1,
    }


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
    assert {"losses/l2", "losses/total", "perf/steps_per_sec"} <= set(scalars)
    # The first step, every `log_metrics_every`, and the last.
    assert [step for step, _ in scalars["losses/total"]] == [1, 2, 4, 5]
    assert all(np.isfinite(value) for _, value in scalars["losses/l2"])


def test_trainer_writes_eval_values_under_the_eval_name():
    evaluator = kd.evals.Evaluator(run=kd.evals.EveryNSteps(2), num_batches=1, ds=lib.Regression(seed=1))
    trainer = lib.make_trainer(num_train_steps=4, log_metrics_every=100, evals={"val": evaluator})
    trainer.train()
    scalars = trainer.writer.scalars
    assert [step for step, _ in scalars["val/losses/l2"]] == [0, 2, 4]  # step 0: before training
    assert [step for step, _ in scalars["val/losses/total"]] == [0, 2, 4]
    assert not any(name.startswith("val/perf") for name in scalars)
