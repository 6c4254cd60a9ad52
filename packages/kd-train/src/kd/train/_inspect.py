"""What a run is before it runs: its context paths, its parameters, and what one compiled step costs.

    print(inspect_report(trainer))        # `kd-train inspect --cfg=examples/digits.py`
    parameter_table(trainer.state_specs.params)
    print(interms_report(trainer))        # every intermediate a key `interms.<...>` can name
    step_cost(trainer)["flops"]

Everything here works on shapes (`trainer.state_specs`, `trainer.context_specs`): no state is allocated and no
step runs. `step_cost` compiles the step, which takes as long as the first training step's compile.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import kontext
import numpy as np
import optax

from kd._human_text import aligned, human_bytes, human_count, human_flops
from kd.runtime import InterestFilter, NnxModel
from kd.train._lr_find import learning_rate_source

if TYPE_CHECKING:
    from kd.runtime import Context
    from kd.train._trainer import Trainer

ROOT = "(root)"
"""The module name of a parameter that sits at the top of the params tree."""

# Context fields with one leaf per parameter (or several): shown one row per module when they are long.
COLLAPSIBLE = ("params", "grads", "updates", "opt_state", "collections")

_CONTEXT_FIELDS = (
    "step",
    "batch",
    "params",
    "collections",
    "preds",
    "interms",
    "loss_states",
    "loss_total",
    "grads",
    "updates",
    "opt_state",
    "metric_states",
    "summary_states",
)

# ---------------------------------------------------------------------------------------------- parameters


def parameter_table(params: Any, *, label: str = "parameters") -> str:
    """One row per module (its leaves' shapes and dtypes, its count), then the total count and bytes.

    Usage: `print(parameter_table(trainer.state_specs.params))`; real arrays work as well as
    `jax.ShapeDtypeStruct` leaves. A module is a leaf's path without its last key (`dense0` for
    `dense0.kernel`); leaves at the top level are under `(root)`. `label` names the values (`"values"` for
    non-trained collections such as batch statistics).
    """
    modules = _modules(params)
    rows = [
        (
            name,
            ", ".join(f"{key} {_shape_dtype(leaf)}" for key, leaf in leaves),
            _count(leaf for _, leaf in leaves),
        )
        for name, leaves in modules.items()
    ]
    lines = aligned(
        [("Module", label.capitalize(), "Count")] + [(n, p, f"{c:,}") for n, p, c in rows], right=(2,)
    )
    leaves = [leaf for group in modules.values() for _, leaf in group]
    total, nbytes = _count(leaves), _nbytes(leaves)
    lines.append(f"Total: {_counted(total, label)} ({human_bytes(nbytes)})")
    return "\n".join(lines)


def parameter_counts(params: Any) -> dict[str, int]:
    """`{module: count, ..., "total": count}`, the numbers of `parameter_table`, for JSON.

    Usage: `parameter_counts(trainer.state_specs.params)["total"]`.
    """
    modules = _modules(params)
    counts = {name: _count(leaf for _, leaf in leaves) for name, leaves in modules.items()}
    counts["total"] = sum(counts.values())
    return counts


def _modules(tree: Any, prefix: str = "") -> dict[str, list[tuple[str, Any]]]:
    """`{module path: [(last key, leaf), ...]}` in the tree's order (paths start with `prefix`)."""
    modules: dict[str, list[tuple[str, Any]]] = {}
    for text, leaf in kontext.flatten_with_path(tree, prefix=prefix).items():
        path = kontext.Path.from_str(text)
        module = str(path[:-1]) if len(path) > 1 else ROOT
        modules.setdefault(module, []).append((_last_key(path), leaf))
    return modules


def _last_key(path: kontext.Path) -> str:
    """The last part as it is typed after the module's path: `kernel`, `[0]`, `['a.b']`."""
    return str(path[-1:])


# ---------------------------------------------------------------------------------------------- context


