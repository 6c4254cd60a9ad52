"""Fused steps: K updates per compiled call give the same bits as K single steps, and logs, evaluations and
checkpoints still happen at exactly the steps asked for."""

from __future__ import annotations

from pathlib import Path

import jax
import kd
import numpy as np
import pytest
import train_fixtures as lib
from kd.train import _plan, _runner
from kd.train._feed import fused_size
from kd.train._plan import time_capped
from precision import ON_CPU

FIELDS = dict(
    model=lib.BatchNormed(),  # batch statistics: a collection updated every step
    train_ds=lib.Regression(num_batches=5),
    num_train_steps=23,
    log_metrics_every=6,
    eval_ds=lib.Regression(num_epochs=1, seed=3),
    evals={"eval": kd.evals.Evaluator(run=kd.evals.EveryNSteps(7))},
)


def _run(tmp_path: Path | None = None, **fields):
    writer = kd.writers.InMemoryWriter()
    saving = {}
    if tmp_path is not None:
        saving = dict(
            workdir=str(tmp_path), checkpointer=kd.ckpts.Checkpointer(save_interval_steps=5, max_to_keep=None)
        )
    trainer = lib.make_trainer(**{**FIELDS, "writer": writer, **saving, **fields})
    state, _ = trainer.train()
    return trainer, state, writer


def _assert_same_bits(a, b) -> None:
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


WITH_METRICS = {"train_metrics": {"err": lib.MSE()}}  # logging steps then run on their own


@pytest.mark.parametrize("metrics", [{}, WITH_METRICS], ids=["losses-only", "metrics"])
@pytest.mark.parametrize("steps_per_call", [2, 4, 64, None])
def test_fused_steps_give_the_bits_of_single_steps(steps_per_call, metrics):
    _, single, _ = _run(steps_per_call=1, **metrics)
    _, fused, _ = _run(steps_per_call=steps_per_call, **metrics)

    assert int(fused.step) == int(single.step) == 23
    _assert_same_bits(
        (fused.params, fused.collections, fused.opt_state),
        (single.params, single.collections, single.opt_state),
    )


def test_the_fused_call_compiles_once_for_every_call_length():
    trainer, _, _ = _run(steps_per_call=4)  # calls of 1 to 4 updates, the logging steps' included

    traces = {variant: n for variant, n in trainer.trainstep.num_traces.items() if variant[0] != "eval"}
    assert traces == {("fused", False): 1}  # losses only: a logging step's come back from the fused call


def test_with_metrics_a_logging_step_is_its_own_call():
    trainer, _, writer = _run(steps_per_call=4, **WITH_METRICS)

    traces = {variant: n for variant, n in trainer.trainstep.num_traces.items() if variant[0] != "eval"}
    assert traces == {("fused", False): 1, (True, False): 1}
    assert [s for s, _ in writer.scalars["metrics/err"]] == [1, 6, 12, 18, 23]


def test_by_default_the_updates_between_logging_steps_are_one_call():
    trainer, _, _ = _run()  # log_metrics_every=6: the 5 updates after a logging step and it are one call

    assert kd.train.Trainer.__dataclass_fields__["steps_per_call"].default is None
    assert trainer.trainstep.num_traces[("fused", False)] == 1  # one size, compiled once
    assert trainer.trainstep.num_traces[(False, False)] == 1  # single steps: until fused ones are measured


@pytest.mark.parametrize(
    ("period", "bytes_per_batch", "inside", "expected"),
    [
        (100, 4096, True, 100),  # a logging step that logs only losses and the 99 before it
        (100, 4096, False, 99),  # a logging step with metrics runs on its own: the 99 before it
        (1000, 4096, True, 125),  # 8 calls of at most 128
        (1000, 4096, False, 125),  # 999 = 8 calls, the last of 124
        (1000, None, True, 125),  # row indices only: the same limit
        # Stacked batches within 8 MB on CPU, 64 MB on an accelerator:
        (100, 4 << 20, True, 2 if ON_CPU else 15),  # 4 MB batches: 2 per call (15: 7 calls of 100)
        (100, 16 << 20, True, 1 if ON_CPU else 4),  # too large to stack on CPU: one update per call
        (1, 4096, True, 1),  # every step logs
        (2, 4096, False, 1),
    ],
)
def test_the_size_splits_a_logging_period_evenly_within_the_limits(period, bytes_per_batch, inside, expected):
    sizes = [
        fused_size(asked, period=period, bytes_per_batch=bytes_per_batch, logging_step_inside=inside)
        for asked in (None, 7)
    ]
    assert sizes == [expected, 7]  # chosen, or as asked


