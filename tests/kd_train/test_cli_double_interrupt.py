"""Ctrl-C pressed again while kd-train saves the stop's checkpoint: the save is finished and said in one line; a
third press abandons it (exit 130, the run resumes from the checkpoint before). No traceback in either case.

Real processes, real SIGINTs, real orbax checkpoints: the model carries a 300 MB table, so that a save lasts long
enough (its digests are sha256) for the presses to land while orbax writes it (seen by its temporary folder).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KD_TRAIN = str(Path(sys.executable).parent / "kd-train")
EARLIER = 10  # the periodic checkpoint saved before the presses
TIMEOUT = 120

MODEL = """\
import jax.numpy as jnp
from flax import linen as nn


class WithTable(nn.Module):
    \"\"\"A regression whose state also holds a large table (a constant: the step passes it through).\"\"\"

    size: int = 75_000_000

    @nn.compact
    def __call__(self, x):
        table = self.variable("table", "values", jnp.zeros, (self.size,), jnp.float32)
        return nn.Dense(1)(x) + 0 * table.value[0]
"""

CONFIG = f"""\
import konfig

with konfig.imports():
    import kd
    import optax
    import big_model


def get_config():
    cfg = kd.train.Trainer()
    cfg.num_train_steps = 10_000_000
    cfg.log_metrics_every = 1000
    cfg.train_ds = kd.data.InMemoryPipeline(
        loader=kd.data.SyntheticRegression(num_examples=256), batch_size=8, shuffle=True
    )
    cfg.model = kd.nn.ExternalModule(model=big_model.WithTable(), keys="batch.x")
    cfg.optimizer = optax.sgd(learning_rate=1e-3)
    cfg.train_losses = {{"l2": kd.losses.L2(preds="preds", targets="batch.y")}}
    cfg.checkpointer = kd.ckpts.Checkpointer(
        save_interval_steps=10_000_000, save_on_steps=[{EARLIER}], digest_algorithm="sha256"
    )
    return cfg
"""


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("project")
    (folder / "big_model.py").write_text(MODEL)
    (folder / "big_config.py").write_text(CONFIG)
    return folder / "big_config.py"


class Run:
    """`kd-train` on the config, its output read as it comes."""

    def __init__(self, config: Path, workdir: Path, *flags: str) -> None:
        command = [KD_TRAIN, f"--cfg={config}", f"--cfg.workdir={workdir}", *flags]
        env = {**os.environ, "JAX_PLATFORMS": "cpu"}
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.checkpoints = workdir / "checkpoints"
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, args=(self.process.stdout, self.stdout), daemon=True),
            threading.Thread(target=self._read, args=(self.process.stderr, self.stderr), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream: object, lines: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.append(line.rstrip("\n"))

    def wait_until(self, condition: object, what: str) -> object:
        deadline = time.monotonic() + TIMEOUT
        while not (found := condition()):  # type: ignore[operator]
            assert self.process.poll() is None, f"kd-train ended before {what}:\n" + "\n".join(self.stderr)
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.005)
        return found

    def saved_steps(self) -> list[int]:
        names = os.listdir(self.checkpoints) if self.checkpoints.is_dir() else []
        return sorted(int(n[5:]) for n in names if re.fullmatch(r"ckpt_\d+", n))

    def stop_save(self) -> int | None:
        """The step of the save orbax is writing after the earlier one (its temporary folder), if any."""
        names = os.listdir(self.checkpoints) if self.checkpoints.is_dir() else []
        steps = [int(m[1]) for n in names if (m := re.match(r"ckpt_(\d+)\.orbax-checkpoint-tmp", n))]
        return next((s for s in steps if s > EARLIER), None)

    def press_ctrl_c(self) -> None:
        self.process.send_signal(signal.SIGINT)

    def finish(self) -> int:
        code = self.process.wait(timeout=TIMEOUT)
        for reader in self._readers:
            reader.join(timeout=TIMEOUT)
        return code


def start_and_press_until_the_stop_save(config: Path, workdir: Path) -> tuple[Run, int]:
    """A run with the earlier checkpoint complete, pressed once, and the stop's save under way: (run, its step)."""
    run = Run(config, workdir)
    run.wait_until(lambda: EARLIER in run.saved_steps(), f"the checkpoint of step {EARLIER}")
    run.press_ctrl_c()  # the first press: stop after this call, saving it
    step = run.wait_until(run.stop_save, "the stop's save to start")
    return run, int(step)  # type: ignore[call-overload]


