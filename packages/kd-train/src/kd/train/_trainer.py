"""`Trainer`: one frozen dataclass describing a run; `trainer.train()` runs it.

    with konfig.imports():
        import kd, optax
    cfg = kd.train.Trainer(seed=0, train_ds=..., model=..., optimizer=optax.adam(1e-3),
                           train_losses={"l2": kd.losses.L2(preds="preds", targets="batch.y")})
    state, aux = konfig.resolve(cfg).train()

The loop reads top to bottom: check the config, init (or restore) the state, then for each step: next
batch, step, and on logging steps write metrics, run the evaluators, save a checkpoint.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Final, Protocol

import jax
import konfig
import kontext
import optax
from flax import linen as nn

from kd import ckpts, sharding, writers, xm
from kd._interfaces import Auxiliary, Checkpointer, Evaluator, PyTree, TrainingData, Writer
from kd._phase import during
from kd.ckpts import (
    DefaultCheckpointer,
    InitTransform,
    NoWorkdirCheckpointer,
    apply_init_transform,
    default_checkpointer,
)
from kd.runtime import (
    ConfigError,
    Context,
    KeyPathError,
    NnxModel,
    RngStream,
    RngStreams,
    TrainState,
    as_model,
    as_rng_streams,
    build_model,
    fill_from_root,
    intermediate_specs,
)
from kd.sharding import ShardingStrategy
from kd.train import _eval_only
from kd.train._eval_only import eval_only_trainer, evaluate_only
from kd.train._hook import Hook
from kd.train._loop import TrainingRun
from kd.train._nonfinite import POLICIES as NONFINITE_POLICIES
from kd.train._plan import MAX_STEPS_PER_CALL
from kd.train._precision import MixedPrecision, as_precision
from kd.train._predict import predict
from kd.train._profiler import Profiler
from kd.train._progress import Progress
from kd.train._setup import Setup
from kd.train._step import TrainStep
from kd.train._stop import StopRequest
from kd.train._types import LoggedValue

ModelLike = nn.Module | NnxModel | Callable[..., object] | konfig.ConfigDict
"""What `Trainer.model` takes: a linen Module, an NNX module class configured without `rngs` (or its konfig
node, built by the Trainer), or a `kd.train.NnxModel`; after `__post_init__` a Module or an NnxModel."""


# Fields the Trainer reads itself; every other field is only filled (ROOT_CFG_REF) and passed along.
_GROUPS = ("train_losses", "train_metrics", "train_summaries")
# Dict fields where None (Kauldron's `cfg.evals = None`) means empty.
_DICTS = ("schedules", "train_losses", "train_metrics", "train_summaries", "evals", "aux")


class _DerivedSteps(int):
    """`num_train_steps` computed from the data (num_epochs x batches per epoch): derived again after
    `dataclasses.replace(trainer, train_ds=...)`, unlike a number the user set."""


class _Unset:
    """The `checkpointer` field's default: `kd.ckpts.default_checkpointer(...)` when the workdir is set, else
    none (a `kd.ckpts.NoWorkdirCheckpointer`)."""

    def __repr__(self) -> str:
        return "<a kd.ckpts.Checkpointer when workdir is set>"


UNSET: Final = _Unset()


class Exporter(Protocol):
    """What `Trainer.exporter` is called as (`kd.export.ModelExporter`), once the state is ready."""

    def export(
        self, *, model: ModelLike, state: TrainState, element_spec: PyTree, is_training: bool
    ) -> object: ...


@dataclasses.dataclass(frozen=True, kw_only=True)
class Trainer:
    """A training run: model + data + optax optimizer + losses / metrics / summaries wired by kontext keys.

    Usage: `state, logged = trainer.train()` (exactly `num_train_steps` updates; `logged` is the last logged
    values). Mid-level: `trainer.init_state()`, `trainer.trainstep.step(state, batch)`, `trainer.state_specs`,
    `trainer.context_specs`.

    Attributes:
      seed: seeds the RNG streams and, through `ROOT_CFG_REF.seed`, the data pipelines.
      workdir: where checkpoints, `metrics.jsonl` and `config.json` go; None writes nothing.
      train_ds: the training pipeline (`kd.data`): `iter()`, `element_spec`.
      eval_ds: the evaluators' default pipeline (`kd.data`); None: each evaluator names its own.
      model: a flax linen Module, or an NNX module class configured without `rngs`.
      optimizer: any optax GradientTransformation.
      schedules: name -> optax schedule, logged as `schedules/<name>` (the value the latest update used).
      rng_streams: `kd.train.RngStreams` (or a list of `RngStream`): `params`, `dropout`, `default` + yours.
      num_train_steps: optimizer updates of the run; None derives it as len(train_ds) (batches over its num_epochs).
      stop_after_steps: stop once `state.step` reaches this (a cap on num_train_steps that leaves schedules
        unchanged), as in Kauldron.
      train_losses: name -> `kd.losses` loss (kontext Key fields say what it reads); their sum is minimized.
      train_metrics: name -> `kd.metrics` metric, computed on the training batches and logged.
      train_summaries: name -> `kd.summaries` summary (images, histograms, ...), logged every
        `log_summaries_every` steps.
      log_metrics_every: the losses' and metrics' logging period in steps; the first and the last step log
        too. Rows are labelled with `state.step` after the update (1 ... num_train_steps).
      log_summaries_every: the summaries' logging period in steps; the first and the last step log too.
      evals: name -> `kd.evals.Evaluator`, run when their `run` strategy says (step 0 included).
      hooks: `kd.train.Hook`s (your own, `kd.train.EarlyStopping`), called in order at the run's start, after
        each call of the loop (after the evaluators, before the checkpoint: with the values logged and
        evaluated at that step; a hook may stop the run there, which is saved and makes the run complete) and
        at its end.
      checkpointer: `kd.ckpts.Checkpointer` (needs `workdir`); the run resumes from its latest step. Default:
        with a workdir, one saving about every tenth of the run (1,000 to 10,000 steps), the last step and a
        SIGTERM's or Ctrl-C's, keeping 3 (`kd.ckpts.default_checkpointer`); None opts out.
      init_transform: applied to a fresh state (not to a restored one), e.g. to load pretrained weights:
        a `kd.ckpts.PartialLoader` (any object with `transform(state) -> state`) or a function of the state.
      writer: `kd.writers` writer; default: the terminal and, with a workdir, `<workdir>/metrics.jsonl` and
        TensorBoard event files (`<workdir>/train/`, `<workdir>/<evaluator>/`).
      sharding: `kd.sharding.ShardingStrategy`: batches split over devices, the state replicated.
      precision: the dtypes the model computes in: None (default) as the model is written; `"bfloat16"` (or
        `"bf16"`, or `kd.train.MixedPrecision(compute_dtype="bfloat16", output_dtype="float32")`) casts the
        floating params and batch to bfloat16 for each forward pass, training and evaluation, and the outputs to
        float32 for the losses and metrics; params and optimizer state stay float32; `"float32"` is None.
      aux: free values for `cfg.ref.aux...` and `ROOT_CFG_REF.aux...`.
      progress: `kd.train.Progress`: the terminal bar (default: shown when stderr is a terminal).
      profiler: `kd.train.Profiler` to trace a few steps into `<workdir>/profile`; None (default) traces nothing.
      steps_per_call: updates per compiled call (a loop over stacked batches, compiled once); None (default)
        chooses by measuring in the first logging window: fused calls (the updates between two logging
        steps in as few calls as fit: at most 128; stacked host batches within 8 MB on CPU, 64 MB on
        accelerators; calls of about 2 s at most), single steps, or calls of 8 updates written out where a
        compiled loop loses (convolutions on XLA:CPU); the choice is printed once. A call never runs past a
        step that logs, evaluates, checkpoints or bounds a profile. 1 runs every update as its own compiled
        step (no loop; a resume bit-identical to an uninterrupted run), the hooks after the last of a window.
      on_nonfinite_loss: `"stop"` (default): a NaN or infinite loss raises `kd.train.NonFiniteLossError` naming
        the step and the losses, before anything computed from it is logged or checkpointed; `"skip"`: such
        an update is not applied (the state stays as it was, the data moves on) and is reported.
      checkify_error_categories: `jax.experimental.checkify` categories (`checkify.all_checks`,
        `checkify.nan_checks`, ...): each compiled step checks them and raises where one fails (slower).
      exporter: a `kd.export.ModelExporter`, called once the state is ready (before the first step).
      setup: `kd.train.Setup`: tags (in run.json), the bar's label; `eval_only` (see `Trainer.eval_only`).
      xm_job: a `kd.xm.Job` (cluster resources), kept unresolved; `kd-train launch` reads it.
    """

    seed: int = 0
    workdir: str | None = None
    train_ds: TrainingData | None = None
    eval_ds: TrainingData | None = None
    model: ModelLike | None = None
    optimizer: optax.GradientTransformation | None = None
    schedules: Mapping[str, optax.Schedule] = dataclasses.field(default_factory=dict)
    rng_streams: RngStreams | Sequence[RngStream] | None = None
    num_train_steps: int | None = None
    stop_after_steps: int | None = None
    train_losses: Mapping[str, Auxiliary] = dataclasses.field(default_factory=dict)
    train_metrics: Mapping[str, Auxiliary] = dataclasses.field(default_factory=dict)
    train_summaries: Mapping[str, Auxiliary] = dataclasses.field(default_factory=dict)
    log_metrics_every: int = 100
    log_summaries_every: int = 1000
    evals: Mapping[str, Evaluator] = dataclasses.field(default_factory=dict)
    hooks: Sequence[Hook] = ()
    checkpointer: Checkpointer | _Unset | None = UNSET
    init_transform: InitTransform | Callable[[TrainState], TrainState] | None = None
    writer: Writer | None = None
    sharding: ShardingStrategy | None = None
    precision: MixedPrecision | str | None = None
    aux: Mapping[str, object] = dataclasses.field(default_factory=dict)
    progress: Progress | None = None
    profiler: Profiler | None = None
    on_nonfinite_loss: str = "stop"
    steps_per_call: int | None = None
    checkify_error_categories: frozenset[type[Exception]] = frozenset()  # checkify.ErrorCategory
    exporter: Exporter | None = None
    setup: Setup = dataclasses.field(default_factory=Setup)
    xm_job: xm.Job | konfig.ConfigDict | None = None

    # konfig hands the model over unbuilt: an NNX class is built here, with the run's RNG streams. The job spec
    # stays a config (as Kauldron's): `kd-train launch` reads it before anything is built.
    __konfig_resolve_exclude_fields__ = ("model", "xm_job")

    @classmethod
    def eval_only(cls, **kwargs: object) -> Trainer:
        """A Trainer that evaluates a trained run's latest checkpoint instead of training (Kauldron's).

        Usage (in a konfig config): `cfg = kd.train.Trainer.eval_only()`, then `cfg.evals = {...}` and
        `--cfg.aux.workdir=/path/to/trained/run`. The model, its RNG streams, sharding and state shapes
        are the trained run's (its config.json, resolved in safe mode), the weights and step its latest
        checkpoint's; `train()` runs every evaluator once and returns `(state, values)`. See
        `kd.train._eval_only`.
        """
        return eval_only_trainer(cls, kwargs)

    def __post_init__(self) -> None:
        # A frozen dataclass normalises its fields here, once, as it is built (the dataclass idiom); after that
        # nothing on it changes. `_memo` is its one private slot: what is computed once per Trainer
        # (`check()` done, the config it was resolved from), a dict that `dataclasses.replace` starts afresh.
        _set = functools.partial(object.__setattr__, self)
        _set("_memo", {})
        if isinstance(self.workdir, str) and self.workdir.startswith("~"):
            _set("workdir", os.path.expanduser(self.workdir))  # `~/runs/a` is the home folder's, as in a shell
        model = build_model(self.model)
        if model is not None and not isinstance(model, nn.Module):
            model = as_model(model)  # one NnxModel, shared with the evaluators (ROOT_CFG_REF.model)
        _set("model", model)
        for name in _DICTS:
            if getattr(self, name) is None:
                _set(name, {})
        # A list of hooks (a config's) is held as a tuple: the Trainer is frozen.
        if self.hooks is None or (isinstance(self.hooks, Sequence) and not isinstance(self.hooks, str)):
            _set("hooks", tuple(self.hooks or ()))
        _set("rng_streams", as_rng_streams(self.rng_streams))
        _set("precision", as_precision(self.precision))  # "bf16" -> MixedPrecision(); "float32" -> None
        if self.sharding is None:
            _set("sharding", sharding.ShardingStrategy())
        if self.checkpointer is None:  # opted out
            _set("checkpointer", ckpts.NoopCheckpointer())
        if self.writer is None or getattr(
            self.writer, "default_set", False
        ):  # (chosen again after a replace)
            _set("writer", _default_writer(self.workdir))
        if self.progress is None:
            _set("progress", Progress())
        _set("evals", _named_evaluators(self.evals))  # before the fill: it keeps what it filled from the root
        memo: dict[int, object] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            _set(field.name, fill_from_root(self, value, f"Trainer.{field.name}", memo))
        _check_fields(self)
        if self.num_train_steps is None or isinstance(self.num_train_steps, _DerivedSteps):
            try:
                _set("num_train_steps", _DerivedSteps(_steps_from_dataset(self.train_ds)))
            except ConfigError as e:  # said when the run's length is needed (`train()`, a default checkpointer)
                _set("num_train_steps", None)
                self._memo["steps_error"] = e
        if self.checkpointer is UNSET or isinstance(
            self.checkpointer, (DefaultCheckpointer, NoWorkdirCheckpointer)
        ):
            # chosen here, once the run's length is known (and again after a `dataclasses.replace`)
            chosen = (
                NoWorkdirCheckpointer()
                if self.workdir is None
                else default_checkpointer(
                    workdir=self.workdir,
                    num_train_steps=self.num_train_steps or 0,  # unknown: `train()` refuses before any save
                    log_every=self.log_metrics_every,
                )
            )
            _set("checkpointer", chosen)

    # ---------------------------------------------------------------- mid-level API

    @functools.cached_property
    def trainstep(self) -> TrainStep:
        return TrainStep(
            model=self.model,
            optimizer=self.optimizer,
            rng_streams=self.rng_streams,
            losses=self.train_losses,
            metrics=self.train_metrics,
            summaries=self.train_summaries,
            skip_nonfinite=self.on_nonfinite_loss == "skip",
            checkify_errors=frozenset(self.checkify_error_categories or ()),
            init_transform=self.init_transform,
            precision=self.precision,
        )

    @functools.cached_property
    def element_spec(self) -> PyTree:
        """Shapes and dtypes of one (host-local) training batch."""
        spec = getattr(self.train_ds, "element_spec", None)
        if spec is None:
            raise ConfigError(f"Trainer.train_ds: {type(self.train_ds).__name__} has no `element_spec`")
        return spec

    @functools.cached_property
    def state_specs(self) -> TrainState:
        """`jax.ShapeDtypeStruct` of every leaf of the TrainState (nothing is computed)."""
        require_fields(self, ("train_ds", "model", "optimizer"), "the train state")
        return jax.eval_shape(self.trainstep._init, self.element_spec)

    @functools.cached_property
    def context_specs(self) -> Context:
        """Every path a loss / metric / summary can read, with shape and dtype (`jax.eval_shape`, nothing runs)."""
        return self.trainstep.context_specs(self.state_specs, self.element_spec)

    def init_state(self) -> TrainState:
        """A fresh state placed on the devices (`init_transform` applied)."""
        shardings = self.sharding.state_shardings(self.state_specs)
        state = self.trainstep.init(self.element_spec, shardings)  # created in place, split or replicated
        transform = self.trainstep.init_transform  # the Trainer's (one object: Kauldron reads it there)
        if transform is None:
            return state
        # a kd.ckpts.InitTransform (`.transform`, then Kauldron's `.transform_after_optimizer`) or a function
        state = apply_init_transform(transform, state)
        return jax.device_put(state, shardings)

    def check(self) -> None:
        """Traces the train step and every evaluator abstractly: bad keys and shapes fail here, before any
        compile or file write. Checked once per Trainer (`train()` after `check()` does not trace again)."""
        if self._memo.get("checked"):
            return
        require_fields(self, ("train_ds", "model", "optimizer"), "tracing the train step")
        with during("tracing the model and the train step (Trainer.check)"):
            self._check()
        self._memo["checked"] = True

    def _check(self) -> None:
        try:
            self.sharding.check_batch(self.element_spec)
        except ValueError as e:
            raise ConfigError(f"Trainer.train_ds: {e}") from None
        try:
            self.context_specs  # noqa: B018
        except KeyPathError as e:
            if "= 'interms" not in str(e):
                raise
            raise KeyPathError(f"{e}\n{self._available_interms(str(e))}") from None
        except kontext.UnresolvedKeysError as e:  # the model's own input keys
            raise KeyPathError(f"Trainer.model ({type(self.model).__name__}) inputs: {e}") from None
        for name, evaluator in self.evals.items():
            check = getattr(evaluator, "check", None)
            if check is not None:
                with during(f"tracing evaluator {name!r} (Trainer.check)"):
                    check(self.state_specs, where=f"evals[{name!r}]")

    def _available_interms(self, message: str) -> str:
        """Every intermediate the model can give (only the asked-for ones are captured, so list them all),
        with the closest to each `interms.` path that `message` names."""
        paths = list(intermediate_specs(self))
        lines = ["  intermediates the model gives: " + (", ".join(paths) or "none")]
        for wanted in dict.fromkeys(re.findall(r"= '(interms[^']*)'", message)):
            close = difflib.get_close_matches(wanted, paths, n=2, cutoff=0.6)
            if close:
                lines.append(f"  did you mean {' or '.join(repr(c) for c in close)} for {wanted!r}?")
        return "\n".join(lines)

    def __post_konfig_resolve__(self, cfg: konfig.ConfigDict) -> None:
        """Keeps the config this Trainer was resolved from; `train()` writes it into the workdir."""
        self._memo["config_json"] = konfig.to_json(cfg)

    @property
    def config_json(self) -> str | None:
        """The config this Trainer was resolved from (`konfig.to_json`); None when it was built in Python.

        Usage: `trainer.config_json` (the run writes it into its workdir as config.json)."""
        return self._memo.get("config_json")

    # ---------------------------------------------------------------- the loop

    def train(self) -> tuple[TrainState, dict[str, LoggedValue]]:
        """Runs until `num_train_steps` (or `stop_after_steps`, or one of `hooks` stops it: `stopped_early`);
        returns `(state, last logged values)`.

        In a workdir holding checkpoints it continues from the latest complete one: same state, the data from
        the next batch, the logs without the steps after it. A SIGTERM (preemption) ends the loop after the
        current call (a step, or fused steps of about 2 s at most), which is checkpointed; `state.step` then
        tells where it stopped, and the next `train()` in the same workdir continues from there. A non-finite
        loss stops the run (`NonFiniteLossError`) before anything computed from it is logged or saved, or
        skips that update (`on_nonfinite_loss`). The calls and what is due after each are planned up front
        (`kd.train._plan`); the hooks (`kd.train._hooks`) log, evaluate, checkpoint and profile.
        """
        if self.setup.eval_only:
            return evaluate_only(self)
        require_fields(self, tuple(_NEEDED), "training")
        self.check()
        self._memo["stopped_early"] = None
        with TrainingRun(self) as run:  # the run record, the state restored or fresh, writers and hooks open
            state = run.state
            for call in run.plan:
                for hook in run.hooks:
                    hook.before(call)
                state, out = run.runner.run(state, call)
                for hook in run.hooks:
                    hook.after(call, state, out)
                if out.stop:  # a SIGTERM, or one of `hooks` asked (early stopping): the call was checkpointed
                    break
            run.finish(state)
        self._memo["stopped_early"] = run.stopped_early
        return state, run.logged

    def predict(
        self, data: PyTree | Iterable[PyTree], *, state: TrainState | None = None, num_batches: int | None = None
    ) -> PyTree:
        """The model's `preds` as numpy arrays, in evaluation mode: for one batch (`trainer.predict(batch)`, a
        dict as the data yields), or every batch of a dataset concatenated on the first axis
        (`trainer.predict(eval_ds)`, as Keras' `model.predict`). The state is the latest checkpoint in the
        workdir (read-only; ConfigError when there is none), or `state=`. See `kd.train._predict`."""
        return predict(self, data, state=state, num_batches=num_batches)

    @property
    def stopped_early(self) -> StopRequest | None:
        """Why the last `train()` ended before its stop step at a hook's request, or None: `.step`, `.reason`
        (what the loop printed: `early stopping at step 400: <reason>`), `.hook` (its `state_key`). Also set
        when `train()` found the run in its workdir stopped early before (nothing left to train)."""
        return self._memo.get("stopped_early")

    @property
    def stop_step(self) -> int:
        """The step this invocation trains to: `num_train_steps`, or `stop_after_steps` when lower."""
        if self.num_train_steps is None:
            require_fields(self, tuple(_NEEDED), "training")  # says why the run's length is unknown
        last = self.num_train_steps
        return last if self.stop_after_steps is None else min(last, self.stop_after_steps)

    @property
    def _active_writer(self) -> Writer:
        """`writer` on process 0; on the other hosts one that writes nothing (all compute, one writes)."""
        return self.writer if jax.process_index() == 0 else _SILENT_WRITER

    def restore_or_init(self) -> tuple[TrainState, Iterator[PyTree], Mapping[str, object] | None]:
        """`(state, data iterator, run info)`: the latest complete checkpoint's, positioned at the batch after
        it, or a fresh state, the first batch and None.

        Usage: `state, data, run_info = trainer.restore_or_init()` (what `train()` starts from)."""
        data = iter(self.train_ds)
        checkpointer = self.checkpointer
        if checkpointer.latest_step is None:
            return self.init_state(), data, None
        restored = checkpointer.restore_latest(self.sharding.state_template(self.state_specs))
        if restored is None:  # every checkpoint there was unreadable (each was set aside with a warning)
            return self.init_state(), data, None
        state, data_state = restored
        if data_state is not None and hasattr(data, "set_state"):
            data.set_state(data_state)
        info = checkpointer.info(int(state.step))
        saved_seed = info.get("seed")
        if saved_seed is not None and saved_seed != self.seed:
            warnings.warn(
                f"Trainer.seed is {self.seed} but the checkpoint of step {int(state.step)} in {self.workdir} was "
                f"trained with seed {saved_seed}: the rest of the run draws other random numbers than the "
                "first part did.",
                stacklevel=3,
            )
        return state, data, info


_SILENT_WRITER = writers.Writer()


def _default_writer(workdir: str | None) -> Writer:
    """`kd.writers.KDMetricWriter`: the terminal, and with a workdir `metrics.jsonl` and TensorBoard event files
    (`<workdir>/train/`, `<workdir>/<evaluator>/`); chosen again by a `dataclasses.replace`."""
    chosen = writers.KDMetricWriter()
    if workdir is None:
        chosen.writers = [writers.PrintWriter()]
    return chosen


def _named_evaluators(evals: object) -> object:
    """Each evaluator whose `name` is None (or its class's default, Kauldron's "eval") takes its key in
    `Trainer.evals`, as in Kauldron."""
    if not isinstance(evals, Mapping):
        return evals  # `_check_fields` says what is wrong
    named = {}
    for key, evaluator in evals.items():
        if (
            dataclasses.is_dataclass(evaluator)
            and not isinstance(evaluator, type)
            and any(f.name == "name" for f in dataclasses.fields(evaluator))
            and evaluator.name in (None, getattr(type(evaluator), "__kd_default_name__", None))
        ):
            evaluator = dataclasses.replace(evaluator, name=str(key))
        named[key] = evaluator
    return named


def _steps_from_dataset(ds: object) -> int:
    epochs = getattr(ds, "num_epochs", None)
    try:
        per_epoch = ds.batches_per_epoch
    except (AttributeError, TypeError):
        per_epoch = None
    if epochs is not None:
        try:
            return len(ds)  # Kauldron's meaning: batches over all epochs.
        except TypeError:
            pass
    fix = "give train_ds a finite num_epochs" if epochs is None else "use a train_ds whose length is known"
    raise ConfigError(
        "Trainer.num_train_steps: not set, and cannot be derived from train_ds "
        f"(num_epochs={epochs!r}, batches per epoch={'unknown' if per_epoch is None else per_epoch}); "
        f"set num_train_steps, or {fix}."
    )


# What training needs, checked when it is needed (as Kauldron does: a Trainer without a model or an optimizer
# is built, replaced and inspected; `check()`, `state_specs` and `train()` say what is missing).
_NEEDED = {
    "train_ds": lambda t: t.train_ds is not None,
    "model": lambda t: t.model is not None,
    "optimizer": lambda t: t.optimizer is not None,
    "train_losses": lambda t: bool(t.train_losses),
}
_NEEDED_WHY = {
    "train_ds": "required (a kd.data pipeline or any object with __iter__ and element_spec)",
    "model": "required (a flax linen Module or an NNX module class)",
    "optimizer": "required (an optax.GradientTransformation)",
    "train_losses": "at least one loss is needed, e.g. {'l2': kd.losses.L2(...)}",
}


def require_fields(trainer: Trainer, fields: tuple[str, ...], for_what: str) -> None:
    """Raises ConfigError naming each of `fields` the Trainer lacks for `for_what` (e.g. "training")."""
    missing = [f"{name}: {_NEEDED_WHY[name]}" for name in fields if not _NEEDED[name](trainer)]
    if not missing and for_what == "training" and trainer.num_train_steps is None:
        raise trainer._memo["steps_error"]
    if missing:
        raise ConfigError(f"Trainer config is not valid for {for_what}:\n  - " + "\n  - ".join(missing))


def _check_fields(trainer: Trainer) -> None:
    """Type checks that name the field at fault, before anything is traced or written."""
    problems: list[str] = []
    opt = trainer.optimizer
    if opt is not None and not (callable(getattr(opt, "init", None)) and callable(getattr(opt, "update", None))):
        problems.append(f"optimizer: expected an optax.GradientTransformation, got {opt!r}")
    for group in _GROUPS:
        value = getattr(trainer, group)
        if not isinstance(value, Mapping):
            problems.append(f"{group}: expected a dict name -> object, got {type(value).__name__}")
            continue
        for name, obj in value.items():
            if not callable(getattr(obj, "get_state_from_context", None)):
                problems.append(f"{group}[{name!r}]: expected a kd loss / metric / summary, got {obj!r}")
    for name, schedule in dict(trainer.schedules).items():
        if not callable(schedule):
            problems.append(f"schedules[{name!r}]: expected a schedule (step -> value), got {schedule!r}")
    for field in ("num_train_steps", "stop_after_steps"):
        value = getattr(trainer, field)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            problems.append(f"{field}: expected a non-negative int or None, got {value!r}")
    for field in ("log_metrics_every", "log_summaries_every"):
        value = getattr(trainer, field)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            problems.append(f"{field}: expected a positive int, got {value!r}")
    value = trainer.steps_per_call
    if value is not None and (type(value) is not int or not 1 <= value <= MAX_STEPS_PER_CALL * 8):
        problems.append(
            f"steps_per_call: expected None or an int in [1, {MAX_STEPS_PER_CALL * 8}], got {value!r}"
        )
    if not isinstance(trainer.sharding, sharding.ShardingStrategy):
        hint = (
            " (on the command line a call is written 'py::kd.sharding.ShardingStrategy(...)')"
            if isinstance(trainer.sharding, str)
            else ""
        )
        problems.append(f"sharding: expected a kd.sharding.ShardingStrategy, got {trainer.sharding!r}{hint}")
    if trainer.on_nonfinite_loss not in NONFINITE_POLICIES:
        problems.append(f"on_nonfinite_loss: expected 'stop' or 'skip', got {trainer.on_nonfinite_loss!r}")
    if not isinstance(trainer.rng_streams, RngStreams):
        problems.append(f"rng_streams: expected kd.train.RngStreams, got {trainer.rng_streams!r}")
    if getattr(trainer.checkpointer, "workdir", "") is None:
        problems.append(
            "checkpointer: kd.ckpts.Checkpointer saves under the workdir, but Trainer.workdir is not set "
            "(set it in the config or with --cfg.workdir=/path/to/run)"
        )
    for name, evaluator in dict(trainer.evals).items():
        if not callable(getattr(evaluator, "evaluate", None)):
            problems.append(f"evals[{name!r}]: expected a kd.evals.Evaluator, got {evaluator!r}")
    problems += _hook_problems(trainer.hooks)
    if problems:
        raise ConfigError("Trainer config is not valid:\n  - " + "\n  - ".join(problems))


def _hook_problems(hooks: object) -> list[str]:
    """What is wrong with `Trainer.hooks`: not a list, or an entry without any `kd.train.Hook` method."""
    if not isinstance(hooks, tuple):
        one_hook = any(callable(getattr(hooks, method, None)) for method in _HOOK_METHODS)
        wrapped = " (a list: hooks=[...])" if one_hook else ""
        return [f"hooks: expected a list of kd.train.Hook{wrapped}, got {hooks!r}"]
    return [
        f"hooks[{index}]: expected a kd.train.Hook (with {', '.join(_HOOK_METHODS)}), got {hook!r}"
        for index, hook in enumerate(hooks)
        if not any(callable(getattr(hook, method, None)) for method in _HOOK_METHODS)
    ]


_HOOK_METHODS = ("on_train_start", "after_step", "on_train_end")


# `cfg = kd.train.Trainer.eval_only()` in a config starts with `cfg.aux.workdir` (to be set: the trained run)
# and `cfg.evals`, so `cfg.aux.workdir = ...` and `cfg.evals["test"] = ...` work on it, as in Kauldron.
konfig.register_default_values(
    konfig.ConfigDict(
        {
            "__qualname__": "kd.train:Trainer.eval_only",
            "aux": {_eval_only.SOURCE_KEY: konfig.placeholder(str)},
            "evals": {},
        }
    )
)