def context_table(context: Context, *, collapse: Sequence[str] = COLLAPSIBLE, max_leaves: int = 12) -> str:
    """Every path a kontext key can name in a train step, with its shape and dtype.

    Usage: `print(context_table(trainer.context_specs))` gives rows such as
    `batch.image  (32, 8, 8, 1) float32`. A field of `collapse` with more than `max_leaves` leaves is shown one
    row per module (`grads.dense0.*  2 leaves: bias, kernel; 8,320 values float32`) and the table ends with a
    line saying how many leaves were collapsed; `collapse=()` lists every leaf.
    """
    rows: list[tuple[str, str]] = []
    collapsed: dict[str, int] = {}
    for field in _CONTEXT_FIELDS:
        value = getattr(context, field, None)
        if value is None:
            continue
        flat = kontext.flatten_with_path(value, prefix=field)
        if field in collapse and len(flat) > max_leaves:
            collapsed[field] = len(flat)
            rows.extend(_module_row(path, leaves) for path, leaves in _modules(value, prefix=field).items())
        else:
            rows.extend((path, _shape_dtype(leaf)) for path, leaf in flat.items())
    lines = aligned([("Path", "Shape and dtype"), *rows])
    if collapsed:
        fields = ", ".join(f"{field} ({n} leaves)" for field, n in collapsed.items())
        lines.append(
            f"Collapsed to one row per module: {fields}; `<module>.*` stands for the leaves listed after it."
        )
    return "\n".join(lines)


def _module_row(module: str, leaves: list[tuple[str, Any]]) -> tuple[str, str]:
    if len(leaves) == 1:  # nothing to collapse: the leaf keeps its own path
        key, leaf = leaves[0]
        return _join(module, key), _shape_dtype(leaf)
    keys = ", ".join(key for key, _ in leaves)
    dtypes = " ".join(dict.fromkeys(_dtype(leaf) for _, leaf in leaves))
    values = _count(leaf for _, leaf in leaves)
    return f"{module}.*", f"{len(leaves)} leaves: {keys}; {values:,} values {dtypes}"


def _join(module: str, key: str) -> str:
    return module + key if key.startswith("[") else f"{module}.{key}"


# ---------------------------------------------------------------------------------------------- intermediates


def intermediate_specs(trainer: Trainer) -> dict[str, jax.ShapeDtypeStruct]:
    """Every intermediate the model offers, `{"interms.<path>": shape and dtype}`, in the model's order.

    Usage: `intermediate_specs(trainer)["interms.hidden.__call__[0]"].shape`. A training forward pass is traced
    with `jax.eval_shape`, capturing everything (a step captures only what some key asks for): a linen module's
    method outputs (`interms.<module path>.<method>[0]`) and what it sows, an NNX module's `self.sow` values.
    Nothing is allocated and no step runs.
    """
    trainstep = trainer.trainstep
    everything = InterestFilter(["interms.**"])

    def interms(state: Any, batch: Any) -> Any:
        context = trainstep.forward(
            state.params, state.collections, batch, state.step, is_training=True, capture=everything
        )
        return context.interms

    specs = jax.eval_shape(interms, trainer.state_specs, trainer.element_spec)
    if specs is None:
        return {}
    return dict(kontext.flatten_with_path(specs, prefix="interms"))


def interms_report(trainer: Trainer, *, width: int = 100) -> str:
    """A table of `intermediate_specs`: path, shape, dtype, one line each, at most `width` columns.

    Usage: `print(interms_report(trainer))` (for `kd-train inspect --interms`). A path too long for its column
    is shortened in the middle (`interms.encoder...dense.__call__[0]`); the last line counts the intermediates.
    """
    specs = intermediate_specs(trainer)
    if not specs:
        return "The model offers no intermediates (no module outputs or sown values to capture)."
    rows = [(str(tuple(leaf.shape)), _dtype(leaf)) for leaf in specs.values()]
    shape_width = max(len("Shape"), *(len(shape) for shape, _ in rows))
    dtype_width = max(len("Dtype"), *(len(dtype) for _, dtype in rows))
    path_width = max(
        len("Path"), min(max(len(path) for path in specs), width - shape_width - dtype_width - 4)
    )
    table = [("Path", "Shape", "Dtype")] + [
        (_shortened(path, path_width), shape, dtype) for path, (shape, dtype) in zip(specs, rows)
    ]
    lines = aligned(table)
    lines.append(f"{_counted(len(specs), 'intermediates')}; a key names one as its path (`interms.<...>`).")
    return "\n".join(lines)


