"""`CallRunner`: runs one planned call on the state — the one place that knows fused vs single calls and
host vs device-row feeds.

    runner = CallRunner(trainstep, feed, size)
    state, out = runner.run(state, call)   # call: a kd.train._plan.Call
    out.aux         # the last update's AuxState when the call logs (losses, and metrics / summaries)
    out.losses      # every update's loss states, for the non-finite watch

A call's fused part goes through `TrainStep.fused_steps` in groups the feed can stack (a batch of other
shapes, like an epoch's short last batch, runs on its own); a lone last update (`call.last_alone`) is a
`TrainStep.step` that returns what the step logs.

Fused steps only where they win and keep the bits (`measure=True`, the default `steps_per_call=None`): a
compiled loop of updates is not always faster than the updates one by one (on XLA:CPU a rolled loop of
convolution steps runs 7-10x slower than single jitted steps: a `while` body loses the fast path), and not
always the same arithmetic (that CNN's loop rounds an update an ulp otherwise on XLA:CPU). Until measured,
updates run one by one (step 1 waits for one compile only, the single step's). The first grouped call is a
check: `CHECKED_UPDATES` updates run grouped on a copy of the state and one by one on the state itself, from
the same batches; a way whose parameters differ in any bit is never used by the run (it goes on from the
single updates' state), so a run's numbers never depend on a timing: they are those of `steps_per_call=1`,
and a run resumed after a kill computes what an uninterrupted one does. Then a way that kept the bits is
timed: half the rest runs that way and the other half single; once each way has `PROBE_UPDATES` timed
updates (one call of 100, or several short ones), the faster is kept for the rest of the run, said once
(`fused steps: 100 per call (measured 1.9x single steps)`). Where the loop loses (by `LOOP_LOST`) or rounds
otherwise, a third way is checked and timed the same way: calls of `UNROLLED_UPDATES` updates written out one
after the other (`TrainStep.unrolled_steps`: no loop, so the convolutions keep their fast path; that CNN runs
them 1.3x single steps, with single steps' bits). The check copies the state (on an accelerator only where
the device has room for a second copy; else single steps are kept, said so: a state that large makes each
update long, where fused calls gain little). `benchmarks/update_ways_bits.py` prints which ways keep the bits
per model and backend.
"""

from __future__ import annotations

import dataclasses
import time

import jax
import numpy as np

from kd._phase import during
from kd._terminal import print_line
from kd.runtime import AuxState, TrainState
from kd.train._feed import ROWS_BLOCK as ROWS_PER_BLOCK
from kd.train._feed import device_memory
from kd.train._plan import Call
from kd.train._step import TrainStep
from kd.train._stop import StopRequest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd._interfaces import PyTree
    from kd.train._feed import DeviceRowsFeed, HostFeed
    from kd.train._types import LoggedValue, UpdateLosses

# Timed updates each way (fused, single) before the faster is chosen.
PROBE_UPDATES = 8
# Updates of the first call of a grouped way, run on a copy of the state and checked bit for bit against the
# same updates run one by one (at least 2: the first update of a group may agree where a later one does not).
CHECKED_UPDATES = 4
# Updates of an unrolled call (`TrainStep.unrolled_steps`), tried where the compiled loop loses to single steps
# by more than LOOP_LOST (the loop of convolutions on XLA:CPU: ~0.1x; not a timing's noise).
UNROLLED_UPDATES = 8
LOOP_LOST = 0.5


@dataclasses.dataclass
class CallOutput:
    """What a call produced, and what the hooks after it add (`logged`, `evaluated`, `stop`).

    Attributes:
      aux: the AuxState of the call's last update when it logs metrics or summaries, else None.
      losses: `(first step, loss states)` of single updates and `(first step, (n, stacked states))` of fused
        groups, in order: what `NonFiniteWatch` reads.
      logged: the train values the metrics hook wrote (empty when the call does not log).
      evaluated: the values the evaluators wrote after the call.
      stop: the run stops after this call (a SIGTERM, or a `kd.train.Hook`'s request): the checkpoint hook
        saves it.
      stop_request: the hook's request when a hook stopped the run here (early stopping), else None.
    """

    aux: AuxState | None = None
    losses: list[tuple[int, UpdateLosses]] = dataclasses.field(default_factory=list)
    logged: dict[str, LoggedValue] = dataclasses.field(default_factory=dict)
    evaluated: dict[str, LoggedValue] = dataclasses.field(default_factory=dict)
    stop: bool = False
    stop_request: StopRequest | None = None


