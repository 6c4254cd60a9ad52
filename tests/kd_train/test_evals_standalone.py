"""`kd.evals.evaluate_checkpoints` on a run whose saves are in flight, with and without following it, and
its `StandaloneLastCheckpoint` evaluators (real orbax checkpoints; a half-written save is a real checkpoint
folder with part of its files and no commit marker, as orbax leaves one while it writes)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import kd
import kd.cli
import konfig
import pytest
import train_fixtures as lib
from kd.evals import EVAL_METRICS_FILE, evaluate_checkpoints

_COMMIT_MARKER = "commit_success.txt"  # orbax's, written last into a save's folder


def _trainer(workdir: Path) -> kd.train.Trainer:
    """8 steps with checkpoints at 2, 4, 6 and 8 (all kept); `every` and `last` never run in training."""
    return lib.make_trainer(
        workdir=str(workdir),
        num_train_steps=8,
        checkpointer=kd.ckpts.Checkpointer(save_interval_steps=2, max_to_keep=None),
        evals={
            "every": kd.evals.Evaluator(
                run=kd.evals.StandaloneEveryCheckpoint(), ds=lib.Regression(num_epochs=1)
            ),
            "last": kd.evals.Evaluator(
                run=kd.evals.StandaloneLastCheckpoint(), ds=lib.Regression(num_epochs=1)
            ),
        },
    )


@pytest.fixture(scope="module")
def finished_folder(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("standalone") / "run"
    _trainer(workdir).train()
    return workdir


@pytest.fixture
def training(finished_folder, tmp_path) -> kd.train.Trainer:
    """A copy of the finished run as it was while training: no DONE yet (a test may add a save in flight)."""
    workdir = tmp_path / "run"
    shutil.copytree(finished_folder, workdir)
    (workdir / "DONE").unlink()
    return _trainer(workdir)


class HalfWrittenSave:
    """The checkpoint of `step` turned back into a save in flight: a folder without the state's array data
    nor the commit marker (restoring it fails), named `ckpt_<step>` (orbax writing in place, as on GCS) or
    orbax's temporary `ckpt_<step>.orbax-checkpoint-tmp-<n>`; `complete()` writes the rest, marker last."""

    def __init__(self, workdir: Path, step: int, *, form: str) -> None:
        checkpoints = Path(workdir) / "checkpoints"
        self.step, self.looks, self.read_while_incomplete = step, 0, 0
        self.final = checkpoints / f"ckpt_{step}"
        self.whole = Path(workdir).parent / f"whole_ckpt_{step}"
        shutil.move(self.final, self.whole)
        self.folder = (
            self.final
            if form == "no commit marker"
            else checkpoints / f"{self.final.name}.orbax-checkpoint-tmp-17"
        )
        # The metadata is there, the arrays' data (the OCDBT database of the `state` item) not yet.
        unwritten = shutil.ignore_patterns(_COMMIT_MARKER, "manifest.ocdbt", "ocdbt.process_*", "d")
        shutil.copytree(self.whole, self.folder, ignore=unwritten)
        assert (self.whole / _COMMIT_MARKER).exists() and (self.whole / "state" / "manifest.ocdbt").exists()

    def is_complete(self) -> bool:
        return (self.final / _COMMIT_MARKER).exists()

    def complete(self) -> None:
        shutil.copytree(
            self.whole, self.folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns(_COMMIT_MARKER)
        )
        shutil.copy(self.whole / _COMMIT_MARKER, self.folder / _COMMIT_MARKER)
        if self.folder != self.final:
            self.folder.rename(self.final)


@dataclasses.dataclass(frozen=True, kw_only=True)
class FinishingRun(kd.ckpts.Checkpointer):
    """The run's Checkpointer, seen by `save`: on the evaluator's second look at the checkpoint folder, the
    training's save in flight completes and the run writes DONE; each restore notes whether it was complete.
    """

    save: HalfWrittenSave

    def reload(self) -> None:
        self.save.looks += 1
        if self.save.looks == 2:
            self.save.complete()
            (self.save.final.parent.parent / "DONE").touch()
        super().reload()

    def restore(self, state=None, *, step=-1, **kwargs):
        if step == self.save.step and not self.save.is_complete():
            self.save.read_while_incomplete += 1
        return super().restore(state, step=step, **kwargs)


def _finishing(training: kd.train.Trainer, save: HalfWrittenSave) -> kd.train.Trainer:
    return dataclasses.replace(
        training, checkpointer=FinishingRun(save_interval_steps=2, max_to_keep=None, save=save)
    )


def _steps(writer: kd.writers.InMemoryWriter, name: str) -> list[int]:
    return [step for step, _ in writer.scalars.get(f"{name}/losses/l2", [])]