def _shortened(text: str, width: int) -> str:
    """`text`, or its start and end around `...` in `width` characters."""
    if len(text) <= width:
        return text
    keep = max(width - 3, 2)
    return f"{text[: keep - keep // 2]}...{text[len(text) - keep // 2 :]}"


# ---------------------------------------------------------------------------------------------- compiled step


def lower_trainstep(
    trainer: Trainer, *, return_metrics: bool = False, return_summaries: bool = False
) -> jax.stages.Lowered:
    """The train step `trainer.trainstep.step` would run, lowered on the shapes of the state and a batch.

    Usage: `print(lower_trainstep(trainer).as_text())`. Inputs carry the shardings the Trainer gives them (the
    state's from `trainer.sharding.state_shardings`, the batch's `batch_sharding`) and the state is donated, as
    in training. Nothing is allocated and `trainstep.num_traces` is left as it was: it counts the steps'
    compiles, and this one is not used by `step()`.
    """
    trainstep = trainer.trainstep
    state = _with_shardings(trainer.state_specs, trainer.sharding.state_shardings(trainer.state_specs))
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

        def train_step(s: Any, b: Any) -> Any:
            return trainstep._step(s, b, *variant)

        return jax.jit(train_step, donate_argnums=(0,)).lower(state, batch)
    finally:
        trainstep.num_traces.clear()
        trainstep.num_traces.update(traces)


def step_cost(
    trainer: Trainer, *, return_metrics: bool = False, return_summaries: bool = False
) -> dict[str, float | int | None]:
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


def _with_shardings(specs: Any, shardings: Any) -> Any:
    return jax.tree.map(lambda s, sh: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sh), specs, shardings)


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


# ---------------------------------------------------------------------------------------------- report


def inspect_report(trainer: Trainer) -> str:
    """The run at a glance: config summary, context paths, parameters, and the compiled step's cost.

    Usage: `print(inspect_report(trainer))` (what `kd-train inspect` prints). Runs `trainer.check()` first, so a
    bad key fails with its usual message; then compiles the step (no state allocated, no step run).
    """
    trainer.check()
    specs = trainer.state_specs
    sections = [
        ("Run", _run_summary(trainer)),
        ("Context paths (what kontext keys can name)", context_table(trainer.context_specs)),
        ("Parameters", parameter_table(specs.params)),
    ]
    if jax.tree.leaves(specs.collections):
        sections.append(
            (
                "Collections (model state that is not trained)",
                parameter_table(specs.collections, label="values"),
            )
        )
    sections.append(("Sharding (where each array of the train state lives)", sharding_table(trainer)))
    sections.append(("Compiled train step (one update, no metrics)", _cost_summary(step_cost(trainer))))
    return "\n\n".join(f"== {title} ==\n{body}" for title, body in sections)


