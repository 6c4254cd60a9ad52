"""`TrainStep`: one jitted, donated function of (state, batch) — forward, losses, grads, update, metrics.

    trainstep = trainer.trainstep
    state = trainstep.init(trainer.train_ds.element_spec)
    state, aux = trainstep.step(state, batch)                        # losses only
    state, aux = trainstep.step(state, batch, return_metrics=True)   # + metric states (a logging step)

Each distinct set of outputs compiles once (`trainstep.num_traces`); values stay on the device until
`aux.compute()` is called, so steps that log nothing never wait for the host.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from typing import TypeVar

import jax
import jax.numpy as jnp
import kontext
import ktyping
import numpy as np
import optax
from jax.experimental import checkify

from kd import _label_range
from kd._interfaces import Auxiliary, MetricState, PyTree
from kd.losses import total_loss
from kd.runtime import (
    AuxState,
    ConfigError,
    Context,
    InterestFilter,
    KeyPathError,
    LinenModel,
    NnxModel,
    RngStreams,
    ShapeMismatchError,
    TrainState,
    as_model,
)
from kd.train import _first_batch
from kd.train._precision import MixedPrecision, as_precision, keep_stored_dtypes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from flax import linen as nn
    from jax.experimental.checkify import ErrorCategory

    from kd.ckpts import InitTransform
    from kd.train._types import LossStates

ShapesKey = tuple[Hashable, ...]
"""What an abstract evaluation depends on (`shapes_key`): the trees' structure, each leaf's shape and dtype."""
_Out = TypeVar("_Out")


class TrainStep:
    """The pure functions of a run, built by the Trainer from its model, optimizer, losses and metrics."""

    def __init__(
        self,
        *,
        model: nn.Module | LinenModel | NnxModel | None,
        optimizer: optax.GradientTransformation,
        rng_streams: RngStreams,
        losses: Mapping[str, Auxiliary],
        metrics: Mapping[str, Auxiliary],
        summaries: Mapping[str, Auxiliary],
        skip_nonfinite: bool = False,
        checkify_errors: frozenset[ErrorCategory] = frozenset(),
        init_transform: InitTransform | Callable[[TrainState], TrainState] | None = None,
        precision: MixedPrecision | str | None = None,
    ) -> None:
        self.model = None if model is None else as_model(model)  # None: the Trainer says so when needed
        # The dtypes each forward pass computes in (the Trainer's `precision`); None: as the model is written.
        self.precision = as_precision(precision)  # "bf16" -> MixedPrecision(); "float32" -> None
        # What the Trainer applies to a fresh state (Kauldron's `trainstep.init_transform`), read from here.
        self.init_transform = init_transform
        # jax.experimental.checkify categories (Kauldron's `checkify_error_categories`): each compiled step
        # checks them (NaN, division by zero, out-of-bounds index...) and raises on the host after the call.
        self.checkify_errors = frozenset(checkify_errors)
        # A step whose loss is NaN or infinite leaves params, collections and optimizer state as they were.
        self.skip_nonfinite = skip_nonfinite
        self.optimizer = optimizer
        self.rng_streams = rng_streams
        self.losses = dict(losses)
        self.metrics = dict(metrics)
        self.summaries = dict(summaries)
        self.capture = InterestFilter(_all_paths(self.losses, self.metrics, self.summaries))
        # Traces by variant: (return_metrics, return_summaries) of a step, ("fused" | "unrolled" | "eval", ...).
        self.num_traces: Counter[tuple[bool | str, bool]] = Counter()
        # By (metrics, summaries, rows of a source, a block of rows): each its compiled step.
        self._jitted: dict[tuple[bool, bool, bool, bool], Callable[..., tuple[TrainState, AuxState]]] = {}
        # "fused" / "unrolled": their compiled calls
        self._jitted_groups: dict[str, Callable[..., tuple[TrainState, LossStates]]] = {}
        self._jitted_init: dict[ShapesKey, Callable[[], TrainState]] = {}  # by the batch's shapes
        self._jitted_eval: Callable[[TrainState, PyTree], AuxState] | None = None
        self._loss_specs_memo: dict[ShapesKey, LossStates] = {}
        self._forward_specs: dict[bool, Context] = {}  # by is_training: shapes of a context, for _check_labels
        self._labels_checked: set[bool] = set()  # the modes whose first batch's labels were checked

    # ---------------------------------------------------------------- init

    def init(self, element_spec: PyTree, shardings: TrainState | None = None) -> TrainState:
        """A fresh state (step 0) from the shapes of one batch; no batch is pulled.

        With `shardings` (a TrainState of Shardings) each array is created where it belongs, split or
        replicated: the whole state never exists on one device first."""
        key = shapes_key(element_spec)
        if shardings is not None or key not in self._jitted_init:
            # The batch of zeros is made inside the compiled init: no op runs (and compiles) on its own first.

            def init_state() -> TrainState:
                return self._init(_zeros_like_spec(element_spec))

            self._jitted_init[key] = jax.jit(init_state, out_shardings=shardings)
        return self._jitted_init[key]()

    def _init(self, batch: PyTree) -> TrainState:
        context = Context(step=jnp.zeros((), jnp.int32), batch=batch)
        rngs = self.rng_streams.init_rngs()
        if isinstance(self.model, NnxModel):
            all_streams = list(self.rng_streams.streams)
            train_rngs = self.rng_streams.train_rngs(0)
            params, collections = self.model.init({**train_rngs, **rngs}, context, all_streams)
        else:
            params, collections = self.model.init(rngs, context)
        return TrainState(
            step=jnp.zeros((), jnp.int32),
            params=params,
            collections=collections,
            opt_state=self.optimizer.init(params),
        )

    # ---------------------------------------------------------------- forward

    def forward(
        self,
        params: optax.Params,
        collections: PyTree,
        batch: PyTree,
        step: jax.Array | int,
        *,
        is_training: bool,
        capture: InterestFilter | None = None,
    ) -> Context:
        """The model's outputs in a Context: `preds`, `interms`, updated `collections`."""
        rngs = self.rng_streams.rngs("train" if is_training else "eval", step)
        context = Context(step=step, batch=batch, params=params, collections=collections)
        policy = self.precision
        model_params, model_context = params, context
        if policy is not None:  # the model reads cast copies; the context keeps the stored params and batch
            model_params = policy.cast_params(params)
            model_context = context.replace(params=model_params, batch=policy.cast_inputs(batch))
        preds, new_collections, interms = self.model.apply(
            model_params,
            collections,
            model_context,
            rngs=rngs,
            is_training=is_training,
            capture=self.capture if capture is None else capture,
        )
        if policy is not None:
            preds = policy.cast_outputs(preds)
            new_collections = keep_stored_dtypes(new_collections, collections)
        return context.replace(preds=preds, collections=new_collections, interms=interms)

    def forward_with_loss(
        self,
        params: optax.Params,
        collections: PyTree,
        batch: PyTree,
        step: jax.Array | int,
        *,
        is_training: bool,
    ) -> tuple[jax.Array, Context]:
        """`(loss_total, context)`: the forward pass and the weighted sum of the losses."""
        context = self.forward(params, collections, batch, step, is_training=is_training)
        loss_states = states_of(self.losses, context, "train_losses" if is_training else "losses")
        total = total_loss(loss_states)
        return total, context.replace(loss_states=loss_states, loss_total=total)

    # ---------------------------------------------------------------- step

    def step(
        self,
        state: TrainState,
        batch: PyTree,
        *,
        return_metrics: bool = False,
        return_summaries: bool = False,
        source: PyTree | None = None,
    ) -> tuple[TrainState, AuxState]:
        """One optimizer update. `state` is donated: do not use it afterwards. With `source` (a tree of arrays
        holding every example, on the device) `batch` is instead the rows of the batch (`int32[rows]`),
        gathered on the device: no batch is copied from the host. With `source`, `batch` may also be a block of
        rows (`int32[n, rows]`, on the device) holding this update's at `state.step % n`: the rows of many
        updates are copied in one transfer, and each update sends nothing."""
        # Asking for metrics when there are none gives the same outputs: the same compiled function.
        variant = (
            bool(return_metrics) and bool(self.metrics),
            bool(return_summaries) and bool(self.summaries),
        )
        in_block = source is not None and np.ndim(batch) == 2
        key = (*variant, source is not None, in_block)
        fn = self._jitted.get(key)
        if fn is None:

            def train_step(
                state: TrainState, batch: PyTree, source: PyTree | None
            ) -> tuple[TrainState, AuxState]:
                if in_block:
                    batch = jax.lax.dynamic_index_in_dim(batch, state.step % batch.shape[0], keepdims=False)
                if source is not None:
                    batch = gather_rows(source, batch)
                return self._step(state, batch, *variant)

            self._check_labels(state, batch, source, is_training=True)
            fn = self._jitted[key] = self._compiled(train_step, state)
        return fn(state, batch, source)

    def _compiled(self, fn: Callable[..., _Out], state: TrainState) -> Callable[..., _Out]:
        """`fn` jitted with `state` (its first argument) donated; with `checkify_errors`, checked."""
        if not self.checkify_errors:
            return jax.jit(fn, donate_argnums=(0,), out_shardings=_kept(state))
        if checkify.user_checks <= self.checkify_errors:  # then the losses check every batch's integer labels
            fn = _label_range.with_label_checks(fn)
        kept = _kept(state)  # checkify returns (error, outputs): the error's layout is XLA's
        checked = jax.jit(
            checkify.checkify(fn, errors=self.checkify_errors),
            donate_argnums=(0,),
            out_shardings=None if kept is None else (None, kept),
        )

        def run(*args: PyTree) -> _Out:
            error, out = checked(*args)
            error.throw()  # a JaxRuntimeError naming the failed check and where in the model it was
            return out

        return run

    def fused_steps(
        self, state: TrainState, batches: PyTree, num_steps: int, *, source: PyTree | None = None
    ) -> tuple[TrainState, LossStates]:
        """`num_steps` updates in one compiled call: `batches` stacks K batches on a new first axis, and the
        first `num_steps` of them (at most K) are trained on, in order; the rest are not used. With `source`
        (a tree of arrays holding every example, on the device) `batches` is instead `int32[K, rows]`: batch
        i is `source[batches[i]]`, gathered on the device.

        Usage: `state, losses = trainstep.fused_steps(state, stacked, 7)`; `losses` holds each step's loss
        states stacked (`[K, ...]`; the entries past `num_steps` are zeros). The parameters equal those of
        `num_steps` calls of `step`, bit for bit for most models (each update is the same computation, run
        `num_steps` times by a loop whose trip count is an argument, so any `num_steps <= K` reuses one
        compile), though a compiler may round the loop's body otherwise (XLA:CPU does for a small CNN's
        convolutions): the Trainer's default checks before it uses a loop. `state` is donated.
        """
        return self._group("fused", self._fused_steps, state, batches, num_steps, source)

    def _fused_steps(
        self, state: TrainState, batches: PyTree, num_steps: jax.Array, source: PyTree | None
    ) -> tuple[TrainState, LossStates]:
        self.num_traces[("fused", source is not None)] += 1
        count = jax.tree.leaves(batches)[0].shape[0]

        def batch_at(i: jax.Array) -> PyTree:
            if source is None:
                return jax.tree.map(lambda x: jax.lax.dynamic_index_in_dim(x, i, keepdims=False), batches)
            return gather_rows(source, jax.lax.dynamic_index_in_dim(batches, i, keepdims=False))

        loss_specs = self._loss_specs(state, jax.eval_shape(batch_at, jnp.int32(0)))
        stacked_losses = jax.tree.map(lambda s: jnp.zeros((count, *s.shape), s.dtype), loss_specs)

        def body(i: jax.Array, carry: tuple[TrainState, LossStates]) -> tuple[TrainState, LossStates]:
            current, losses = carry
            new_state, context = self._update(current, batch_at(i))
            losses = jax.tree.map(
                lambda stack, x: jax.lax.dynamic_update_index_in_dim(stack, x, i, 0),
                losses,
                context.loss_states,
            )
            return new_state, losses

        return jax.lax.fori_loop(0, num_steps, body, (state, stacked_losses))

    def unrolled_steps(
        self, state: TrainState, batches: PyTree, num_steps: int, *, source: PyTree | None = None
    ) -> tuple[TrainState, LossStates]:
        """`fused_steps` without a compiled loop: the program holds every one of the K stacked batches'
        updates in a row (K = their number), and an update past `num_steps` is computed but not kept (a
        select), so any `num_steps <= K` reuses one compile. For models a loop slows down: XLA:CPU runs a
        convolution inside a loop's body ~10x slower than outside one, while K updates written out keep its
        fast path and send one call instead of K (measured 1.3x single steps on a small CNN). Unlike the
        loop's, an update after the first may round differently from `step`'s (XLA compiles the K updates
        together: measured 1 ulp after 2 updates).

        Usage: `state, losses = trainstep.unrolled_steps(state, stacked_8, 5)`; `losses` as `fused_steps`'.
        """
        return self._group("unrolled", self._unrolled_steps, state, batches, num_steps, source)

    def _group(
        self,
        kind: str,
        fn: Callable[..., tuple[TrainState, LossStates]],
        state: TrainState,
        batches: PyTree,
        num_steps: int,
        source: PyTree | None,
    ) -> tuple[TrainState, LossStates]:
        """A call of `num_steps` stacked updates by `fn`, compiled once per kind (any count reuses it)."""
        jitted = self._jitted_groups.get(kind)
        if jitted is None:
            self._check_labels(state, batches, source, is_training=True, stacked=num_steps)
            jitted = self._jitted_groups[kind] = self._compiled(fn, state)
        return jitted(state, batches, np.int32(num_steps), source)

    def _unrolled_steps(
        self, state: TrainState, batches: PyTree, num_steps: jax.Array, source: PyTree | None
    ) -> tuple[TrainState, LossStates]:
        self.num_traces[("unrolled", source is not None)] += 1
        count = jax.tree.leaves(batches)[0].shape[0]
        losses = []
        for i in range(count):
            batch = jax.tree.map(lambda x, i=i: x[i], batches)
            new_state, context = self._update(state, gather_rows(source, batch) if source is not None else batch)
            keep = i < num_steps
            state = jax.tree.map(lambda new, old, keep=keep: jnp.where(keep, new, old), new_state, state)
            losses.append(context.loss_states)
        return state, jax.tree.map(lambda *xs: jnp.stack(xs), *losses)

    def _step(
        self, state: TrainState, batch: PyTree, return_metrics: bool, return_summaries: bool
    ) -> tuple[TrainState, AuxState]:
        self.num_traces[(return_metrics, return_summaries)] += 1
        new_state, context = self._update(state, batch)
        aux = AuxState(
            loss_states=context.loss_states,
            metric_states=states_of(self.metrics, context, "train_metrics") if return_metrics else {},
            summary_states=states_of(self.summaries, context, "train_summaries") if return_summaries else {},
        )
        return new_state, aux

    def _update(self, state: TrainState, batch: PyTree) -> tuple[TrainState, Context]:
        """Forward, losses, grads and the optimizer update: the new state and the step's full context."""
        grad_fn = jax.value_and_grad(self.forward_with_loss, has_aux=True)
        (total, context), grads = grad_fn(
            state.params, state.collections, batch, state.step, is_training=True
        )
        updates, opt_state = self.optimizer.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        context = context.replace(grads=grads, updates=updates, opt_state=opt_state)
        collections = context.collections
        if self.skip_nonfinite:
            finite = jnp.isfinite(total)
            keep = lambda new, old: jax.tree.map(lambda n, o: jnp.where(finite, n, o), new, old)  # noqa: E731
            params, opt_state = keep(params, state.params), keep(opt_state, state.opt_state)
            collections = keep(collections, state.collections)
        new_state = TrainState(
            step=state.step + 1, params=params, collections=collections, opt_state=opt_state
        )
        return new_state, context

    def eval_step(self, state: TrainState, batch: PyTree) -> AuxState:
        """Loss, metric and summary states of one batch with the model in eval mode (nothing is updated)."""
        if self._jitted_eval is None:
            self._check_labels(state, batch, None, is_training=False)
            self._jitted_eval = jax.jit(self._eval_step)
        return self._jitted_eval(state, batch)

    def _eval_step(self, state: TrainState, batch: PyTree) -> AuxState:
        self.num_traces[("eval", True)] += 1
        _, context = self.forward_with_loss(
            state.params, state.collections, batch, state.step, is_training=False
        )
        return AuxState(
            loss_states=context.loss_states,
            metric_states=states_of(_without_training_only(self.metrics), context, "metrics"),
            summary_states=states_of(_without_training_only(self.summaries), context, "summaries"),
        )

    def context_specs(self, state: TrainState, element_spec: PyTree) -> Context:
        """Shapes and dtypes of every context path of a logging step, from `jax.eval_shape` (nothing runs)."""

        def full(state: TrainState, batch: PyTree) -> Context:
            _, context = self._update(state, batch)
            return context.replace(
                metric_states=states_of(self.metrics, context, "train_metrics"),
                summary_states=states_of(self.summaries, context, "train_summaries"),
            )

        specs = jax.eval_shape(full, state, element_spec)
        self._loss_specs_memo[shapes_key(state, element_spec)] = specs.loss_states
        self._forward_specs[True] = specs
        return specs

    def _check_labels(
        self,
        state: TrainState,
        batch: PyTree,
        source: PyTree | None,
        *,
        is_training: bool,
        stacked: int = 0,
    ) -> None:
        """Before a mode's first compile: the integer labels of its first batch (of the first `stacked` batches
        of a stack; with `source`, of every example) within the logits' classes, on the host
        (`kd.train._first_batch`: a ConfigError)."""
        if is_training in self._labels_checked:
            return
        self._labels_checked.add(is_training)
        groups = (
            {"train_losses": self.losses, "train_metrics": self.metrics}
            if is_training
            else {"losses": self.losses, "metrics": _without_training_only(self.metrics)}
        )
        if not _first_batch.reads_int_labels(groups):
            return
        if source is not None:  # `batch` holds rows of `source`: one batch has its last axis's rows
            rows = np.shape(batch)[-1]
            spec = jax.tree.map(lambda x: jax.ShapeDtypeStruct((rows, *x.shape[1:]), x.dtype), source)
            values, seen = source, f"all {len(jax.tree.leaves(source)[0])} examples"
        else:
            spec = jax.tree.map(lambda x: jax.ShapeDtypeStruct(np.shape(x)[bool(stacked) :], x.dtype), batch)
            values, seen = batch, f"the first {stacked} batches" if stacked > 1 else "the first batch"
        specs = self._forward_specs.get(is_training)
        if specs is None:  # shapes only: the model is traced, nothing compiles
            specs = self._forward_specs[is_training] = jax.eval_shape(
                lambda s, b: self.forward(s.params, s.collections, b, s.step, is_training=is_training),
                state,
                spec,
            )
        _first_batch.check_label_ranges(
            groups, specs, values, seen=seen, stacked=0 if source is not None else stacked, model=self.model
        )

    def _loss_specs(self, state: TrainState, batch: PyTree) -> LossStates:
        """Shapes and dtypes of the loss states of an update on `state` and `batch` (kept from `context_specs`,
        which `Trainer.check()` computes, so a fused call's trace does not trace the update twice)."""
        key = shapes_key(state, batch)
        if key not in self._loss_specs_memo:
            self._loss_specs_memo[key] = jax.eval_shape(
                lambda s, b: self._update(s, b)[1].loss_states, state, batch
            )
        return self._loss_specs_memo[key]


