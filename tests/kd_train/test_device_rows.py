"""How batches reach the compiled calls. Examples kept on the device: an `InMemoryPipeline` run gathers its
calls' batches there (fused or single), with the bits, the logs and the saved data position of a run that
copies every batch from the host. Host batches of other shapes (an epoch's short last batch) run on their own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import kd
import numpy as np
import pytest
import train_fixtures as lib
from kd.train import _feed


def _examples(n: int = 60) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    return {"x": x, "y": (x @ np.array([[1.5], [-2.0]], np.float32)).astype(np.float32)}


def _pipeline(**fields) -> kd.data.InMemoryPipeline:
    examples = _examples(fields.pop("n", 60))
    return kd.data.InMemoryPipeline(loader=lambda: examples, batch_size=8, **fields)


def _run(tmp_path=None, **fields):
    saving = {}
    if tmp_path is not None:
        saving = dict(workdir=str(tmp_path), checkpointer=kd.ckpts.Checkpointer(save_interval_steps=10))
    trainer = lib.make_trainer(
        **{
            "num_train_steps": 25,
            "log_metrics_every": 10,
            "writer": kd.writers.InMemoryWriter(),
            **saving,
            **fields,
        }
    )
    state, _ = trainer.train()
    return trainer, state


def _assert_same_bits(a, b) -> None:
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("steps_per_call", [10, None], ids=["fused", "measured"])
@pytest.mark.parametrize("shuffle", [False, True], ids=["in-order", "shuffled"])
def test_batches_gathered_on_the_device_give_the_bits_of_host_batches(shuffle, steps_per_call):
    ds = _pipeline(shuffle=shuffle)  # 7 batches an epoch: the fused calls cross epochs
    host_trainer, host = _run(train_ds=_pipeline(shuffle=shuffle, on_device=False), steps_per_call=1)
    # Fused calls forced, or the default: checked against single steps (from blocks of rows), then measured.
    device_trainer, on_device = _run(train_ds=ds, steps_per_call=steps_per_call)

    assert device_trainer.trainstep.num_traces[("fused", True)] == 1  # the rows-gathering call
    assert ("fused", True) not in host_trainer.trainstep.num_traces
    _assert_same_bits((on_device.params, on_device.opt_state), (host.params, host.opt_state))
    assert device_trainer.writer.scalars["losses/l2"] == host_trainer.writer.scalars["losses/l2"]


def test_the_saved_data_position_is_the_one_host_batches_reach(tmp_path):
    _run(tmp_path / "device", train_ds=_pipeline(shuffle=True))
    _run(tmp_path / "host", train_ds=_pipeline(shuffle=True, on_device=False), steps_per_call=1)

    positions = {}
    for name in ("device", "host"):
        with kd.ckpts.Checkpointer(
            workdir=str(tmp_path / name), save_interval_steps=10, read_only=True
        ) as ckpt:
            specs = lib.make_trainer(train_ds=_pipeline(shuffle=True)).state_specs
            positions[name] = [ckpt.restore(specs, step=s).data_state for s in ckpt.all_steps()]
    assert positions["device"] == positions["host"]
    assert positions["device"][0] == {"epoch": 1, "index": 3}  # step 10: 10 batches of 7 an epoch


def test_a_resumed_run_gathers_from_where_it_stopped(tmp_path):
    _, straight = _run(train_ds=_pipeline(shuffle=True, on_device=False), steps_per_call=1)
    _run(tmp_path, train_ds=_pipeline(shuffle=True), stop_after_steps=13)
    _, resumed = _run(tmp_path, train_ds=_pipeline(shuffle=True))

    _assert_same_bits((resumed.params, resumed.opt_state), (straight.params, straight.opt_state))


def test_next_rows_names_the_batch_next_would_give_and_moves_alike():
    ds = _pipeline(shuffle=True, seed=3)
    by_rows, by_batches = iter(ds), iter(ds)

    assert isinstance(by_rows, kd.data.RowsIterator)
    for _ in range(9):  # past the end of the first epoch (7 batches)
        rows = by_rows.next_rows()
        batch = next(by_batches)
        np.testing.assert_array_equal(by_rows.examples["x"][rows], batch["x"])
        assert by_rows.get_state() == by_batches.get_state()


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        (dict(n=60, drop_remainder=False), "a smaller last batch"),
        (dict(n=56, drop_remainder=False), None),  # 56 = 7 x 8: every batch is full after all
        (dict(on_device=False), "the pipeline says no"),
    ],
)
def test_only_full_batches_are_gathered_on_the_device(fields, reason):  # and only when allowed
    data = iter(_pipeline(**fields))
    spec = lib.make_trainer().element_spec

    feed, size = _feed.make_feed(
        data, sharding=kd.sharding.ShardingStrategy(), element_spec=spec, steps_per_call=None, period=10
    )

    assert isinstance(feed, _feed.HostFeed if reason else _feed.DeviceRowsFeed)
    assert size == 10  # the logging period: losses only, so the logging step is the call's last


def test_examples_beyond_the_budget_stay_on_the_host(monkeypatch):
    data = iter(_pipeline())
    spec = lib.make_trainer().element_spec

    def feed():
        return _feed.make_feed(
            data, sharding=kd.sharding.ShardingStrategy(), element_spec=spec, steps_per_call=None, period=10
        )[0]

    assert isinstance(feed(), _feed.DeviceRowsFeed)
    monkeypatch.setattr(_feed, "CPU_RESIDENT_BYTES", _examples()["x"].nbytes)  # x alone fills it
    assert isinstance(feed(), _feed.HostFeed)


@pytest.mark.parametrize(("steps_per_call", "period"), [(1, 100), (None, 1)])
def test_one_update_per_call_gathers_its_batch_on_the_device_too(steps_per_call, period):
    feed, size = _feed.make_feed(
        iter(_pipeline()),
        sharding=kd.sharding.ShardingStrategy(),
        element_spec={},
        steps_per_call=steps_per_call,
        period=period,
    )

    assert isinstance(feed, _feed.DeviceRowsFeed)
    assert size == 1


def test_single_steps_on_device_rows_give_the_bits_of_host_batches():
    host_trainer, host = _run(train_ds=_pipeline(shuffle=True, on_device=False), steps_per_call=1)
    device_trainer, on_device = _run(train_ds=_pipeline(shuffle=True), steps_per_call=1)

    assert device_trainer.trainstep.num_traces[(False, False)] == 1  # traced once: the rows-gathering step
    assert "fused" not in {kind for kind, _ in device_trainer.trainstep.num_traces}
    _assert_same_bits((on_device.params, on_device.opt_state), (host.params, host.opt_state))
    assert device_trainer.writer.scalars["losses/l2"] == host_trainer.writer.scalars["losses/l2"]


def test_single_steps_past_a_rows_block_and_resumed_mid_window_keep_the_bits_of_host_batches(tmp_path):
    # 140 single updates logged every 100: the calls' rows blocks (ROWS_BLOCK = 128 slots, update s at
    # s % 128) wrap around; a run stopped at step 77 and resumed fills its next block from there.
    assert _feed.ROWS_BLOCK == 128
    fields = dict(num_train_steps=140, log_metrics_every=100, steps_per_call=1)
    _, host = _run(train_ds=_pipeline(shuffle=True, on_device=False), **fields)
    _, straight = _run(train_ds=_pipeline(shuffle=True), **fields)
    _run(tmp_path, train_ds=_pipeline(shuffle=True), stop_after_steps=77, **fields)
    _, resumed = _run(tmp_path, train_ds=_pipeline(shuffle=True), **fields)

    _assert_same_bits((straight.params, straight.opt_state), (host.params, host.opt_state))
    _assert_same_bits((resumed.params, resumed.opt_state), (host.params, host.opt_state))


def test_a_run_past_the_last_epoch_names_the_step():
    with pytest.raises(kd.train.ConfigError, match=r"ran out of batches after 14 steps"):
        _run(train_ds=_pipeline(num_epochs=2))  # 14 batches, 25 steps


@pytest.mark.parametrize("source", ["in-memory", "iterable"])
def test_a_short_last_batch_runs_on_its_own_with_the_bits_of_single_steps(source):
    if source == "in-memory":
        ds = _pipeline(n=60, drop_remainder=False)  # batches of 8, 8, ..., 4: host batches, stacked
    else:
        examples = _examples(60)
        ds = kd.data.FromIterable(
            iterable=[{k: v[i : i + 8] for k, v in examples.items()} for i in range(0, 60, 8)],
            num_epochs=None,
        )
    single_trainer, single = _run(train_ds=ds, steps_per_call=1)
    fused_trainer, fused = _run(train_ds=ds)

    assert fused_trainer.trainstep.num_traces[("fused", False)] == 1
    # The single step: for the full batches (run while fused and single steps are measured) and the short one.
    assert fused_trainer.trainstep.num_traces[(False, False)] == 2
    _assert_same_bits((fused.params, fused.opt_state), (single.params, single.opt_state))
    assert fused_trainer.writer.scalars["losses/l2"] == single_trainer.writer.scalars["losses/l2"]


def test_a_profile_traces_exactly_the_steps_asked_for(tmp_path):
    trainer = lib.make_trainer(
        workdir=str(tmp_path),
        train_ds=_pipeline(),
        num_train_steps=40,
        log_metrics_every=20,
        profiler=kd.train.Profiler(first_step=10, num_steps=5),
        steps_per_call=20,  # the default's size, not measured against single steps: the calls the plan makes
    )
    calls, fused_steps = [], trainer.trainstep.fused_steps

    def recording(state, inputs, num_steps, **kwargs):
        calls.append((int(state.step) + 1, int(state.step) + num_steps))  # the steps the call runs
        return fused_steps(state, inputs, num_steps, **kwargs)

    trainer.trainstep.fused_steps = recording
    trainer.train()

    assert calls == [(1, 1), (2, 10), (11, 15), (16, 20), (21, 40)]
    assert any((tmp_path / "profile").rglob("*.xplane.pb"))


_TWO_DEVICES = """
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import jax, kd
from kd.train import _feed
import train_fixtures as lib  # on PYTHONPATH

