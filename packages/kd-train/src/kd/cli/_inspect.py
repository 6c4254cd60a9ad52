"""`kd-train inspect`: the config resolved and described (context paths, parameter table, the compiled
step's FLOPs and memory; `--interms`: every intermediate the model offers), without training or touching
any workdir.

    kd-train inspect --cfg=examples/digits.py --cfg.model.features=64
"""

from __future__ import annotations

from typing import Any

import konfig

from kd._phase import during

from ._errors import CliError
from ._resolve import resolve, source_policy, split_flags
from ._usage import USAGE, Parser


def inspect(argv: list[str]) -> int:
    """`kd-train inspect ARGV`: prints the report; 0."""
    source, args, overrides, rest = split_flags(argv)
    parser = Parser(prog="kd-train inspect", add_help=False)
    parser.add_argument("--allowed", default=None)
    parser.add_argument("--interms", action="store_true")
    opts, unexpected = parser.parse_known_args(rest)
    if unexpected:
        raise CliError(f"inspect: unexpected arguments {unexpected}\n\n{USAGE}")
    allowed = source_policy(source, opts.allowed)
    with during(f"loading the config {source}"):
        cfg = konfig.build_config(source, args=args, overrides=overrides, from_strings=True)
    from kd.inspect import inspect_report, interms_report
    from kd.writers import leave_out_writers

    # Inspecting writes nothing and reads no run: no workdir, no checkpointer (which would need one), and none
    # of the config's writers (a run's config.json may name a server or folder of someone else's choosing).
    cfg.workdir = None
    if _has_field(cfg, "checkpointer"):
        cfg.checkpointer = None
    leave_out_writers(cfg)
    trainer = resolve(cfg, allowed=allowed)
    print(interms_report(trainer) if opts.interms else inspect_report(trainer), flush=True)
    return 0


def _has_field(cfg: Any, name: str) -> bool:
    try:
        return cfg[name] is not None
    except (KeyError, AttributeError, TypeError, IndexError):
        return False
