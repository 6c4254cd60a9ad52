"""`CallRunner`: runs one planned call on the state — the one place that knows fused vs single calls and
host vs device-row feeds.

    runner = CallRunner(trainstep, feed, size)
    state, out = runner.run(state, call)   # call: a kd.train._plan.Call
    out.aux         # the last update's AuxState when the call logs (losses, and metrics / summaries)
    out.losses      # every update's loss states, for the non-finite watch

A call's fused part goes through `TrainStep.fused_steps` in groups the feed can stack (a batch of other
shapes, like an epoch's short last batch, runs on its own); a lone last update (`call.last_alone`) is a
`TrainStep.step` that returns what the step logs.

Fused steps only where they win (`measure=True`, the default `steps_per_call=None`): a compiled loop of
updates is not always faster than the updates one by one (on XLA:CPU a rolled loop of convolution steps runs
7-10x slower than single jitted steps: a `while` body loses the fast path). Until measured, updates run one
by one (step 1 waits for one compile only, the single step's). Then a call's fused part is split: a single
update and a fused one compile both programs (once), then half the rest runs fused and the other half single,
each timed; once each way has `PROBE_UPDATES` timed updates (one call of 100, or several short ones), the
faster way is kept for the rest of the run, said once (`fused steps: 100 per call (measured 1.9x single
steps)`). Both ways compute the same bits on CPU, so the choice changes speed only.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import jax

from kd._phase import during
from kd._terminal import print_line
from kd.train._aux import AuxState
from kd.train._feed import ROWS_BLOCK as ROWS_PER_BLOCK
from kd.train._plan import Call
from kd.train._state import TrainState
from kd.train._step import TrainStep

# Timed updates each way (fused, single) before the faster is chosen.
PROBE_UPDATES = 8


@dataclasses.dataclass
class CallOutput:
    """What a call produced, and what the hooks after it add (`logged`, `evaluated`, `stop`).

    Attributes:
      aux: the AuxState of the call's last update when it logs metrics or summaries, else None.
      losses: `(first step, loss states)` of single updates and `(first step, (n, stacked states))` of fused
        groups, in order: what `NonFiniteWatch` reads.
      logged: the train values the metrics hook wrote (empty when the call does not log).
      evaluated: the values the evaluators wrote after the call.
      stop: the run stops after this call (a SIGTERM): the checkpoint hook saves it.
    """

    aux: AuxState | None = None
    losses: list[tuple[int, Any]] = dataclasses.field(default_factory=list)
    logged: dict[str, Any] = dataclasses.field(default_factory=dict)
    evaluated: dict[str, Any] = dataclasses.field(default_factory=dict)
    stop: bool = False


class CallRunner:
    """Runs planned calls: `state, out = runner.run(state, call)` (see the module docstring)."""

    def __init__(
        self, trainstep: TrainStep, feed: Any, size: int, *, measure: bool = False, single: bool = False
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
        self.measured: tuple[float, float] | None = None  # seconds per update: (fused, single), once chosen
        self._compiled = {"fused": False, "single": False}
        self._timed = {"fused": [0.0, 0], "single": [0.0, 0]}  # seconds, updates

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
        if self.choice != "fused":  # single updates: chosen, or too few to measure yet
            state, step = self._singles(state, step, fused_end, out, end=end, log_metrics=call.log_metrics)
        while step < fused_end:
            taken, inputs = self.feed.next_group(step, fused_end - step, size=self.size)
            if taken:
                state, losses = self.trainstep.fused_steps(state, inputs, taken, source=self.feed.source)
                out.losses.append((step + 1, (taken, losses)))
                step += taken
                if logs and step == end:  # the call's last update logs: its losses come from the fused call
                    # (picked on the host: indexing on the device would compile two small programs)
                    last = jax.tree.map(lambda x, i=taken - 1: x[i], jax.device_get(losses))
                    out.aux = AuxState(loss_states=last)
            if step < fused_end:  # a batch that cannot be stacked (other shapes) runs on its own
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
        """Compiles each way once (a single update, a fused one), then times half the call's other fused
        updates fused and the other half single, each to the end of its work, until each way has
        `PROBE_UPDATES` of them; then keeps the faster (`self.choice`). The call's last fused update is left
        to the path that logs."""
        for way, run in (("single", self._singles_for), ("fused", self._fused)):
            if not self._compiled[way] and fused_end - step > 1:
                state, taken = run(state, step, 1, out)
                step += taken
                self._compiled[way] = self._compiled[way] or taken > 0
        if not all(self._compiled.values()):
            return state, step
        half = (fused_end - step) // 2
        for way, run in (("fused", self._fused), ("single", self._singles_for)):
            count = half if way == "fused" else fused_end - 1 - step
            if count < 1:
                continue
            jax.block_until_ready(state)
            began = time.perf_counter()
            state, taken = run(state, step, count, out)
            jax.block_until_ready(state)
            self._timed[way][0] += time.perf_counter() - began
            self._timed[way][1] += taken
            step += taken
        if min(updates for _, updates in self._timed.values()) >= PROBE_UPDATES:
            self._choose()
        return state, step

    def _choose(self) -> None:
        fused, single = (seconds / updates for seconds, updates in self._timed.values())
        self.measured = (fused, single)
        self.choice = "fused" if fused <= single else "single"
        if jax.process_index() == 0:
            ratio = single / fused if fused > 0 else float("inf")
            if self.choice == "fused":
                print_line(f"fused steps: {self.size} per call (measured {ratio:.1f}x single steps)")
            else:
                print_line(
                    f"single steps (fused calls of {self.size} measured {ratio:.2f}x single steps; "
                    "Trainer.steps_per_call forces either)"
                )

    def _singles_for(
        self, state: TrainState, step: int, count: int, out: CallOutput
    ) -> tuple[TrainState, int]:
        state, end = self._singles(state, step, step + count, out)
        return state, end - step

    def _fused(self, state: TrainState, step: int, count: int, out: CallOutput) -> tuple[TrainState, int]:
        """`(state, taken)`: up to `count` fused updates in one call (fewer before a batch that cannot be
        stacked)."""
        taken, inputs = self.feed.next_group(step, count, size=self.size)
        if taken:
            state, losses = self.trainstep.fused_steps(state, inputs, taken, source=self.feed.source)
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