def test_logs_and_evaluations_land_on_the_steps_asked_for():
    _, _, single = _run(steps_per_call=1)
    _, _, fused = _run(steps_per_call=4)

    assert [s for s, _ in fused.scalars["losses/l2"]] == [1, 6, 12, 18, 23]
    assert [s for s, _ in fused.scalars["eval/losses/l2"]] == [0, 7, 14, 21, 23]
    assert fused.scalars["losses/l2"] == single.scalars["losses/l2"]
    assert fused.scalars["eval/losses/l2"] == single.scalars["eval/losses/l2"]


def test_checkpoints_land_on_the_steps_asked_for(tmp_path):
    _run(tmp_path, steps_per_call=8)

    with kd.ckpts.Checkpointer(workdir=str(tmp_path), save_interval_steps=5, read_only=True) as ckpt:
        assert ckpt.all_steps() == (5, 10, 15, 20, 23)
        data_position = [
            ckpt.restore(lib.make_trainer(**FIELDS).state_specs, step=s).data_state for s in (5, 10)
        ]
    assert data_position == [{"position": 5}, {"position": 10}]


def test_a_resumed_fused_run_ends_as_an_uninterrupted_one(tmp_path):
    _, straight, _ = _run(steps_per_call=1)
    _run(tmp_path, stop_after_steps=11, steps_per_call=4)
    _, resumed, _ = _run(tmp_path, steps_per_call=4)

    _assert_same_bits((resumed.params, resumed.opt_state), (straight.params, straight.opt_state))


def test_a_nan_inside_a_fused_call_names_its_step():
    poisoned = lib.PoisonedRegression(num_batches=5, poisoned=(8,))  # the batch of step 9

    with pytest.raises(kd.train.NonFiniteLossError, match=r"^step 9: the loss is not finite"):
        _run(train_ds=poisoned, steps_per_call=16, evals={})


def test_skip_inside_a_fused_call_keeps_the_state_as_single_steps_do():
    poisoned = lib.PoisonedRegression(num_batches=5, poisoned=(3, 8))
    fields = dict(train_ds=poisoned, on_nonfinite_loss="skip", evals={})
    _, single, _ = _run(steps_per_call=1, **fields)
    _, fused, _ = _run(steps_per_call=16, **fields)

    _assert_same_bits((fused.params, fused.opt_state), (single.params, single.opt_state))


def test_the_progress_bar_counts_every_fused_step(capsys):
    lib.make_trainer(**FIELDS, progress=kd.train.Progress(enabled=True), steps_per_call=8).train()

    assert "23/23" in capsys.readouterr().err


@pytest.mark.parametrize("value", [0, -1, 2.5, True])
def test_steps_per_call_must_be_a_positive_int(value):
    with pytest.raises(kd.train.ConfigError, match=r"steps_per_call: expected None or an int"):
        lib.make_trainer(steps_per_call=value)


@pytest.mark.parametrize(
    ("seconds_per_update", "expected"),
    [(None, 100), (0.001, 100), (0.5, 4), (5.0, 1)],  # calls of about 2 s at most
)
def test_a_slow_update_gets_short_calls(seconds_per_update, expected):
    assert time_capped(100, seconds_per_update) == expected


def test_calls_shrink_once_a_logging_window_measured_the_updates(monkeypatch):
    monkeypatch.setattr(_plan, "CALL_SECONDS", 1e-9)  # as if every update took longer than a call may
    # Calls of the size the plan gives (steps_per_call: not measured against single steps).
    trainer = lib.make_trainer(**{**FIELDS, "num_train_steps": 14, "evals": {}, "steps_per_call": 6})
    calls, fused_steps = [], trainer.trainstep.fused_steps

    def recording(state, inputs, num_steps, **kwargs):
        calls.append((int(state.step) + 1, int(state.step) + num_steps))
        return fused_steps(state, inputs, num_steps, **kwargs)

    trainer.trainstep.fused_steps = recording
    trainer.train()

    # Steps 2-6: the first window, not yet measured (it starts after step 1). Then one update per call.
    assert calls == [(1, 1), (2, 6), *((s, s) for s in range(7, 15))]


# --- fused steps only where they win: measured once, kept for the run ------------------------------------


