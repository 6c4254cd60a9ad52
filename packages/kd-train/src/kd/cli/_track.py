"""`kd-train --track=wandb,mlflow`: the trackers a run is sent to beside its default writers, a sweep item's
name, group and tags for them, and their runs ended as each run (a sweep's item) ends.

    track = parse_track("wandb,mlflow", "configs/mnist.py")   # {"trackers": [...], "project": "mnist"}
    writer = with_trackers(trainer.writer, **tracking(track, "lr=0.1", "/runs/sweep"))
    close_trackers(writer, failed=True)                        # W&B / MLflow say the run failed

The tracker writers are `kd.writers.TrackerWriter` subclasses; each that names a `FLAG` is a `--track` name.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
from collections.abc import Sequence
from typing import Any

from ._errors import CliError
from ._usage import USAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.writers import TrackerWriter, Writer

# kd.writers (numpy, TensorBoard's files) loads only once a run is tracked (`kd-train --help` stays fast).


def tracker_writers() -> dict[str, type[TrackerWriter]]:
    """`--track` names and their writers: each `kd.writers.TrackerWriter` subclass that sets a `FLAG` of its
    own (`WandbWriter`: "wandb", `MlflowWriter`: "mlflow")."""
    from kd.writers import TrackerWriter

    found: dict[str, type[TrackerWriter]] = {}
    todo = list(TrackerWriter.__subclasses__())
    while todo:
        cls = todo.pop(0)
        if cls.__dict__.get("FLAG"):
            found[cls.FLAG] = cls
        todo += cls.__subclasses__()
    return found


def parse_trackers(flag: str) -> list[str]:
    """`"wandb,mlflow"` -> `["wandb", "mlflow"]`; a ValueError naming what is accepted for anything else."""
    known = sorted(tracker_writers())
    names = [n.strip().lower() for n in flag.split(",") if n.strip()]
    if not names:
        raise ValueError(
            f"--track: expected tracker names ({', '.join(known)}, comma-separated), found {flag!r}"
        )
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"--track: expected {' or '.join(known)} (comma-separated), found {name!r}{hint}"
            )
    return list(dict.fromkeys(names))


def parse_track(flag: str | None, source: str) -> dict[str, Any] | None:
    """`--track=wandb,mlflow`: the trackers and the project their runs go to (the config file's name)."""
    if flag is None:
        return None
    try:
        names = parse_trackers(flag)
    except ValueError as e:
        raise CliError(str(e)) from None
    return {"trackers": names, "project": project_of(source)}


def project_of(source: str) -> str | None:
    """The config's name: a file's name without `.py` (`configs/mnist.py`), a module's last part
    (`pkg.configs.mnist`), as konfig tells the two apart."""
    if source.endswith(".py") or os.sep in source or "/" in source:
        return os.path.splitext(os.path.basename(source))[0] or None
    return source.rpartition(".")[2] or None


def refuse_track_slips(rest: list[str]) -> None:
    """`--trac=wandb` (argparse would take a prefix for `--track`) and `--tracks=wandb`: a usage error
    saying `--track`."""
    for arg in rest:
        if not arg.startswith("--") or arg == "--":
            continue
        name = arg[2:].partition("=")[0]
        if name == "track":
            continue
        if (name and "track".startswith(name)) or difflib.get_close_matches(name, ["track"], cutoff=0.8):
            raise CliError(
                f"--{name}: unknown flag; did you mean --track (e.g. --track=wandb,mlflow)?\n\n{USAGE}"
            )


def sweep_tags(item_name: str | None) -> list[str]:
    """A sweep item's overrides as tags: `"lr=0.001,seed=1"` -> `["lr=0.001", "seed=1"]`."""
    if not item_name:
        return []
    return [part for part in re.split(r",(?=[A-Za-z_][\w]*=)", item_name) if part]


def tracking(track: dict[str, Any] | None, item: str | None, base: str | None) -> dict[str, Any] | None:
    """What `with_trackers` adds for this run: `--track`'s writers, and for a sweep item its name, its
    overrides as tags and the sweep's folder as the group (also for trackers in the config)."""
    if track is None and item is None:
        return None
    identity: dict[str, Any] = {"name": item, "tags": sweep_tags(item)}
    if item is not None and base is not None:
        identity["group"] = os.path.basename(os.path.normpath(base))
    return {**(track or {}), **identity}


def with_trackers(
    writer: Writer,
    trackers: Sequence[str] = (),
    *,
    project: str | None = None,
    name: str | None = None,
    group: str | None = None,
    tags: Sequence[str] = (),
) -> Writer:
    """`writer` with a tracker writer per name of `trackers` beside it (a `MultiWriter`), and the tracker
    writers already in it given `name` / `group` where they have none and `tags` added: what `kd-train
    --track=...` (and a sweep item) does. `project` applies to the new ones, unless the tracker's environment
    variable names one. Returns `writer` itself when nothing changes.

    Usage: `trainer = dataclasses.replace(trainer, writer=with_trackers(trainer.writer, ["wandb"], project="digits"))`.
    """
    from kd.writers import MultiWriter, TrackerWriter

    def identified(w: Writer) -> Writer:
        if isinstance(w, TrackerWriter):
            merged = tuple(dict.fromkeys([*w.tags, *tags]))
            changes = {"name": w.name or name, "group": w.group or group, "tags": merged}
            if any(getattr(w, k) != v for k, v in changes.items()):
                return dataclasses.replace(w, **changes)
            return w
        if isinstance(w, MultiWriter) and not getattr(w, "default_set", False):
            inner = [identified(i) for i in w.writers]
            if any(a is not b for a, b in zip(inner, w.writers, strict=True)):
                return dataclasses.replace(w, writers=inner)
        return w

    result = identified(writer)
    known = tracker_writers()
    added = []
    for tracker in trackers:
        cls = known[tracker]
        if _contains(result, cls):
            continue  # the config has one already
        own_project = None if any(os.environ.get(v) for v in cls.PROJECT_ENV) else project
        added.append(cls(project=own_project, name=name, group=group, tags=tuple(tags)))
    if not added:
        return result
    return MultiWriter(writers=[result, *added])


def close_trackers(writer: Writer, *, failed: bool = False, killed: bool = False) -> None:
    """Ends the tracker runs of the tracker writers in `writer` (`kd-train` does after each run; the Trainer
    only flushes its writer, and the trackers end their runs when the process exits): as failed (`failed`:
    training raised), as killed (`killed`: Ctrl-C, preempted) or as finished."""
    _close(writer, failed=failed, killed=killed, seen=set())


def _close(writer: Any, *, failed: bool, killed: bool, seen: set[int]) -> None:
    from kd.writers import TrackerWriter

    if id(writer) in seen:
        return
    seen.add(id(writer))
    if isinstance(writer, TrackerWriter):
        writer.close(failed=failed, killed=killed)
    for inner in _inner(writer):
        _close(inner, failed=failed, killed=killed, seen=seen)


def _inner(writer: Any) -> list[Any]:
    """The writers `writer` writes to: a MultiWriter's `writers`, a CollectionWriter's `writer`."""
    from kd.writers import Writer

    inner = list(getattr(writer, "writers", None) or ())
    one = getattr(writer, "writer", None)
    return [*inner, one] if isinstance(one, Writer) else inner


def _contains(writer: Writer, cls: type) -> bool:
    if isinstance(writer, cls):
        return True
    return any(_contains(w, cls) for w in _inner(writer))
