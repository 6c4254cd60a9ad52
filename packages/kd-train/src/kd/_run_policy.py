"""What a run folder's config.json may build when it is resolved again, and from where it may import.

    allowed, how = run_policy("/tmp/run", None)  # (["kd", "optax", ..., "!kd.cli", "!konfig"], "...")
    trainer = konfig.resolve(konfig.from_json(text), allowed=allowed)

A run folder is untrusted input (anyone may have written it, or edited it since), so it never widens its
own policy: for a foreign run, the policy is the *declared surfaces* (konfig's `konfig.surfaces`: kd,
optax, flax, jax, functools.partial, ...) of the top-level modules its run.json recorded, nothing else,
plus what the user passes with `--allowed`; nothing it names goes on `sys.path`. A run this user's own
kd-train wrote, unchanged since (its run.json signed with the user's key: `kd._run_signature`), is
trusted as it was for training: its recorded imports, the user's own modules among them, and its
config's folder (last on `sys.path`). No JAX here: the command line asks before it imports anything heavy.
"""

from __future__ import annotations

import json
import os
import re
import sys

import konfig

from kd._run_signature import is_signed


class RunPolicyError(ValueError):
    """A run folder whose run.json gives no usable list of imports (pass the allowed modules yourself)."""


# Modules that run programs or code, open files or sockets, or load objects by name: a run folder's
# recorded imports never allow them (its run.json is as untrusted as its config.json); only --allowed does.
RUNS_CODE = frozenset(
    """
    os posix nt subprocess _posixsubprocess builtins sys shutil importlib pkgutil zipimport runpy code
    codeop pty tty socket ssl select selectors asyncio multiprocessing concurrent threading _thread signal
    pickle _pickle copyreg shelve dill cloudpickle marshal ctypes _ctypes cffi types inspect gc io _io
    fileinput tempfile webbrowser urllib http ftplib smtplib telnetlib xmlrpc pdb bdb trace cProfile
    profile timeit site sysconfig ensurepip venv distutils setuptools pip
    """.split()
)


NEVER_FROM_RUN_FOLDERS = ("!kd.cli", "!konfig", "!kd.kauldron_alias")
# What `kauldron.*` names are under kd's alias (konfig stays refused by NEVER_FROM_RUN_FOLDERS), and the
# real Kauldron's counterparts of what a run folder never builds (when it, not the alias, is installed).
KAULDRON_ALIAS_TARGETS = ("kd", "kontext", "ktyping")
NEVER_FROM_KAULDRON = ("!kauldron.konfig", "!kauldron.cli")


def run_policy(workdir: str, flag: str | None) -> tuple[list[str], str]:
    """`(allowed patterns, how they were chosen)`: the run's recorded imports (this user's own signed run),
    or only their declared surfaces (any other run), plus `--allowed`'s patterns; a run without a record
    and no `--allowed` is refused (RunPolicyError)."""
    given = [p.strip() for p in flag.split(",") if p.strip()] if flag is not None else []
    record, config_json = _read(workdir)
    recorded = record.get("imports") if isinstance(record, dict) else None
    if not isinstance(recorded, list) or not all(isinstance(n, str) for n in recorded):
        if flag is not None:
            return given, "--allowed"
        raise RunPolicyError(
            f"{os.path.join(workdir, 'run.json')} records no imports (a run from an older kd-train, or "
            "not started by it), so there is no default for what its config.json may build; a run folder is "
            "untrusted input: read config.json and pass the modules it may use, e.g. --allowed=kd,optax,flax"
        )
    odd = [n for n in recorded if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n)]
    if odd:  # kd-train records top-level module names only: not patterns ("*"), not targets
        raise RunPolicyError(
            f"{os.path.join(workdir, 'run.json')} records imports that are not module names ({odd[:5]}), so it "
            "was not written by kd-train as it is; a run folder is untrusted input: read config.json and pass "
            "the modules it may use, e.g. --allowed=kd,optax,flax"
        )
    own = config_json is not None and is_signed(record, config_json)
    declared = set(konfig.declared_packages())
    if own:  # this user's kd-train wrote it, unchanged: as trusted as for training, less what runs code
        left_out = sorted(n for n in recorded if n in RUNS_CODE)
        how = "this user's own run (signed): its recorded imports"
    else:  # foreign or edited: only what the recorded packages declare a config may build
        left_out = sorted(n for n in recorded if n not in declared)
        how = "not signed by this user's kd-train (a foreign or edited run): the declared surfaces of its imports"
    allowed = [n for n in recorded if n not in left_out]
    if "kauldron" in allowed:  # Kauldron's names are kd's modules under the alias (kd.kauldron_alias)
        allowed += [n for n in KAULDRON_ALIAS_TARGETS if n not in allowed and (own or n in declared)]
    allowed += [p for p in given if p not in allowed]
    allowed += list(NEVER_FROM_RUN_FOLDERS) + (list(NEVER_FROM_KAULDRON) if "kauldron" in allowed else [])
    if left_out:
        how += f"; left out: {', '.join(left_out)} (trust one with --allowed=NAME)"
    if given:
        how += f"; with --allowed={','.join(given)}"
    return allowed, how


def is_own_run(workdir: str) -> bool:
    """Was the run in `workdir` written by this user's kd-train, and is it unchanged since?"""
    record, config_json = _read(workdir)
    return config_json is not None and is_signed(record, config_json)


def _read(workdir: str) -> tuple[object, str | None]:
    """run.json's record (None where unreadable) and config.json's text (None where missing)."""
    try:
        with open(os.path.join(workdir, "run.json")) as f:
            record = json.load(f)
    except (OSError, ValueError):
        record = None
    try:
        with open(os.path.join(workdir, "config.json"), encoding="utf-8") as f:
            config_json: str | None = f.read()
    except (OSError, ValueError):
        config_json = None
    return record, config_json


def config_folder_on_path(workdir: str) -> None:
    """For this user's own run only (`is_own_run`): the folder of the config file it trained from goes on
    `sys.path`, as it did for the training (`kd-train --cfg=examples/digits.py` names modules beside it);
    read from `run.json`, best effort. A foreign run's folders never go there. A folder inside the run
    folder is skipped, and the folder goes last: it never shadows a module."""
    if not is_own_run(workdir):
        return
    try:
        with open(os.path.join(workdir, "run.json")) as f:
            record = json.load(f)
        argv, cwd = list(record["argv"]), record.get("cwd")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return
    for index, arg in enumerate(argv):
        if not isinstance(arg, str):
            continue
        source = arg[len("--cfg=") :] if arg.startswith("--cfg=") else None
        if arg == "--cfg" and index + 1 < len(argv):
            source = argv[index + 1]
        if isinstance(source, str) and isinstance(cwd, str):
            source = os.path.join(cwd, source)  # the run's own directory (absolute paths stay as they are)
        if isinstance(source, str) and source.endswith(".py") and os.path.isfile(source):
            folder = os.path.dirname(os.path.abspath(source))
            inside = os.path.realpath(folder) + os.sep
            if inside.startswith(os.path.realpath(workdir) + os.sep):
                continue  # code shipped inside the run folder itself is never made importable
            if folder not in sys.path:  # last: a folder named by a run's record never shadows a module
                sys.path.append(folder)
