"""The programs a run compiles, named and timed (`kd.train._compiles`): a run compiles its init, its step and
(by default) its fused call, and nothing else: no small eager programs around them."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import train_fixtures as lib
from kd.train._compiles import CompileLog, program_name


def _programs(**fields) -> dict[str, float]:
    log = CompileLog()
    lib.make_trainer(**{"num_train_steps": 60, "log_metrics_every": 20, **fields}).train()
    return log.programs()


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, {"init_state", "train_step", "fused_steps"}),  # fused and single updates, measured
        ({"steps_per_call": 1}, {"init_state", "train_step"}),
        ({"steps_per_call": 20}, {"init_state", "fused_steps"}),  # step 1 is a fused call of one update
        # Metrics on logging steps: the step that returns them is a second variant of the step.
        ({"steps_per_call": 1, "train_metrics": {"err": lib.MSE()}}, {"init_state", "train_step"}),
        # The schedules' values, all in one program.
        ({"steps_per_call": 1, "schedules": {"lr": optax.cosine_decay_schedule(1.0, 60)}},
         {"init_state", "train_step", "schedule_values"}),
    ],
)  # fmt: skip
def test_a_run_compiles_its_programs_and_nothing_else(fields, expected):
    programs = _programs(**fields)
    if jax.default_backend() != "cpu" and fields.get("steps_per_call") != 20:
        # On an accelerator the non-finite check of single updates asks the device (kd.train._nonfinite).
        expected = expected | {"losses_all_finite"}

    assert set(programs) == expected, programs
    assert all(seconds > 0 for seconds in programs.values())


def test_metrics_compile_a_second_variant_of_the_step():
    log = CompileLog()
    trainer = lib.make_trainer(num_train_steps=6, log_metrics_every=3, steps_per_call=1, train_metrics={"err": lib.MSE()})
    trainer.train()

    assert set(log.programs()) == {"init_state", "train_step"}
    assert sorted(trainer.trainstep.num_traces.items()) == [((False, False), 1), ((True, False), 1)]


def test_the_summary_names_the_longest_programs_and_counts_the_rest():
    log = CompileLog()
    jax.jit(lambda x: jnp.sin(x) * 2)(np.ones(3, np.float32))

    def my_function(x):
        return jnp.cos(x) + 1

    jax.jit(my_function)(np.ones(4, np.float32))

    programs = log.programs()
    assert set(programs) == {"<lambda>", "my_function"}
    summary = log.summary(limit=1)
    assert summary.startswith("2 programs in "), summary
    assert log.seconds() == pytest.approx(sum(programs.values()))
    assert CompileLog().programs() == {}  # a new log counts from its start
    narrow = log.summary(width=30)
    assert len(narrow) <= 30 or narrow == "2 programs in " + narrow.split(" in ")[1], narrow
    assert "more" in narrow or ":" not in narrow


@pytest.mark.parametrize(
    ("fun_name", "expected"),
    [("jit(_fused_steps)", "fused_steps"), ("train_step", "train_step"), ("jit(<lambda>)", "<lambda>"), (None, "?")],
)
def test_program_names_drop_jit_and_leading_underscores(fun_name, expected):
    assert program_name(fun_name) == expected


def test_the_cli_says_what_it_compiled(tmp_path):
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    kd_train = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"
    proc = subprocess.run(
        [kd_train, "--cfg=examples/mlp_regression.py", f"--cfg.workdir={tmp_path / 'run'}",
         "--cfg.num_train_steps=30"],
        capture_output=True, text=True, cwd=root, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    match = re.match(r"compiled (\d) programs in [\d.]+s: (.*)$", lines[-2])
    assert match, lines
    # The longest programs by name (those compiled in under SMALL_SECONDS, e.g. read from the cache, are counted).
    named = [part.split()[0] for part in match[2].split(", ") if not part.startswith("+ ")]
    assert named and set(named) <= {"init_state", "train_step", "fused_steps", "schedule_values"}, lines[-2]
    assert lines[-1].startswith("done: 30 steps")
