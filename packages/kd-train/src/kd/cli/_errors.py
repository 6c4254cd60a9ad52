"""`CliError`: a problem with what the user asked `kd-train` to do, printed as one paragraph (exit 2)."""

from __future__ import annotations


class CliError(Exception):
    """Raised by the `kd-train` subcommands for bad arguments or workdirs; the CLI prints it, no traceback.

    Usage: `raise CliError(f"{workdir}: no metrics.jsonl (was the run started with a workdir?)")`.
    """