def saving_line(step: int) -> str:
    return (
        f"saving step {step} before stopping; press Ctrl-C again to abandon this save (the run would resume "
        f"from step {EARLIER})"
    )


def rerun(config: Path, workdir: Path, stop_at: int) -> Run:
    """The same command (where it stops aside): it restores the newest complete checkpoint and trains to `stop_at`."""
    again = Run(config, workdir, f"--cfg.stop_after_steps={stop_at}")
    assert again.finish() == 0, "\n".join(again.stderr)
    assert not any("Traceback" in line for line in again.stderr), again.stderr
    return again


def test_a_second_ctrl_c_during_the_stop_save_finishes_it_and_the_rerun_resumes_from_it(config, tmp_path):
    run, step = start_and_press_until_the_stop_save(config, tmp_path)

    run.press_ctrl_c()

    assert run.finish() == 130
    assert run.stderr == [
        saving_line(step),
        f"interrupted (Ctrl-C) at step {step} of 10000000: the state is checkpointed; run the same command "
        "again to continue from here",
    ]
    assert run.saved_steps() == [EARLIER, step] and run.stop_save() is None
    again = rerun(config, tmp_path, step + 1)
    assert again.stdout[0] == f"resuming from step {step} ({tmp_path / 'checkpoints' / f'ckpt_{step}'})"
    assert again.saved_steps() == [EARLIER, step, step + 1]


ATTEMPTS = 3  # runs for the third press to land while the save is written (it lasts ~1 s; a busy machine may miss)


def test_a_third_ctrl_c_abandons_the_save_and_the_rerun_resumes_from_the_checkpoint_before(config, tmp_path):
    for attempt in range(ATTEMPTS):
        if third_press_abandons_the_save(config, tmp_path / f"attempt{attempt}"):
            return
    pytest.fail(f"in {ATTEMPTS} runs the save of the stop completed before the third Ctrl-C reached kd-train")


def third_press_abandons_the_save(config: Path, workdir: Path) -> bool:
    """Presses three times; False when the save completed before the third press (said so, checked here)."""
    run, step = start_and_press_until_the_stop_save(config, workdir)
    earlier = workdir / "checkpoints" / f"ckpt_{EARLIER}"
    files_before = {p: p.stat().st_mtime_ns for p in earlier.rglob("*")}

    run.press_ctrl_c()
    run.wait_until(lambda: saving_line(step) in run.stderr, "the line of the second press")
    run.press_ctrl_c()

    assert run.finish() == 130
    if not run.stderr[1].startswith("abandoned"):
        assert_the_late_press_says_the_step_is_saved(run, step)
        return False
    partial = f"ckpt_{step}.orbax-checkpoint-tmp"
    assert run.stderr == [
        saving_line(step),
        f"abandoned the save of step {step} (Ctrl-C): {partial} is left unfinished and removed at the next start",
        f"run the same command again to resume from step {EARLIER}",
    ]
    assert sorted(os.listdir(workdir / "checkpoints")) == [f"ckpt_{EARLIER}", partial]
    assert {p: p.stat().st_mtime_ns for p in earlier.rglob("*")} == files_before  # untouched

    again = rerun(config, workdir, EARLIER + 1)
    assert again.stdout[0] == f"resuming from step {EARLIER} ({earlier})"  # its digests checked on the way
    (warning,) = [line for line in again.stderr if line.strip()]  # the partial save, removed: one line
    assert warning.startswith(f"warning: Ignoring the incomplete checkpoint {workdir / 'checkpoints' / partial}:")
    assert sorted(os.listdir(workdir / "checkpoints")) == [f"ckpt_{EARLIER}", f"ckpt_{EARLIER + 1}"]
    return True


def assert_the_late_press_says_the_step_is_saved(run: Run, step: int) -> None:
    """A press after the save completed stops at once and says the step is saved (never "stopped at once"
    alone): before or after the line of the completed stop, whichever came first."""
    late = f"interrupted (Ctrl-C) after step {step} was saved; run the same command again to resume from it"
    checkpointed = (
        f"interrupted (Ctrl-C) at step {step} of 10000000: the state is checkpointed; run the same command "
        "again to continue from here"
    )
    assert run.stderr[0] == saving_line(step)
    assert set(run.stderr[1:]) <= {late, checkpointed} and run.stderr[1:], run.stderr
    assert run.saved_steps() == [EARLIER, step] and run.stop_save() is None