@pytest.mark.parametrize("form", ["no commit marker", "orbax tmp folder"])
def test_a_half_written_save_is_left_for_a_later_poll_and_evaluated_once_complete(training, form):
    save = HalfWrittenSave(Path(training.workdir), 8, form=form)
    writer = kd.writers.InMemoryWriter()

    values = evaluate_checkpoints(
        _finishing(training, save), evals=["every"], poll_seconds=0.01, writer=writer
    )

    assert _steps(writer, "every") == [2, 4, 6, 8]
    assert save.read_while_incomplete == 0  # step 8 was read on a later look, once its save was complete
    restored, _ = training.checkpointer.restore(training.state_specs, step=8)
    expected = training.evals["every"].evaluate(restored, 8)
    assert values[8] == {f"every/{k}": pytest.approx(float(v), rel=1e-6) for k, v in expected.items()}


def test_a_step_folder_still_without_its_commit_marker_when_the_run_is_done_is_skipped_with_a_note(
    training, capsys
):
    HalfWrittenSave(Path(training.workdir), 8, form="no commit marker")
    (Path(training.workdir) / "DONE").touch()  # the save never completed: its process died writing it

    values = evaluate_checkpoints(training, evals=["every"], writer=kd.writers.InMemoryWriter())

    assert sorted(values) == [2, 4, 6]
    assert "step 8: its checkpoint folder has no orbax commit marker" in capsys.readouterr().err


def test_without_follow_it_evaluates_the_complete_checkpoints_there_now_and_returns(training, capsys):
    HalfWrittenSave(Path(training.workdir), 8, form="no commit marker")
    writer = kd.writers.InMemoryWriter()

    values = evaluate_checkpoints(training, evals=["every"], follow=False, poll_seconds=3600, writer=writer)

    assert sorted(values) == _steps(writer, "every") == [2, 4, 6]  # no DONE, and it did not wait for one
    assert "step 8: its checkpoint folder has no orbax commit marker yet" in capsys.readouterr().err


def test_without_follow_a_last_checkpoint_evaluator_runs_only_once_the_run_is_done(training, capsys):
    before_done = kd.writers.InMemoryWriter()
    evaluate_checkpoints(training, follow=False, poll_seconds=3600, writer=before_done)
    assert "evaluator(s) 'last' take the last checkpoint once the run is done" in capsys.readouterr().err

    (Path(training.workdir) / "DONE").touch()
    after_done = kd.writers.InMemoryWriter()
    evaluate_checkpoints(training, follow=False, writer=after_done)

    assert (_steps(before_done, "every"), _steps(before_done, "last")) == ([2, 4, 6, 8], [])
    assert (_steps(after_done, "every"), _steps(after_done, "last")) == ([2, 4, 6, 8], [8])


def test_following_a_run_a_last_checkpoint_evaluator_takes_its_final_checkpoint_not_the_newest_seen_before(
    training,
):
    # 2, 4 and 6 are saved and 8 is being written when the evaluation starts; the run then finishes.
    save = HalfWrittenSave(Path(training.workdir), 8, form="orbax tmp folder")
    writer = kd.writers.InMemoryWriter()

    values = evaluate_checkpoints(_finishing(training, save), poll_seconds=0.01, writer=writer)

    assert (_steps(writer, "every"), _steps(writer, "last")) == ([2, 4, 6, 8], [8])
    assert values[8]["last/losses/l2"] == pytest.approx(values[8]["every/losses/l2"], rel=1e-6)


# ---------------------------------------------------------------------------------------------- the command

CONFIG_MODULE = """
import konfig

with konfig.imports():
    import kd
    import optax
    from flax import linen as nn


def get_config():
    cfg = kd.train.Trainer()
    cfg.num_train_steps = 8
    cfg.train_ds = kd.data.InMemoryPipeline(loader=kd.data.SyntheticRegression(num_examples=64), batch_size=8)
    cfg.eval_ds = kd.data.InMemoryPipeline(loader=kd.data.SyntheticRegression(num_examples=64, seed=1), batch_size=8)
    cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=1), keys="batch.x")
    cfg.optimizer = optax.adam(learning_rate=1e-2)
    cfg.train_losses = {"l2": kd.losses.L2(preds="preds", targets="batch.y")}
    cfg.checkpointer = kd.ckpts.Checkpointer(save_interval_steps=4, max_to_keep=None)
    cfg.evals = {"val": kd.evals.Evaluator(run=kd.evals.StandaloneEveryCheckpoint(), num_batches=2)}
    return cfg
"""


def test_eval_no_follow_evaluates_a_running_runs_checkpoints_and_exits_0_without_waiting(tmp_path, capsys):
    (tmp_path / "no_follow_cfg.py").write_text(CONFIG_MODULE)
    workdir = tmp_path / "run"
    konfig.resolve(
        konfig.build_config(str(tmp_path / "no_follow_cfg.py"), overrides={"workdir": str(workdir)})
    ).train()
    (workdir / "DONE").unlink()  # as the run is while it trains on past step 8

    # No --timeout_seconds: following, this would wait for DONE as long as it takes.
    code = kd.cli.main(["eval", f"--workdir={workdir}", "--no-follow", "--poll_seconds=3600"])

    out = capsys.readouterr().out
    assert code == 0
    rows = [json.loads(line) for line in (workdir / EVAL_METRICS_FILE).read_text().splitlines()]
    assert [row["step"] for row in rows] == [4, 8]
    assert "2 checkpoint(s) evaluated (steps 4, 8)" in out