def _slowed(
    trainer, *, fused: float = 0.0, single: float = 0.0, unrolled: float = 0.0, record=None, rounds=()
):
    """Makes one way of running updates slower (a sleep per call), as a rolled loop of convolutions is on
    XLA:CPU; returns the list of fused calls made, as `(first step, last step)` (the unrolled ones go to
    `record`). The unrolled calls are fused calls of 8 here (the bits of single steps on any machine: whether
    a model's updates written out round like single ones depends on XLA and the CPU); a way in `rounds` ends
    each call an ulp off in every parameter, as a way that rounds differently would."""
    import time

    calls, trainstep = [], trainer.trainstep
    fused_steps, step = trainstep.fused_steps, trainstep.step

    def slow(seconds, into, way):
        def slowed(state, inputs, num_steps, **kwargs):
            into.append((int(state.step) + 1, int(state.step) + num_steps))
            time.sleep(seconds)
            state, losses = fused_steps(state, inputs, num_steps, **kwargs)
            if way in rounds:
                state = state.replace(params=jax.tree.map(lambda x: np.nextafter(x, np.inf), state.params))
            return state, losses

        return slowed

    def slow_single(*args, **kwargs):
        time.sleep(single)
        return step(*args, **kwargs)

    trainstep.fused_steps = slow(fused, calls, "fused")
    trainstep.unrolled_steps = slow(unrolled, [] if record is None else record, "unrolled")
    trainstep.step = slow_single
    return calls


PROBED = dict(num_train_steps=80, log_metrics_every=20, evals={})


def _single_steps_params():
    return lib.make_trainer(**{**FIELDS, **PROBED, "steps_per_call": 1}).train()[0].params


def test_the_default_measures_and_keeps_single_steps_where_fused_calls_are_slower(capsys):
    trainer = lib.make_trainer(**{**FIELDS, **PROBED})
    unrolled = []
    calls = _slowed(trainer, fused=0.3, unrolled=0.3, record=unrolled)

    state, _ = trainer.train()

    out = capsys.readouterr().out
    assert out.count("single steps (fused calls of 20 measured") == 1, out
    assert out.count(", unrolled calls of 8 measured") == 1, out  # the loop lost, so unrolled calls were timed too
    # Step 1 is a single step (step 1 waits for one compile only); the next call compiles a single step (2),
    # checks the loop (3-6: grouped on a copy of the state, one by one on the state itself), times 8 updates
    # each way (7-14 fused, 15-22 single); the loop lost, so it is timed once more (24-31): a moment's load on
    # the host does not decide.
    assert calls == [(3, 6), (7, 14), (24, 31)]
    # Then unrolled calls: one checked, 8 updates timed; none once single steps are chosen.
    assert unrolled[0] == (32, 35) and sum(last - first + 1 for first, last in unrolled) == 12, unrolled
    assert unrolled[-1][1] < 60, unrolled
    _assert_same_bits(state.params, _single_steps_params())


def test_a_loop_that_is_not_much_slower_is_not_replaced_by_unrolled_calls(capsys):
    trainer = lib.make_trainer(**{**FIELDS, **PROBED})
    unrolled = []
    _slowed(trainer, fused=0.001, record=unrolled)  # 8 fused updates a ms slower: not a loop that lost

    state, _ = trainer.train()

    assert unrolled == [], capsys.readouterr().out
    _assert_same_bits(state.params, _single_steps_params())  # fused or single: the choice changes speed, not bits


def test_where_the_loop_loses_unrolled_calls_are_kept_if_faster_than_single_steps(capsys):
    trainer = lib.make_trainer(**{**FIELDS, **PROBED})
    unrolled = []
    calls = _slowed(trainer, fused=0.8, single=0.02, record=unrolled)

    state, _ = trainer.train()

    out = capsys.readouterr().out
    assert out.count("unrolled steps: 8 per call (measured") == 1, out
    assert calls == [(3, 6), (7, 14), (24, 31)]  # the compiled loop: checked and timed (twice) only
    # After the measuring, every update before each logging step runs in unrolled calls of at most 8.
    assert [(first, last) for first, last in unrolled if first > 60] == [(61, 68), (69, 76), (77, 80)]
    _assert_same_bits(state.params, _single_steps_params())


