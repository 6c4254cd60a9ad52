"""The wording of a run that stopped: one paragraph for what the user can fix (a config value that broke a
computation, checkpoints of other shapes, an I/O error), where in the run it happened, and how a crash in
user code is shown (its frames) or kept (a crash inside the library: its whole traceback).

    stopped = stopped_training(error, cfg, trainer)  # CliError / RunError, or None: the crash is a bug
    return report_crash(error)                      # kd-train's exit code for an error nothing else caught
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

import konfig

from kd._phase import where_raised

from ._errors import (
    CliError,
    RunError,
    describe_os_error,
    describe_syntax_error,
    describe_user_error,
    operational_cause,
    traceback_frames,
    user_frame_lines,
    user_frames,
)
from ._usage import fail
from ._workdirs import last_logged_step

# Errors that mean "the config or the command line is wrong": printed as one paragraph, exit 2.
USER_ERRORS: tuple[type[BaseException], ...] = (CliError, ValueError, TypeError, KeyError, ImportError)


def report_crash(error: Exception) -> int:
    """A config file that does not parse: its file and line (exit 2). An error raised through user code (a
    model, a loss, a data loader, the config's `get_config`): where in the run, the error, the user's frames
    (exit 1; 2 while loading the config). A kd error naming the config path: one paragraph (exit 2). Anything
    else keeps its whole traceback."""
    where = where_raised(error)
    loading = where is not None and where.startswith("loading the config")
    if isinstance(error, SyntaxError) and loading:
        print(describe_syntax_error(error), file=sys.stderr, flush=True)
        return 2
    if user_frames(error) is not None:
        print(describe_user_error(error, where), file=sys.stderr, flush=True)
        return 2 if loading else 1
    if isinstance(error, USER_ERRORS) and not getattr(error, "_kd_raised_in_training", False):
        return fail(error)
    raise error  # a crash inside the library: its whole traceback


def stopped_training(error: Exception, cfg: Any, trainer: Any) -> CliError | RunError | None:
    """The one paragraph for an I/O error, a computation that a config value broke (`cfg.seed`, a size
    of 0), or checkpoints of other shapes than the config's model (exit 2), during `train()`; None for
    anything else: a bug in user code keeps its traceback (an arithmetic error gets a note naming the step)."""
    import kd.ckpts
    import kd.train

    if isinstance(error, kd.ckpts.CheckpointStructureError):  # e.g. --force with a layer of another width
        return CliError(_other_shapes(error, str(trainer.workdir)))
    where = where_stopped(error, trainer)
    if isinstance(error, kd.train.NonFiniteLossError):  # its message says the step, the losses, what to do
        return RunError(str(error))
    if type(error) is kd.train.ConfigError:  # found once the run logged (an early stopping's monitored name)
        return CliError(str(error))
    cause = operational_cause(error)
    if cause is not None:
        saved = _saved_steps(trainer)
        kept = (
            f"the checkpoints up to step {saved[-1]} are intact; run the same command again to continue from there"
            if saved
            else "no checkpoint was saved yet"
        )
        return RunError(
            f"{describe_os_error(cause, flag='--cfg.workdir', where=str(trainer.workdir))}. The run stopped "
            f"{where}; {kept}."
        )
    if isinstance(error, ArithmeticError):
        message = arithmetic_message(error, cfg, trainer, f"training ({where})")
        if message.startswith("cfg."):  # a config value named: the paragraph says all
            return RunError(message)
        error.add_note(f"kd-train: raised while training, {where}")  # maybe a bug: the traceback stays
    return None


def where_stopped(error: Exception, trainer: Any) -> str:
    """`after step 2000`: the last step in the run's metrics.jsonl (what the user saw logged), else the step the
    loop's call started from; `before step 1` when neither is known."""
    step = last_logged_step(trainer.workdir) if trainer.workdir is not None else None
    if step is None:
        call = next(
            (
                frame.f_locals.get("call")
                for frame in reversed(traceback_frames(error))
                if frame.f_code.co_name == "train" and frame.f_code.co_filename.endswith("_trainer.py")
            ),
            None,
        )
        step = getattr(call, "start", None)
    return "before step 1" if not isinstance(step, int) or step <= 0 else f"after step {step}"


def _other_shapes(error: Any, workdir: str) -> str:
    """One paragraph for checkpoints that no longer fit the model: the first path whose shape differs, the
    expected (this config's) and found (the checkpoint's) shapes, how many others differ, and what to do."""
    first, *others = error.differences
    first = first.replace("the template", "this config's model")
    paths = [d.split("'")[1] for d in others if d.count("'") >= 2]
    more = ""
    if paths:
        shown = ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")
        more = f" ({len(paths)} more differ: {shown})"
    return (
        f"the run in {workdir} cannot continue with this config: its checkpoints hold other shapes than the "
        f"config's model. {first}{more}. A run continues only with the shapes it was trained with (--force "
        "continues a run whose config changed, not one whose parameters changed shape): train this config in "
        "another --cfg.workdir, or go back to the shapes in the run's config.json"
    )


def _saved_steps(trainer: Any) -> list[int]:
    """The complete checkpoints in the run's checkpoint folder, read from the disk (the checkpointer may be
    in the state the error left it in)."""
    try:
        names = os.listdir(trainer.checkpointer.directory)
    except (AttributeError, ValueError, OSError):
        return []
    return sorted(int(n[len("ckpt_") :]) for n in names if re.fullmatch(r"ckpt_\d+", n))


def arithmetic_message(error: ArithmeticError, cfg: Any, trainer: Any, phase: str) -> str:
    """`cfg.seed = 2**70: OverflowError (...) while initializing ...`: the config path where it can be
    known (the seed; a module's field of 0), else the phase and the module it was raised in."""
    kind = f"{type(error).__name__}: {error}"
    frames = traceback_frames(error)
    if any(f.f_code.co_filename.endswith(os.path.join("runtime", "_rngs.py")) for f in frames):
        return (
            f"cfg.seed = {trainer.seed!r}: {kind} while {phase}; a JAX seed is a 64-bit integer "
            "(-2**63 <= seed < 2**63): choose a smaller one"
        )
    module = next(
        (f.f_locals["self"] for f in reversed(frames) if _is_model_part(f.f_locals.get("self"))), None
    )
    if module is None:
        return (
            f"{kind} while {phase}; check the config's sizes and values (a size of 0, a huge number)"
            + user_frame_lines(error)
        )
    zeros = _zero_fields(module)
    paths = _config_paths(cfg, type(module).__name__, zeros)
    shown = f"{type(module).__name__}" + (
        f" {module.name!r}" if isinstance(getattr(module, "name", None), str) else ""
    )
    if paths:
        return f"{', '.join(paths)} = 0: {kind} while {phase} (in {shown}); give it a positive value"
    hint = f" (its fields equal to 0: {', '.join(zeros)})" if zeros else ""
    return f"{kind} while {phase}, in {shown}{hint}; check the config's values for it" + user_frame_lines(
        error
    )


def _is_model_part(obj: Any) -> bool:
    """A user's or a library's module object (not JAX's, konfig's or kd's machinery)."""
    if obj is None:
        return False
    owner = type(obj).__module__ or ""
    return not owner.startswith(
        ("jax", "kd.", "konfig", "flax.core", "numpy", "builtins", "functools", "contextlib")
    )


def _zero_fields(module: Any) -> list[str]:
    import dataclasses

    if not dataclasses.is_dataclass(module):
        return []
    return [
        f.name
        for f in dataclasses.fields(module)
        if type(getattr(module, f.name, None)) is int and getattr(module, f.name) == 0
    ]


def _config_paths(cfg: Any, class_name: str, fields: list[str]) -> list[str]:
    """Paths `cfg.model.layers[0].features` of the config's `class_name(...)` nodes whose `fields` are 0."""
    if not fields:
        return []
    try:
        todo = [("cfg", json.loads(konfig.to_json(cfg)))]
    except (ValueError, TypeError, RecursionError):
        return []
    found = []
    while todo and len(found) < 5:
        path, node = todo.pop()
        if isinstance(node, list):
            todo += [(f"{path}[{i}]", v) for i, v in reversed(list(enumerate(node)))]
        elif isinstance(node, dict):
            target = node.get("__qualname__")
            if isinstance(target, str) and target.rsplit(".", 1)[-1].rsplit(":", 1)[-1] == class_name:
                found += [f"{path}.{f}" for f in fields if node.get(f) == 0 and type(node.get(f)) is int]
            items = [(k, v) for k, v in node.items() if not k.startswith("__")]
            todo += [(f"{path}[{k}]" if k.isdigit() else f"{path}.{k}", v) for k, v in reversed(items)]
    return found
