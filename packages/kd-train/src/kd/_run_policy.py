"""What a run folder's config.json may build when it is resolved again: the run's recorded imports.

    allowed, how = run_policy("/tmp/run", None)  # (["kd", "optax", ..., "!kd.cli", "!konfig"], "the run's ...")
    trainer = konfig.resolve(konfig.from_json(text), allowed=allowed)

A run folder is untrusted input (anyone may have written it): its config.json is resolved in konfig's safe
mode, allowing only the top-level modules its run.json recorded, less those that run code. No JAX here:
the command line asks before it imports anything heavy.
"""

from __future__ import annotations

import json
import os
import re
import sys


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
    """`(allowed patterns, how they were chosen)`: `--allowed` as given, else the modules the run recorded
    in run.json less `RUNS_CODE`; an old run without a record is refused (RunPolicyError: pass --allowed)."""
    if flag is not None:
        return [p.strip() for p in flag.split(",") if p.strip()], "--allowed"
    try:
        with open(os.path.join(workdir, "run.json")) as f:
            recorded = json.load(f).get("imports")
    except (OSError, ValueError, AttributeError):
        recorded = None
    if not isinstance(recorded, list) or not all(isinstance(n, str) for n in recorded):
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
    left_out = sorted(n for n in recorded if n in RUNS_CODE)
    # kd's command line and konfig's loaders run Python files by name (`kd.cli:main(["--cfg=x.py"])`):
    # never built from a run folder's config unless --allowed says so.
    allowed = [n for n in recorded if n not in left_out]
    kauldron = "kauldron" in allowed  # Kauldron's names are kd's modules under the alias (kd.kauldron_alias)
    if kauldron:
        allowed += [n for n in KAULDRON_ALIAS_TARGETS if n not in allowed]
    allowed += list(NEVER_FROM_RUN_FOLDERS) + (list(NEVER_FROM_KAULDRON) if kauldron else [])
    note = (
        f"; left out as they run code: {', '.join(left_out)} (allow them with --allowed)" if left_out else ""
    )
    return allowed, f"the run's recorded imports{note}"


def config_folder_on_path(workdir: str) -> None:
    """The folder of the config file the run trained from goes on `sys.path`, as it did for the training
    (`kd-train --cfg=examples/digits.py` names modules beside it); read from `run.json`, best effort. A
    folder inside the run folder is skipped, and the folder goes last: it never shadows a module."""
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
