# ruff: noqa: F821 - single-name shape specs like Int["b"] are not forward references
"""ktyping against Kauldron's ktyping and jaxtyping (with beartype / typeguard), in one run.

    hatch run bench:python benchmarks/ktyping_bench.py [--repeat 7] [--calls 20000]
    hatch run python benchmarks/ktyping_bench.py --tiny    # a smoke test: ktyping alone where no peer is installed

Every library decorates the same function of 3 annotated numpy arrays (plus the return
value), called outside jit (where checks cost on every call; under jit they run once
at trace time):

    def f(x: Float["b n"], w: Float["n m"], idx: Int["b"]) -> Float["b n"]

and the same dataclass of 3 annotated array fields, constructed. Times are the best of
`--repeat` runs of up to `--calls` calls (fewer for slow peers: ~0.2 s per run).
Overhead is time per call minus the undecorated call; the ratio is peer overhead /
ktyping overhead, so above 1 means ktyping is cheaper.
The last table times `import` in fresh subprocesses.
"""

# No `from __future__ import annotations`: the peers need evaluated annotations.
import argparse
import dataclasses
import os
import subprocess
import sys
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

X = np.zeros((8, 16), np.float32)
W = np.zeros((16, 4), np.float32)
IDX = np.zeros((8,), np.int32)


def plain_function() -> Callable[..., Any]:
    def f(x, w, idx):
        return x

    return f


def plain_dataclass() -> Callable[..., Any]:
    @dataclasses.dataclass
    class Batch:
        x: Any
        w: Any
        idx: Any

    return Batch


def ktyping_suite() -> tuple[Callable[..., Any], Callable[..., Any]]:
    import ktyping
    from ktyping import Float, Int

    @ktyping.typechecked
    def f(x: Float["b n"], w: Float["n m"], idx: Int["b"]) -> Float["b n"]:
        return x

    @ktyping.typechecked
    @dataclasses.dataclass
    class Batch:
        x: Float["b n"]
        w: Float["n m"]
        idx: Int["b"]

    return f, Batch


def kauldron_suite() -> tuple[Callable[..., Any], Callable[..., Any]]:
    from kauldron import ktyping as kt
    from kauldron.ktyping import Float, Int

    @kt.typechecked
    def f(x: Float["b n"], w: Float["n m"], idx: Int["b"]) -> Float["b n"]:
        return x

    @kt.typechecked
    @dataclasses.dataclass
    class Batch:
        x: Float["b n"]
        w: Float["n m"]
        idx: Int["b"]

    return f, Batch


try:  # jaxtyping's annotations as module-level aliases, as its docs suggest for typeguard
    from jaxtyping import Float as JFloat
    from jaxtyping import Int as JInt
    from jaxtyping import jaxtyped

    FloatBN = JFloat[np.ndarray, "b n"]
    FloatNM = JFloat[np.ndarray, "n m"]
    IntB = JInt[np.ndarray, "b"]
except ImportError:
    jaxtyped = None


def jaxtyping_beartype_suite() -> tuple[Callable[..., Any], Callable[..., Any]]:
    from beartype import beartype

    @jaxtyped(typechecker=beartype)
    def f(x: FloatBN, w: FloatNM, idx: IntB) -> FloatBN:
        return x

    @jaxtyped(typechecker=beartype)
    @dataclasses.dataclass
    class Batch:
        x: FloatBN
        w: FloatNM
        idx: IntB

    return f, Batch


# typeguard 4 instruments functions by re-parsing their module's source: it cannot find
# the function jaxtyped(typechecker=...) generates (jaxtyping issue #344), so we use the
# stacked form jaxtyping documents, at module level, with jaxtyped providing the dim scope.
if jaxtyped is not None:
    from typeguard import typechecked as typeguard_typechecked

    @jaxtyped(typechecker=None)
    @typeguard_typechecked
    def f_typeguard(x: FloatBN, w: FloatNM, idx: IntB) -> FloatBN:
        return x


def jaxtyping_typeguard_suite() -> tuple[Callable[..., Any], None]:
    # No dataclass: typeguard cannot instrument the generated __init__ (no source).
    if jaxtyped is None:  # reported as the peer's failure, like the others'
        raise ModuleNotFoundError("No module named 'jaxtyping'")
    return f_typeguard, None


