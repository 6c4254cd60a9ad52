"""Run folders: `check_workdir` refuses, before any work, one a run could not write; `run_file` is a file a
training run wrote into its workdir, or a `CliError` saying what is wrong.

    check_workdir("/tmp/run", flag="--cfg.workdir")  # CliError (empty, a file) or RunError (unwritable)
    run_file("/tmp/run", "metrics.jsonl", "was the run trained with this workdir?")
"""

from __future__ import annotations

import os
import pathlib
import tempfile

from ._errors import CliError, RunError, describe_os_error


def check_workdir(workdir: str | os.PathLike[str], *, flag: str) -> None:
    """Refuses a workdir that is empty, a file (or under one), or where this process cannot write.

    Nothing is left behind: a folder that exists gets a temporary file, created and removed; otherwise
    its nearest existing parent gets a temporary folder.
    """
    text = os.fspath(workdir)
    if not text.strip():
        raise CliError(
            f"{flag}= is empty: a run writes its checkpoints and logs into a folder, and an empty path would "
            f"mean the current directory; give one ({flag}=/tmp/run), or leave {flag} out for a fresh "
            "temporary folder"
        )
    folder = pathlib.Path(text)
    existing = folder
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        where = "is a file" if existing == folder else f"is under {existing}, which is a file"
        raise CliError(
            f"{flag}={text} {where}, not a folder: give a folder for the run (a new path, or an existing "
            "run's folder)"
        )
    try:
        if existing == folder:
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".kd-write-check-"):
                pass
        else:
            os.rmdir(tempfile.mkdtemp(dir=existing, prefix=".kd-write-check-"))
    except OSError as e:
        e.filename = str(folder if existing == folder else existing)  # not the temporary name
        raise RunError(f"{flag}={text}: cannot write there: {describe_os_error(e, flag=flag)}") from None


def run_file(workdir: str | os.PathLike[str], name: str, missing: str) -> pathlib.Path:
    """`<workdir>/<name>`; `missing` completes the error when the workdir lacks it.

    Usage: `run_file("/tmp/run", "metrics.jsonl", "was the run trained with this workdir?")`.
    """
    if not os.fspath(workdir).strip():
        raise CliError(f"the workdir is empty: give a run's folder (the one holding {name}).")
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
