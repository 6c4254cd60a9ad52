"""`run_file`: a file a training run wrote into its workdir, or a `CliError` saying what is wrong."""

from __future__ import annotations

import os
import pathlib

from ._errors import CliError


def run_file(workdir: str | os.PathLike[str], name: str, missing: str) -> pathlib.Path:
    """`<workdir>/<name>`; `missing` completes the error when the workdir lacks it.

    Usage: `run_file("/tmp/run", "metrics.jsonl", "was the run trained with this workdir?")`.
    """
    folder = pathlib.Path(workdir)
    if not folder.exists():
        raise CliError(f"{folder}: no such run workdir (expected a directory holding {name}).")
    if not folder.is_dir():
        raise CliError(
            f"{folder}: expected a run workdir (a directory holding {name}), found a file; pass the directory it is in."
        )
    path = folder / name
    if not path.is_file():
        raise CliError(f"{folder}: no {name} in this workdir ({missing}).")
    return path
