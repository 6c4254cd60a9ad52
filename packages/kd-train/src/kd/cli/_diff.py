"""`kd-train diff`: how two runs' configs (their workdirs' `config.json`) differ, path by path.

print(diff_runs("/tmp/run_a", "/tmp/run_b"))  # ~ cfg.num_train_steps: 20 -> 50
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping

import konfig

from ._errors import CliError
from ._workdirs import run_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["config_changes", "config_differences", "diff_runs"]

CONFIG_FILE = "config.json"


def diff_runs(workdir_a: str | os.PathLike[str], workdir_b: str | os.PathLike[str]) -> str:
    """The printable `konfig.diff` of two runs' configs, headed by the two files compared.

    Lines read `~ cfg.path: old -> new` (changed), `- cfg.path: old` (only in a), `+ cfg.path: new`
    (only in b). Identical configs give a line saying "configs are identical". The `workdir` field
    itself is compared like any other (two runs in two workdirs differ there).

    Usage: `print(diff_runs("/tmp/run_a", "/tmp/run_b"))`.
    """
    path_a, path_b = _config_path(workdir_a), _config_path(workdir_b)
    config_a = _load(_read(path_a), str(path_a))
    config_b = _load(_read(path_b), str(path_b))
    changes = _diff(config_a, config_b, str(path_a), str(path_b))
    if not changes:
        return f"configs are identical: {path_a} and {path_b}"
    return f"--- {path_a}\n+++ {path_b}\n{changes}"


def config_differences(
    config_json_a: str, config_json_b: str, *, sources: tuple[str, str] = ("config A", "config B")
) -> list[str]:
    """The config paths (`cfg.optimizer.learning_rate`, ...) added, removed or changed from a to b.

    Empty when the two konfig JSON texts describe the same config. `sources` name the texts in the
    `CliError` raised when one is not konfig JSON of a config (e.g. the path of a `config.json`).

    Usage: `if config_differences(saved_json, konfig.to_json(cfg)): ...`.
    """
    return [change.path for change in config_changes(config_json_a, config_json_b, sources=sources)]


def config_changes(
    config_json_a: str, config_json_b: str, *, sources: tuple[str, str] = ("config A", "config B")
) -> list[Any]:
    """The `konfig` changes from a to b, each printing as `~ cfg.path: old -> new` (`+` added, `-` removed).

    Usage: `for change in config_changes(saved_json, konfig.to_json(cfg)): print(change)`.
    """
    config_a = _load(config_json_a, sources[0])
    config_b = _load(config_json_b, sources[1])
    return list(_diff(config_a, config_b, *sources))


def _config_path(workdir: str | os.PathLike[str]) -> pathlib.Path:
    return run_file(
        workdir,
        CONFIG_FILE,
        "the Trainer writes it when training starts; was the run trained with this workdir?",
    )


def _read(path: pathlib.Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise CliError(f"{path}: cannot read the run's config ({e.strerror or e}).") from e


def _load(text: str, source: str) -> Any:
    try:
        config = konfig.from_json(text)
    except (konfig.JsonFormatError, RecursionError) as e:  # konfig.NestingError is a RecursionError
        raise CliError(
            f"{source}: expected konfig JSON of a run's config (as konfig.to_json writes it), "
            f"found text konfig cannot read: {e}"
        ) from e
    if not isinstance(config, Mapping):
        raise CliError(
            f"{source}: expected konfig JSON of a run's config (a JSON object such as "
            f'{{"__qualname__": "kd.train:Trainer", ...}}), found a {type(config).__name__}.'
        )
    return config


def _diff(a: Any, b: Any, source_a: str, source_b: str) -> konfig.ConfigDiff:
    try:
        return konfig.diff(a, b)
    except RecursionError as e:  # konfig.NestingError: a config nested deeper than Python can walk
        raise CliError(f"{source_a} vs {source_b}: cannot compare these configs: {e}") from e