class CallRunner:
    """Runs planned calls: `state, out = runner.run(state, call)` (see the module docstring)."""

    def __init__(
        self,
        trainstep: TrainStep,
        feed: HostFeed | DeviceRowsFeed,
        size: int,
        *,
        measure: bool = False,
        single: bool = False,
    ) -> None:
        self.trainstep = trainstep
        self.feed = feed
        self.size = size  # the K of the compiled fused call
        # Fused or single updates: `single` forces single ones; else measured once the fused call is compiled
        # (`measure`), else fused.
        measured = measure and size > 1 and jax.process_count() == 1
        self.choice: str | None = "single" if single else None if measured else "fused"
        # Device rows: single updates take theirs from blocks of many updates' rows (one copy per block).
        self._in_blocks = callable(getattr(feed, "next_block", None))
        # The ways being timed against each other: the compiled loop first; if it loses, the unrolled call.
        self._probing = ("fused", "single")
        self._compiled = {"fused": False, "single": False, "unrolled": False}
        # Grouped ways whose check found other bits than single updates' ("rounds"), or that could not be
        # checked ("no room"): never run on the run's state.
        self._unsafe: dict[str, str] = {}
        self._timed: dict[str, list[float]] = {"fused": [0.0, 0], "single": [0.0, 0]}  # seconds, updates
        self._loop_timings: list[list[float]] | None = None  # the loop's first timing, when it lost once
        self._group = {"fused": self._fused, "unrolled": self._unrolled}

    def run(self, state: TrainState, call: Call) -> tuple[TrainState, CallOutput]:
        steps = f"step {call.end}" if call.updates <= 1 else f"steps {call.start + 1}-{call.end}"
        with during(f"training, {steps}"):  # a crash in the model, a loss or the data names the steps
            return self._run(state, call)

    def _run(self, state: TrainState, call: Call) -> tuple[TrainState, CallOutput]:
        out = CallOutput()
        step, end = call.start, call.end
        fused_end = call.start + call.fused_updates
        logs = call.log_metrics or call.log_summaries
        if self.choice is None:
            state, step = self._measure(state, step, fused_end, out)
        group = self._group.get(self.choice)  # fused or unrolled calls, else single updates
        if group is None:  # single updates: chosen, or too few to measure yet
            state, step = self._singles(state, step, fused_end, out, end=end, log_metrics=call.log_metrics)
        cap = UNROLLED_UPDATES if self.choice == "unrolled" else self.size
        while step < fused_end:
            wanted = min(fused_end - step, cap)
            state, taken = group(state, step, wanted, out)
            step += taken
            if taken and logs and step == end:  # the call's last update logs: its losses come from the group
                # (picked on the host: indexing on the device would compile two small programs)
                losses = out.losses[-1][1][1]
                last = jax.tree.map(lambda x, i=taken - 1: x[i], jax.device_get(losses))
                out.aux = AuxState(loss_states=last)
            if taken < wanted:  # a batch that cannot be stacked (other shapes) runs on its own
                state, aux = self._single(state, step, log_metrics=call.log_metrics and step + 1 == end)
                step += 1
                out.losses.append((step, aux.loss_states))
                out.aux = aux if step == end else out.aux
        if step < end:  # the lone last update: it returns what the step logs
            state, out.aux = self._single(
                state, step, log_metrics=call.log_metrics, log_summaries=call.log_summaries
            )
            step += 1
            out.losses.append((step, out.aux.loss_states))
        return state, out

    def _measure(
        self, state: TrainState, step: int, fused_end: int, out: CallOutput
    ) -> tuple[TrainState, int]:
        """Compiles each way being probed once (a single update, a fused or unrolled call), then times
        `PROBE_UPDATES` updates each way, each to the end of its work; then keeps the faster (`self.choice`),
        or, where the compiled loop lost (twice: it is timed again once, the faster timing kept), probes the
        unrolled call next, in the same call when it has updates left. The call's last update is left to the path that logs."""
        while self.choice is None and fused_end - step > 1:
            grouped, before = self._probing[0], step
            if not self._compiled["single"]:
                state, taken = self._run_way("single", state, step, 1, out)
                step += taken
                self._compiled["single"] = taken > 0
            if not self._compiled[grouped] and fused_end - step > 2:  # the last update: the logging path's
                state, taken = self._checked(grouped, state, step, min(CHECKED_UPDATES, fused_end - step - 1), out)
                step += taken
                self._compiled[grouped] = taken > 0
                if grouped in self._unsafe:
                    self._drop(grouped)
                    continue
            if not (self._compiled["single"] and self._compiled[grouped]):
                return state, step
            for way in (grouped, "single"):
                timed = self._timed.setdefault(way, [0.0, 0])
                count = min(PROBE_UPDATES - timed[1], fused_end - 1 - step)
                if count < 1:
                    continue
                jax.block_until_ready(state)
                began = time.perf_counter()
                state, taken = self._run_way(way, state, step, count, out)
                jax.block_until_ready(state)
                timed[0] += time.perf_counter() - began
                timed[1] += taken
                step += taken
            if min(self._timed[way][1] for way in self._probing) >= PROBE_UPDATES:
                if grouped == "fused" and self._per_update("single") < LOOP_LOST * self._per_update("fused"):
                    if self._loop_timings is None:  # once more, the faster kept: not a moment's load on the host
                        self._loop_timings = [self._timed["fused"]]
                        self._timed["fused"] = [0.0, 0]
                        continue
                    self._probing = ("unrolled", "single")  # the loop lost twice: try the updates written out
                else:
                    self._choose()
            elif step == before:
                break
        return state, step

    def _checked(
        self, way: str, state: TrainState, step: int, count: int, out: CallOutput
    ) -> tuple[TrainState, int]:
        """`(state, taken)`: the first call of a grouped way, on a copy of the state, and the same updates one
        by one on the state itself; the way goes to `_unsafe` unless both end in the same bits. The run keeps
        the single updates' state (whatever the check finds, its numbers are theirs)."""
        size = UNROLLED_UPDATES if way == "unrolled" else self.size
        if not _room_for_a_copy(state):
            self._unsafe[way] = "no room"
            return state, 0
        taken, inputs, singles = self.feed.next_group_and_singles(step, min(count, size), size=size)
        if not taken:
            return state, 0
        grouped, _ = self._call(way, _copy(state), inputs, taken)
        for i, batch in enumerate(singles):
            with during(f"training, step {step + i + 1}"):
                state, aux = self.trainstep.step(state, batch, source=self.feed.source)
            out.losses.append((step + i + 1, aux.loss_states))
        if not _same_bits(grouped, state):
            self._unsafe[way] = "rounds"
        return state, taken

    def _drop(self, way: str) -> None:
        """A grouped way the run may not use: after a loop that rounds differently the unrolled call is tried;
        else the ways timed so far decide (single updates when none other was; no room for a copy of the
        state: no other way can be checked either)."""
        if way == "fused" and self._unsafe[way] == "rounds":
            self._probing = ("unrolled", "single")
        else:
            self._choose()

    def _per_update(self, way: str) -> float:
        seconds, updates = self._timed[way]
        if way == "fused" and self._loop_timings is not None and updates:  # timed twice: the faster
            return min(seconds / updates, *(s / n for s, n in self._loop_timings if n))
        return seconds / updates

    def _run_way(
        self, way: str, state: TrainState, step: int, count: int, out: CallOutput
    ) -> tuple[TrainState, int]:
        """`(state, taken)`: `count` updates (fewer before a batch that cannot be stacked) the way named."""
        if way == "single":
            state, end = self._singles(state, step, step + count, out)
            return state, end - step
        taken = 0
        while taken < count:  # an unrolled call runs at most UNROLLED_UPDATES
            state, group_taken = self._group[way](state, step + taken, count - taken, out)
            if not group_taken:
                break
            taken += group_taken
        return state, taken

    def _choose(self) -> None:
        per_update = {
            way: self._per_update(way) for way, (_, updates) in self._timed.items()
            if updates and way not in self._unsafe
        }  # fmt: skip
        self.choice = min(per_update, key=per_update.get) if "single" in per_update else "single"
        if jax.process_index() != 0:
            return
        single = per_update.get("single", 0.0)
        ratio = {way: single / seconds if seconds > 0 else float("inf") for way, seconds in per_update.items()}
        if self.choice == "fused":
            print_line(f"fused steps: {self.size} per call (measured {ratio['fused']:.1f}x single steps)")
        elif self.choice == "unrolled":
            print_line(
                f"unrolled steps: {UNROLLED_UPDATES} per call (measured {ratio['unrolled']:.1f}x single steps; "
                f"a compiled loop of them {self._verdict('fused', ratio)})"
            )
        else:
            tried = f"fused calls of {self.size} {self._verdict('fused', ratio)}"
            if "unrolled" in per_update or "unrolled" in self._unsafe:
                tried += f", unrolled calls of {UNROLLED_UPDATES} {self._verdict('unrolled', ratio)}"
            print_line(f"single steps ({tried}; Trainer.steps_per_call forces either)")

    def _verdict(self, way: str, ratio: dict[str, float]) -> str:
        """`measured 0.32x single steps`, `round differently from single steps`, or why it was not checked."""
        reason = self._unsafe.get(way)
        if reason == "rounds":
            return "round differently from single steps"
        if reason == "no room":
            return "not checked: no room on the device for a second copy of the state"
        return f"measured {ratio[way]:.2f}x single steps"

    def _call(
        self, way: str, state: TrainState, inputs: PyTree, taken: int
    ) -> tuple[TrainState, PyTree]:
        run = self.trainstep.fused_steps if way == "fused" else self.trainstep.unrolled_steps
        return run(state, inputs, taken, source=self.feed.source)

    def _unrolled(self, state: TrainState, step: int, count: int, out: CallOutput) -> tuple[TrainState, int]:
        """`(state, taken)`: up to `min(count, UNROLLED_UPDATES)` updates in one unrolled call."""
        taken, inputs = self.feed.next_group(step, min(count, UNROLLED_UPDATES), size=UNROLLED_UPDATES)
        if taken:
            state, losses = self._call("unrolled", state, inputs, taken)
            out.losses.append((step + 1, (taken, losses)))
        return state, taken

    def _fused(self, state: TrainState, step: int, count: int, out: CallOutput) -> tuple[TrainState, int]:
        """`(state, taken)`: up to `count` fused updates in one call (fewer before a batch that cannot be
        stacked)."""
        taken, inputs = self.feed.next_group(step, count, size=self.size)
        if taken:
            state, losses = self._call("fused", state, inputs, taken)
            out.losses.append((step + 1, (taken, losses)))
        return state, taken

    def _singles(
        self,
        state: TrainState,
        step: int,
        until: int,
        out: CallOutput,
        *,
        end: int = -1,
        log_metrics: bool = False,
    ) -> tuple[TrainState, int]:
        """Single updates up to step `until`; the one that ends the call (`end`) gives `out.aux`, with its
        metrics when `log_metrics`."""
        block, block_end = None, step
        while step < until:
            if self._in_blocks and step >= block_end:  # the rows of the next updates, in one copy
                count = min(until - step, ROWS_PER_BLOCK)
                with during(
                    f"training, steps {step + 1}-{step + count}"
                    if count > 1
                    else f"training, step {step + 1}"
                ):
                    block, block_end = self.feed.next_block(step, count), step + count
            metrics = log_metrics and step + 1 == end
            with during(f"training, step {step + 1}"):  # a crash names its update, not the call's range
                if block is not None:
                    state, aux = self.trainstep.step(
                        state, block, return_metrics=metrics, source=self.feed.source
                    )
                else:
                    state, aux = self._single(state, step, log_metrics=metrics)
            step += 1
            out.losses.append((step, aux.loss_states))
            if step == end:
                out.aux = aux
        return state, step

    def _single(
        self, state: TrainState, step: int, *, log_metrics: bool, log_summaries: bool = False
    ) -> tuple[TrainState, AuxState]:
        batch = self.feed.next_block(step, 1) if self._in_blocks else self.feed.next_batch(step)
        return self.trainstep.step(
            state, batch, return_metrics=log_metrics, return_summaries=log_summaries, source=self.feed.source
        )


