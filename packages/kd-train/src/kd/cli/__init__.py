"""kd.cli: the `kd-train` command (also `python -m kd`): train, inspect, eval, plot, diff.

kd-train --cfg=examples/digits.py --cfg.num_train_steps=300 --cfg.workdir=/tmp/run
"""

from ._errors import CliError as CliError
from ._errors import RunError as RunError


def main(argv: list[str] | None = None) -> int:
    """Runs `kd-train` with `argv` (default: `sys.argv[1:]`); returns the exit code."""
    from ._main import main as _main

    return _main(argv)


__all__ = ["CliError", "RunError", "main"]
