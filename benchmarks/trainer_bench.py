"""kd.train.Trainer against a hand-written jitted flax + optax loop and against Kauldron's Trainer.

    python3 -m hatch run bench-trainer                                       # (a) and (b); (c) if found
    python3 -m hatch run python benchmarks/trainer_bench.py                  # the same
    python3 -m hatch run python benchmarks/trainer_bench.py --steps 200 --repeats 1    # a quick look
    python3 -m hatch run python benchmarks/trainer_bench.py --tiny   # (a) and (b), 200 steps, 1 process each
    python3 -m hatch run python benchmarks/trainer_bench.py --install-size   # + a fresh venv of the kd stack
    python3 -m hatch run python benchmarks/trainer_bench.py --variants '' --install-size   # that alone
    python3 -m hatch run python benchmarks/trainer_bench.py \
        --python-kauldron "$(python3 -m hatch env find bench)/bin/python"    # (c) under another python

The parent runs in the kd environment; (c) runs under `--python-kauldron` (default: the hatch `bench`
environment's python, which has kauldron 1.4.2), so the names `kd` (ours) and `kauldron.kd` never meet.

The variants train the same model on the same data for the same number of steps:
  (a) hand:     `jax.jit(train_step, donate_argnums=0)` over `(params, opt_state)` (init jitted too), a
                python loop feeding the numpy batches of a fixed pool in turn, blocking only at steps 1, 100
                and the last;
  (b) kd:       `kd.train.Trainer` with its defaults (fused steps chosen by itself: the 99 updates up to
                each logging step in one call; no workdir: nothing written), `log_metrics_every=100`, data
                `kd.data.InMemoryPipeline` over the pool's arrays, which the Trainer keeps on the device and
                gathers each call's batches from;
  (c) Kauldron: `kauldron.kd.train.Trainer` with its defaults (its profiler included: it traces 5 steps at
                step 10 into the workdir, a temporary folder), `log_metrics_every=100`, data
                `kauldron.kd.data.InMemoryPipeline` over the same arrays. Kauldron runs `num_train_steps + 1`
                updates (steps 0 ... N), one more than the others;
  (b1) kd, 1/call: (b) with `steps_per_call=1` (one jitted call per update), only with `--variants ...,b1`:
                what the fused steps of (b) cost or buy;
  (b2) kd, host data: (b) with data `kd.data.FromIterable` over the pool's batches, only with
                `--variants ...,b2`: a pipeline that is not a `kd.data.RowsIterator`, so each fused call gets
                its batches stacked on the host and copies them (8 MB a call on CPU: 20 batches);
  (c0) Kauldron, no profiler: (c) with `profiler=None`, only with `--variants ...,c0`: Kauldron's own
                overhead without its default profiling (which, here, slows every later step and grows RSS).
Model: linen `Dense(128) -> relu -> Dense(10)` on 784 inputs, batch 128, softmax cross-entropy with integer
labels, `optax.adam(1e-3)`; inputs and labels random (seed 0), a pool of 50 batches cycled.
(b) and (c) write their logged rows into a writer that keeps them in memory and notes the clock: the row of
a logging step is written after its values are read from the device, so the step is done.

Each run is a fresh process (`--child`), interleaved a, b, c, a, b, c, ... so that a noisy neighbour hurts
all alike, its peak RSS read from `os.wait4`. The columns, medians over `--repeats` processes:
  import s:     importing the framework: jax + flax.linen + optax for (a); `import kd` + kd.train, kd.data,
                kd.losses, kd.writers + flax.linen + optax for (b); `from kauldron import kd` (its lazy
                namespaces kd.train, kd.data, kd.losses touched) + flax.linen + optax for (c);
  first step s: from the parent's `Popen` to the end of the first update (its loss on the host): interpreter
                start, imports, config, init, the first compile;
  wall s:       the whole process, from `Popen` to its exit;
  steps/s:      steady rate: the updates from the log at step 100 to the last one, over the seconds between
                them (for (a): between blocking at step 100 and at the last step);
  CPU us/step:  the process's CPU time (all threads) over the same window, per update: less hurt by a busy
                neighbour than steps/s is, as long as the cores are not oversubscribed;
  RSS MiB:      the process's peak resident memory;
  loss:         the loss of the last logged row, to see that all train the same thing: the same for (a) and
                (b) but for the initial parameters (other random keys); Kauldron's last row is one update
                later, on another batch.
`x a` columns are the ratio to (a) (for steps/s above 1 is faster, for the others above 1 is more).
Targets for kd: steps/s >= 1.0x the hand loop, first step and wall <= 1.3x, peak RSS <= 1.3x, import <= 1.5x.

`--install-size` builds a fresh venv in a temporary folder, installs konfig, kontext, ktyping, kd-compat and
kd-train from this repository (dependencies from the package index; with uv when it is there) and reports
its site-packages size, its number of distributions, and that tensorflow is not among them.

Times are wall clock on a shared machine: compare rows of one run, not runs of different days.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

VARIANTS = {
    "a": "(a) hand loop",
    "b": "(b) kd Trainer",
    "b1": "(b1) kd, 1/call",
    "b2": "(b2) kd, host data",
    "c": "(c) Kauldron",
    "c0": "(c0) Kauldron noprof",
}
_KAULDRON = ("c", "c0")  # the variants that run under --python-kauldron
KAULDRON_PYTHON = "/root/.local/share/hatch/env/virtual/main/8q9sCXq4/bench/bin/python"
REPO = Path(__file__).resolve().parent.parent
PACKAGES = ["konfig", "kontext", "ktyping", "kd-compat", "kd-train"]

_RESULT = "RESULT "  # prefix of the JSON line a --child process prints
_T0 = "TRAINER_BENCH_T0"  # the parent's time.time() just before it starts the child
# Cached bytecode is what users run with; some shells here disable writing it.
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

INPUTS, HIDDEN, CLASSES = 784, 128, 10
BATCH_SIZE = 128
POOL = 50  # batches, cycled
LOG_EVERY = 100
LEARNING_RATE = 1e-3


def _pool() -> dict[str, Any]:
    """`POOL * BATCH_SIZE` examples: `x` normal float32 `(n, 784)`, `label` int32 `(n, 1)` (Kauldron's shape)."""
    import numpy as np

    rng = np.random.default_rng(0)
    n = POOL * BATCH_SIZE
    return {
        "x": rng.normal(size=(n, INPUTS)).astype(np.float32),
        "label": rng.integers(0, CLASSES, size=(n, 1)).astype(np.int32),
    }


def _pool_batches(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The pool as its `POOL` batches (views), in order, as (a) cycles them."""
    return [{k: v[i * BATCH_SIZE : (i + 1) * BATCH_SIZE] for k, v in data.items()} for i in range(POOL)]


def _since_start() -> float:
    return time.time() - float(os.environ[_T0])


# ---------------------------------------------------------------------------------------------- the children
# Each imports its framework inside the function, so that the import is timed and nothing else is loaded.


def _keyed_mlp(nn: Any, key_type: Any) -> Any:
    """The MLP as a linen Module reading its input at `batch.x`, for a Trainer (kd's or Kauldron's).

    Built with `type` so that the field's annotation is `key_type` itself: Kauldron resolves annotations
    with `typing.get_type_hints`, which cannot see a name local to a function (this file postpones them)."""

    def __call__(self: Any, x: Any) -> Any:
        return nn.Dense(CLASSES)(nn.relu(nn.Dense(HIDDEN)(x)))

    namespace = {"__annotations__": {"x": key_type}, "x": "batch.x", "__call__": nn.compact(__call__)}
    return type("Mlp", (nn.Module,), namespace)


def child_hand(steps: int, import_only: bool) -> dict[str, Any]:
    """(a): a jitted flax + optax step over pre-made numpy batches."""
    start = time.perf_counter()
    import jax
    import optax
    from flax import linen as nn

    import_s = time.perf_counter() - start
    if import_only:
        return {"import_s": import_s}

    class Mlp(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            return nn.Dense(CLASSES)(nn.relu(nn.Dense(HIDDEN)(x)))

    data = _pool()
    batches = _pool_batches(data)
    model = Mlp()
    optimizer = optax.adam(LEARNING_RATE)

    @jax.jit  # one compile instead of each init op dispatched (and compiled) on its own
    def init(key: jax.Array, x: jax.Array) -> Any:
        params = model.init(key, x)["params"]
        return params, optimizer.init(params)

    state = init(jax.random.key(0), batches[0]["x"])

    def train_step(state: Any, batch: dict[str, Any]) -> tuple[Any, jax.Array]:
        params, opt_state = state

        def loss_fn(p: Any) -> jax.Array:
            logits = model.apply({"params": p}, batch["x"])
            return optax.softmax_cross_entropy_with_integer_labels(logits, batch["label"][:, 0]).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    step_fn = jax.jit(train_step, donate_argnums=0)
    first_step_s = window_start = None
    for i in range(steps):
        state, loss = step_fn(state, batches[i % POOL])
        if i == 0:
            jax.block_until_ready(loss)
            first_step_s = _since_start()
        if i + 1 == LOG_EVERY:
            jax.block_until_ready(state)
            window_start = (time.perf_counter(), time.process_time())
    jax.block_until_ready(state)
    wall, cpu = time.perf_counter() - window_start[0], time.process_time() - window_start[1]
    return {
        "import_s": import_s,
        "first_step_s": first_step_s,
        "steps_per_s": (steps - LOG_EVERY) / wall,
        "cpu_us_per_step": cpu / (steps - LOG_EVERY) * 1e6,
        "final_loss": float(loss),
    }


def child_kd(
    steps: int, import_only: bool, steps_per_call: int | None = None, host_batches: bool = False
) -> dict[str, Any]:
    """(b): kd.train.Trainer, default settings, logging every 100 steps into an in-memory clock writer."""
    start = time.perf_counter()
    import kd
    import optax
    from flax import linen as nn

    # kd's namespaces load on first use: touch what the run uses.
    kd.train.Trainer, kd.data.InMemoryPipeline, kd.losses.SoftmaxCrossEntropyWithIntLabels, kd.writers.Writer  # noqa: B018
    import_s = time.perf_counter() - start
    if import_only:
        return {"import_s": import_s}

    import kontext

    Mlp = _keyed_mlp(nn, kontext.Key)
    clocks: dict[int, tuple[float, float, float]] = {}  # step -> (since the process started, perf, CPU)

    class ClockWriter(kd.writers.InMemoryWriter):
        def write_scalars(self, step: int, scalars: Any) -> None:
            if "perf/train_seconds" in scalars:  # the train loop's rows (perf/steps_per_sec skips the first window)
                clocks[int(step)] = (_since_start(), time.perf_counter(), time.process_time())
            super().write_scalars(step, scalars)

    data = _pool()
    trainer = kd.train.Trainer(
        seed=0,
        train_ds=(
            kd.data.FromIterable(iterable=_pool_batches(data), batch_size=BATCH_SIZE, num_epochs=None)
            if host_batches
            else kd.data.InMemoryPipeline(loader=lambda: data, batch_size=BATCH_SIZE)
        ),
        model=Mlp(),
        optimizer=optax.adam(LEARNING_RATE),
        train_losses={
            "xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="batch.label")
        },
        num_train_steps=steps,
        log_metrics_every=LOG_EVERY,
        writer=ClockWriter(),
        steps_per_call=steps_per_call,
    )
    _, logged = trainer.train()
    return {
        "import_s": import_s,
        **_from_clocks(clocks, first=1, window_start=LOG_EVERY, last=steps),
        "final_loss": float(logged["losses/xent"]),
    }


def child_kauldron(steps: int, import_only: bool, default_profiler: bool = True) -> dict[str, Any]:
    """(c): Kauldron's Trainer, its defaults, logging every 100 steps into an in-memory clock writer."""
    start = time.perf_counter()
    import optax
    from flax import linen as nn
    from kauldron import kd

    # Lazy too (etils.epy.lazy_api_imports): touch what the run uses.
    kd.train.Trainer, kd.data.InMemoryPipeline, kd.losses.SoftmaxCrossEntropyWithIntLabels, kd.kontext.Key  # noqa: B018
    import dataclasses

    from kauldron.train import metric_writer

    import_s = time.perf_counter() - start
    if import_only:
        return {"import_s": import_s}

    Mlp = _keyed_mlp(nn, kd.kontext.Key)
    clocks: dict[int, tuple[float, float, float]] = {}
    losses: dict[int, float] = {}

    @dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
    class ClockWriter(metric_writer.NoopWriter):
        """Computes the logged values as Kauldron's writers do (NoopWriter skips even that), keeps none."""

        def write_step_metrics(self, **kwargs: Any) -> None:
            metric_writer.WriterBase.write_step_metrics(self, **kwargs)

        def write_scalars(self, step: int, scalars: Any) -> None:
            clocks[int(step)] = (_since_start(), time.perf_counter(), time.process_time())
            losses[int(step)] = float(scalars["losses/xent"])

    data = _pool()
    with tempfile.TemporaryDirectory(prefix="trainer_bench_kauldron_") as workdir:
        trainer = kd.train.Trainer(
            seed=0,
            workdir=workdir,
            train_ds=kd.data.InMemoryPipeline(loader=lambda: data, batch_size=BATCH_SIZE),
            model=Mlp(),
            optimizer=optax.adam(LEARNING_RATE),
            train_losses={
                "xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="batch.label")
            },
            num_train_steps=steps,
            log_metrics_every=LOG_EVERY,
            writer=ClockWriter(),
            **({} if default_profiler else {"profiler": None}),
        )
        trainer.train()
    # Kauldron labels a row with the step before the update: row 0 is the first update, row N the N+1-th.
    return {
        "import_s": import_s,
        **_from_clocks(clocks, first=0, window_start=LOG_EVERY, last=steps),
        "final_loss": losses[max(losses)],
    }


def _from_clocks(clocks: dict[int, tuple[float, ...]], *, first: int, window_start: int, last: int) -> dict:
    if window_start not in clocks or last not in clocks:
        raise SystemExit(f"logged steps {sorted(clocks)}: expected rows at {window_start} and {last}")
    (_, wall_0, cpu_0), (_, wall_1, cpu_1) = clocks[window_start], clocks[last]
    return {
        "first_step_s": clocks[first][0],
        "steps_per_s": (last - window_start) / (wall_1 - wall_0),
        "cpu_us_per_step": (cpu_1 - cpu_0) / (last - window_start) * 1e6,
    }


def child_kd_one_per_call(steps: int, import_only: bool) -> dict[str, Any]:
    """(b1): (b) with `steps_per_call=1`: one jitted call per update, no stacked batches."""
    return child_kd(steps, import_only, steps_per_call=1)


def child_kd_host_batches(steps: int, import_only: bool) -> dict[str, Any]:
    """(b2): (b) over `kd.data.FromIterable` (a pipeline that is not a RowsIterator): host batches stacked per
    fused call and copied by it, as for any pipeline."""
    return child_kd(steps, import_only, host_batches=True)


def child_kauldron_no_profiler(steps: int, import_only: bool) -> dict[str, Any]:
    """(c0): (c) with `profiler=None` (Kauldron's NoopProfiler)."""
    return child_kauldron(steps, import_only, default_profiler=False)


CHILDREN = {
    "a": child_hand,
    "b": child_kd,
    "b1": child_kd_one_per_call,
    "b2": child_kd_host_batches,
    "c": child_kauldron,
    "c0": child_kauldron_no_profiler,
}


# ---------------------------------------------------------------------------------------------- the parent


def spawn(python: str, variant: str, steps: int, *, import_only: bool = False) -> dict[str, Any]:
    """One `--child` process: its JSON result, plus `wall_s` and `rss_mib` (peak RSS) seen from here."""
    command = [python, __file__, "--child", variant, "--steps", str(steps)]
    if import_only:
        command.append("--import-only")
    with tempfile.TemporaryFile("w+") as out:
        start = time.time()
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env={**_ENV, _T0: repr(start)}, text=True
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.time() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        output = out.read()
    lines = [line for line in output.splitlines() if line.startswith(_RESULT)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{VARIANTS[variant]} (exit code {proc.returncode}):\n{output[-3000:]}")
    return {**json.loads(lines[-1][len(_RESULT) :]), "wall_s": wall, "rss_mib": usage.ru_maxrss / 1024}


_COLUMNS = [  # key, header, format; the ratio to (a) follows each
    ("import_s", "import s", "{:.2f}"),
    ("first_step_s", "first step s", "{:.2f}"),
    ("wall_s", "wall s", "{:.2f}"),
    ("steps_per_s", "steps/s", "{:.0f}"),
    ("cpu_us_per_step", "CPU us/step", "{:.0f}"),
    ("rss_mib", "RSS MiB", "{:.0f}"),
]


def print_table(steps: int, runs: dict[str, list[dict[str, Any]]], unavailable: dict[str, str]) -> None:
    repeats = max(len(r) for r in runs.values() if r)
    print()
    print(f"{steps} steps, batch {BATCH_SIZE}, logging every {LOG_EVERY} (median of {repeats} processes)")
    header = (
        f"{'variant':<20}" + "".join(f" {name:>12} {'x a':>5}" for _, name, _ in _COLUMNS) + f" {'loss':>7}"
    )
    print(header)
    print("-" * len(header))
    medians = {
        v: {key: statistics.median(r[key] for r in rs) for key, _, _ in _COLUMNS}
        for v, rs in runs.items()
        if rs
    }
    for variant, name in VARIANTS.items():
        if variant in unavailable:
            print(f"{name:<20} unavailable: {unavailable[variant]}")
            continue
        if variant not in medians:
            continue
        cells = []
        for key, _, fmt in _COLUMNS:
            value = medians[variant][key]
            ratio = f"{value / medians['a'][key]:.2f}" if "a" in medians else ""
            cells.append(f" {fmt.format(value):>12} {ratio:>5}")
        loss = statistics.median(r["final_loss"] for r in runs[variant])
        print(f"{name:<20}{''.join(cells)} {loss:>7.4f}")


def print_targets(runs_by_steps: dict[int, dict[str, list[dict[str, Any]]]]) -> None:
    """kd against the targets, for each step count."""
    targets = [  # key, what, highest (or lowest, for steps/s) ratio to (a)
        ("steps_per_s", "steady steps/s >= 1.0x", 1.0),
        ("first_step_s", "time to first step <= 1.3x", 1.3),
        ("wall_s", "process wall <= 1.3x", 1.3),
        ("rss_mib", "peak RSS <= 1.3x", 1.3),
        ("import_s", "import <= 1.5x", 1.5),
    ]
    compared = {steps: runs for steps, runs in runs_by_steps.items() if runs.get("a") and runs.get("b")}
    if compared:
        print()
        print("kd targets (ratio (b)/(a), medians):")
    for steps, runs in compared.items():
        cells = []
        for key, what, bound in targets:
            ratio = statistics.median(r[key] for r in runs["b"]) / statistics.median(
                r[key] for r in runs["a"]
            )
            met = ratio >= bound if key == "steps_per_s" else ratio <= bound
            cells.append(f"{what}: {ratio:.2f} {'met' if met else 'NOT met'}")
        print(f"  {steps:>5} steps: " + "; ".join(cells))


def kauldron_problem(python: str | None) -> str | None:
    """Why (c) cannot run under `python`, or None when `import kauldron` works there."""
    if not python:
        return "no --python-kauldron given and the bench environment's python is not there"
    if not Path(python).exists():
        return f"{python} does not exist"
    proc = subprocess.run([python, "-c", "import kauldron"], capture_output=True, text=True, env=_ENV)
    if proc.returncode != 0:
        return f"`import kauldron` fails under {python}: {proc.stderr.strip().splitlines()[-1:]}"
    return None


def _version_under(python: str, distribution: str) -> str:
    code = f"from importlib.metadata import version; print(version({distribution!r}))"
    return subprocess.run([python, "-c", code], capture_output=True, text=True, env=_ENV).stdout.strip()


def bench(args: argparse.Namespace) -> None:
    asked = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(asked) - set(VARIANTS))
    if unknown:
        raise SystemExit(f"--variants: unknown {', '.join(unknown)}; expected some of {', '.join(VARIANTS)}")
    variants = [v for v in VARIANTS if v in asked]
    if not variants:  # `--variants '' --install-size`: the install size alone
        return
    unavailable: dict[str, str] = {}
    if any(v in _KAULDRON for v in variants):
        problem = kauldron_problem(args.python_kauldron)
        if problem is not None:
            for variant in _KAULDRON:
                unavailable[variant] = problem
            print(f"(c) skipped: {problem}")
    pythons = {v: args.python_kauldron if v in _KAULDRON else sys.executable for v in VARIANTS}
    running = [v for v in variants if v not in unavailable]
    from importlib.metadata import version  # the children import jax, not this process

    print(
        f"kd Trainer vs a hand loop vs Kauldron; jax {version('jax')}, flax {version('flax')}, "
        f"optax {version('optax')} on the default backend ({os.cpu_count()} CPUs), python {sys.version.split()[0]}"
    )
    print(f"model: MLP {INPUTS} -> {HIDDEN} -> {CLASSES}, adam {LEARNING_RATE}, pool of {POOL} batches")
    if any(v in _KAULDRON for v in running):
        print(
            f"(c): kauldron {_version_under(args.python_kauldron, 'kauldron')} under {args.python_kauldron}"
        )
    for variant in [] if args.tiny else running:  # compiles bytecode and warms the page cache; not measured
        spawn(pythons[variant], variant, 0, import_only=True)
    step_counts = [int(s) for s in args.steps.split(",")]
    runs_by_steps: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for steps in step_counts:
        if steps <= LOG_EVERY or steps % LOG_EVERY:
            raise SystemExit(f"--steps {steps}: each step count must be a multiple of {LOG_EVERY} above it")
        runs: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
        for repeat in range(args.repeats):
            for variant in list(running):
                try:
                    result = spawn(pythons[variant], variant, steps)
                except RuntimeError as e:
                    if variant not in _KAULDRON:
                        raise
                    unavailable[variant] = str(e).splitlines()[-1][:200]
                    print(f"{VARIANTS[variant]} failed, left out from here on:\n{e}", file=sys.stderr)
                    running.remove(variant)
                    continue
                runs[variant].append(result)
                print(
                    f"  {steps} steps, run {repeat + 1}/{args.repeats} {VARIANTS[variant]:<20} "
                    f"import {result['import_s']:.2f} s, first step {result['first_step_s']:.2f} s, "
                    f"wall {result['wall_s']:.2f} s, {result['steps_per_s']:.0f} steps/s "
                    f"({result['cpu_us_per_step']:.0f} us CPU each), "
                    f"RSS {result['rss_mib']:.0f} MiB",
                    flush=True,
                )
        runs_by_steps[steps] = runs
    for steps, runs in runs_by_steps.items():
        print_table(steps, runs, unavailable)
    print_targets(runs_by_steps)


# ---------------------------------------------------------------------------------------------- install size


def _folder_bytes(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _site_packages(venv: Path) -> Path:
    return next(venv.glob("lib/python*/site-packages"))


def _describe_site(site: Path) -> str:
    dists = sorted(p.name.split("-")[0].lower() for p in site.glob("*.dist-info"))
    tensorflow = [d for d in dists if d.startswith("tensorflow") or d == "tf_keras"]
    tf = "tensorflow absent" if not tensorflow else f"TENSORFLOW PRESENT ({', '.join(tensorflow)})"
    return f"{_folder_bytes(site) / 1e6:,.0f} MB, {len(dists)} distributions, {tf}"


def install_size(args: argparse.Namespace) -> None:
    """Installs the kd stack from this repository into a fresh venv and reports what it takes on disk."""
    print()
    print("Install size (fresh venv: " + ", ".join(PACKAGES) + " from this repository, deps from the index)")
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    with tempfile.TemporaryDirectory(prefix="trainer_bench_venv_") as root:
        venv = Path(root) / "venv"
        paths = [str(REPO / "packages" / p) for p in PACKAGES]
        start = time.perf_counter()
        if uv:
            subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
            # Copies, not links into uv's cache: the venv's files are its own (sizes count links in full anyway).
            install = [
                uv,
                "pip",
                "install",
                "-q",
                "--link-mode=copy",
                "--python",
                str(venv / "bin" / "python"),
            ]
        else:
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            install = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-cache-dir"]
        subprocess.run([*install, *paths], check=True)
        seconds = time.perf_counter() - start
        site = _site_packages(venv)
        print(
            f"  kd stack:  {_describe_site(site)} (installed in {seconds:.0f} s with {'uv' if uv else 'pip'})"
        )
        dists = sorted(p.name.removesuffix(".dist-info") for p in site.glob("*.dist-info"))
        print("  " + ", ".join(dists))
        sizes = {
            p.name: _folder_bytes(p) for p in site.iterdir() if p.is_dir() and not p.name.endswith("-info")
        }
        largest = sorted(sizes.items(), key=lambda item: -item[1])[:8]
        print("  largest folders: " + ", ".join(f"{name} {size / 1e6:.0f} MB" for name, size in largest))
    if args.python_kauldron and Path(args.python_kauldron).exists():
        site = Path(
            subprocess.run(
                [args.python_kauldron, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        )
        print(
            f"  reference, the bench env with kauldron 1.4.2 (and other peers, not a clean install): {_describe_site(site)}"
        )


# ---------------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="500,3000", help="step counts, comma separated (default 500,3000)")
    parser.add_argument(
        "--repeats", type=int, default=3, help="processes per variant and step count (default 3)"
    )
    parser.add_argument(
        "--variants",
        default="a,b,c",
        help="of a (hand loop), b (kd), c (Kauldron), b1 (kd, steps_per_call=1), b2 (kd, FromIterable data), c0 (Kauldron, profiler=None); "
        "default a,b,c",
    )
    parser.add_argument(
        "--python-kauldron",
        default=KAULDRON_PYTHON if Path(KAULDRON_PYTHON).exists() else None,
        help="a python with kauldron 1.4.2 for (c) (default: the hatch bench environment's, when there)",
    )
    parser.add_argument("--install-size", action="store_true", help="also measure a fresh install (slow)")
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="a smoke test: --steps 200 --repeats 1 --variants a,b, no warm-up processes",
    )
    parser.add_argument(
        "--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS
    )  # one run, in a subprocess
    parser.add_argument("--import-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tiny and args.child is None:
        args.steps, args.repeats, args.variants = str(2 * LOG_EVERY), 1, "a,b"

    if args.child is not None:
        result = CHILDREN[args.child](int(args.steps), args.import_only)
        print(_RESULT + json.dumps(result), flush=True)
        return
    bench(args)
    if args.install_size:
        install_size(args)


if __name__ == "__main__":
    main()