def gather_rows(source: PyTree, rows: jax.Array) -> PyTree:
    """The batch of `rows` (`int32[rows]`, in bounds) of every array in `source`, gathered on the device."""
    return jax.tree.map(lambda x: x.at[rows].get(mode="promise_in_bounds"), source)


def states_of(objects: Mapping[str, Auxiliary], context: Context, field: str) -> dict[str, MetricState]:
    """`{name: obj.get_state_from_context(context)}`; a bad key or shape names `field[name]`."""
    out: dict[str, MetricState] = {}
    for name, obj in objects.items():
        where = f"{field}[{name!r}] ({type(obj).__name__})"
        try:
            out[name] = obj.get_state_from_context(context)
        except kontext.UnresolvedKeysError as e:
            raise KeyPathError(f"{where}: {e}\n{_available(context)}") from None
        except kontext.RequiredKeyError as e:
            raise KeyPathError(f"{where}: {e}") from None
        except ktyping.KTypeCheckError as e:
            raise ShapeMismatchError(f"{where}: {e}") from None
        state = out[name]
        if not (callable(getattr(state, "merge", None)) and callable(getattr(state, "compute", None))):
            shown = (
                f"an array ({np.dtype(state.dtype).name}{list(state.shape)})"
                if hasattr(state, "shape") and hasattr(state, "dtype")
                else f"a {type(state).__name__}"
            )
            raise ConfigError(
                f"{where}: get_state returned {shown}, not a state: return a `kd.metrics.State`, which merges "
                "across steps and computes the value (`kd.metrics.AverageState.from_values(values)`, or a "
                "`@kd.metrics.state_dataclass` of your own; docs/guides/extending.md)"
            )
    return out


