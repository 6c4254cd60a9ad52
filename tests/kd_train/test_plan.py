"""The plan of a run (`kd.train._plan`): pure Python, checked exhaustively on random cadences."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kd.train._plan import Cadence, Call, plan, time_capped


@st.composite
def runs(draw):
    last_step = draw(st.integers(1, 400))
    stop = draw(st.integers(0, last_step))
    start = draw(st.integers(0, stop))
    evals = {
        name: (draw(st.integers(1, 60)), draw(st.integers(0, 5)))
        for name in draw(st.lists(st.sampled_from(["val", "test", "hard"]), unique=True, max_size=3))
    }
    save_every = draw(st.one_of(st.none(), st.integers(1, 90)))
    profile = draw(
        st.one_of(
            st.none(),
            st.tuples(st.integers(0, 50), st.integers(1, 10)),
            st.tuples(st.integers(0, 50), st.integers(1, 10), st.integers(11, 60)),  # every_steps > length
        )
    )
    cadence = Cadence(
        last_step=last_step,
        log_metrics_every=draw(st.integers(1, 120)),
        log_summaries_every=draw(st.one_of(st.none(), st.integers(1, 150))),
        evals_due=lambda s: tuple(
            n for n, (every, offset) in evals.items() if s >= offset and (s - offset) % every == 0
        ),
        save_due=lambda s: save_every is not None and s % save_every == 0,
        profile=profile,
        metrics_alone=draw(st.booleans()),
    )
    call_size = draw(st.integers(1, 130))
    cap = draw(st.one_of(st.none(), st.integers(1, 40)))
    return start, stop, cadence, call_size, cap


def _every(step: int, every: int | None, last_step: int) -> bool:
    """Written here again, apart from the plan: the first step, the last and every multiple log."""
    return every is not None and (step == 1 or step == last_step or step % every == 0)


def _due(cadence: Cadence, step: int) -> bool:
    """Anything due at `step`, from the cadence's settings (not from its own `is_boundary`)."""
    profile = cadence.profile
    return (
        _every(step, cadence.log_metrics_every, cadence.last_step)
        or _every(step, cadence.log_summaries_every, cadence.last_step)
        or bool(cadence.evals_due(step))
        or cadence.save_due(step)
        or step in _trace_starts(profile, step + 1)
        or (profile is not None and step - profile[1] in _trace_starts(profile, step + 1))
    )


def _trace_starts(profile: tuple[int, ...] | None, until: int) -> list[int]:
    """The steps after which a trace starts, below `until`: the first, then every `every_steps` (written apart
    from the plan)."""
    if profile is None:
        return []
    first, every = profile[0], (profile[2] if len(profile) > 2 else None)
    return list(range(first, until, every)) if every else [first] if first < until else []


@settings(max_examples=400, deadline=None)
@given(run=runs())
def test_the_calls_cover_every_step_once_and_end_at_every_due_step(run):
    start, stop, cadence, call_size, cap = run
    calls = list(
        plan(
            start=start,
            stop=stop,
            cadence=cadence,
            call_size=call_size,
            limit=None if cap is None else (lambda: cap),
        )
    )
    updating = [c for c in calls if c.updates]
    # Every step from start + 1 to stop is run by exactly one call, in order.
    steps = [s for c in updating for s in range(c.start + 1, c.end + 1)]
    assert steps == list(range(start + 1, stop + 1))
    assert all(a.end == b.start for a, b in itertools.pairwise(updating))
    ends = {c.end for c in updating}
    size = call_size if cap is None else min(call_size, cap)
    for call in updating:
        # No call passes a step where anything is due, nor its size; a shorter call ends at one or at stop.
        assert all(not _due(cadence, s) for s in range(call.start + 1, call.end))
        assert 1 <= call.updates <= size
        assert call.updates == size or call.end == stop or _due(cadence, call.end)
        # What is due after it is what the cadence says of its last step.
        assert call.log_metrics == _every(call.end, cadence.log_metrics_every, cadence.last_step)
        assert call.log_summaries == _every(call.end, cadence.log_summaries_every, cadence.last_step)
        assert call.evals == cadence.evals_due(call.end)
        assert call.save == (call.end == stop or cadence.save_due(call.end))
        assert call.last_alone == (
            call_size == 1 or call.log_summaries or (call.log_metrics and cadence.metrics_alone)
        )
        assert call.fused_updates == call.updates - call.last_alone
    for s in range(start + 1, stop + 1):
        if _due(cadence, s):
            assert s in ends, f"step {s} is due but ends no call"
    # A trace starts at the call after the profile's first step and stops at the call ending its last one.
    if cadence.profile is not None:
        length = cadence.profile[1]
        starts = _trace_starts(cadence.profile, stop)
        assert [c.start for c in updating if c.trace_start] == [s for s in starts if start <= s]
        assert [c.end for c in updating if c.trace_stop] == [
            s + length for s in starts if start < s + length <= stop
        ]
    # Step 0's evaluations come first in a fresh run, as a call of no update.
    zero = [c for c in calls if not c.updates]
    assert zero == (
        [Call(start=0, updates=0, evals=cadence.evals_due(0))] if start == 0 and cadence.evals_due(0) else []
    )
    assert not zero or calls[0] is zero[0]


