"""`inspect_report`: what a run is before it runs (what `kd-train inspect --cfg=...` prints).

    print(inspect_report(trainer))   # the run's summary, context paths, parameters, sharding, the step's cost

Runs `trainer.check()` first, then compiles the step on the shapes of the state and a batch: no state is
allocated and no step runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import kontext
import numpy as np
import optax

from kd._human_text import aligned, byte_count, dtype_text, human_bytes
from kd.inspect._cost import cost_summary, step_cost
from kd.inspect._tables import context_table, sharding_table
from kd.runtime import NnxModel, parameter_table
from kd.train import learning_rate_source

TYPE_CHECKING = False
if TYPE_CHECKING:
    from flax import linen as nn

    from kd._interfaces import PyTree
    from kd.train import Hook, MixedPrecision, Trainer


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
    sections.append(("Compiled train step (one update, no metrics)", cost_summary(step_cost(trainer))))
    return "\n\n".join(f"== {title} ==\n{body}" for title, body in sections)


def _run_summary(trainer: Trainer) -> str:
    specs = trainer.state_specs
    sizes = sorted({leaf.shape[0] for leaf in jax.tree.leaves(trainer.element_spec) if leaf.shape})
    batch = ", ".join(f"{size:,}" for size in sizes) or "unknown (no leaf has a batch axis)"
    hosts = f" per host, {jax.process_count()} hosts" if jax.process_count() > 1 else ""
    devices = jax.devices()
    kinds = ", ".join(dict.fromkeys(str(getattr(d, "device_kind", d.platform)) for d in devices))
    kinds = "" if kinds.lower() == devices[0].platform.lower() else f" ({kinds})"
    state = ", ".join(
        f"{name} {human_bytes(byte_count(jax.tree.leaves(getattr(specs, name))))}"
        for name in ("params", "opt_state", "collections")
    )
    rows = [
        ("model", _model_name(trainer.model)),
        ("num_train_steps", f"{trainer.num_train_steps:,}"),
        ("batch size", f"{batch}{hosts} (from train_ds.element_spec)"),
        ("devices", f"{len(devices)} x {devices[0].platform}{kinds}"),
        ("train state", f"{human_bytes(byte_count(jax.tree.leaves(specs)))}: {state}"),
        ("precision", _precision_line(trainer.precision, specs.params)),
        *_accumulation_rows(trainer.optimizer, trainer.num_train_steps),
        ("hooks", _hooks_line(trainer.hooks)),
        ("predict", _predict_line(trainer)),
        ("lr-find", _lr_find_line(trainer)),
    ]
    return "\n".join(aligned(rows))


def _precision_line(policy: MixedPrecision | None, params: PyTree) -> str:
    """`bfloat16 compute, float32 params and outputs` (a `kd.train.MixedPrecision`), or `as the model is written`."""
    if policy is None:
        return "as the model is written"
    stored = [dtype_text(leaf) for leaf in jax.tree.leaves(params) if jnp.issubdtype(leaf.dtype, jnp.floating)]
    return policy.describe("/".join(dict.fromkeys(stored)) or "no floating")


def _accumulation_rows(
    optimizer: optax.GradientTransformation, num_train_steps: int | None
) -> list[tuple[str, str]]:
    """A `gradient accumulation` row when the optimizer is an `optax.MultiSteps` (or its transformation)."""
    multi = getattr(getattr(optimizer, "init", None), "__self__", None)  # `.gradient_transformation()`'s
    multi = optimizer if isinstance(optimizer, optax.MultiSteps) else multi
    if not isinstance(multi, optax.MultiSteps):
        return []
    schedule = multi._every_k_schedule  # an int was made a constant function; optax keeps no public copy
    first, last = (int(schedule(step)) for step in (0, max((num_train_steps or 1) - 1, 0)))
    every = f"every {first} micro-steps" if first == last else f"every {first} to {last} micro-steps"
    return [("gradient accumulation", f"{every} (optax.MultiSteps); step counts micro-steps")]


def outputs_text(tree: PyTree, name: str = "preds") -> str:
    """`preds: float32[64,10]` (one array), or each leaf by its path: `preds.logits: float32[64,10], ...`."""
    flat = kontext.flatten_with_path(tree) if tree is not None else {}
    if not flat:
        return f"{name}: none"
    parts = []
    for path, leaf in flat.items():
        dims = ",".join(str(d) for d in getattr(leaf, "shape", np.shape(leaf)))
        joined = f"{name}{'' if not path or path.startswith('[') else '.'}{path}"
        parts.append(f"{joined}: {dtype_text(leaf)}[{dims}]")
    return ", ".join(parts)


def _predict_line(trainer: Trainer) -> str:
    """`kd-train predict --cfg=... writes preds: float32[64,10] per batch` (the shapes of a training step's)."""
    return f"kd-train predict --cfg=... writes {outputs_text(trainer.context_specs.preds)} per batch"


def _lr_find_line(trainer: Trainer) -> str:
    """`kd-train lr-find --cfg=... (learning rate found in schedules['learning_rate'])`, or what to pass."""
    where = learning_rate_source(trainer)
    found = f"learning rate found in {where}" if where else "learning rate not found: pass --base-lr=LR"
    return f"kd-train lr-find --cfg=... ({found})"


def _hooks_line(hooks: Sequence[Hook]) -> str:
    """`EarlyStopping(monitor='val/losses/l2', ...) (run in this order after the evaluators, ...)`, or `none`."""
    if not hooks:
        return "none"
    order = "run in this order after the evaluators, before the checkpoint"
    return f"{'; '.join(repr(hook) for hook in hooks)} ({order})"


def _model_name(model: nn.Module | NnxModel | None) -> str:
    if isinstance(model, NnxModel):
        return f"{model.name} (flax NNX)"
    return f"{type(model).__name__} (flax linen)"