def sharding_table(trainer: Trainer) -> str:
    """The mesh, then each split array of the state with its PartitionSpec and bytes per device.

    Usage: `print(sharding_table(trainer))`. Replicated arrays are counted, not listed.
    """
    strategy = trainer.sharding
    mesh = strategy.device_mesh
    specs = trainer.state_specs
    shardings = strategy.state_shardings(specs)
    rows, replicated, per_device = [("Array", "Shape", "PartitionSpec", "Per device")], 0, 0
    flat_specs = kontext.flatten_with_path(specs)
    for (path, leaf), sharding in zip(flat_specs.items(), jax.tree.leaves(shardings), strict=True):
        local = sharding.shard_shape(leaf.shape) if hasattr(sharding, "shard_shape") else leaf.shape
        nbytes = int(np.prod(local, dtype=np.int64)) * _itemsize(leaf)
        per_device += nbytes
        spec = getattr(sharding, "spec", None)
        if spec is not None and not any(entry is not None for entry in spec):
            replicated += 1
            continue
        rows.append(
            (path, _shape_dtype(leaf), str(spec if spec is not None else sharding), human_bytes(nbytes))
        )
    axes = " x ".join(f"{name} {size}" for name, size in mesh.shape.items())
    lines = [
        f"mesh: {axes} ({_counted(mesh.devices.size, 'devices')}); batches split along {strategy.data_axis!r}",
        f"train state per device: {human_bytes(per_device)} of {human_bytes(_nbytes(jax.tree.leaves(specs)))}",
    ]
    if len(rows) > 1:
        lines += aligned(rows)
    lines.append(f"{_counted(replicated, 'arrays')} replicated (a full copy on every device)")
    return "\n".join(lines)


def _run_summary(trainer: Trainer) -> str:
    specs = trainer.state_specs
    sizes = sorted({leaf.shape[0] for leaf in jax.tree.leaves(trainer.element_spec) if leaf.shape})
    batch = ", ".join(f"{size:,}" for size in sizes) or "unknown (no leaf has a batch axis)"
    hosts = f" per host, {jax.process_count()} hosts" if jax.process_count() > 1 else ""
    devices = jax.devices()
    kinds = ", ".join(dict.fromkeys(str(getattr(d, "device_kind", d.platform)) for d in devices))
    kinds = "" if kinds.lower() == devices[0].platform.lower() else f" ({kinds})"
    state = ", ".join(
        f"{name} {human_bytes(_nbytes(jax.tree.leaves(getattr(specs, name))))}"
        for name in ("params", "opt_state", "collections")
    )
    rows = [
        ("model", _model_name(trainer.model)),
        ("num_train_steps", f"{trainer.num_train_steps:,}"),
        ("batch size", f"{batch}{hosts} (from train_ds.element_spec)"),
        ("devices", f"{len(devices)} x {devices[0].platform}{kinds}"),
        ("train state", f"{human_bytes(_nbytes(jax.tree.leaves(specs)))}: {state}"),
        ("precision", _precision_line(trainer.precision, specs.params)),
        *_accumulation_rows(trainer.optimizer, trainer.num_train_steps),
        ("hooks", _hooks_line(trainer.hooks)),
        ("predict", _predict_line(trainer)),
        ("lr-find", _lr_find_line(trainer)),
    ]
    return "\n".join(aligned(rows))


def _precision_line(policy: Any, params: Any) -> str:
    """`bfloat16 compute, float32 params and outputs` (a `kd.train.MixedPrecision`), or `as the model is written`."""
    if policy is None:
        return "as the model is written"
    stored = [_dtype(leaf) for leaf in jax.tree.leaves(params) if jnp.issubdtype(leaf.dtype, jnp.floating)]
    return policy.describe("/".join(dict.fromkeys(stored)) or "no floating")


def _accumulation_rows(optimizer: Any, num_train_steps: int | None) -> list[tuple[str, str]]:
    """A `gradient accumulation` row when the optimizer is an `optax.MultiSteps` (or its transformation)."""
    multi = getattr(getattr(optimizer, "init", None), "__self__", None)  # `.gradient_transformation()`'s
    multi = optimizer if isinstance(optimizer, optax.MultiSteps) else multi
    if not isinstance(multi, optax.MultiSteps):
        return []
    schedule = multi._every_k_schedule  # an int was made a constant function; optax keeps no public copy
    first, last = (int(schedule(step)) for step in (0, max((num_train_steps or 1) - 1, 0)))
    every = f"every {first} micro-steps" if first == last else f"every {first} to {last} micro-steps"
    return [("gradient accumulation", f"{every} (optax.MultiSteps); step counts micro-steps")]


