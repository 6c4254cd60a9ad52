"""`PerformanceTimer`: Kauldron's training-speed clock, a checkpoint item that carries the hours trained.

    timer = kd.train.PerformanceTimer(initial_step_num=0, initial_training_time_hours=0.0,
                                      per_device_batch_size=32, global_batch_size=256)
    ...; timer.finish_step()
    stats = timer.log_stats(step_num=100)  # steps_per_sec, data_points_per_sec_*, total_training_time_hours
    ckpt.save(timer, step=100)  # saved as JSON: only the hours trained so far
    timer = ckpt.restore(timer, step=100)  # a new timer, counting on from those hours

kd's Trainer measures its own speed (`perf/steps_per_sec` in the logs, compile time left out); this class
is for code written against Kauldron's.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping

from kd.ckpts import items

TYPE_CHECKING = False
if TYPE_CHECKING:
    import orbax.checkpoint as ocp

_SECONDS_PER_HOUR = 3600.0


class PerformanceTimer(items.CheckpointItem):
    """Steps per second between two `log_stats` calls, and the hours trained over restarts.

    Usage: `timer.finish_step()` after each step; `timer.log_stats(step)` on logging steps.
    Time spent inside `with timer.exclude_from_step_stats():` (evaluations, checkpoints) is left out of
    the next `steps_per_sec`; `exclude_from_total_time()` only records the time it took (`skip_time_total`),
    as Kauldron's does.
    """

    def __init__(
        self,
        initial_step_num: int,
        initial_training_time_hours: float,
        per_device_batch_size: int,
        global_batch_size: int,
    ) -> None:
        self.step_num_when_last_logged = initial_step_num
        self.initial_training_time_hours = initial_training_time_hours
        self.per_device_batch_size = per_device_batch_size
        self.global_batch_size = global_batch_size
        now = time.monotonic()
        self.time_when_finished_last_step = now
        self.time_when_last_logged = now
        self.time_at_the_start_of_training = now - initial_training_time_hours * _SECONDS_PER_HOUR
        self.skip_time_steps = 0.0
        self.skip_time_total = 0.0

    def finish_step(self) -> None:
        """Marks the end of a training step."""
        self.time_when_finished_last_step = time.monotonic()

    @property
    def total_training_time_hours(self) -> float:
        """Hours from the (restored) start of training to the end of the last step."""
        return (self.time_when_finished_last_step - self.time_at_the_start_of_training) / _SECONDS_PER_HOUR

    def log_stats(self, step_num: int) -> dict[str, float]:
        """The speed since the previous call: `steps_per_sec`, `data_points_per_sec_per_device`,
        `data_points_per_sec_global`, and `total_training_time_hours`."""
        seconds = self.time_when_finished_last_step - self.time_when_last_logged - self.skip_time_steps
        steps = step_num - self.step_num_when_last_logged
        self.skip_time_steps = 0.0
        self.step_num_when_last_logged = step_num
        self.time_when_last_logged = self.time_when_finished_last_step
        steps_per_sec = steps / seconds if seconds > 0 else float("nan")
        return {
            "steps_per_sec": steps_per_sec,
            "data_points_per_sec_per_device": steps_per_sec * self.per_device_batch_size,
            "data_points_per_sec_global": steps_per_sec * self.global_batch_size,
            "total_training_time_hours": self.total_training_time_hours,
        }

    @contextlib.contextmanager
    def exclude_from_step_stats(self) -> Iterator[None]:
        """The time inside is left out of the next `log_stats` speed."""
        start = time.monotonic()
        try:
            yield
        finally:
            self.skip_time_steps += time.monotonic() - start

    @contextlib.contextmanager
    def exclude_from_total_time(self) -> Iterator[None]:
        """The time inside is recorded in `skip_time_total`."""
        start = time.monotonic()
        try:
            yield
        finally:
            self.skip_time_total += time.monotonic() - start

    # A checkpoint holds only the hours trained; a restored timer keeps this one's step and batch sizes.

    def __kd_ocp_handlers__(self) -> ocp.JsonCheckpointHandler:
        return items._ocp().JsonCheckpointHandler()

    def __kd_ocp_save_args__(self) -> ocp.args.JsonSave:
        return items._ocp().args.JsonSave({"training_time_hours": self.total_training_time_hours})

    def __kd_ocp_restore_args__(self) -> ocp.args.JsonRestore:
        return items._ocp().args.JsonRestore()

    def __kd_ocp_restore_post__(self, value: Mapping[str, float]) -> PerformanceTimer:
        return type(self)(
            initial_step_num=self.step_num_when_last_logged,
            initial_training_time_hours=value["training_time_hours"],
            per_device_batch_size=self.per_device_batch_size,
            global_batch_size=self.global_batch_size,
        )