def _available(context: Context, limit: int = 40) -> str:
    paths = [p for p in context.available_paths() if not p.startswith(("opt_state", "updates", "grads"))]
    shown = ", ".join(paths[:limit]) + (f", ... ({len(paths) - limit} more)" if len(paths) > limit else "")
    return f"  available context paths: {shown}"


# Context fields that only a train step has: metrics reading them are left out of evaluations.
TRAINING_ONLY = frozenset({"grads", "updates", "opt_state"})


def _without_training_only(objects: Mapping[str, Auxiliary]) -> dict[str, Auxiliary]:
    """The objects none of whose keys reads `grads`, `updates` or `opt_state` (absent when evaluating)."""
    kept = {}
    for name, obj in objects.items():
        paths: list[str] = []
        _collect_paths(kontext.get_keypaths(obj), paths)
        if not any(_root_field(path) in TRAINING_ONLY for path in paths):
            kept[name] = obj
    return kept


def _root_field(path: str) -> object:
    """The context field a key path starts at (`"grads.dense.kernel"` -> `"grads"`), parsed by kontext."""
    parts = kontext.GlobPath.from_str(path).parts
    return parts[0] if parts else None


def _all_paths(*groups: Mapping[str, Auxiliary]) -> list[str]:
    paths: list[str] = []
    for group in groups:
        for obj in group.values():
            _collect_paths(kontext.get_keypaths(obj), paths)
    return paths