def _copy(state: TrainState) -> TrainState:
    """A copy of the state on its devices (a grouped call donates its input), through the host: no program is
    compiled for it (but for typed PRNG keys, copied as their key data)."""

    def copy(x: object) -> object:
        if not isinstance(x, jax.Array):
            return x
        data = jax.device_put(_on_host(x), x.sharding)
        if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            return jax.random.wrap_key_data(data, impl=jax.random.key_impl(x))
        return data

    with jax.transfer_guard("allow"):
        return jax.tree.map(copy, state)


def _on_host(x: jax.Array) -> np.ndarray:
    """The array's values on the host (a typed PRNG key's key data)."""
    if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return np.asarray(x)


def _same_bits(a: TrainState, b: TrainState) -> bool:
    """Whether two states hold the same bits in every array (NaNs and signed zeros included)."""
    with jax.transfer_guard("allow"):
        pairs = zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
        return all(
            np.array_equal(np.ascontiguousarray(_on_host(x)).reshape(-1).view(np.uint8),
                           np.ascontiguousarray(_on_host(y)).reshape(-1).view(np.uint8))
            for x, y in pairs
        )  # fmt: skip


def _room_for_a_copy(state: TrainState) -> bool:
    """Whether a device holds a second copy of the state with room to spare (a CPU, or a device that does not
    say its memory: yes)."""
    memory = device_memory()
    if memory is None:
        return True
    device = jax.devices()[0]
    on_device = sum(
        shard.data.nbytes
        for leaf in jax.tree.leaves(state)
        if isinstance(leaf, jax.Array)
        for shard in leaf.addressable_shards
        if shard.device == device
    )
    limit, in_use = memory
    return 2 * on_device < limit - in_use
