"""`kd._interrupts` in process: what a Ctrl-C that would stop at once does before, during and after a save.

The presses here are direct calls of `stop_now()` (what `kd.train`'s handler does); the real signals, processes
and orbax saves are in test_cli_double_interrupt.py. The abandoning press exits the process, so it is tested
there only.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kd import _interrupts


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with nothing saved, said or pending (the module keeps the main thread's state)."""
    for name, value in [("_saving", None), ("_starting", None), ("_latest", None), ("_depth", 0),
                        ("_announced", False), ("_pending", None)]:
        monkeypatch.setattr(_interrupts, name, value)


def a_save(folder: Path, step: int = 20, resumes_from: int | None = 10) -> _interrupts.Save:
    """A save of `step` under way: orbax's temporary folder of it exists."""
    partial = folder / f"ckpt_{step}.orbax-checkpoint-tmp"
    (folder / f"{partial.name}-1733500000").mkdir(parents=True)
    folder = str(folder / f"ckpt_{step}")
    return _interrupts.Save(step=step, resumes_from=resumes_from, partial=str(partial), folder=folder)


def complete(save: _interrupts.Save) -> None:
    """What orbax does last: the temporary folder becomes the step's."""
    Path(save.partial_folder()).rename(save.folder)


def saying(step: int, resumes_from: int) -> str:
    return (
        f"saving step {step} before stopping; press Ctrl-C again to abandon this save (the run would resume "
        f"from step {resumes_from})\n"
    )


def test_a_save_is_unfinished_until_its_folder_is_renamed_then_complete(tmp_path):
    save = a_save(tmp_path)
    assert save.unfinished() and not save.complete()
    complete(save)
    assert save.unfinished() is False and save.complete()
    assert save.resume_text() == "resume from step 10"
    assert _interrupts.Save(
        step=5, resumes_from=None, partial="gs://b/ckpt_5.orbax-checkpoint-tmp", folder="gs://b/ckpt_5"
    ).unfinished() is None


def test_without_a_save_a_press_stops_at_once_and_says_nothing(capsys):
    with pytest.raises(KeyboardInterrupt) as stopped:
        _interrupts.stop_now()
    assert not getattr(stopped.value, "_kd_announced", False)  # the command line words it
    assert capsys.readouterr().err == ""


def test_a_press_while_orbax_starts_the_save_says_so_and_waits_for_the_block_to_end(tmp_path, capsys):
    save = a_save(tmp_path)
    with _interrupts.writing(save):
        _interrupts.stop_now()  # inside: nothing raised while orbax runs
        assert capsys.readouterr().err == saying(20, 10)
        assert not _interrupts.pending()  # the save goes on; the stop is the loop's (it ends the block quietly)


def test_the_press_after_the_said_save_completed_says_the_step_is_saved(tmp_path, capsys):
    save = a_save(tmp_path)
    with _interrupts.writing(save):
        pass  # orbax returned; its threads write on
    with pytest.raises(KeyboardInterrupt) as stopped:
        _interrupts.stop_now()  # the save is in flight: said, and the stop goes on
    assert capsys.readouterr().err == saying(20, 10)
    assert getattr(stopped.value, "_kd_announced", False)

    complete(save)
    with pytest.raises(KeyboardInterrupt) as late:
        _interrupts.stop_now()  # nothing left to abandon
    assert capsys.readouterr().err == (
        "interrupted (Ctrl-C) after step 20 was saved; run the same command again to resume from it\n"
    )
    assert getattr(late.value, "_kd_announced", False)


def test_a_late_press_inside_a_wait_is_raised_as_the_wait_ends_still_saying_the_step_is_saved(tmp_path, capsys):
    save = a_save(tmp_path)
    with _interrupts.writing(save):
        _interrupts.stop_now()
    capsys.readouterr()
    complete(save)
    with pytest.raises(KeyboardInterrupt) as late, _interrupts.writing():  # e.g. the checkpointer's close
        _interrupts.stop_now()
        assert _interrupts.pending()
    assert getattr(late.value, "_kd_announced", False)
    assert "after step 20 was saved" in capsys.readouterr().err


def test_a_press_after_a_save_nobody_was_told_about_stops_at_once_as_before(tmp_path, capsys):
    save = a_save(tmp_path)
    with _interrupts.writing(save):
        pass
    complete(save)
    with pytest.raises(KeyboardInterrupt) as stopped:
        _interrupts.stop_now()
    assert not getattr(stopped.value, "_kd_announced", False) and capsys.readouterr().err == ""