SUITES: dict[str, Callable[[], tuple[Callable[..., Any], Callable[..., Any]]]] = {
    "ktyping": ktyping_suite,
    "kauldron.ktyping": kauldron_suite,
    "jaxtyping+beartype": jaxtyping_beartype_suite,
    "jaxtyping+typeguard": jaxtyping_typeguard_suite,
}

IMPORTS = {
    "ktyping": "import ktyping",
    "kauldron.ktyping": "import kauldron.ktyping",
    "jaxtyping+beartype": "import jaxtyping, beartype",
    "jaxtyping+typeguard": "import jaxtyping, typeguard",
}


def per_call(fn: Callable[..., Any], calls: int, repeat: int) -> float:
    """Best time of one call in seconds, over `repeat` runs of up to `calls` calls (~0.2 s each)."""
    fn(X, W, IDX)  # warm caches (first call builds plans)
    timer = timeit.Timer(lambda: fn(X, W, IDX))
    number = min(calls, timer.autorange()[0])
    return min(timer.repeat(number=number, repeat=repeat)) / number


def import_time(statement: str, repeat: int) -> float:
    """Best import time in a fresh interpreter, after one run that writes the bytecode caches."""
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    runs = []
    for _ in range(repeat + 1):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        runs.append(float(out.stdout.strip().splitlines()[-1]))
    return min(runs[1:])


def fmt_us(seconds: float) -> str:
    return f"{seconds * 1e6:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--tiny", action="store_true", help="--repeat 1 --calls 200, one import run (seconds)")
    args = parser.parse_args()
    if args.tiny:
        args.repeat, args.calls = 1, 200

    base_call = per_call(plain_function(), args.calls, args.repeat)
    base_init = per_call(plain_dataclass(), args.calls, args.repeat)
    rows: dict[str, tuple[float, float | None] | str] = {}
    for name, build in SUITES.items():
        try:
            f, batch = build()
            call = per_call(f, args.calls, args.repeat)
            init = None if batch is None else per_call(batch, args.calls, args.repeat) - base_init
            rows[name] = (call - base_call, init)
        except Exception as e:  # a peer that cannot run is reported, not fatal
            rows[name] = f"{type(e).__name__}: {e}".splitlines()[0][:70]

    ours = rows["ktyping"]
    assert isinstance(ours, tuple) and ours[1] is not None
    print("f(x, w, idx) with 3 annotated numpy arrays + return, outside jit; dataclass of 3 array fields.")
    print(
        "overhead = time - undecorated time; ratio = peer overhead / ktyping overhead (>1: ktyping cheaper)"
    )
    print()
    header = f"{'library':<22}{'call':>9}{'overhead':>10}{'ratio':>8}   {'dataclass':>10}{'overhead':>10}{'ratio':>8}"
    print(header)
    print(f"{'':<22}{'[us]':>9}{'[us]':>10}{'':>8}   {'[us]':>10}{'[us]':>10}")
    print("-" * len(header))
    print(
        f"{'undecorated':<22}{fmt_us(base_call):>9}{'-':>10}{'-':>8}   {fmt_us(base_init):>10}{'-':>10}{'-':>8}"
    )
    for name, row in rows.items():
        if isinstance(row, str):
            print(f"{name:<22}  failed: {row}")
            continue
        call, init = row
        left = f"{fmt_us(base_call + call):>9}{fmt_us(call):>10}{call / ours[0]:>7.1f}x"
        if init is None:
            right = f"{'-':>10}{'-':>10}{'-':>8}"
        else:
            right = f"{fmt_us(base_init + init):>10}{fmt_us(init):>10}{init / ours[1]:>7.1f}x"
        print(f"{name:<22}{left}   {right}")
    print()
    print(f"{'import':<22}{'[ms]':>10}")
    print("-" * 32)
    for name, statement in IMPORTS.items():
        try:
            print(f"{name:<22}{import_time(statement, 1 if args.tiny else 3) * 1e3:>10.1f}")
        except subprocess.CalledProcessError as e:
            print(f"{name:<22}  failed: {e.stderr.strip().splitlines()[-1][:60]}")


if __name__ == "__main__":
    main()
