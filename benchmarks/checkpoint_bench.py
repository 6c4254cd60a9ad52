"""kd.ckpts.Checkpointer: what checkpointing costs a training run, and save / restore speed against plain orbax.

    python3 -m hatch run python benchmarks/checkpoint_bench.py                 # ~50M params, 200 steps
    python3 -m hatch run python benchmarks/checkpoint_bench.py --params 2e6 --steps 60   # a quick look
    python3 -m hatch run python benchmarks/checkpoint_bench.py --skip-trainer --skip-io  # digests only (3.)
    python3 -m hatch run python benchmarks/checkpoint_bench.py --tiny    # every part, tiny: a smoke test

The model is a linen MLP `d -> h -> h -> h -> d` (d = h / 4, h chosen for `--params`) trained with adam, so
the saved state (params + adam's mu and nu) is about 3x the parameters, in float32. Data is synthetic and in
memory (kd.data.InMemoryPipeline). Everything runs on the default jax backend (the CPU here).

1. Training steps/s (`kd.train.Trainer`), in three variants, each `--repeats` times in its own fresh
   process, interleaved (none, async, sync, none, async, ...) so that a noisy neighbour hurts all alike:
     none:  `kd.ckpts.NoopCheckpointer()`;
     async: `kd.ckpts.Checkpointer(save_interval_steps=--save-every, max_to_keep=2)` (the default);
     sync:  the same with `enable_async_checkpointing=False` (what async saves buy).
   How the rate is measured: the Trainer logs every `--save-every` steps, and right after it reads the
   logged values from the device (so the step is done) a writer of this script notes the wall clock and
   the process's CPU time. The windows between two such logs from step `--save-every` on (50-100, 100-150,
   150-200 by default) leave out init, both compiles and the first steps, and each holds exactly one save,
   made right after the log that opens it (the forced save at the last step comes after the last log);
   every variant logs, and so syncs, at the same steps. Columns:
     steps/s, slower:  the median window of all the variant's runs, and how much slower than none;
     best, slower:     the fastest window (the least disturbed by other processes), likewise;
     blocked/save:     seconds the loop spent inside `maybe_save` per save (with async saves: waiting for
                       the previous save, deleting old checkpoints, orbax's synchronous part; with sync
                       saves, the whole write); blocked: those seconds as a share of the windows' time;
     CPU s/step, more: CPU seconds of the process (all threads) per step, and how much more than none: the
                       work a background save adds, which slows the step down whenever no core is
                       idle for it (on a small shared CPU machine, most of the time);
     train() s:        the whole `train()` call (median), with init, compiles and the final save.
   Target: async at most 5% slower than none. `--params 2e6 --steps 60` is only a smoke test: a tiny state
   still pays orbax's fixed cost per save (~0.1 s) in a window of 10 steps of a few ms.

2. Save / restore of one such state (a `kd.train.TrainState`), `--io-repeats` times, median:
     kd:    `Checkpointer.maybe_save(step, state=..., force=True)` (blocking part, then until on disk with
            `wait_until_finished`); restore with a fresh `Checkpointer(...).restore(template, step=...)`
            (opening the folder, the structure check and the read), the template being ShapeDtypeStructs
            with shardings, as the Trainer restores;
     orbax: `ocp.StandardCheckpointer().save(path, state)` + `wait_until_finished()`, and
            `.restore(path, template)` with the same template.
   MB/s is state MB (1e6 bytes) / seconds. `kd/orbax` is the ratio of times: above 1 means kd is slower.
   The CPU row is the process's CPU time (all threads) from the save call until on disk: the work an async
   save does in the background, which competes with the train step when the cores are busy.
   The files were just written, so restores likely read from the page cache: restore MB/s is orbax's
   decode and copy speed more than the disk's. On the CPU backend the arrays already live in host
   memory, so the blocking part of an async save has no device-to-host transfer to make.

3. Digests (`Checkpointer(digest_algorithm=...)`): what verifying checkpoints costs, against a training
   step cadence of `--save-every` (50) steps of the same model. In one process, `--io-repeats` rounds,
   interleaved (none, sha256, blake2b, crc32, none, ...), median:
     digest alone:  CPU seconds of computing the digest record of the state (`kd.ckpts._digests`): the work
                    a save with digests adds, done in orbax's background save thread;
     save:          `maybe_save` of the state (blocking part, until on disk, CPU time of all threads from
                    the call until on disk) and +CPU, the CPU seconds more than a save without digests
                    (the same work measured end to end: noisier);
     restore:       a fresh Checkpointer's `restore(template, step=...)`, which checks the digests.
   The cadence is the wall time of `--save-every` steps of `kd.train.Trainer` with no checkpointer: the
   median window rate of part 1's "none" runs when part 1 ran, else one such run in a fresh process. The
   model and batch are part 1's (batch 8: a small batch, so short steps and the largest share a digest
   can take; a larger batch makes steps longer and the share smaller). % of cadence = digest CPU seconds
   / cadence seconds: on a machine with no idle core, the background thread's CPU time is time taken from
   the training step. % idle: the same against the shortest cadence an idle machine allows (the steps'
   CPU time spread over every core), the share a digest takes when no other process competes.
   Target: the default algorithm under 5%.

Times are wall clock on a shared machine: compare rows of one run, not runs of different days.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import itertools
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import jax
import kd
import kontext
import numpy as np
import optax
from flax import linen as nn

VARIANTS = ("none", "async", "sync")
DIGEST_VARIANTS = (None, "sha256", "blake2b", "crc32")
DEFAULT_DIGEST = kd.ckpts.Checkpointer.__dataclass_fields__["digest_algorithm"].default
_RESULT = "RESULT "  # prefix of the JSON line a --variant subprocess prints
_NUM_EXAMPLES = 256


# ---------------------------------------------------------------------------------------------- the model


def mlp_shape(params: float) -> tuple[int, int]:
    """`(h, d)` of the MLP `d -> h -> h -> h -> d` with about `params` parameters (2.5 h^2 for d = h / 4)."""
    width = max(64, 64 * round(math.sqrt(params / 2.5) / 64))
    return width, width // 4


def mlp_param_count(width: int, features: int) -> int:
    return 2 * (features * width + width * width) + 3 * width + features


class Mlp(nn.Module):
    """`features -> width -> width -> width -> features`, relu between."""

    width: int
    features: int
    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        for i in range(3):
            x = nn.relu(nn.Dense(self.width, name=f"hidden_{i}")(x))
        return nn.Dense(self.features, name="out")(x)


def _examples(features: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(_NUM_EXAMPLES, features)).astype(np.float32)
    return {"x": x, "y": np.tanh(x[:, ::-1]).copy()}


# ---------------------------------------------------------------------------------------------- 1. trainer


_SAVES: dict[int, float] = {}  # step -> seconds inside maybe_save, for each save of this process


@dataclasses.dataclass(frozen=True, kw_only=True)
class _TimedCheckpointer(kd.ckpts.Checkpointer):
    """A Checkpointer that notes how long the training loop waits in each `maybe_save` that saves."""

    def maybe_save(self, step: int, **kwargs: Any) -> bool:
        start = time.perf_counter()
        saved = super().maybe_save(step, **kwargs)
        if saved:
            _SAVES[int(step)] = time.perf_counter() - start
        return saved


@dataclasses.dataclass(kw_only=True)
class _ClockWriter(kd.writers.InMemoryWriter):
    """Notes the wall clock and the process's CPU time (all its threads) at each logging step.

    The Trainer writes the scalars of a step right after reading them from the device, so the step's
    update is done: the times between two logging steps are those of the steps in between."""

    clocks: dict[int, tuple[float, float]] = dataclasses.field(default_factory=dict)

    def write_scalars(self, step: int, scalars: Any) -> None:
        if "perf/train_seconds" in scalars:  # the train loop's rows (perf/steps_per_sec skips the first window)
            self.clocks[int(step)] = (time.perf_counter(), time.process_time())
        super().write_scalars(step, scalars)


def make_trainer(args: argparse.Namespace, variant: str, workdir: str) -> kd.train.Trainer:
    width, features = mlp_shape(args.params)
    if variant == "none":
        checkpointer: Any = kd.ckpts.NoopCheckpointer()
    else:
        checkpointer = _TimedCheckpointer(
            save_interval_steps=args.save_every,
            max_to_keep=2,
            enable_async_checkpointing=variant == "async",
        )
    examples = _examples(features)
    return kd.train.Trainer(
        seed=0,
        workdir=workdir,
        train_ds=kd.data.InMemoryPipeline(loader=lambda: examples, batch_size=args.batch_size),
        model=Mlp(width=width, features=features),
        optimizer=optax.adam(1e-4),
        train_losses={"l2": kd.losses.L2(preds="preds", targets="batch.y")},
        num_train_steps=args.steps,
        log_metrics_every=args.save_every,
        checkpointer=checkpointer,
        writer=_ClockWriter(),
        progress=kd.train.Progress(enabled=False),
    )


def run_variant(args: argparse.Namespace, variant: str, workdir: str) -> dict[str, Any]:
    """One training run in this process: for each window between two logging steps from step
    `--save-every` on, its steps, wall and CPU seconds, and the seconds the loop was blocked in saves."""
    trainer = make_trainer(args, variant, workdir)
    start = time.perf_counter()
    trainer.train()
    total = time.perf_counter() - start
    clocks = trainer.writer.clocks
    logged = sorted(s for s in clocks if s >= args.save_every)
    if len(logged) < 2:
        raise SystemExit(f"--steps {args.steps}: needs more than --save-every {args.save_every} steps")
    windows = []
    for first, last in itertools.pairwise(logged):
        (wall_0, cpu_0), (wall_1, cpu_1) = clocks[first], clocks[last]
        blocked = [seconds for step, seconds in _SAVES.items() if first <= step < last]
        windows.append(
            {
                "steps": last - first,
                "wall": wall_1 - wall_0,
                "cpu": cpu_1 - cpu_0,
                "saves": len(blocked),
                "blocked": sum(blocked),
            }
        )
    return {"variant": variant, "span": [logged[0], logged[-1]], "windows": windows, "train_seconds": total}


def spawn_variant(args: argparse.Namespace, variant: str, workdir: Path) -> dict[str, Any]:
    """`run_variant` in a fresh process of this script (no jax state, cache or threads left from others)."""
    command = [
        sys.executable,
        __file__,
        f"--variant={variant}",
        f"--params={args.params}",
        f"--steps={args.steps}",
        f"--save-every={args.save_every}",
        f"--batch-size={args.batch_size}",
        f"--workdir={workdir}",
    ]
    proc = subprocess.run(command, capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(_RESULT)]
    if proc.returncode != 0 or not lines:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"the {variant!r} run failed (exit code {proc.returncode})")
    return json.loads(lines[-1][len(_RESULT) :])


def _rate(windows: list[dict[str, Any]]) -> float:
    return sum(w["steps"] for w in windows) / sum(w["wall"] for w in windows)


def trainer_bench(args: argparse.Namespace, root: Path) -> tuple[float, float]:
    """Prints part 1's table; returns the "none" runs' median steps/s and CPU s/step (the training cadence)."""
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    for repeat in range(args.repeats):
        for variant in VARIANTS:
            workdir = root / f"train_{variant}_{repeat}"
            result = spawn_variant(args, variant, workdir)
            shutil.rmtree(workdir, ignore_errors=True)
            runs[variant].append(result)
            windows = result["windows"]
            each = " ".join(f"{w['steps'] / w['wall']:.2f}" for w in windows)
            print(
                f"  run {repeat + 1}/{args.repeats} {variant:<5} {_rate(windows):6.2f} steps/s over steps "
                f"{result['span'][0]}-{result['span'][1]} ({sum(w['saves'] for w in windows)} saves); "
                f"windows: {each}",
                flush=True,
            )
    windows = {v: [w for r in runs[v] for w in r["windows"]] for v in VARIANTS}
    median = {v: statistics.median(w["steps"] / w["wall"] for w in windows[v]) for v in VARIANTS}
    best = {v: max(w["steps"] / w["wall"] for w in windows[v]) for v in VARIANTS}
    cpu = {v: sum(w["cpu"] for w in windows[v]) / sum(w["steps"] for w in windows[v]) for v in VARIANTS}
    span = runs["none"][0]["span"]
    print()
    print(
        f"Training ({args.steps} steps, batch {args.batch_size}, a save every {args.save_every} steps; rates of "
        f"the windows between logs from step {span[0]} to {span[1]}, {len(windows['none'])} per variant from "
        f"{args.repeats} process(es))"
    )
    header = (
        f"{'checkpointing':<22} {'steps/s':>8} {'slower':>7} {'best':>6} {'slower':>7} {'blocked/save':>13} "
        f"{'blocked':>8} {'CPU s/step':>11} {'more':>6} {'train() s':>10}"
    )
    print(header)
    print("-" * len(header))
    names = {
        "none": "none (Noop)",
        "async": f"async, every {args.save_every}",
        "sync": f"sync, every {args.save_every}",
    }
    for variant in VARIANTS:
        saves = [w for w in windows[variant] if w["saves"]]
        if variant == "none" or not saves:
            slower = slower_best = blocked_each = blocked_share = more_cpu = ""
        else:
            slower = f"{(1 - median[variant] / median['none']) * 100:6.1f}%"
            slower_best = f"{(1 - best[variant] / best['none']) * 100:6.1f}%"
            blocked_each = f"{sum(w['blocked'] for w in saves) / sum(w['saves'] for w in saves):11.2f} s"
            share = sum(w["blocked"] for w in windows[variant]) / sum(w["wall"] for w in windows[variant])
            blocked_share = f"{share * 100:7.1f}%"
            more_cpu = f"{(cpu[variant] / cpu['none'] - 1) * 100:5.1f}%"
        seconds = statistics.median(r["train_seconds"] for r in runs[variant])
        print(
            f"{names[variant]:<22} {median[variant]:>8.2f} {slower:>7} {best[variant]:>6.2f} {slower_best:>7} "
            f"{blocked_each:>13} {blocked_share:>8} {cpu[variant]:>11.3f} {more_cpu:>6} {seconds:>10.1f}"
        )
    slowdown = (1 - median["async"] / median["none"]) * 100
    verdict = "met" if slowdown <= 5 else "NOT met"
    print(f"target (async at most 5% slower than none, median windows): {verdict} ({slowdown:.1f}%)")
    return median["none"], cpu["none"]


# ---------------------------------------------------------------------------------------------- 2. save / restore


def _folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def io_bench(args: argparse.Namespace, root: Path) -> None:
    import orbax.checkpoint as ocp

    trainer = make_trainer(args, "none", str(root / "io_init"))
    # One update, so adam's mu and nu are not all zeros (zeros compress to nothing on disk).
    batch = trainer.sharding.step_input(next(iter(trainer.train_ds)))
    state, _ = trainer.trainstep.step(trainer.init_state(), batch)
    template = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), state)
    megabytes = sum(leaf.nbytes for leaf in jax.tree.leaves(state)) / 1e6
    probe = jax.tree.leaves(state.params)[0]
    times: dict[str, list[float]] = collections.defaultdict(list)
    on_disk: dict[str, float] = {}

    def kd_round(repeat: int) -> None:
        folder = root / f"io_kd_{repeat}"
        ckpt = kd.ckpts.Checkpointer(workdir=str(folder), save_interval_steps=1, max_to_keep=None)
        ckpt.all_steps()  # opens the folder before the clock starts, as the Trainer does at its start
        start, cpu = time.perf_counter(), time.process_time()
        ckpt.maybe_save(1, state=state, force=True)
        blocked = time.perf_counter()
        ckpt.wait_until_finished()
        done = time.perf_counter()
        times["kd_cpu"].append(time.process_time() - cpu)
        ckpt.close()
        start_restore = time.perf_counter()
        reader = kd.ckpts.Checkpointer(workdir=str(folder), save_interval_steps=1)
        reader.all_steps()  # opens the folder
        opened = time.perf_counter()
        restored, _ = reader.restore(template, step=1)
        jax.block_until_ready(restored)
        restore_done = time.perf_counter()
        reader.close()
        assert np.array_equal(jax.tree.leaves(restored.params)[0], probe)
        times["kd_block"].append(blocked - start)
        times["kd_save"].append(done - start)
        times["kd_open"].append(restore_done - start_restore)
        times["kd_restore"].append(restore_done - opened)
        on_disk["kd"] = _folder_bytes(folder) / 1e6
        shutil.rmtree(folder, ignore_errors=True)

    def orbax_round(repeat: int) -> None:
        folder = root / f"io_orbax_{repeat}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "state"
        checkpointer = ocp.StandardCheckpointer()
        start, cpu = time.perf_counter(), time.process_time()
        checkpointer.save(path, state)
        blocked = time.perf_counter()
        checkpointer.wait_until_finished()
        done = time.perf_counter()
        times["ox_cpu"].append(time.process_time() - cpu)
        start_restore = time.perf_counter()
        restored = checkpointer.restore(path, template)
        jax.block_until_ready(restored)
        restore_done = time.perf_counter()
        checkpointer.close()
        assert np.array_equal(jax.tree.leaves(restored.params)[0], probe)
        times["ox_block"].append(blocked - start)
        times["ox_save"].append(done - start)
        times["ox_restore"].append(restore_done - start_restore)
        on_disk["orbax"] = _folder_bytes(folder) / 1e6
        shutil.rmtree(folder, ignore_errors=True)

    for repeat in range(args.io_repeats):  # alternate who goes first (a warm page cache, a busy neighbour)
        rounds = (kd_round, orbax_round) if repeat % 2 == 0 else (orbax_round, kd_round)
        for one in rounds:
            one(repeat)
    median = {k: statistics.median(v) for k, v in times.items()}

    print()
    print(
        f"Save / restore of one state ({megabytes:.0f} MB: params + adam mu, nu; on disk kd {on_disk['kd']:.0f} MB, "
        f"orbax {on_disk['orbax']:.0f} MB), median of {args.io_repeats}"
    )
    header = f"{'operation':<43} {'kd':>9} {'orbax':>9} {'kd MB/s':>9} {'orbax MB/s':>11} {'kd/orbax':>9}"
    print(header)
    print("-" * len(header))
    rows = [
        ("save: blocking part (async)", "kd_block", "ox_block"),
        ("save: until on disk", "kd_save", "ox_save"),
        ("save: CPU time, all threads (MB per CPU s)", "kd_cpu", "ox_cpu"),
        ("restore: open the folder + read", "kd_open", "ox_restore"),
        ("restore: read (folder already open)", "kd_restore", "ox_restore"),
    ]
    for name, ours, theirs in rows:
        t_kd, t_ox = median[ours], median[theirs]
        print(
            f"{name:<43} {t_kd:>7.2f} s {t_ox:>7.2f} s {megabytes / t_kd:>9.0f} {megabytes / t_ox:>11.0f} "
            f"{t_kd / t_ox:>9.2f}"
        )


# ---------------------------------------------------------------------------------------------- 3. digests


def _trained_state(args: argparse.Namespace, root: Path) -> Any:
    """The benchmark's state after one update (so adam's mu and nu are not all zeros)."""
    trainer = make_trainer(args, "none", str(root / "state_init"))
    batch = trainer.sharding.step_input(next(iter(trainer.train_ds)))
    state, _ = trainer.trainstep.step(trainer.init_state(), batch)
    return jax.block_until_ready(state)


def _cadence(args: argparse.Namespace, root: Path) -> tuple[float, float]:
    """`(steps/s, CPU s/step)` of the model with no checkpointer: one run in a fresh process (median window)."""
    result = spawn_variant(args, "none", root / "cadence")
    shutil.rmtree(root / "cadence", ignore_errors=True)
    windows = result["windows"]
    rate = statistics.median(w["steps"] / w["wall"] for w in windows)
    return rate, sum(w["cpu"] for w in windows) / sum(w["steps"] for w in windows)


def digest_bench(args: argparse.Namespace, root: Path, cadence_measured: tuple[float, float] | None) -> None:
    from kd.ckpts import _digests

    steps_per_second, cpu_per_step = cadence_measured or _cadence(args, root)
    cadence = args.save_every / steps_per_second
    # On an idle machine a step cannot take less wall time than its CPU time spread over every core: the
    # shortest cadence, and so the largest share a digest can take, when no other process competes.
    shortest = args.save_every * cpu_per_step / (os.cpu_count() or 1)
    state = _trained_state(args, root)
    template = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), state)
    megabytes = sum(leaf.nbytes for leaf in jax.tree.leaves(state)) / 1e6
    times: dict[tuple[str, str], list[float]] = collections.defaultdict(list)

    def one_round(algorithm: str | None, repeat: int) -> None:
        name = algorithm or "none"
        if algorithm is not None:
            cpu = time.process_time()
            _digests.digest_record(_digests.host_leaves(state), {}, algorithm=algorithm)
            times[name, "alone"].append(time.process_time() - cpu)
        folder = root / f"digest_{name}_{repeat}"
        ckpt = kd.ckpts.Checkpointer(
            workdir=str(folder), save_interval_steps=1, max_to_keep=None, digest_algorithm=algorithm
        )
        ckpt.all_steps()  # opens the folder before the clock starts
        start, cpu = time.perf_counter(), time.process_time()
        ckpt.maybe_save(1, state=state, data_state={"position": 1}, force=True)
        blocked = time.perf_counter()
        ckpt.wait_until_finished()
        times[name, "block"].append(blocked - start)
        times[name, "save"].append(time.perf_counter() - start)
        times[name, "cpu"].append(time.process_time() - cpu)
        ckpt.close()
        reader = kd.ckpts.Checkpointer(workdir=str(folder), save_interval_steps=1)
        reader.all_steps()
        start = time.perf_counter()
        restored, _ = reader.restore(template, step=1)
        jax.block_until_ready(restored)
        times[name, "restore"].append(time.perf_counter() - start)
        reader.close()
        shutil.rmtree(folder, ignore_errors=True)

    for repeat in range(args.io_repeats):
        order = DIGEST_VARIANTS if repeat % 2 == 0 else DIGEST_VARIANTS[::-1]
        for algorithm in order:
            one_round(algorithm, repeat)
    median = {key: statistics.median(values) for key, values in times.items()}

    print()
    print(
        f"Digests: a save of one state ({megabytes:.0f} MB) with and without, median of {args.io_repeats}; "
        f"cadence: {args.save_every} training steps = {cadence:.2f} s ({steps_per_second:.2f} steps/s, no "
        f"checkpointer); at the least {shortest:.2f} s on an idle machine ({cpu_per_step:.3f} CPU s/step over "
        f"{os.cpu_count()} cores)"
    )
    header = (
        f"{'digests':<8} {'alone CPU s':>11} {'MB/s':>6} {'% of cadence':>13} {'% idle':>7} {'save block':>11} "
        f"{'on disk':>8} {'save CPU s':>11} {'+CPU':>7} {'+CPU %':>7} {'restore':>8} {'restore x':>10}"
    )
    print(header)
    print("-" * len(header))
    for algorithm in DIGEST_VARIANTS:
        name = algorithm or "none"
        if algorithm is None:
            alone = rate = share = idle = more = more_share = ""
        else:
            seconds = median[name, "alone"]
            alone, rate = f"{seconds:11.2f}", f"{megabytes / seconds:6.0f}"
            share = f"{seconds / cadence * 100:12.1f}%"
            idle = f"{seconds / shortest * 100:6.1f}%"
            extra = median[name, "cpu"] - median["none", "cpu"]
            more, more_share = f"{extra:+7.2f}", f"{extra / cadence * 100:+6.1f}%"
        print(
            f"{name:<8} {alone:>11} {rate:>6} {share:>13} {idle:>7} {median[name, 'block']:>9.2f} s "
            f"{median[name, 'save']:>6.2f} s {median[name, 'cpu']:>11.2f} {more:>7} {more_share:>7} "
            f"{median[name, 'restore']:>6.2f} s {median[name, 'restore'] / median['none', 'restore']:>10.2f}"
        )
    share = median[DEFAULT_DIGEST, "alone"] / cadence * 100
    idle_share = median[DEFAULT_DIGEST, "alone"] / shortest * 100
    verdict = "met" if share < 5 else "NOT met"
    print(
        f"target (the default digests, {DEFAULT_DIGEST}, under 5% of {args.save_every} training steps): "
        f"{verdict} ({share:.1f}% as measured; {idle_share:.1f}% of the shortest idle-machine cadence)"
    )


# ---------------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=float, default=50e6, help="target parameter count (default 50e6)")
    parser.add_argument("--steps", type=int, default=200, help="training steps per run (default 200)")
    parser.add_argument("--repeats", type=int, default=2, help="processes per training variant (default 2)")
    parser.add_argument("--save-every", type=int, default=50, help="checkpoint (and log) period, in steps")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--io-repeats", type=int, default=3, help="save / restore rounds (default 3)")
    parser.add_argument(
        "--workdir", help="where runs and checkpoints go (default: a temporary folder, removed)"
    )
    parser.add_argument("--skip-trainer", action="store_true", help="leave out the training steps/s part")
    parser.add_argument("--skip-io", action="store_true", help="leave out the save / restore part")
    parser.add_argument("--skip-digests", action="store_true", help="leave out the digests part")
    parser.add_argument(
        "--tiny", action="store_true", help="--params 1e5 --steps 20 --save-every 10 --repeats 1 --io-repeats 1"
    )
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # one run, in a subprocess
    args = parser.parse_args()
    if args.tiny:  # every part on the same code path, in seconds: the numbers mean little
        args.params, args.steps, args.save_every, args.repeats, args.io_repeats = 1e5, 20, 10, 1, 1

    if args.variant is not None:
        print(_RESULT + json.dumps(run_variant(args, args.variant, args.workdir)), flush=True)
        return

    root = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="checkpoint_bench_"))
    root.mkdir(parents=True, exist_ok=True)
    width, features = mlp_shape(args.params)
    count = mlp_param_count(width, features)
    print(
        f"kd.ckpts.Checkpointer vs none / plain orbax {_orbax_version()}; jax {jax.__version__} on "
        f"{jax.default_backend()} ({os.cpu_count()} CPUs)"
    )
    print(
        f"model: MLP {features} -> {width} -> {width} -> {width} -> {features}, {count:,} params "
        f"({count * 4 / 1e6:.0f} MB), adam state {count * 3 * 4 / 1e6:.0f} MB in all; workdir {root}"
    )
    try:
        cadence = None
        if not args.skip_trainer:
            cadence = trainer_bench(args, root)
        if not args.skip_io:
            io_bench(args, root)
        if not args.skip_digests:
            digest_bench(args, root, cadence)
    finally:
        if not args.workdir:
            shutil.rmtree(root, ignore_errors=True)


def _orbax_version() -> str:
    from importlib.metadata import version

    return version("orbax-checkpoint")


if __name__ == "__main__":
    main()
