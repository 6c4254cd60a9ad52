"""The loop reads device values on the host only on logging steps (no host sync on the others).

`jax.transfer_guard` does not guard the CPU backend, so the test watches the one place every read of a
device array's value goes through (`ArrayImpl._value`: `float()`, `int()`, `np.asarray`, `jax.device_get`).
"""

from __future__ import annotations

import dataclasses

import pytest
import train_fixtures as lib
from jax._src import array as jax_array


@dataclasses.dataclass
class _Counting:
    """Wraps a data set: `drawn` is how many batches the loop has taken."""

    ds: lib.Regression
    drawn: int = 0

    @property
    def element_spec(self):
        return self.ds.element_spec

    def __iter__(self):
        for index in range(10**6):
            self.drawn += 1
            yield self.ds.batch(index)


def test_device_values_are_read_only_on_logging_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _Counting(lib.Regression())
    trainer = lib.make_trainer(
        train_ds=data,
        num_train_steps=12,
        log_metrics_every=5,
        train_metrics={"mean": lib.Mean(values="preds")},
    )
    trainer.check()  # tracing, compiling and the first init happen before we watch
    trainer.trainstep.step(trainer.init_state(), trainer.sharding.put_batch(lib.Regression().batch(0)))
    reads: list[int] = []
    value = jax_array.ArrayImpl._value

    def watched(self):
        reads.append(data.drawn)
        return value.fget(self)

    monkeypatch.setattr(jax_array.ArrayImpl, "_value", property(watched))
    state, _ = trainer.train()
    # Batch 0 drawn: the starting step is read once; then only steps 1, 5, 10 and 12 (the last) log.
    assert set(reads) == {0, 1, 5, 10, 12}
    assert int(state.step) == 12
