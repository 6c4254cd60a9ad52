"""The files that make a workdir explain its run: provenance, parameter table, element spec, completion.

    <workdir>/config.json        the raw config (written by the writers; `konfig.from_json` reads it back)
    <workdir>/run.json           command line, package versions, JAX devices, host, start time, and the
                                 top-level modules the config's targets name ("imports": `kd-train eval`'s
                                 default allow-list for resolving config.json again)
    <workdir>/params.txt         parameters per module (shapes, counts) and the total
    <workdir>/element_spec.txt   one training batch: paths, shapes, dtypes
    <workdir>/DONE               written when the run reached its last step, or a hook stopped it early
                                 (JSON: step, seconds, time; `early_stop`: the step, reason and hook)

`stopped_early(workdir, step=..., hooks=...)` tells a run a hook ended early (complete) from one that stopped
for another reason (to be continued).

Written by the lead host only (process 0), through etils.epath like the checkpoints.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import socket
import sys
from collections.abc import Sequence
from importlib import metadata

import jax
import kontext
from etils import epath

from kd._atomic import write_text_atomic
from kd._interfaces import PyTree
from kd._run_signature import sign
from kd.train._hook import hook_keys
from kd.train._stop import StopRequest

# Distributions whose versions make a run reproducible.
_PACKAGES = (
    "kd-train",
    "kd-konfig",
    "kd-kontext",
    "kd-ktyping",
    "kd-compat",
    "jax",
    "jaxlib",
    "flax",
    "optax",
    "orbax-checkpoint",
    "numpy",
    "etils",
    "grain",
)
DONE_FILE = "DONE"
"""`<workdir>/DONE`: written when a run ends, as its last act (`kd-train eval` following a run stops once it exists)."""


def _folder(workdir: epath.PathLike | None) -> epath.Path | None:
    if workdir is None or jax.process_index() != 0:
        return None
    folder = epath.Path(workdir)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def provenance() -> dict[str, object]:
    """What ran where: `{"argv", "cwd", "python", "host", "started", "versions", "devices", "process_count"}`."""
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {
        "argv": list(sys.argv),
        "cwd": os.getcwd(),  # where the argv's relative paths (`--cfg=examples/digits.py`) start
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "versions": versions,
        "devices": [str(d) for d in jax.devices()],
        "process_count": jax.process_count(),
    }


# The JSON keys whose string values name an importable object (`"kd.train:Trainer"`).
_TARGET_KEYS = ("__qualname__", "__const__", "__placeholder__")


def config_imports(config_json: str) -> list[str]:
    """The top-level modules the targets of a config (its `konfig.to_json` text) name, sorted.

    Usage: `config_imports('{"__qualname__": "kd.train:Trainer", "optimizer": {"__qualname__": "optax:adam"}}')`
    is `["kd", "optax"]`.
    """
    names: set[str] = set()
    todo = [json.loads(config_json)]
    while todo:  # iterative: a deep config is no deeper a problem here than in its JSON
        node = todo.pop()
        if isinstance(node, list):
            todo += node
        elif isinstance(node, dict):
            targets = [node.get(key) for key in _TARGET_KEYS]
            if "__path__" in node:
                targets.append(node.get("type"))
            names.update(t.split(":")[0].split(".")[0] for t in targets if isinstance(t, str) and t)
            todo += node.values()
    return sorted(n for n in names if n)


def element_spec_table(element_spec: PyTree) -> str:
    """`image  (32, 8, 8, 1) float32` lines, one per leaf of a batch spec."""
    rows = [
        (str(path), f"{tuple(getattr(leaf, 'shape', ()))} {getattr(leaf, 'dtype', type(leaf).__name__)}")
        for path, leaf in kontext.flatten_with_path(element_spec).items()
    ]
    width = max((len(p) for p, _ in rows), default=0)
    return "\n".join(f"{p.ljust(width)}  {s}" for p, s in rows) + "\n"


def write_run_start(
    workdir: epath.PathLike | None,
    *,
    params_table: str,
    element_spec: PyTree,
    config_json: str | None = None,
    tags: Sequence[str] = (),
) -> None:
    """Writes run.json (with the config's imports, given its JSON, and `tags`), params.txt and
    element_spec.txt, and removes a DONE left by an earlier run."""
    folder = _folder(workdir)
    if folder is None:
        return
    record = provenance()
    if tags:
        record["tags"] = list(tags)
    if config_json is not None:
        try:
            record["imports"] = config_imports(config_json)
        except (ValueError, RecursionError):  # left out: `kd-train eval` then asks for --allowed
            pass
        signature = sign(record, config_json)  # tells `kd-train eval` this user's own run from a foreign one
        if signature is not None:
            record["signature"] = signature
    write_text_atomic(folder / "run.json", json.dumps(record, indent=2) + "\n")
    write_text_atomic(folder / "params.txt", params_table.rstrip("\n") + "\n")
    write_text_atomic(folder / "element_spec.txt", element_spec_table(element_spec))
    done = folder / DONE_FILE
    if done.exists():
        done.unlink()


def write_run_end(
    workdir: epath.PathLike | None, *, step: int, seconds: float, early_stop: StopRequest | None = None
) -> None:
    """Marks the run complete: `DONE` with the last step, the seconds `train()` took, the time, and the hook's
    request when one stopped the run early (`early_stop`: step, reason, hook)."""
    folder = _folder(workdir)
    if folder is None:
        return
    finished = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    record: dict[str, object] = {"step": step, "seconds": round(seconds, 3), "finished": finished}
    if early_stop is not None:
        record["early_stop"] = early_stop.as_json()
    write_text_atomic(folder / DONE_FILE, json.dumps(record) + "\n")


def read_run_end(workdir: epath.PathLike | None) -> dict[str, object] | None:
    """What `DONE` in `workdir` records (see `write_run_end`); None without one (or an unreadable one). Any
    process reads it."""
    if workdir is None:
        return None
    done = epath.Path(workdir) / DONE_FILE
    try:
        record = json.loads(done.read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def stopped_early(workdir: epath.PathLike | None, *, step: int, hooks: Sequence[object]) -> bool:
    """Whether the run in `workdir` ended at `step` because a hook still in `hooks` asked it to (its DONE says
    so): such a run is complete, like one that reached its last step. Without that hook (removed from the
    config) the run can be continued.

    Usage (`kd-train`'s check): `complete = steps[-1] >= trainer.stop_step or stopped_early(workdir,
    step=steps[-1], hooks=trainer.hooks)`.
    """
    request = StopRequest.from_json((read_run_end(workdir) or {}).get("early_stop"))
    return request is not None and request.step == step and request.hook in hook_keys(hooks)
