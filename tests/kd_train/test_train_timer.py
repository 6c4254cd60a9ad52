"""kd.train.PerformanceTimer: Kauldron's training-speed clock (`log_stats` arithmetic, time left out of the
speed) and its checkpoint round trip (the hours trained carry over; step and batch sizes are the template's).

Real `time.sleep`s of a few milliseconds; only relations that hold however slow the machine is are asserted.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import NamedTuple

import jax.numpy as jnp
import kd
import numpy as np
import pytest
from kd import ckpts

_NAP = 0.01


def _timer(*, step: int = 0, hours: float = 0.0, per_device: int = 4, global_: int = 32):
    return kd.train.PerformanceTimer(
        initial_step_num=step,
        initial_training_time_hours=hours,
        per_device_batch_size=per_device,
        global_batch_size=global_,
    )


def _seconds_since_last_log(timer: kd.train.PerformanceTimer) -> float:
    return timer.time_when_finished_last_step - timer.time_when_last_logged


# ---------------------------------------------------------------------------------------------- log_stats


def test_log_stats_gives_the_steps_since_the_last_call_over_the_seconds_between_finished_steps():
    timer = _timer(step=10)
    time.sleep(_NAP)
    timer.finish_step()
    seconds = _seconds_since_last_log(timer)

    stats = timer.log_stats(step_num=25)

    assert seconds > 0
    assert stats["steps_per_sec"] == pytest.approx(15 / seconds)


def test_the_next_log_stats_counts_from_the_step_and_time_of_the_previous_one():
    timer = _timer(step=0)
    time.sleep(_NAP)
    timer.finish_step()
    timer.log_stats(step_num=10)
    time.sleep(_NAP)
    timer.finish_step()
    seconds = _seconds_since_last_log(timer)

    stats = timer.log_stats(step_num=16)

    assert stats["steps_per_sec"] == pytest.approx(6 / seconds)


def test_data_points_per_second_are_the_steps_per_second_times_each_batch_size():
    timer = _timer(per_device=4, global_=32)
    time.sleep(_NAP)
    timer.finish_step()

    stats = timer.log_stats(step_num=5)

    assert stats["data_points_per_sec_per_device"] == pytest.approx(stats["steps_per_sec"] * 4)
    assert stats["data_points_per_sec_global"] == pytest.approx(stats["steps_per_sec"] * 32)


def test_log_stats_without_a_finished_step_since_the_last_call_gives_nan_steps_per_sec():
    timer = _timer()
    time.sleep(_NAP)
    timer.finish_step()
    timer.log_stats(step_num=3)

    stats = timer.log_stats(step_num=3)

    assert math.isnan(stats["steps_per_sec"])
    assert math.isnan(stats["data_points_per_sec_global"])


def test_time_inside_exclude_from_step_stats_is_left_out_of_the_measured_seconds():
    before = time.monotonic()
    timer = _timer()
    time.sleep(_NAP)  # counted
    with timer.exclude_from_step_stats():
        time.sleep(2 * _NAP)  # left out
    timer.finish_step()
    after = time.monotonic()

    measured = 10 / timer.log_stats(step_num=10)["steps_per_sec"]

    assert measured >= _NAP * 0.999
    assert measured <= (after - before) - 2 * _NAP * 0.999


def test_excluded_time_is_left_out_of_the_next_log_stats_only():
    timer = _timer()
    with timer.exclude_from_step_stats():
        time.sleep(_NAP)
    time.sleep(_NAP)
    timer.finish_step()
    timer.log_stats(step_num=1)
    time.sleep(_NAP)
    timer.finish_step()
    seconds = _seconds_since_last_log(timer)

    stats = timer.log_stats(step_num=2)

    assert stats["steps_per_sec"] == pytest.approx(1 / seconds)  # nothing left out this time


def test_exclude_from_step_stats_counts_the_time_even_when_its_body_raises():
    timer = _timer()
    with pytest.raises(RuntimeError), timer.exclude_from_step_stats():
        time.sleep(_NAP)
        raise RuntimeError("an evaluation failed")

    assert timer.skip_time_steps >= _NAP * 0.999


def test_exclude_from_total_time_records_the_time_and_leaves_the_step_speed_alone():
    timer = _timer()
    with timer.exclude_from_total_time():
        time.sleep(_NAP)
    time.sleep(_NAP)
    timer.finish_step()
    seconds = _seconds_since_last_log(timer)

    stats = timer.log_stats(step_num=4)

    assert timer.skip_time_total >= _NAP * 0.999
    assert stats["steps_per_sec"] == pytest.approx(4 / seconds)


def test_total_training_time_counts_on_from_the_initial_hours():
    before = time.monotonic()
    timer = _timer(hours=2.5)
    time.sleep(_NAP)
    timer.finish_step()
    after = time.monotonic()

    hours = timer.log_stats(step_num=1)["total_training_time_hours"]

    assert hours >= 2.5 + _NAP * 0.999 / 3600
    assert hours <= 2.5 + (after - before) / 3600
    assert hours == timer.total_training_time_hours


# ---------------------------------------------------------------------------------------------- checkpoints


def _checkpointer(workdir: Path) -> ckpts.Checkpointer:
    return kd.ckpts.Checkpointer(workdir=str(workdir), save_interval_steps=1)


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, float]:
    """A timer that had trained 3 hours (plus a few milliseconds), saved at step 1: `(workdir, its hours)`."""
    workdir = tmp_path_factory.mktemp("timer")
    timer = _timer(step=1, hours=3.0, per_device=4, global_=32)
    time.sleep(_NAP)
    timer.finish_step()
    with _checkpointer(workdir) as ckpt:
        assert ckpt.save(timer, step=1)
    return workdir, timer.total_training_time_hours


def test_a_restored_timer_carries_the_hours_trained_over(saved):
    workdir, hours = saved
    with _checkpointer(workdir) as ckpt:  # a new process
        restored = ckpt.restore(_timer(hours=0.0), step=1)

    assert isinstance(restored, kd.train.PerformanceTimer)
    assert restored.total_training_time_hours == pytest.approx(hours, abs=1e-9)


def test_a_restored_timer_keeps_the_step_and_batch_sizes_of_the_template(saved):
    workdir, _ = saved
    with _checkpointer(workdir) as ckpt:
        restored = ckpt.restore(_timer(step=7, per_device=2, global_=16), step=1)

    assert restored.step_num_when_last_logged == 7
    assert restored.per_device_batch_size == 2
    assert restored.global_batch_size == 16


def test_a_restored_timer_counts_on_from_the_saved_hours(saved):
    workdir, hours = saved
    with _checkpointer(workdir) as ckpt:
        restored = ckpt.restore(_timer(), step=1)
    time.sleep(_NAP)
    restored.finish_step()

    assert restored.total_training_time_hours >= hours + _NAP * 0.999 / 3600


def test_the_checkpoint_holds_only_the_hours_as_json(saved):
    workdir, hours = saved
    written = json.loads((workdir / "checkpoints" / "ckpt_1" / "item" / "metadata").read_text())

    assert written == {"training_time_hours": pytest.approx(hours)}


class _WithTimer(NamedTuple):
    state: dict
    timer: kd.train.PerformanceTimer
    DEFAULT_ITEM = "state"


class _StateAndTimer(_WithTimer, ckpts.items.TopLevelCheckpointItem):
    pass


def test_a_timer_beside_the_state_in_a_top_level_item_round_trips_with_it(tmp_path):
    timer = _timer(hours=1.5)
    with _checkpointer(tmp_path) as ckpt:
        ckpt.save(_StateAndTimer({"w": jnp.ones((3,))}, timer), step=1)
    with _checkpointer(tmp_path) as ckpt:
        state, restored = ckpt.restore(_StateAndTimer({"w": jnp.zeros((3,))}, _timer(global_=8)), step=1)

    np.testing.assert_array_equal(np.asarray(state["w"]), np.ones((3,)))
    assert restored.total_training_time_hours == pytest.approx(timer.total_training_time_hours, abs=1e-9)
    assert restored.global_batch_size == 8