def test_a_logging_period_is_one_fused_call_and_a_metrics_step_runs_alone():
    cadence = Cadence(
        last_step=300,
        log_metrics_every=100,
        log_summaries_every=None,
        evals_due=lambda s: (),
        save_due=lambda s: False,
    )
    calls = [
        (c.start, c.updates, c.last_alone) for c in plan(start=0, stop=300, cadence=cadence, call_size=100)
    ]
    assert calls == [(0, 1, False), (1, 99, False), (100, 100, False), (200, 100, False)]
    alone = Cadence(**{**cadence.__dict__, "metrics_alone": True})
    calls = [
        (c.start, c.updates, c.last_alone) for c in plan(start=0, stop=300, cadence=alone, call_size=100)
    ]
    assert calls == [(0, 1, True), (1, 99, True), (100, 100, True), (200, 100, True)]


def test_the_limit_is_read_before_each_call():
    limits = iter([5, 3, 100])
    cadence = Cadence(
        last_step=20,
        log_metrics_every=100,
        log_summaries_every=None,
        evals_due=lambda s: (),
        save_due=lambda s: False,
    )
    calls = [
        c.updates for c in plan(start=1, stop=20, cadence=cadence, call_size=50, limit=lambda: next(limits))
    ]
    assert calls == [5, 3, 11]


def test_time_capped_keeps_a_call_near_two_seconds():
    assert time_capped(100, None) == 100
    assert time_capped(100, 0.001) == 100
    assert time_capped(100, 0.1) == 20
    assert time_capped(100, 5.0) == 1


def test_kauldrons_profiler_fields_set_ours_and_every_steps_repeats_the_trace():
    import kd

    profiler = kd.inspect.Profiler(first_profile=3, num_profile_steps=2, every_steps=10, all_host=True)
    assert (profiler.first_step, profiler.num_steps, profiler.every_steps) == (3, 2, 10)
    cadence = Cadence(
        last_step=40,
        log_metrics_every=100,
        log_summaries_every=None,
        evals_due=lambda s: (),
        save_due=lambda s: False,
        profile=(profiler.first_step, profiler.num_steps, profiler.every_steps),
        metrics_alone=False,
    )
    calls = [c for c in plan(start=0, stop=40, cadence=cadence, call_size=64) if c.updates]
    assert [(c.start, c.end) for c in calls if c.trace_start] == [(3, 5), (13, 15), (23, 25), (33, 35)]
    assert [c.end for c in calls if c.trace_stop] == [5, 15, 25, 35]
    assert [s for s in range(41) if profiler.bounds(s)] == [3, 5, 13, 15, 23, 25, 33, 35]
    with pytest.raises(ValueError, match=r"every_steps: expected None or an int > num_steps \(2\)"):
        kd.inspect.Profiler(num_profile_steps=2, every_steps=2)


def test_a_replaced_profiler_keeps_the_new_first_step_over_kauldrons_alias():
    import dataclasses

    import kd

    profiler = kd.inspect.Profiler(first_profile=3, num_profile_steps=2)
    assert dataclasses.replace(profiler, first_step=20).first_step == 20
    assert kd.inspect.Profiler(all_host=False).all_host is False


def test_a_run_restored_from_step_0_does_not_evaluate_step_0_again():
    # Its step-0 evaluations ran before that checkpoint was saved: their rows are in the logs already.
    cadence = Cadence(
        last_step=10,
        log_metrics_every=5,
        log_summaries_every=None,
        evals_due=lambda s: ("val",) if s % 5 == 0 else (),
        save_due=lambda s: False,
    )
    fresh = list(plan(start=0, stop=10, cadence=cadence, call_size=5))
    restored = list(plan(start=0, stop=10, cadence=cadence, call_size=5, fresh=False))
    assert fresh[0] == Call(start=0, updates=0, evals=("val",))
    assert restored == fresh[1:]
