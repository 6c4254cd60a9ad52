"""The device lane: kd-train's in-process tests on whatever accelerator JAX finds, in one process.

    python3 -m hatch run test-device            # here: on the CPU (what CI runs anyway)
    python3 tests/device_lane.py -q             # on an accelerator machine (benchmarks/device/tpu.sh lane)
    python3 tests/device_lane.py -q --shard=1/2 # half the files (a TPU v5e runs the whole lane in ~8 min)

One program at a time can hold an accelerator, so the lane runs the test files of `tests/kd_train` that start
no process of their own (no `subprocess`, `multiprocessing` or `sys.executable`), all in this process. Tests
that compare numbers state their precision; CPU-only assumptions are skipped with the reason. Arguments go to
pytest.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# Run as a script, this folder is sys.path[0]: its test packages (tests/kontext, tests/ktyping...) would hide
# the packages of those names.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import pytest

TESTS = Path(__file__).resolve().parent / "kd_train"
_STARTS_PROCESSES = re.compile(r"\b(subprocess|multiprocessing|sys\.executable|os\.fork|Popen)\b")


def in_process_files() -> list[str]:
    """The test files of tests/kd_train that start no process."""
    return sorted(
        str(path) for path in TESTS.glob("test_*.py") if not _STARTS_PROCESSES.search(path.read_text())
    )


# Test files that need a package an accelerator machine may lack (it has no network): left out, said.
_NEEDS = {"test_data_tfds_source.py": "tensorflow_datasets"}
# Test files left out on an accelerator, with the reason.
_CPU_ONLY = {
    # It calls every admitted jax.numpy / optax / flax name with generated arguments (a safe-mode property
    # with nothing of the accelerator in it); on a TPU v5e one such call aborted the whole process.
    "test_safe_mode_surface_property.py": "a generated call aborted the TPU process (Illegal instruction)",
}
# Tests in the chosen files that start processes all the same (kd-train's launcher does).
_DESELECTED = {
    "test_cli_launch.py::test_local_exits_with_the_code_of_the_processes_that_failed": "starts 2 processes",
}


def main(argv: list[str]) -> int:
    import importlib.util

    import jax

    files = in_process_files()
    shard = next((a for a in argv if a.startswith("--shard=")), None)
    if shard is not None:  # --shard=I/N: every N-th file from the I-th (1-based), for a machine's time limit
        argv = [a for a in argv if a != shard]
        index, count = (int(n) for n in shard.split("=", 1)[1].split("/"))
        if not 1 <= index <= count:
            raise SystemExit(f"{shard}: expected --shard=I/N with 1 <= I <= N")
        files = files[index - 1 :: count]
        print(f"device lane: shard {index}/{count}")
    for name, module in _NEEDS.items():
        if importlib.util.find_spec(module) is None:
            files = [f for f in files if Path(f).name != name]
            print(f"device lane: {name} left out: {module} is not installed here")
    if jax.default_backend() != "cpu":
        for name, reason in _CPU_ONLY.items():
            files = [f for f in files if Path(f).name != name]
            print(f"device lane: {name} left out: {reason}")
    deselect = []
    for test, reason in _DESELECTED.items():
        if any(Path(f).name == test.split("::")[0] for f in files):
            print(f"device lane: {test} left out: it {reason}")
            deselect += ["--deselect", f"tests/kd_train/{test}"]  # a node id, from the repository root
    print(f"device lane: {len(files)} test files on {jax.default_backend()} ({jax.devices()[0].device_kind})")
    return int(pytest.main([*argv, *deselect, *files], plugins=[_SayFailuresAtOnce()]))


class _SayFailuresAtOnce:
    """Prints each failure's node id, place and message as it happens: a lane cut short by a machine's time limit
    still says what failed (pytest's own summary comes at the end)."""

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            where = f"{crash.path}:{crash.lineno}: " if crash else ""
            message = crash.message if crash else str(report.longrepr).strip()
            print(f"\nFAILED {report.nodeid} ({report.when}): {where}{message[:400]}", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