spec = lib.make_trainer().element_spec
sizes = {}
for name, batch in [("named", kd.sharding.FIRST_DIM), ("single", jax.sharding.SingleDeviceSharding(jax.devices()[0]))]:
    strategy = kd.sharding.ShardingStrategy(batch=batch)
    feed, size = _feed.make_feed(iter(lib.Regression()), sharding=strategy, element_spec=spec, steps_per_call=None, period=10)
    sizes[name] = [type(feed).__name__, size, _feed.stacks_batches(strategy)]
print(json.dumps(sizes))
"""


def test_on_two_devices_a_batch_sharding_that_cannot_stack_runs_one_update_per_call():
    path = os.pathsep.join([str(Path(lib.__file__).parent), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-c", _TWO_DEVICES],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.splitlines()[-1]) == {
        "named": ["HostFeed", 10, True],  # stacked batches, split like one batch
        "single": ["HostFeed", 1, False],  # not a NamedSharding: no stack, no error
    }


def test_init_follows_the_batch_shapes_it_is_given():
    step = lib.make_trainer().trainstep
    narrow = {"x": jax.ShapeDtypeStruct((8, 2), np.float32), "y": jax.ShapeDtypeStruct((8, 1), np.float32)}
    wide = {"x": jax.ShapeDtypeStruct((8, 5), np.float32), "y": jax.ShapeDtypeStruct((8, 1), np.float32)}

    kernels = [jax.tree.leaves(step.init(spec).params)[1].shape for spec in (narrow, wide, narrow)]

    assert kernels[0] == kernels[2] != kernels[1]
    assert kernels[1][0] == 5  # the first Dense reads 5 features
