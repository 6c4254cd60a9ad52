"""What one compiled train step costs: XLA's cost and memory analysis, compiled, never run.

    print(lower_trainstep(trainer).as_text())   # the step, lowered on the shapes of the state and a batch
    step_cost(trainer)["flops"]                 # and its numbers: FLOPs, bytes, compile seconds
    print(cost_summary(step_cost(trainer)))     # the same, as `kd-train inspect` words it

Compiling takes as long as the first training step's compile; no state is allocated and no step runs.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping

import jax

from kd._human_text import aligned, human_bytes, human_count, human_flops

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd._interfaces import PyTree
    from kd.runtime import AuxState, TrainState
    from kd.train import Trainer

    StepCost = dict[str, float | int | None]
    """`step_cost`'s numbers by name (None: the backend does not report it)."""


def lower_trainstep(
    trainer: Trainer, *, return_metrics: bool = False, return_summaries: bool = False
) -> jax.stages.Lowered:
    """The train step `trainer.trainstep.step` would run, lowered on the shapes of the state and a batch.

    Usage: `print(lower_trainstep(trainer).as_text())`. Inputs carry the shardings the Trainer gives them (the
    state's from `trainer.sharding.state_template`, the batch's `batch_sharding`) and the state is donated, as
    in training. Nothing is allocated and `trainstep.num_traces` is left as it was: it counts the steps'
    compiles, and this one is not used by `step()`.
    """
    trainstep = trainer.trainstep
    state = trainer.sharding.state_template(trainer.state_specs)
    batch_sharding = trainer.sharding.batch_sharding
    batch = jax.tree.map(
        lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=batch_sharding), trainer.element_spec
    )
    # The variant `step()` compiles for these flags (asking for metrics when there are none changes nothing).
    variant = (
        bool(return_metrics) and bool(trainstep.metrics),
        bool(return_summaries) and bool(trainstep.summaries),
    )
    traces = Counter(trainstep.num_traces)
    try:

        def train_step(s: TrainState, b: PyTree) -> tuple[TrainState, AuxState]:
            return trainstep._step(s, b, *variant)

        return jax.jit(train_step, donate_argnums=(0,)).lower(state, batch)
    finally:
        trainstep.num_traces.clear()
        trainstep.num_traces.update(traces)


def step_cost(trainer: Trainer, *, return_metrics: bool = False, return_summaries: bool = False) -> StepCost:
    """XLA's cost and memory analysis of one compiled train step (compiled, never run).

    Usage: `step_cost(trainer)["flops"]`. Keys: `flops`, `bytes_accessed`, `transcendentals` (XLA's cost
    analysis), `argument_bytes`, `output_bytes`, `alias_bytes` (outputs written into donated arguments),
    `temp_bytes`, `generated_code_bytes` and `total_bytes` (= argument + output - alias + temp + generated code:
    what the step holds at once), and `compile_seconds` (tracing, lowering and compiling it here; a program
    in JAX's persistent compilation cache is read, not compiled). Sizes are per device. A value the backend
    does not report is None.
    """
    began = time.perf_counter()
    compiled = lower_trainstep(
        trainer, return_metrics=return_metrics, return_summaries=return_summaries
    ).compile()
    seconds = time.perf_counter() - began
    return {**_cost(compiled), **_memory(compiled), "compile_seconds": seconds}


def _cost(compiled: jax.stages.Compiled) -> dict[str, float | None]:
    try:
        analysis = compiled.cost_analysis()
    except Exception:  # a backend without this analysis: reported as unknown
        analysis = None
    if isinstance(analysis, (list, tuple)):  # older JAX: one dict per computation, the first is the step
        analysis = analysis[0] if analysis else None
    if not isinstance(analysis, Mapping):
        analysis = {}

    def value(key: str) -> float | None:
        found = analysis.get(key)
        return None if found is None else float(found)

    return {
        "flops": value("flops"),
        "bytes_accessed": value("bytes accessed"),
        "transcendentals": value("transcendentals"),
    }


