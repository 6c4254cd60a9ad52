"""Each script in benchmarks/ runs in its `--tiny` mode and prints its table: benchmarks that cannot rot.

No timing is asserted: these check that every benchmark still runs against the current API (the Trainer's
logged rows, kd's names) in the default environment, where the peers (kauldron, fiddle, ml_collections,
jaxtyping) are not installed and their columns are left out with a note.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

# script and arguments -> lines its output must hold (table headers and rows).
TINY_RUNS = {
    "trainer_bench.py --tiny": ["(a) hand loop", "(b) kd Trainer", "kd targets (ratio (b)/(a), medians):"],
    "scale_bench.py --lm --tiny": ["variant      steps/s  x hand", "hand loop", "kd Trainer"],
    "checkpoint_bench.py --tiny": ["none (Noop)", "async, every 10", "save: until on disk", "crc32"],
    "data_bench.py --tiny": ["pipeline        start-up s", "kd InMemory", "kd.data.py w=2"],
    "import_time.py --tiny": ["import (ms, median of 1)", "konfig", "kd "],
    "konfig_bench.py --tiny": ["operation", "konfig ms", "resolve", "from_json"],
    "kontext_bench.py --tiny": ["resolve keys of 20 losses/metrics", "import kontext (fresh interpreter)"],
    "ktyping_bench.py --tiny": ["undecorated", "ktyping ", "import"],
    # Two of the five models (kd.nn's Vit and an NNX module: the paths trainer_bench does not take), to stay
    # within the test's time; the others run the same code.
    "model_suite.py --tiny --models nnx": ["model  variant", "nnx    kd1", "nnx    hand", "kd/hand"],
    "startup_bench.py --tiny": ["hand loop: step 1 done", "kd-train: step 1 (warm cache)", "warm / cold step 1"],
    "lm_bench.py --tiny --variants hand,kd1": ["variant ", "hand ", "kd1 ", "model TFLOP per step"],
    "ecosystem/gemma.py --help": ["usage: gemma.py"],
    # Which ways keep single steps' bits differs by model and machine: only that each is compared.
    "update_ways_bits.py --tiny": ["backend cpu (cpu), 3 updates", "mlp  fused     max |diff|", "mlp  unrolled  max |diff|"],
}


def _run(command: str) -> subprocess.CompletedProcess[str]:
    script, *args = command.split()
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_PLATFORMS", "XLA_FLAGS")}
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "JAX_PLATFORMS": "cpu"},
    )


@pytest.mark.parametrize("command", list(TINY_RUNS))
def test_benchmark_runs_in_tiny_mode_and_prints_its_table(command: str) -> None:
    proc = _run(command)
    assert proc.returncode == 0, (
        f"{command} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    missing = [line for line in TINY_RUNS[command] if line not in proc.stdout]
    assert not missing, f"{command} printed no {missing}:\n{proc.stdout[-3000:]}"


def test_every_benchmark_script_has_a_tiny_run() -> None:
    scripts = {p.relative_to(BENCHMARKS).as_posix() for p in BENCHMARKS.rglob("*.py")}
    # Not benchmarks: the targets konfig_bench builds, and the driver gemma.py runs inside its own venv.
    helpers = {"konfig_bench_targets.py"} | {s for s in scripts if s.startswith("ecosystem/gemma_driver/")}
    covered = {command.split()[0] for command in TINY_RUNS}
    assert scripts - helpers - covered == set()