def _collect_paths(tree: object, out: list[str]) -> None:
    """The key paths (strings) of `kontext.get_keypaths`'s nested dicts and lists, appended to `out`."""
    if isinstance(tree, str):
        out.append(tree)
    elif isinstance(tree, Mapping):
        for value in tree.values():
            _collect_paths(value, out)
    elif isinstance(tree, (list, tuple)):
        for value in tree:
            _collect_paths(value, out)


def _zeros_like_spec(spec: PyTree) -> PyTree:
    """Zeros of each spec's shape, in the dtype JAX will give the data (numpy's default int64 labels are int32
    without x64: said to JAX as such, so that no warning is printed about a dtype the user never asked for)."""
    return jax.tree.map(lambda s: jnp.zeros(s.shape, jax.dtypes.canonicalize_dtype(s.dtype)), spec)


def shapes_key(*trees: PyTree) -> ShapesKey:
    """What an abstract evaluation depends on: the trees' structure and each leaf's shape and dtype."""
    leaves, treedef = jax.tree.flatten(trees)
    return (
        treedef,
        *((np.shape(x), str(x.dtype if hasattr(x, "dtype") else np.result_type(x))) for x in leaves),
    )


def _kept(state: TrainState) -> tuple[TrainState, None] | None:
    """`out_shardings` for a step: on several devices the new state keeps the old one's layout (the rest is
    left to XLA); on one device nothing is pinned."""
    if jax.device_count() == 1:
        return None
    return (jax.tree.map(lambda x: x.sharding, state), None)
