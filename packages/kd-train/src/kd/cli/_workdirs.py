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


PREVIOUS_FOLDER = "previous"
"""`--force` moves an earlier run's files into `<workdir>/previous/<time>/` (never deletes them)."""


def saved_steps(workdir: str | os.PathLike[str]) -> list[int]:
    """The complete checkpoints under `<workdir>/checkpoints`, sorted: `ckpt_<step>` folders holding what a
    finished save holds (not orbax's unfinished temporary folders, nor an empty or emptied `ckpt_<step>`)."""
    # orbax's layout (imports JAX: only when asked); kd.ckpts:* is konfig's safe surface, and a function that
    # reads folders is not for configs, so this stays kd.ckpts' own
    from kd.ckpts import what_is_missing

    folder = os.path.join(workdir, "checkpoints")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    steps = [int(n[len("ckpt_") :]) for n in names if n.startswith("ckpt_") and n[5:].isdigit()]
    return sorted(s for s in steps if what_is_missing(os.path.join(folder, f"ckpt_{s}")) is None)


def checkpointed(workdir: str | os.PathLike[str]) -> bool:
    """Whether a run with a checkpointer wrote into `workdir`: it opens `<workdir>/checkpoints` as it starts."""
    return os.path.isdir(os.path.join(workdir, "checkpoints"))


def last_logged_step(workdir: str | os.PathLike[str]) -> int | None:
    """The step of the last row of `<workdir>/metrics.jsonl`, or None when there is no row."""
    import json

    try:
        with open(os.path.join(workdir, "metrics.jsonl"), "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(f.tell() - 65536, 0))
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            step = json.loads(line).get("step")
        except (ValueError, AttributeError):
            continue
        if isinstance(step, int):
            return step
    return None


def archive_run(workdir: str | os.PathLike[str]) -> pathlib.Path:
    """Moves everything in `workdir` (but earlier archives) to `<workdir>/previous/<UTC time>/`; returns it."""
    import datetime

    folder = pathlib.Path(workdir)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M%S")
    target = folder / PREVIOUS_FOLDER / stamp
    suffix = 1
    while target.exists():
        suffix += 1
        target = folder / PREVIOUS_FOLDER / f"{stamp}-{suffix}"
    target.mkdir(parents=True)
    for entry in sorted(folder.iterdir()):
        if entry.name != PREVIOUS_FOLDER:
            entry.rename(target / entry.name)
    return target
