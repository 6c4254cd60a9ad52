"""Several processes (hosts) training one run: `jax.distributed.initialize` from flags or the environment.

    kd-train --cfg=cfg.py --cfg.workdir=/shared/run \\
        --coordinator_address=10.0.0.1:1234 --num_processes=4 --process_id=$RANK
    # or the same three from JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID

Each process loads its slice of every global batch, all of them compute every step together (JAX's
collectives; gloo between CPU processes), process 0 alone writes logs and shows progress, and orbax
writes the checkpoints from all of them into the shared workdir.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ._errors import CliError

# flag -> environment variable (JAX reads JAX_COORDINATOR_ADDRESS itself; the other two are ours, named alike)
ENVIRONMENT = {
    "coordinator_address": "JAX_COORDINATOR_ADDRESS",
    "num_processes": "JAX_NUM_PROCESSES",
    "process_id": "JAX_PROCESS_ID",
}


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--coordinator_address", default=None)
    parser.add_argument("--num_processes", default=None)
    parser.add_argument("--process_id", default=None)


def settings(opts: argparse.Namespace, environ: Any = os.environ) -> dict[str, Any] | None:
    """`{coordinator_address, num_processes, process_id}` from the flags, else the environment; None when
    neither names a coordinator (one process). A partial or malformed set is a CliError naming the gap."""
    values = {
        name: getattr(opts, name) or environ.get(variable) or None for name, variable in ENVIRONMENT.items()
    }
    if values["coordinator_address"] is None:
        given = [f"--{name}" for name, value in values.items() if value is not None]
        if given:
            raise CliError(
                f"{', '.join(given)} given without --coordinator_address (or JAX_COORDINATOR_ADDRESS): "
                "several processes need the address (host:port) of process 0"
            )
        return None
    for name in ("num_processes", "process_id"):
        value = values[name]
        if value is None:
            raise CliError(
                f"--coordinator_address={values['coordinator_address']} needs --{name} "
                f"(or {ENVIRONMENT[name]}) too"
            )
        try:
            values[name] = int(value)
        except ValueError:
            raise CliError(f"--{name}: expected an integer, got {value!r}") from None
    if values["num_processes"] < 1 or not 0 <= values["process_id"] < values["num_processes"]:
        raise CliError(
            f"--process_id={values['process_id']} --num_processes={values['num_processes']}: expected "
            "num_processes >= 1 and 0 <= process_id < num_processes"
        )
    if ":" not in str(values["coordinator_address"]):
        raise CliError(f"--coordinator_address: expected host:port, got {values['coordinator_address']!r}")
    return values


def initialize(values: dict[str, Any] | None) -> None:
    """Connects this process to the others (before anything asks JAX for its devices)."""
    if values is None:
        return
    import jax

    # CPU processes talk over gloo (TCP); GPUs and TPUs use their own collectives.
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(**values)
