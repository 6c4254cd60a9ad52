"""`kd-train`: train a config, inspect it, evaluate its checkpoints, plot runs, diff runs.

    kd-train --cfg=examples/digits.py --cfg.num_train_steps=300 --cfg.workdir=/tmp/run
    kd-train --cfg=examples/digits.py --sweep=lr            # each item of sweep_lr() in /tmp/run/<item>
    kd-train inspect --cfg=examples/digits.py              # shapes, parameters, FLOPs, memory; no training
    kd-train eval --workdir=/tmp/run --evals=val      # each checkpoint of the run, as it appears
    kd-train eval --workdir=/tmp/run --no-follow      # the checkpoints there now, without waiting for DONE
    kd-train plot /tmp/run_a /tmp/run_b --out=curves.png
    kd-train diff /tmp/run_a /tmp/run_b

Exit codes: 0 done; 2 a config or usage error, printed as one paragraph (no traceback; a config file that
does not parse: its file, line and text); 1 the machine refused (disk full, a read-only or unwritable
workdir, too few file descriptors, an I/O error), a value broke a computation during training (a NaN loss),
printed as one paragraph saying what to do, or `eval` gave up waiting (--timeout_seconds); 1 a crash in user
code, shown as where in the run it happened and the user's frames (--traceback=full: all of them); 130
Ctrl-C; 143 SIGTERM (preempted).
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Callable, Sequence

from kd import kauldron_alias

from . import _launch, _lr_find, _predict
from ._compile_cache import enable_compilation_cache
from ._errors import (
    TRACEBACK_ENV,
    CliError,
    HeldIOErrorNoise,
    RunError,
    describe_os_error,
    one_line_warnings,
    operational_cause,
)
from ._eval import evaluate
from ._inspect import inspect
from ._stopped import report_crash
from ._train import train
from ._usage import USAGE, Parser, fail


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line `argv` (default `sys.argv[1:]`); returns the exit code.

    Usage: `sys.exit(kd.cli.main(["--cfg=examples/digits.py", "--cfg.num_train_steps=100"]))`.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    full = os.environ.get(TRACEBACK_ENV, "").strip().lower() == "full"
    # Kauldron configs and libraries (`from kauldron import kd`) run unchanged, unless Kauldron is installed.
    kauldron_alias.install_if_possible()
    for arg in [a for a in args if a.startswith("--traceback")]:
        args.remove(arg)
        value = arg.partition("=")[2].strip().lower()
        if value not in ("full", "short"):
            return fail(CliError(f"--traceback: expected 'full' or 'short', got {value!r}\n\n{USAGE}"))
        full = value == "full"
    if args and args[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0
    command = "train"
    if args and not args[0].startswith("-"):
        command = args.pop(0)
    run = _COMMANDS.get(command)
    if run is None:
        return fail(CliError(_unknown_command(command)))
    enable_compilation_cache()  # a rerun, a resume, eval and a sweep's items reuse earlier compiles
    with (
        HeldIOErrorNoise() as held,
        one_line_warnings(),
    ):  # orbax's logged I/O tracebacks: the paragraph says it
        try:
            return run(args)
        except KeyboardInterrupt as e:  # Ctrl-C: the loop said where it stopped, or a second press stopped it
            if full and not getattr(e, "_kd_announced", False):
                raise
            if not getattr(e, "_kd_announced", False):
                print("interrupted (Ctrl-C): stopped at once", file=sys.stderr, flush=True)
            return 130  # 128 + SIGINT, as a shell reports it
        except CliError as e:
            return fail(e)
        except RunError as e:
            held.discard()
            return fail(e, code=1)
        except Exception as e:
            cause = operational_cause(e)
            if cause is not None:  # an I/O error anywhere (an eval's file, a restore) is the machine's
                held.discard()
                flag = _OUTPUT_FLAG.get(command, "--cfg.workdir")
                return fail(RunError(describe_os_error(cause, flag=flag)), code=1)
            if full:
                raise
            return report_crash(e)


def _unknown_command(command: str) -> str:
    """`kd-train examples/digits.py` (no `--cfg=`) or a mistyped subcommand: what was meant."""
    if command.endswith((".py", ".json")) or os.path.sep in command:
        return f"{command!r} is not a command; to train that config: kd-train --cfg={command}"
    close = difflib.get_close_matches(command, list(_COMMANDS), n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return (
        f"unknown command {command!r}{hint} The commands: {', '.join(_COMMANDS)} (kd-train --help "
        "describes them)"
    )


# The flag naming where a command writes, for the advice of an I/O error ("choose another --workdir").
_OUTPUT_FLAG = {"eval": "--workdir", "plot": "--out"}


def _plot(argv: list[str]) -> int:
    parser = Parser(prog="kd-train plot", add_help=False)
    parser.add_argument("workdirs", nargs="+")
    parser.add_argument("--out", default=None)
    parser.add_argument("--metrics", default=None)
    parser.add_argument("--perf", action="store_true")
    opts = parser.parse_args(argv)
    from ._plot import plot_runs

    metrics = [m for m in opts.metrics.split(",") if m] if opts.metrics else None
    print(plot_runs(opts.workdirs, out=opts.out, metrics=metrics, perf=opts.perf), flush=True)
    return 0


def _diff(argv: list[str]) -> int:
    parser = Parser(prog="kd-train diff", add_help=False)
    parser.add_argument("workdir_a")
    parser.add_argument("workdir_b")
    opts = parser.parse_args(argv)
    from ._diff import diff_runs

    print(diff_runs(opts.workdir_a, opts.workdir_b), flush=True)
    return 0


def _kauldron_command(noun: str) -> Callable[[list[str]], int]:
    """Kauldron's `<noun> <verb>` commands (kd.cli.commands): config show|resolve, data element_spec, run
    eval_shape, on the config patched for a quick trial (`--patch.<field>=VALUE`)."""

    def run(argv: list[str]) -> int:
        from . import commands

        try:
            args = commands.flag_parser(["kd-train", noun, *argv])
        except SystemExit as e:  # argparse said what is wrong (a missing or unknown verb, a bad flag)
            return e.code if isinstance(e.code, int) else 2
        commands.main(args)
        return 0

    return run


_COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "train": train,
    "inspect": inspect,
    "eval": evaluate,
    "plot": _plot,
    "diff": _diff,
    "launch": _launch.launch,
    "predict": _predict.predict,
    "lr-find": _lr_find.lr_find,
    "config": _kauldron_command("config"),
    "data": _kauldron_command("data"),
    "run": _kauldron_command("run"),
}