_MEMORY_FIELDS = {
    "argument_bytes": "argument_size_in_bytes",
    "output_bytes": "output_size_in_bytes",
    "alias_bytes": "alias_size_in_bytes",
    "temp_bytes": "temp_size_in_bytes",
    "generated_code_bytes": "generated_code_size_in_bytes",
}


def _memory(compiled: jax.stages.Compiled) -> dict[str, int | None]:
    try:
        stats = compiled.memory_analysis()
    except Exception:  # a backend without this analysis: reported as unknown
        stats = None
    sizes: dict[str, int | None] = {}
    for key, attribute in _MEMORY_FIELDS.items():
        found = getattr(stats, attribute, None) if stats is not None else None
        sizes[key] = None if found is None else int(found)
    parts = [sizes[k] for k in ("argument_bytes", "output_bytes", "temp_bytes", "generated_code_bytes")]
    if any(part is None for part in parts):
        sizes["total_bytes"] = None
    else:
        sizes["total_bytes"] = sum(parts) - (sizes["alias_bytes"] or 0)  # type: ignore[arg-type]
    return sizes


def cost_summary(cost: Mapping[str, float | int | None]) -> str:
    """`step_cost`'s numbers in words: compute, memory traffic, memory per device, compile time, and whether
    the step fits in the device's memory (the report's `Compiled train step` section)."""
    flops = cost["flops"]
    compute = (
        "unknown (no cost analysis on this backend)" if flops is None else f"{human_flops(flops)} per step"
    )
    if cost["transcendentals"]:
        compute += f" (+ {human_count(cost['transcendentals'])} transcendentals)"
    accessed = cost["bytes_accessed"]
    traffic = "unknown" if accessed is None else f"{human_bytes(accessed)} read and written per step"
    parts = [("argument", "argument_bytes"), ("output", "output_bytes"), ("temp", "temp_bytes")]
    if cost["generated_code_bytes"]:
        parts.append(("generated code", "generated_code_bytes"))
    if cost["total_bytes"] is None:
        memory = "unknown (no memory analysis on this backend)"
    else:
        memory = ", ".join(f"{label} {human_bytes(cost[key] or 0)}" for label, key in parts)
        if cost["alias_bytes"]:
            memory += f" ({human_bytes(cost['alias_bytes'])} of the output reuses the donated state)"
        memory += f"; total {human_bytes(cost['total_bytes'])}"
    rows = [("compute", compute), ("memory traffic", traffic), ("memory per device", memory)]
    if cost.get("compile_seconds") is not None:
        rows.append(
            (
                "compile time",
                f"{cost['compile_seconds']:.2f}s (a run also compiles init_state and, with fused steps, "
                "fused_steps: the line `compiled ...` at its end times each)",
            )
        )
    return "\n".join([*aligned(rows), _fit_sentence(cost["total_bytes"])])


def _fit_sentence(total: float | int | None) -> str:
    device = jax.devices()[0]
    try:
        stats = device.memory_stats()
    except Exception:  # a backend without memory stats: the limit is unknown
        stats = None
    limit = (stats or {}).get("bytes_limit")
    if total is None:
        return "Whether the step fits in device memory is unknown: the backend reported no memory analysis."
    if not limit:
        return (
            f"The step holds {human_bytes(total)} at once; {device.platform} reports no memory limit, so whether "
            "it fits is unknown (on CPU the host's RAM is the limit)."
        )
    share = total / limit
    held = f"The step holds {human_bytes(total)} at once: {share:.1%} of the {human_bytes(limit)} of {device}"
    if share <= 1:
        return f"{held}; it fits, with {human_bytes(limit - total)} left for batches in flight and other buffers."
    return f"{held}; it does NOT fit: lower the batch size, or shard the state over more devices."
