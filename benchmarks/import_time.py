"""Import time of each kd package, cumulative, from `python -X importtime` in fresh interpreters.

Run: `hatch run python benchmarks/import_time.py` (median of 5 runs; bytecode is compiled first);
`--tiny`: one run each (a smoke test).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

MODULES = ["konfig", "kontext", "ktyping", "kd_compat", "kd"]
RUNS = 5
# Cached bytecode is what users run with; some shells here disable writing it.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def import_time_us(module: str) -> int:
    """The cumulative microseconds `python -X importtime` reports for `import <module>`."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True, check=True, env=ENV
    )
    for line in proc.stderr.splitlines():
        fields = [f.strip() for f in line.removeprefix("import time:").split("|")]
        if len(fields) == 3 and fields[2] == module:
            return int(fields[1])
    raise RuntimeError(f"no importtime line for {module}:\n{proc.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="one run per module (a smoke test)")
    runs = 1 if parser.parse_args().tiny else RUNS
    subprocess.run([sys.executable, "-c", "; ".join(f"import {m}" for m in MODULES)], check=True, env=ENV)
    header = f"import (ms, median of {runs})"
    print(f"{'module':<10} {header:>28}")
    for module in MODULES:
        times = [import_time_us(module) for _ in range(runs)]
        print(f"{module:<10} {statistics.median(times) / 1000:>28.1f}")


if __name__ == "__main__":
    main()