def test_a_faster_way_that_rounds_differently_never_touches_the_run(capsys):
    # Fused and unrolled calls both faster than single steps, both an ulp off: each is checked once (on a
    # copy of the state), found out and never used; the run has single steps' bits and says why.
    trainer = lib.make_trainer(**{**FIELDS, **PROBED})
    unrolled = []
    calls = _slowed(trainer, single=0.02, record=unrolled, rounds=("fused", "unrolled"))

    state, _ = trainer.train()

    out = capsys.readouterr().out
    assert out.count(
        "single steps (fused calls of 20 round differently from single steps, unrolled calls of 8 round "
        "differently from single steps; Trainer.steps_per_call forces either)"
    ) == 1, out
    assert calls == [(3, 6)] and unrolled == [(7, 10)]  # the checks only
    _assert_same_bits(state.params, _single_steps_params())


def test_where_the_loop_rounds_differently_unrolled_calls_that_keep_the_bits_are_used(capsys):
    trainer = lib.make_trainer(**{**FIELDS, **PROBED})
    unrolled = []
    calls = _slowed(trainer, single=0.02, record=unrolled, rounds=("fused",))

    state, _ = trainer.train()

    out = capsys.readouterr().out
    assert out.count("unrolled steps: 8 per call (measured") == 1, out
    assert out.count("x single steps; a compiled loop of them round differently from single steps)\n") == 1, out
    assert calls == [(3, 6)]
    assert unrolled[0] == (7, 10) and unrolled[-1] == (77, 80), unrolled
    _assert_same_bits(state.params, _single_steps_params())


def test_without_room_for_a_copy_of_the_state_single_steps_are_kept_and_said(capsys, monkeypatch):
    monkeypatch.setattr(_runner, "_room_for_a_copy", lambda state: False)  # an accelerator's memory, nearly full
    trainer = lib.make_trainer(**{**FIELDS, **PROBED})
    unrolled = []
    calls = _slowed(trainer, single=0.02, record=unrolled)

    state, _ = trainer.train()

    assert capsys.readouterr().out.count(
        "single steps (fused calls of 20 not checked: no room on the device for a second copy of the state; "
        "Trainer.steps_per_call forces either)"
    ) == 1
    assert calls == unrolled == []
    _assert_same_bits(state.params, _single_steps_params())


def test_the_default_keeps_fused_calls_where_they_are_faster(capsys):
    trainer = lib.make_trainer(**{**FIELDS, **PROBED})
    calls = _slowed(trainer, single=0.02)

    state, _ = trainer.train()

    out = capsys.readouterr().out
    assert out.count("fused steps: 20 per call (measured") == 1, out
    assert calls[-2:] == [(41, 60), (61, 80)]  # after the measuring window, whole fused calls again
    _assert_same_bits(state.params, _single_steps_params())


def test_a_loop_slow_once_only_is_kept(capsys):
    # The loop's first timing caught a moment's load (3x slower than single steps); timed again, it is the
    # faster way: fused calls stay, and the run keeps the bits of single steps.
    trainer = lib.make_trainer(**{**FIELDS, **PROBED})
    unrolled = []
    _slowed(trainer, single=0.02, record=unrolled)
    real_fused = trainer.trainstep.fused_steps
    timed = []

    def loaded_once(*args, **kwargs):
        timed.append(1)
        if len(timed) == 2:  # the first timed call (the first is the check): 8 updates under load
            import time

            time.sleep(0.5)
        return real_fused(*args, **kwargs)

    trainer.trainstep.fused_steps = loaded_once
    state, _ = trainer.train()

    out = capsys.readouterr().out
    assert out.count("fused steps: 20 per call (measured") == 1, out
    assert unrolled == []
    _assert_same_bits(state.params, _single_steps_params())


def test_steps_per_call_forces_fused_calls_without_measuring(capsys):
    trainer = lib.make_trainer(**{**FIELDS, **PROBED, "steps_per_call": 20})
    calls = _slowed(trainer, fused=0.3)
    trainer.train()
    assert "measured" not in capsys.readouterr().out
    assert calls[-1] == (61, 80)


def test_the_check_copies_and_compares_every_kind_of_state_leaf_bit_for_bit():
    import jax.numpy as jnp

    state = {"key": jax.random.key(3), "keys": jax.random.split(jax.random.key(1), 4), "w": jnp.arange(3.0)}
    copy = _runner._copy(state)

    assert copy["key"].dtype == state["key"].dtype and copy["w"] is not state["w"]
    assert _runner._same_bits(state, copy)
    assert not _runner._same_bits(state, {**copy, "w": copy["w"].at[1].set(np.nextafter(np.float32(1), np.float32(2)))})
    assert not _runner._same_bits({"z": jnp.float32(0.0)}, {"z": jnp.float32(-0.0)})  # equal, not the same bits
