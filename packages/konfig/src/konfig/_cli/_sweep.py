"""Sweeps: `sweep()` / `sweep_<name>()` generators of overrides, expanded as a product.

    # configs/mnist.py
    def sweep_lr():
        for lr in [1e-3, 1e-4]:
            yield {"optimizer.learning_rate": lr}

    items = konfig.expand_sweep("configs/mnist.py", "lr,seed")
    [item.config for item in items]     # one concrete ConfigDict per combination
    [item.to_json() for item in items]  # what a launcher ships to each job

Each item is applied with `konfig.apply_overrides`, the path the CLI takes, so
globs, `py::` values and references behave the same. Keys `__args__.<field>`
set the module's `ConfigArgs` before `get_config(args)` runs. Launching the jobs
is the trainer's business.
"""

from __future__ import annotations

from collections.abc import Mapping

from .._errors import OverrideError
from .._json_writer import to_json
from ._flags import _build_config, apply_overrides, config_name, load_config_module, parse_config_args

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from types import ModuleType
    from typing import Any

__all__ = ["SweepItem", "expand_sweep", "sweep_items"]

_ARGS_PREFIX = "__args__."
# Items of one sweep, and combinations of a product: a sweep generating more (or forever)
# is a mistake, not a launch plan.
MAX_SWEEP_ITEMS = 100_000


class SweepItem:
    """One combination of a sweep: its overrides and the concrete config they give."""

    __slots__ = ("config", "overrides")

    def __init__(self, overrides: dict[str, Any], config: Any) -> None:
        self.overrides = overrides
        self.config = config

    @property
    def name(self) -> str:
        """A short label such as `lr=0.001,seed=1` (for job names)."""
        return ",".join(f"{path.rsplit('.', 1)[-1]}={value!r}" for path, value in self.overrides.items())

    def to_json(self, **kwargs: Any) -> str:
        """The item's config as konfig JSON (`konfig.from_json` reads it back)."""
        return to_json(self.config, **kwargs)

    def __repr__(self) -> str:
        return f"SweepItem({self.overrides!r})"


def _parse_names(names: str | Sequence[str] | None) -> list[str]:
    if names is None:
        return []
    if isinstance(names, str):
        names = names.split(",")
    names = list(names)
    for name in names:
        if not isinstance(name, str):
            raise OverrideError(f"Sweep names are strs like 'lr' or 'sweep_lr', found {name!r} in {names!r}.")
    return [n.strip() for n in names if n.strip()]


def _function_name(name: str) -> str:
    return "sweep" if name in ("", "sweep") else f"sweep_{name.removeprefix('sweep_')}"


def sweep_items(
    module: ModuleType | str, names: str | Sequence[str] | None = "sweep"
) -> list[dict[str, Any]]:
    """Returns the override dicts of the selected sweeps' cartesian product.

    `names` is `"sweep"` (the module's `sweep()`), `"lr"` (`sweep_lr()`), a
    comma-separated string or a list; several names multiply. Two sweeps setting
    the same path is an error.

    Usage: `sweep_items(module, "lr,seed")` -> `[{'lr': 0.1, 'seed': 0}, ...]`.
    """
    if isinstance(module, str):
        module = load_config_module(module)
    selected = _parse_names(names)
    axes: list[tuple[str, list[dict[str, Any]]]] = []
    for name in selected:
        function_name = _function_name(name)
        if any(function_name == chosen for chosen, _ in axes):
            raise OverrideError(f"`{function_name}()` is selected twice in {names!r}.")
        function = getattr(module, function_name, None)
        if function is None:
            raise OverrideError(_unknown_sweep(module, function_name))
        axes.append((function_name, _collect(function_name, function())))
    combinations = 1
    for _, axis in axes:
        combinations *= len(axis)
    if combinations > MAX_SWEEP_ITEMS:
        sizes = " x ".join(f"`{name}()` ({len(axis):,} items)" for name, axis in axes)
        raise OverrideError(
            f"The sweeps {sizes} make {combinations:,} combinations, more than the {MAX_SWEEP_ITEMS:,} "
            "konfig expands; select fewer sweeps or split them."
        )
    items: list[dict[str, Any]] = [{}]
    owners: dict[str, str] = {}
    for function_name, axis in axes:
        for overrides in axis:
            for path in overrides:
                owner = owners.setdefault(path, function_name)
                if owner != function_name:
                    raise OverrideError(
                        f"Sweeps `{owner}()` and `{function_name}()` both set `{path}`; "
                        "a product of sweeps needs disjoint paths."
                    )
        items = [{**item, **overrides} for item in items for overrides in axis]
    return items


def _collect(function_name: str, generated: Iterable[Any]) -> list[dict[str, Any]]:
    import reprlib

    try:
        items = iter(generated)
    except TypeError:
        raise OverrideError(
            f"`{function_name}()` returned {reprlib.repr(generated)}; expected it to yield (or return a "
            "list of) dicts of override paths to values."
        ) from None
    axis = []
    for index, overrides in enumerate(items):
        if index == MAX_SWEEP_ITEMS:
            raise OverrideError(
                f"`{function_name}()` yielded more than {MAX_SWEEP_ITEMS:,} items (does it ever stop?)."
            )
        if not isinstance(overrides, Mapping) or not all(isinstance(k, str) for k in overrides):
            raise OverrideError(
                f"Item {index} of `{function_name}()` is {reprlib.repr(overrides)}; expected a dict "
                "of override paths to values, e.g. `{'optimizer.learning_rate': 1e-3}`."
            )
        axis.append(dict(overrides))
    if not axis:
        raise OverrideError(f"`{function_name}()` yielded no items.")
    return axis


def _unknown_sweep(module: ModuleType, function_name: str) -> str:
    import difflib

    available = sorted(n for n in vars(module) if n == "sweep" or n.startswith("sweep_"))
    listed = ", ".join(f"`{n}()`" for n in available) or "none"
    # Compared without the shared `sweep_` prefix, which would make every name look close.
    by_short = {n.removeprefix("sweep_"): n for n in available}
    close = difflib.get_close_matches(function_name.removeprefix("sweep_"), by_short, n=3)
    hint = f" Did you mean {' or '.join(f'`{by_short[c]}()`' for c in close)}?" if close else ""
    return f"The {config_name(module)} has no `{function_name}()`; its sweeps: {listed}.{hint}"


def expand_sweep(
    module: ModuleType | str,
    names: str | Sequence[str] | None = "sweep",
    *,
    args: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
    from_strings: bool = False,
) -> list[SweepItem]:
    """Builds one concrete config per sweep item: `get_config(args)`, then `overrides`, then the item.

    `args` / `overrides` are the command line's (`from_strings=True` reads them
    like the CLI). `names=None` gives the single unswept config.

    Usage: `for item in expand_sweep("configs/mnist.py", "lr"): launch(item.to_json())`.
    """
    if isinstance(module, str):
        module = load_config_module(module)
    base_overrides = list(overrides.items() if isinstance(overrides, Mapping) else overrides)
    base_args = parse_config_args(module, args) if from_strings and args else dict(args or {})
    result = []
    for item in sweep_items(module, names):
        item_args = dict(base_args)
        item_overrides = []
        for path, value in item.items():
            if path.startswith(_ARGS_PREFIX):
                item_args[path[len(_ARGS_PREFIX) :]] = value
            else:
                item_overrides.append((path, value))
        cfg = _build_config(module, item_args, base_overrides, from_strings=from_strings)
        result.append(SweepItem(item, apply_overrides(cfg, item_overrides)))
    return result
