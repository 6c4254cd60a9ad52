"""`Trainer.eval_only()`: a run that evaluates another run's last checkpoint (Kauldron's eval-only config).

    cfg = kd.train.Trainer.eval_only()        # in a konfig config; cfg.aux.workdir names the trained run
    cfg.evals = {"test": kd.evals.Evaluator(run=kd.evals.StandaloneLastCheckpoint(), ds=...)}
    # kd-train --cfg=eval.py --cfg.aux.workdir=/runs/base --cfg.workdir=/runs/base-eval

The model, its RNG streams, sharding and the state's shapes come from the trained run's config.json
(resolved in konfig's safe mode with the modules its run.json recorded); the parameters, collections and
step from its latest checkpoint. Every evaluator runs once at that step; the values go to this run's writer
(`<workdir>/metrics.jsonl`, TensorBoard), never to the trained run's (its config.json's writers are not built). Kauldron names the trained run by XManager ids
(`cfg.aux.xid`, `wid`); here it is its folder, `cfg.aux.workdir`. Kauldron's eval-only example instead gives the
trained run's folder as `cfg.workdir`: with `cfg.aux.workdir` unset, that run is evaluated and this one writes to
its `eval_only/` subfolder (`eval_only_in_place`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

import jax
import konfig
from konfig import current_policy

from kd._phase import during
from kd._run_policy import config_folder_on_path, run_policy
from kd.runtime import ConfigError, parameter_table
from kd.train._setup import Setup
from kd.writers import leave_out_writers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd._interfaces import Checkpointer
    from kd.runtime import TrainState
    from kd.train._trainer import Trainer
    from kd.train._types import LoggedValue

SOURCE_KEY = "workdir"
"""`cfg.aux.workdir`: the trained run an eval-only Trainer evaluates."""

IN_PLACE_FOLDER = "eval_only"
"""Kauldron's form, `cfg.workdir` = the trained run's folder and no `cfg.aux.workdir`: this run's own records
(config.json, run.json, metrics.jsonl, TensorBoard) go to this subfolder of it."""


def eval_only_in_place(source: object, workdir: object) -> tuple[object, object]:
    """`(source, workdir)` for Kauldron's eval-only form: with no trained run named (`cfg.aux.workdir` unset)
    and a `cfg.workdir` that holds a run (its config.json), that run is the one evaluated and this run writes
    to its `eval_only/` subfolder. Anything else is returned as given.

    Usage: `source, workdir = eval_only_in_place(None, "/runs/base")  # ("/runs/base", "/runs/base/eval_only")`.
    """
    if isinstance(source, (str, os.PathLike)) and str(source):
        return source, workdir
    if not isinstance(workdir, (str, os.PathLike)) or not str(workdir):
        return source, workdir
    if not os.path.isfile(os.path.join(os.fspath(workdir), "config.json")):
        return source, workdir
    return os.fspath(workdir), os.path.join(os.fspath(workdir), IN_PLACE_FOLDER)


def eval_only_trainer(cls: type[Trainer], kwargs: Mapping[str, object]) -> Trainer:
    """The trained run's Trainer with this config's evaluators, workdir and writer, set to evaluate only."""
    if current_policy() is not None:
        # Being built from untrusted input (a run folder's config.json, konfig's safe mode): an eval-only
        # Trainer resolves another folder's config under that folder's own recorded policy, and puts its
        # config's folder on sys.path; neither may be decided by untrusted input.
        raise ConfigError(
            "Trainer.eval_only cannot be built in konfig's safe mode (from a run folder's config.json): it "
            "resolves another run's config under that run's own policy. Run the eval-only config file itself "
            "(kd-train --cfg=eval_only.py --cfg.aux.workdir=RUN)."
        )
    aux = dict(kwargs.get("aux") or {})
    source = aux.get(SOURCE_KEY)
    if aux.get("xid") in (None, konfig.placeholder):  # Kauldron's form: cfg.workdir is the trained run's
        source, workdir = eval_only_in_place(source, kwargs.get("workdir"))
        if workdir is not kwargs.get("workdir"):
            kwargs = {**kwargs, "workdir": workdir}
            aux[SOURCE_KEY] = source
    if aux.get("xid") not in (None, konfig.placeholder) and source is None:
        raise ConfigError(
            f"Trainer.eval_only: cfg.aux.xid={aux['xid']!r} names an XManager experiment, which kd does not "
            "look up; name the trained run's folder instead: --cfg.aux.workdir=/path/to/run"
        )
    if not isinstance(source, (str, os.PathLike)) or not str(source):
        raise ConfigError(
            "Trainer.eval_only: cfg.aux.workdir must name the trained run's folder (the one holding its "
            "config.json and checkpoints/), e.g. --cfg.aux.workdir=/tmp/run, or, as in Kauldron, cfg.workdir "
            f"(this run then writes to its {IN_PLACE_FOLDER}/ subfolder); got {source!r}"
        )
    source = os.fspath(source)
    config_path = os.path.join(source, "config.json")
    if not os.path.isfile(config_path):
        raise ConfigError(
            f"Trainer.eval_only: cfg.aux.workdir={source!r} holds no config.json, so it is not a kd-train run "
            "folder (a run trained with a workdir writes one)"
        )
    workdir = kwargs.get("workdir")
    if workdir is not None and os.path.realpath(os.fspath(workdir)) == os.path.realpath(source):
        raise ConfigError(
            f"Trainer.eval_only: cfg.workdir is the trained run's own folder ({source}); an eval-only run writes "
            "its config, records and metrics there, so give it a folder of its own (--cfg.workdir=...)"
        )
    ignored = sorted(set(kwargs) - set(_TAKEN) - {"aux", "setup"})
    if ignored:
        raise ConfigError(
            f"Trainer.eval_only: {', '.join(f'cfg.{k}' for k in ignored)} would not be used: the model, data, "
            "optimizer and the rest come from the trained run's config.json; an eval-only config sets only "
            f"{', '.join(f'cfg.{k}' for k in _TAKEN)} (and cfg.aux.workdir)"
        )
    allowed, _ = run_policy(source, None)
    config_folder_on_path(source)  # the modules beside the config it trained from (as `kd-train eval`)
    with open(config_path) as f:
        trained_cfg = konfig.from_json(f.read())
    leave_out_writers(trained_cfg)  # the run's writers are never built: this run writes with its own
    with during(f"resolving the trained run's config ({config_path}, safe mode)"):
        trained = konfig.resolve(trained_cfg, allowed=allowed)
    if not isinstance(trained, cls):
        raise ConfigError(f"Trainer.eval_only: {config_path} is not a kd.train.Trainer config")
    given = {k: v for k, v in kwargs.items() if k in _TAKEN}
    given.setdefault("workdir", None)  # never the trained run's folder: an unset workdir writes nothing
    given.setdefault("writer", None)  # this config's writer, else the default writers for its workdir
    return dataclasses.replace(
        trained,
        **given,
        aux={**dict(trained.aux), **aux},
        setup=dataclasses.replace(kwargs.get("setup") or Setup(), eval_only=True),
        checkpointer=None,  # nothing is trained, nothing saved: the weights come from the trained run
        num_train_steps=0,
        stop_after_steps=None,
    )


# The fields an eval-only config sets for itself; the rest are the trained run's.
_TAKEN = ("workdir", "evals", "writer", "eval_ds", "progress", "seed", "sharding")


def restore_latest_state(trainer: Trainer, checkpointer: Checkpointer, *, what: str) -> TrainState | None:
    """The TrainState of `checkpointer`'s latest checkpoint, restored onto `trainer`'s state template (its
    shapes and shardings), or None when there is none. A `kd.ckpts.Checkpointer` is read read-only: nothing
    in the run's folder changes (no retention, no clean-up, a damaged save is left in place).

    Usage: `state = restore_latest_state(trainer, trainer.checkpointer, what="the run's latest checkpoint")`
    (`eval_only` and `Trainer.predict` restore this way).
    """
    if dataclasses.is_dataclass(checkpointer) and hasattr(checkpointer, "read_only"):
        checkpointer = dataclasses.replace(checkpointer, read_only=True, enable_async_checkpointing=False)
        if not checkpointer.directory.exists():
            return None
    try:
        with during(f"restoring {what}"):
            restored = checkpointer.restore_latest(trainer.sharding.state_template(trainer.state_specs))
    finally:
        close = getattr(checkpointer, "close", None)
        if callable(close):
            close()
    return None if restored is None else restored.state


def evaluate_only(trainer: Trainer) -> tuple[TrainState, dict[str, LoggedValue]]:
    """`(state, values)`: the trained run's latest checkpoint, and what every evaluator gave on it."""
    from kd import ckpts
    from kd.train._hooks import evaluate_and_write
    from kd.train._run_record import write_run_end, write_run_start

    source = trainer.aux[SOURCE_KEY]
    if not trainer.evals:
        raise ConfigError("Trainer.eval_only: cfg.evals is empty, so there is nothing to evaluate")
    checkpointer = ckpts.Checkpointer(workdir=source, save_interval_steps=1)
    state = restore_latest_state(
        trainer, checkpointer, what=f"the trained run's latest checkpoint ({source})"
    )
    if state is None:
        raise ConfigError(
            f"Trainer.eval_only: {source} has no checkpoint to evaluate (checkpoints/ is empty)"
        )
    step = int(state.step)
    writer = trainer._active_writer
    if trainer.workdir is not None:
        write_run_start(
            trainer.workdir,
            params_table=parameter_table(state.params),
            element_spec=trainer.element_spec,
            config_json=trainer.config_json,
            tags=trainer.setup.tags,
        )
    if trainer.config_json is not None:
        writer.write_config(trainer.config_json)
    try:
        values = evaluate_and_write(trainer.evals, state, step, writer, run_writer=trainer.writer)
    finally:
        writer.close()
    if trainer.workdir is not None and jax.process_index() == 0:
        write_run_end(trainer.workdir, step=step, seconds=0.0)
    return state, values