def outputs_text(tree: Any, name: str = "preds") -> str:
    """`preds: float32[64,10]` (one array), or each leaf by its path: `preds.logits: float32[64,10], ...`."""
    flat = kontext.flatten_with_path(tree) if tree is not None else {}
    if not flat:
        return f"{name}: none"
    parts = []
    for path, leaf in flat.items():
        dims = ",".join(str(d) for d in getattr(leaf, "shape", np.shape(leaf)))
        joined = f"{name}{'' if not path or path.startswith('[') else '.'}{path}"
        parts.append(f"{joined}: {_dtype(leaf)}[{dims}]")
    return ", ".join(parts)


def _predict_line(trainer: Trainer) -> str:
    """`kd-train predict --cfg=... writes preds: float32[64,10] per batch` (the shapes of a training step's)."""
    return f"kd-train predict --cfg=... writes {outputs_text(trainer.context_specs.preds)} per batch"


def _lr_find_line(trainer: Trainer) -> str:
    """`kd-train lr-find --cfg=... (learning rate found in schedules['learning_rate'])`, or what to pass."""
    where = learning_rate_source(trainer)
    found = f"learning rate found in {where}" if where else "learning rate not found: pass --base-lr=LR"
    return f"kd-train lr-find --cfg=... ({found})"


def _hooks_line(hooks: Sequence[Any]) -> str:
    """`EarlyStopping(monitor='val/losses/l2', ...) (run in this order after the evaluators, ...)`, or `none`."""
    if not hooks:
        return "none"
    order = "run in this order after the evaluators, before the checkpoint"
    return f"{'; '.join(repr(hook) for hook in hooks)} ({order})"


def _cost_summary(cost: Mapping[str, float | int | None]) -> str:
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


def _model_name(model: Any) -> str:
    if isinstance(model, NnxModel):
        return f"{model.name} (flax NNX)"
    return f"{type(model).__name__} (flax linen)"


# ---------------------------------------------------------------------------------------------- formatting


def _counted(n: int, plural: str) -> str:
    """`_counted(1, "devices") == "1 device"`, `_counted(1200, "devices") == "1,200 devices"`."""
    return f"{n:,} {plural.removesuffix('s') if n == 1 else plural}"


def _shape_dtype(leaf: Any) -> str:
    if leaf is None:
        return "None"
    if not hasattr(leaf, "shape") and not isinstance(leaf, (int, float, complex, bool, np.generic)):
        return type(leaf).__name__
    return f"{tuple(np.shape(leaf))} {_dtype(leaf)}"


def _dtype(leaf: Any) -> str:
    dtype = getattr(leaf, "dtype", None)
    if dtype is None:
        dtype = np.asarray(leaf).dtype if leaf is not None else None
    return str(dtype)


def _count(leaves: Iterable[Any]) -> int:
    return sum(math.prod(np.shape(leaf)) for leaf in leaves if _is_array(leaf))


def _nbytes(leaves: Iterable[Any]) -> int:
    total = 0
    for leaf in leaves:
        if _is_array(leaf):
            total += math.prod(np.shape(leaf)) * _itemsize(leaf)
    return total


def _itemsize(leaf: Any) -> int:
    dtype = getattr(leaf, "dtype", None)
    try:
        return np.dtype(dtype).itemsize if dtype is not None else np.asarray(leaf).dtype.itemsize
    except TypeError:  # a JAX extended dtype (PRNG keys): its own itemsize when it has one
        return int(getattr(dtype, "itemsize", 0) or 0)


def _is_array(leaf: Any) -> bool:
    return hasattr(leaf, "shape") or isinstance(leaf, (int, float, complex, bool, np.generic))
