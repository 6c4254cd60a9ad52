"""`lr_find`: Leslie Smith's learning-rate range test (Lightning's `Tuner.lr_find`) on a Trainer's config.

    result = kd.train.lr_find(trainer, min_lr=1e-7, max_lr=1.0, num_steps=100)
    result.suggestion          # 3.2e-03: where the smoothed loss falls fastest
    result.lrs, result.losses  # one per step run
    result.plot("lr_find.png") # loss against learning rate (matplotlib)

From the config's fresh init (its `init_transform` applied), the run trains `num_steps` steps with the learning
rate growing exponentially from `min_lr` to `max_lr`, and stops early once the loss diverges. It runs on a copy
of the Trainer without workdir, checkpointer, evaluators or hooks: nothing of the run's folder is read or
written. `kd-train lr-find --cfg=CONFIG` prints the table and the suggestion, and writes
`<workdir>/lr_find.json` (and `lr_find.png` with matplotlib).

How the test's learning rate reaches an arbitrary optax optimizer, the first rule that applies:

1. an optimizer made with `optax.inject_hyperparams` (its state holds `learning_rate`): that value is set at
   each step (a scheduled one, which the optimizer recomputes, is scaled as in 2);
2. otherwise its updates are scaled by `test lr / config lr`, exact for optimizers whose updates are linear in
   the learning rate (sgd, momentum, adam, adamw, lion, ...; not one whose state depends on it). The config's
   learning rate at each step is `base_lr=` (`--base-lr`) if given, else the optimizer's own `learning_rate`
   argument in the config the Trainer was resolved from (one number or schedule under `cfg.optimizer`), else
   `Trainer.schedules["learning_rate"]`. Where none is found, `lr_find` refuses and says to pass `base_lr`.
   A step where that learning rate is 0 (a warmup's first step) makes no update.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import json
import math
import sys
from collections.abc import Callable, Mapping
from typing import NamedTuple, TypeGuard

import jax
import jax.numpy as jnp
import konfig
import numpy as np
import optax

from kd.runtime import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.train._trainer import Trainer

SUGGESTION_RULE = "steepest descent of the smoothed loss"
"""How `LrFindResult.suggestion` is chosen (the words the command line prints after it)."""

_INSTALL_HINT = "pip install 'kd-train[plot]'"


@dataclasses.dataclass(frozen=True)
class LrFindResult:
    """What `lr_find` measured: one entry per step run (the last may be the diverging one).

    Usage: `result.suggestion`, `print(result.table())`, `result.plot("lr_find.png")`, `result.to_json()`.

    Attributes:
      lrs: the learning rate of each step.
      losses: the step's training loss (the weighted sum of `train_losses`), before its update.
      smoothed: `losses` averaged over a centred window of `window` steps (fewer at the ends).
      suggestion: the learning rate at the steepest descent of `smoothed` (see `lr_find`), or None when it
        fell nowhere.
      stopped: why the test ended before `num_steps` (the loss diverged, the data ran out), or None.
      imposed: how the test's learning rate reached the optimizer (the rule of `kd.train._lr_find`).
    """

    lrs: np.ndarray
    losses: np.ndarray
    smoothed: np.ndarray
    suggestion: float | None
    stopped: str | None
    imposed: str

    def table(self, every: int = 10) -> str:
        """`step  learning rate  loss` rows, every `every` steps and the last one."""
        rows = [("step", "learning rate", "loss", "smoothed")]
        last = len(self.lrs) - 1
        for i in [*range(0, last, every), last] if last >= 0 else []:
            rows.append(
                (f"{i + 1}", f"{self.lrs[i]:.1e}", f"{self.losses[i]:.4g}", f"{self.smoothed[i]:.4g}")
            )
        widths = [max(len(row[c]) for row in rows) for c in range(4)]
        return "\n".join(
            "  ".join(
                cell.rjust(w) if c == 0 else cell.ljust(w) for c, (cell, w) in enumerate(zip(row, widths))
            ).rstrip()
            for row in rows
        )

    def suggestion_line(self) -> str:
        """`suggested learning rate: 3.2e-03 (steepest descent of the smoothed loss)`, or why there is none."""
        if self.suggestion is None:
            return "no suggested learning rate: the smoothed loss fell nowhere in the run (widen --min/--max or add --steps)"
        return f"suggested learning rate: {self.suggestion:.1e} ({SUGGESTION_RULE})"

    def to_json(self) -> str:
        """The result as JSON text (`lr_find.json`): lrs, losses, smoothed (non-finite values as null)."""

        def numbers(values: np.ndarray) -> list[float | None]:
            return [float(v) if math.isfinite(v) else None for v in values]

        return json.dumps(
            {
                "lrs": numbers(self.lrs),
                "losses": numbers(self.losses),
                "smoothed": numbers(self.smoothed),
                "suggestion": self.suggestion,
                "rule": SUGGESTION_RULE,
                "stopped": self.stopped,
                "imposed": self.imposed,
            },
            indent=1,
        )

    def plot(self, path: str) -> str:
        """Draws the loss (and its smoothed curve) against the learning rate on a log axis, the suggestion
        marked, into the image file `path`; returns `path`. Needs matplotlib (`pip install 'kd-train[plot]'`)."""
        try:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
        except ImportError as e:
            raise ImportError(f"LrFindResult.plot: drawing needs matplotlib ({e}); {_INSTALL_HINT}") from e
        fig = Figure(figsize=(6.4, 4.0), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        ax.plot(self.lrs, self.losses, color="C0", alpha=0.35, label="loss")
        ax.plot(self.lrs, self.smoothed, color="C0", label="smoothed")
        if self.suggestion is not None:
            ax.axvline(self.suggestion, color="C3", linestyle="--", label=f"suggestion {self.suggestion:.1e}")
        ax.set_xscale("log")
        ax.set_xlabel("learning rate")
        ax.set_ylabel("training loss")
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.savefig(path)
        return path


def lr_find(
    trainer: Trainer,
    *,
    min_lr: float = 1e-7,
    max_lr: float = 1.0,
    num_steps: int = 100,
    base_lr: float | None = None,
    divergence: float = 4.0,
    window: int | None = None,
) -> LrFindResult:
    """Leslie Smith's learning-rate range test: trains from the config's fresh init with the learning rate
    growing exponentially from `min_lr` to `max_lr` over `num_steps` steps.

    It stops at the first step whose loss is not finite, or where the mean of the last `window` losses is above
    `divergence` x the lowest such mean so far (one noisy batch does not stop it). `window` defaults to a tenth
    of `num_steps` (odd, at least 3).

    The suggestion is the learning rate at the steepest descent of the smoothed loss: the losses averaged over a
    centred window of `window` steps, and at each step whose window lies whole within the run (a diverging
    last step left out) the slope of that average across one window, (s[i+h] - s[i-h]) / 2h with
    h = window // 2; the step of the most negative slope gives the suggestion (None when none is negative).
    The steps are evenly spaced in log(lr), so it is the steepest descent against log(lr) too. Unlike an
    exponential average (Lightning's, with beta=0.98, lags ~50 steps), a centred one does not shift the
    suggestion toward larger rates. Take it as a starting point (a value a few times lower is the safer
    choice). Nothing is written; see `kd.train._lr_find` for how the learning rate is imposed.

    Usage: `kd.train.lr_find(trainer, min_lr=1e-6, max_lr=1.0, num_steps=100).suggestion`.

    Raises:
      kd.train.ConfigError: the optimizer's learning rate cannot be found (pass `base_lr`, see above).
      ValueError: a bad range or step count.
    """
    _check_arguments(min_lr, max_lr, num_steps, base_lr, divergence, window)
    window = window or max(3, (num_steps // 10) | 1)
    where, config_lr = _imposition(trainer, base_lr)
    imposed = (
        f"the test's learning rate set in {where}"
        if config_lr is None
        else f"updates scaled by the test's learning rate / {where}"
    )
    lrs = min_lr * (max_lr / min_lr) ** (np.arange(num_steps) / (num_steps - 1))
    optimizer = _range_test(
        trainer.optimizer, lambda count: _test_lr(count, min_lr, max_lr, num_steps), config_lr
    )
    run = _isolated_run(trainer, optimizer, num_steps)
    losses, stopped, diverged = _train_until_divergence(run, lrs, window=window, divergence=divergence)
    lrs = lrs[: len(losses)]
    smoothed = _smoothed(losses, window)
    return LrFindResult(
        lrs=lrs,
        losses=losses,
        smoothed=smoothed,
        suggestion=_suggestion(lrs, smoothed, window, diverged),
        stopped=stopped,
        imposed=imposed,
    )


def learning_rate_source(trainer: Trainer) -> str | None:
    """Where `lr_find` finds the optimizer's learning rate (`schedules['learning_rate']`, ...), or None."""
    try:
        return _imposition(trainer, None)[0]
    except ConfigError:
        return None


# ---------------------------------------------------------------------------------------------- the steps


def _isolated_run(trainer: Trainer, optimizer: optax.GradientTransformation, num_steps: int) -> Trainer:
    """A copy of `trainer` training `num_steps` with `optimizer`, touching nothing of the run's folder."""
    return dataclasses.replace(
        trainer,
        optimizer=optimizer,
        workdir=None,  # nothing of the run's folder is read or written: no resume, no checkpoint, no log
        checkpointer=None,
        writer=None,
        evals={},
        hooks=(),
        profiler=None,
        exporter=None,
        num_train_steps=num_steps,
        stop_after_steps=None,
    )


def _train_until_divergence(
    run: Trainer, lrs: np.ndarray, *, window: int, divergence: float
) -> tuple[np.ndarray, str | None, bool]:
    """`(losses, stopped, diverged)`: the loss of each step run from a fresh state (before its update), why the
    run stopped early (None: all of `lrs`), and whether it was because the loss diverged (see `lr_find`)."""
    state = run.init_state()
    batches = iter(run.train_ds)
    losses: list[float] = []
    lowest, stopped, diverged = math.inf, None, False  # the lowest mean of `window` losses in a row
    for i in range(len(lrs)):
        try:
            batch = next(batches)
        except StopIteration:
            stopped = f"train_ds ran out after {i} batches"
            break
        state, aux = run.trainstep.step(state, run.sharding.step_input(batch))
        loss = _total_loss(aux.compute())
        losses.append(loss)
        recent = float(np.mean(losses[-window:])) if len(losses) >= window else None
        if not math.isfinite(loss) or (recent is not None and recent > divergence * lowest):
            what = (
                f"the loss is {loss}"
                if not math.isfinite(loss)
                else f"the mean loss of the last {window} steps, {recent:.4g}, is above {divergence:g} x the lowest ({lowest:.4g})"
            )
            stopped, diverged = (
                f"stopped at step {i + 1} (learning rate {lrs[i]:.1e}): diverged, {what}",
                True,
            )
            break
        if recent is not None:
            lowest = min(lowest, recent)
    return np.asarray(losses, dtype=np.float64), stopped, diverged


def _test_lr(count: jax.Array, min_lr: float, max_lr: float, num_steps: int) -> jax.Array:
    fraction = jnp.minimum(count, num_steps - 1) / (num_steps - 1)
    return min_lr * (max_lr / min_lr) ** fraction


class RangeTestState(NamedTuple):
    """The wrapped optimizer's state, and the test's step count (the learning rate's exponent)."""

    count: jax.Array
    inner: optax.OptState


def _range_test(
    optimizer: optax.GradientTransformation,
    test_lr: Callable[[jax.Array], jax.Array],
    config_lr: optax.Schedule | None,
) -> optax.GradientTransformationExtraArgs:
    """`optimizer` with the test's learning rate: injected (`config_lr` None), or its updates scaled by
    `test_lr(count) / config_lr(count)`."""
    optimizer = optax.with_extra_args_support(optimizer)

    def init(params: optax.Params) -> RangeTestState:
        return RangeTestState(count=jnp.zeros((), jnp.int32), inner=optimizer.init(params))

    def update(
        updates: optax.Updates, state: RangeTestState, params: optax.Params | None = None, **extra: object
    ) -> tuple[optax.Updates, RangeTestState]:
        lr = test_lr(state.count)
        inner = state.inner if config_lr is not None else _with_injected_lr(state.inner, lr)
        updates, inner = optimizer.update(updates, inner, params, **extra)
        used = jnp.asarray(
            config_lr(state.count) if config_lr is not None else _injected_lr(inner), jnp.float32
        )
        scale = jnp.where(used != 0, lr / jnp.where(used != 0, used, 1.0), 0.0)
        updates = jax.tree.map(lambda u: (u * scale).astype(u.dtype), updates)
        return updates, RangeTestState(count=state.count + 1, inner=inner)

    return optax.GradientTransformationExtraArgs(init, update)


def _is_injected(node: object) -> TypeGuard[optax.InjectHyperparamsState]:
    hyperparams = getattr(node, "hyperparams", None)
    return isinstance(hyperparams, dict) and "learning_rate" in hyperparams and hasattr(node, "_replace")


def _with_injected_lr(tree: optax.OptState, lr: jax.Array) -> optax.OptState:
    def set_lr(node: optax.OptState) -> optax.OptState:
        if not _is_injected(node):
            return node
        old = node.hyperparams["learning_rate"]
        return node._replace(hyperparams={**node.hyperparams, "learning_rate": jnp.asarray(lr, old.dtype)})

    return jax.tree.map(set_lr, tree, is_leaf=_is_injected)


def _injected_lr(tree: optax.OptState) -> jax.Array:
    """The learning rate the (first) `optax.inject_hyperparams` state holds after an update: the one used."""
    injected = [node for node in jax.tree.leaves(tree, is_leaf=_is_injected) if _is_injected(node)]
    return injected[0].hyperparams["learning_rate"]


def _total_loss(values: Mapping[str, float | np.ndarray]) -> float:
    if "losses/total" in values:
        return float(values["losses/total"])
    return float(sum(v for k, v in values.items() if k.startswith("losses/")))


def _smoothed(losses: np.ndarray, window: int) -> np.ndarray:
    """The mean of the losses in a centred window of `window` steps (the part of it inside the run at its ends)."""
    h = window // 2
    return np.array([np.mean(losses[max(0, i - h) : i + h + 1]) for i in range(len(losses))])


def _suggestion(lrs: np.ndarray, smoothed: np.ndarray, window: int, diverged: bool) -> float | None:
    """The learning rate where `smoothed` falls fastest across one window (see `lr_find`), or None."""
    h = window // 2
    end = len(smoothed) - (1 if diverged else 0)
    whole = smoothed[:end]  # the averages of whole windows: steps h .. end-1-h
    centres = range(2 * h, end - 2 * h)  # a slope across one window, between two whole windows' averages
    slopes = [(whole[i + h] - whole[i - h]) / (2 * h) for i in centres]
    if not slopes or not np.all(np.isfinite(slopes)):
        return None
    best = int(np.argmin(slopes))
    return float(lrs[centres[best]]) if slopes[best] < 0 else None


# ---------------------------------------------------------------------------------------------- the config's lr


def _imposition(trainer: Trainer, base_lr: float | None) -> tuple[str, optax.Schedule | None]:
    """`(where, config_lr)`: where the optimizer's learning rate was found (`schedules['learning_rate']`,
    `cfg.optimizer.learning_rate`, ...), and it by step, which the updates are scaled against (None: the
    optimizer's `inject_hyperparams` state, set directly)."""
    if trainer.optimizer is None:
        raise ConfigError(
            "lr_find: Trainer.optimizer is not set (an optax.GradientTransformation is required)"
        )
    opt_state = trainer.state_specs.opt_state
    if any(_is_injected(n) for n in jax.tree.leaves(opt_state, is_leaf=_is_injected)):
        return "optax.inject_hyperparams' state", None
    if base_lr is not None:
        return f"base_lr={base_lr:g}", _constant(base_lr)
    found = _optimizer_config_rates(trainer)
    if len(found) == 1 or (found and len({repr(v) for _, v in found}) == 1):
        where, value = found[0]
        rate = _as_rate(value)
        if rate is not None:
            return where, rate
    if len(found) > 1:
        raise ConfigError(
            "lr_find: the optimizer's config has several learning rates "
            f"({', '.join(where for where, _ in found)}), so no one of them can be replaced by the test's; pass the "
            "one to scale by: kd-train lr-find --base-lr=LR (Python: kd.train.lr_find(trainer, base_lr=LR)), or build "
            "the optimizer with optax.inject_hyperparams"
        )
    schedule = dict(trainer.schedules).get("learning_rate")
    if schedule is not None:
        return "schedules['learning_rate']", schedule
    names = [str(name) for name in dict(trainer.schedules)]
    # a near miss: `lr`, `lr_schedule`, `base_learning_rate`, or a misspelling
    close = [n for n in names if n.lower().startswith("lr") or "learning_rate" in n.lower()]
    close = close or difflib.get_close_matches("learning_rate", names, n=1, cutoff=0.6)
    hint = f" (did you mean to name schedules[{close[0]!r}] 'learning_rate'?)" if close else ""
    config = (
        "it was not resolved from a konfig config (whose learning_rate argument would say)"
        if trainer.config_json is None
        else "its config names no learning_rate under cfg.optimizer"
    )
    raise ConfigError(
        "lr_find: cannot find the learning rate the optimizer uses, so it cannot be replaced by the test's: "
        f"Trainer.optimizer was not made with optax.inject_hyperparams, {config}, and Trainer.schedules has no "
        f"'learning_rate' (it has {names}){hint}. Pass it: kd-train lr-find --base-lr=1e-3 (Python: "
        "kd.train.lr_find(trainer, base_lr=1e-3))"
    )


def _constant(value: float) -> optax.Schedule:
    return lambda count: jnp.float32(value)


def _optimizer_config_rates(trainer: Trainer) -> list[tuple[str, object]]:
    """`(config path, value)` of each `learning_rate` argument under `cfg.optimizer` in the config the Trainer
    was resolved from (a first positional argument too, where the function's first parameter is named so)."""
    text = trainer.config_json
    if text is None:
        return []
    try:
        root = konfig.from_json(text)
        optimizer = root["optimizer"]
    except Exception:  # a config of another shape: no learning rate found there
        return []
    found: list[tuple[str, object]] = []
    _collect_rates(optimizer, "cfg.optimizer", found, depth=0)
    return found


def _collect_rates(node: object, path: str, found: list[tuple[str, object]], *, depth: int) -> None:
    if depth > 32:
        return
    if isinstance(node, konfig.ConfigDict):
        qualname = node.get("__qualname__") if "__qualname__" in node else None
        for key in [k for k in node.keys() if k != "__qualname__"]:
            value = node[key]
            where = f"{path}.{key}" if str(key).isidentifier() else f"{path}[{key}]"
            if key == "learning_rate" or (str(key) == "0" and _first_parameter_is_lr(qualname)):
                found.append((where, value))
            else:
                _collect_rates(value, where, found, depth=depth + 1)
    elif isinstance(node, (list, tuple)):
        for index, value in enumerate(node):
            _collect_rates(value, f"{path}[{index}]", found, depth=depth + 1)


def _first_parameter_is_lr(qualname: object) -> bool:
    if not isinstance(qualname, str) or not _imported(qualname):
        return False
    try:
        parameters = list(inspect.signature(konfig.import_object(qualname)).parameters)
    except Exception:  # not importable here, or no signature: not taken as a learning rate
        return False
    return bool(parameters) and parameters[0] == "learning_rate"


def _as_rate(value: object) -> optax.Schedule | None:
    """A config value (a number, a schedule's config, a reference) as the learning rate by step, or None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _constant(float(value))
    if not _only_imported_targets(value, depth=0):
        return None
    try:
        # The node the Trainer was built from, built again: its targets were imported and called by that
        # resolve (under whatever safe-mode policy was in force then); nothing new is imported.
        resolved = konfig.resolve(value)
    except Exception:
        return None
    if callable(resolved):
        return resolved
    try:
        return _constant(float(resolved))
    except (TypeError, ValueError):
        return None


def _imported(qualname: str) -> bool:
    """Whether the module of `"module:qualname"` is imported already (by the resolve that built the Trainer)."""
    return qualname.partition(":")[0] in sys.modules


def _only_imported_targets(node: object, *, depth: int) -> bool:
    if depth > 32:
        return False
    if isinstance(node, konfig.ConfigDict):
        qualname = node.get("__qualname__") if "__qualname__" in node else None
        if isinstance(qualname, str) and not _imported(qualname):
            return False
        children = [node[k] for k in node.keys() if k != "__qualname__"]
        return all(_only_imported_targets(child, depth=depth + 1) for child in children)
    if isinstance(node, (list, tuple)):
        return all(_only_imported_targets(child, depth=depth + 1) for child in node)
    return True


def _check_arguments(
    min_lr: float, max_lr: float, num_steps: int, base_lr: float | None, divergence: float, window: int | None
) -> None:
    problems = []
    if not (isinstance(min_lr, (int, float)) and min_lr > 0):
        problems.append(f"min_lr (--min): expected a learning rate > 0, got {min_lr!r}")
    elif not (isinstance(max_lr, (int, float)) and max_lr > min_lr):
        problems.append(f"max_lr (--max): expected a learning rate above min_lr={min_lr:g}, got {max_lr!r}")
    if isinstance(num_steps, bool) or not isinstance(num_steps, int) or num_steps < 2:
        problems.append(f"num_steps (--steps): expected an int >= 2, got {num_steps!r}")
    if base_lr is not None and not (isinstance(base_lr, (int, float)) and base_lr > 0):
        problems.append(f"base_lr (--base-lr): expected the config's learning rate (> 0), got {base_lr!r}")
    if not (isinstance(divergence, (int, float)) and divergence > 1):
        problems.append(f"divergence: expected a factor > 1, got {divergence!r}")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 3):
        problems.append(f"window: expected a number of steps >= 3 or None, got {window!r}")
    if problems:
        raise ValueError("lr_find: " + "; ".join(problems))
