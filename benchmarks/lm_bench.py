"""examples/lm.py (a 164M-parameter kd.nn.DecoderLM) trained by `kd-train` beside a hand-written loop: MFU,
tokens/s, memory, time to the first step.

    python3 benchmarks/lm_bench.py                  # on an accelerator: hand, kd, kd1; 100 steps each
    python3 benchmarks/lm_bench.py --explore        # hand loops of several batch / attention / remat choices
    python3 benchmarks/lm_bench.py --tiny           # a smoke test on a CPU (LM-mu, 128 tokens, 20 steps)
    python3 benchmarks/lm_bench.py --set train_ds.batch_size=16 --set model.remat=dots   # config overrides

Every variant trains the model, data and optimizer of `examples/lm.py` (with `--set` overrides, the
`kd-train --cfg.X=V` grammar), each in a fresh process:
  hand: the config's model, optimizer and data, resolved by konfig, in `jax.jit(step, donate_argnums=0)`
        compiled ahead of time (which gives XLA's FLOP count), the data's first 64 batches on the device (kd sees
        2,048 sequences once over 64 steps, shuffled), synced at the
        window's start and end;
  kd:   `kd-train --cfg=examples/lm.py` (its `kd.cli.main`, in the child process), its defaults;
  kd1:  the same with `--cfg.steps_per_call=1`.
Columns: steps/s over the window from the first logging step after step 1 to the last (kd: the wall times of
its metrics.jsonl rows, written once their values are on the host); tokens/s; TFLOP/s and MFU by the PaLM
count (`6 N_matmul B T + 12 L d T B T`, N_matmul: parameters but the position table and the untied embedding)
over the chip's bf16 peak; arrays: the first device's peak GiB of live arrays (`memory_stats()`: parameters,
optimizer state, batches; not a program's temporaries); step GiB: the hand step's arguments, outputs and
temporaries by XLA's memory analysis (what must fit in the chip's memory); first step s (from the parent's start of the
process); compile s (XLA's backend compile seconds in the process). `--explore` prints the same for hand loops
of each choice in EXPLORE, in one process (out-of-memory choices are reported and skipped).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "examples", "lm.py")
VARIANTS = ("hand", "kd", "kd1")
POOL = 64  # at most this many of the data's batches on the device for the hand loop, cycled
TINY = [  # --tiny: what makes examples/lm.py small enough for a CPU
    "model.0=LM-mu",
    "aux.vocab_size=256",
    "aux.sequence_length=128",
    "train_ds.batch_size=8",
]
EXPLORE = [  # --explore: (label, overrides) of hand loops, in one process
    ("b16 xla", ["train_ds.batch_size=16", "model.attention=xla"]),
    ("b16 splash", ["train_ds.batch_size=16", "model.attention=splash"]),
    ("b24 splash", ["train_ds.batch_size=24", "model.attention=splash"]),
    (
        "b32 splash dots_no_batch",
        ["train_ds.batch_size=32", "model.attention=splash", "model.remat=dots_no_batch"],
    ),
    ("b32 splash full", ["train_ds.batch_size=32", "model.attention=splash", "model.remat=full"]),
    ("b32 splash", ["train_ds.batch_size=32", "model.attention=splash"]),
]
# bfloat16 dense peak per chip, TFLOP/s (vendor data sheets).
PEAK_TFLOPS = {
    "TPU v4": 275.0,
    "TPU v5 lite": 197.0,
    "TPU v5": 459.0,
    "TPU v6 lite": 918.0,
    "NVIDIA H100 80GB HBM3": 989.0,
}
_RESULT = "RESULT "
_T0 = "LM_BENCH_T0"


def _overrides(sets: list[str]) -> list[tuple[str, str]]:
    return [tuple(item.split("=", 1)) for item in sets]  # type: ignore[misc]


def _trainer(sets: list[str]) -> Any:
    """examples/lm.py with the overrides, resolved: the Trainer whose model, optimizer and data the hand loop
    takes."""
    import konfig

    if os.path.dirname(CONFIG) not in sys.path:  # its `import lm_data`, as kd-train finds it
        sys.path.insert(0, os.path.dirname(CONFIG))
    cfg = konfig.build_config(CONFIG, overrides=_overrides(sets), from_strings=True)
    return konfig.resolve(cfg)


def _flops(params: Any, model: Any, batch: int, length: int) -> dict[str, float]:
    import jax
    import numpy as np

    n_params = sum(int(np.prod(leaf.shape)) for leaf in jax.tree.leaves(params))
    lookups = model.max_length * model.d_model + (
        0 if model.tie_embeddings else model.vocab_size * model.d_model
    )
    tokens = batch * length
    flops = 6 * (n_params - lookups) * tokens + 12 * model.num_layers * model.d_model * length * tokens
    return {"n_params": n_params, "model_flops_per_step": float(flops), "tokens_per_step": tokens}


def _device() -> dict[str, Any]:
    import jax

    device = jax.devices()[0]
    stats = device.memory_stats() or {}
    peak = stats.get("peak_bytes_in_use")
    return {
        "device_kind": device.device_kind,
        "devices": jax.device_count(),
        "peak_mem_gib": None if peak is None else peak / 2**30,
    }


_COMPILES: list[float] = []


def _count_compiles() -> None:
    from jax import monitoring

    def listener(event: str, duration: float, **_: Any) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            _COMPILES.append(duration)

    monitoring.register_event_duration_secs_listener(listener)


def hand_loop(
    sets: list[str], steps: int, window_start: int, *, first_from_t0: bool = True
) -> dict[str, Any]:
    """The hand-written loop over the config's model, optimizer and data (module docstring)."""
    import jax
    import jax.numpy as jnp
    import optax

    trainer = _trainer(sets)
    model, optimizer, pipeline = trainer.model, trainer.optimizer, trainer.train_ds
    data = pipeline.loader()
    batch = pipeline.batch_size
    # The data's batches in order, up to POOL, cycled (kd shuffles the same examples: a pool much smaller than
    # the data would let the hand loop memorize what kd sees once, and its loss fall faster).
    count = max(1, min(POOL, len(next(iter(data.values()))) // batch))
    batches = [
        jax.device_put({k: v[i * batch : (i + 1) * batch] for k, v in data.items()}) for i in range(count)
    ]
    length = batches[0]["inputs"].shape[-1]

    @jax.jit
    def init(key: jax.Array) -> Any:
        params = model.init(key, batches[0]["inputs"])["params"]
        return params, optimizer.init(params)

    def train_step(state: Any, batch: dict[str, jax.Array]) -> tuple[Any, jax.Array]:
        params, opt_state = state

        def loss_fn(p: Any) -> jax.Array:
            logits = model.apply({"params": p}, batch["inputs"]).astype(jnp.float32)
            return optax.softmax_cross_entropy_with_integer_labels(logits, batch["targets"]).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    start = time.perf_counter()
    state = init(jax.random.key(0))
    compiled = jax.jit(train_step, donate_argnums=0).lower(state, batches[0]).compile()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    memory = compiled.memory_analysis()
    step_bytes = (
        None
        if memory is None
        else (
            memory.argument_size_in_bytes
            + memory.output_size_in_bytes
            + memory.temp_size_in_bytes
            - memory.alias_size_in_bytes
        )
    )
    first = window = None
    for i in range(steps):
        state, loss = compiled(state, batches[i % len(batches)])
        if i == 0:
            jax.block_until_ready(loss)
            first = float(os.environ[_T0]) if first_from_t0 else None
            first = time.time() - first if first is not None else time.perf_counter() - start
        if i + 1 == window_start:
            jax.block_until_ready(state)
            window = time.perf_counter()
    jax.block_until_ready(state)
    return {
        "steps_per_s": (steps - window_start) / (time.perf_counter() - window),
        "first_step_s": first,
        "final_loss": float(loss),
        "xla_flops_per_step": float(cost["flops"]) if cost and cost.get("flops", -1) > 0 else None,
        "step_mem_gib": None if step_bytes is None else step_bytes / 2**30,
        **_flops(state[0], model, batch, length),
    }


def kd_run(sets: list[str], steps: int, window_start: int, variant: str) -> dict[str, Any]:
    """`kd-train --cfg=examples/lm.py` in this process; steps/s from its metrics.jsonl rows' wall times."""
    import jax
    import kd.cli

    workdir = tempfile.mkdtemp(prefix="lm_bench_")
    argv = [
        f"--cfg={CONFIG}",
        f"--cfg.workdir={workdir}",
        f"--cfg.num_train_steps={steps}",
        f"--cfg.log_metrics_every={window_start}",
        *(f"--cfg.{item}" for item in sets),
        *(["--cfg.steps_per_call=1"] if variant == "kd1" else []),
    ]
    code = kd.cli.main(argv)
    if code != 0:
        raise SystemExit(f"kd-train {' '.join(argv)} exited with {code}")
    rows = {}
    with open(os.path.join(workdir, "metrics.jsonl")) as lines:
        for line in lines:
            row = json.loads(line)
            if "perf/train_seconds" in row:
                rows[row["step"]] = row
    if not {1, window_start, steps} <= set(rows):
        raise SystemExit(f"logged steps {sorted(rows)}: expected rows at 1, {window_start} and {steps}")
    trainer = _trainer(sets)
    import konfig

    cfg = konfig.build_config(CONFIG, overrides=_overrides(sets), from_strings=True)
    batch, length = cfg.train_ds.batch_size, cfg.aux["sequence_length"]
    params = jax.eval_shape(
        lambda: trainer.model.init(jax.random.key(0), jax.numpy.zeros((1, length), jax.numpy.int32))
    )["params"]
    return {
        "steps_per_s": (steps - window_start) / (rows[steps]["wall_time"] - rows[window_start]["wall_time"]),
        "first_step_s": rows[1]["wall_time"] - float(os.environ[_T0]),
        "final_loss": rows[steps]["losses/xent"],
        **_flops(params, trainer.model, batch, length),
    }


def run_child(variant: str, sets: list[str], steps: int, window_start: int) -> dict[str, Any]:
    _count_compiles()
    if variant == "hand":
        result = hand_loop(sets, steps, window_start)
    else:
        result = kd_run(sets, steps, window_start, variant)
    return {**result, **_device(), "compile_s": sum(_COMPILES)}


def _derived(result: dict[str, Any]) -> dict[str, Any]:
    tflops = result["model_flops_per_step"] * result["steps_per_s"] / 1e12
    peak = PEAK_TFLOPS.get(result["device_kind"])
    return {
        "tokens_per_s": result["tokens_per_step"] * result["steps_per_s"],
        "tflops": tflops,
        "mfu": None if peak is None else tflops / (peak * result["devices"]),
    }


def _row(name: str, result: dict[str, Any], hand: dict[str, Any] | None) -> str:
    derived = _derived(result)
    mfu = "n/a" if derived["mfu"] is None else f"{100 * derived['mfu']:.1f}%"
    mem = "n/a" if result.get("peak_mem_gib") is None else f"{result['peak_mem_gib']:.1f}"
    step_mem = "-" if result.get("step_mem_gib") is None else f"{result['step_mem_gib']:.1f}"
    ratio = f"{result['steps_per_s'] / hand['steps_per_s']:.2f}" if hand else "-"
    first = f"{result['first_step_s']:.1f}" if result.get("first_step_s") is not None else "-"
    return (
        f"{name:<26} {result['steps_per_s']:>8.2f} {ratio:>6} {derived['tokens_per_s']:>10.0f} "
        f"{derived['tflops']:>8.1f} {mfu:>6} {mem:>7} {step_mem:>8} {first:>7} {result.get('compile_s', 0):>9.1f} "
        f"{result['final_loss']:>7.3f}"
    )


_HEADER = (
    f"{'variant':<26} {'steps/s':>8} {'x hand':>6} {'tokens/s':>10} {'TFLOP/s':>8} {'MFU':>6} {'arrays':>7} {'step GiB':>8} "
    f"{'first s':>7} {'compile s':>9} {'loss':>7}"
)


def spawn(variant: str, sets: list[str], steps: int, window_start: int) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--child",
        variant,
        "--steps",
        str(steps),
        "--window",
        str(window_start),
    ]
    command += [f"--set={item}" for item in sets]
    cache = tempfile.mkdtemp(prefix="lm_bench_cache_")  # each kd run compiles afresh, as a first run does
    start = time.time()
    env = {**os.environ, _T0: repr(start), "KD_COMPILATION_CACHE": cache}
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(_RESULT)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{variant} (exit code {proc.returncode}):\n{(proc.stdout + proc.stderr)[-3000:]}")
    return {**json.loads(lines[-1][len(_RESULT) :]), "wall_s": time.time() - start}


def explore(sets: list[str], steps: int, window_start: int) -> None:
    """Hand loops of each EXPLORE choice, in this process."""
    import jax

    print(f"explore: hand loops of examples/lm.py on {jax.devices()[0].device_kind}, {steps} steps each")
    print(_HEADER)
    _count_compiles()
    for label, extra in EXPLORE:
        compiled_before = sum(_COMPILES)
        try:
            result = hand_loop([*sets, *extra], steps, window_start, first_from_t0=False)
        except Exception as error:
            print(
                f"{label:<26} failed: {type(error).__name__}: {str(error).splitlines()[0][:150]}", flush=True
            )
            continue
        print(
            _row(label, {**result, **_device(), "compile_s": sum(_COMPILES) - compiled_before}, None),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument(
        "--window", type=int, default=25, help="the window's first step (kd's logging period)"
    )
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], help="a config override, PATH=VALUE")
    parser.add_argument("--explore", action="store_true")
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tiny:
        args.set = [*TINY, *args.set]
        args.steps, args.window = 20, 10
    if args.child:
        print(_RESULT + json.dumps(run_child(args.child, args.set, args.steps, args.window)), flush=True)
        return
    if args.explore:
        os.environ.setdefault(_T0, repr(time.time()))
        explore(args.set, args.steps, args.window)
        return
    variants = [v for v in args.variants.split(",") if v]
    if set(variants) - set(VARIANTS):
        raise SystemExit(f"--variants: expected some of {VARIANTS}, got {variants}")
    print(
        f"examples/lm.py {' '.join(args.set) or '(as written)'}: {args.steps} steps, window from {args.window}"
    )
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    for repeat in range(args.repeats):
        for variant in variants:
            result = spawn(variant, args.set, args.steps, args.window)
            runs[variant].append(result)
            print(
                f"  run {repeat + 1}/{args.repeats} {variant:<4} {result['steps_per_s']:.2f} steps/s, "
                f"wall {result['wall_s']:.1f} s",
                flush=True,
            )
    print()
    first = runs[variants[0]][0]
    print(
        f"{first['device_kind']} x{first['devices']}; {first['n_params'] / 1e6:.1f}M parameters, "
        f"{first['tokens_per_step']} tokens and {first['model_flops_per_step'] / 1e12:.2f} model TFLOP per step"
        + (
            f" (XLA counts {runs['hand'][0]['xla_flops_per_step'] / 1e12:.2f} in the hand step)"
            if "hand" in runs and runs["hand"][0].get("xla_flops_per_step")
            else ""
        )
    )
    print(_HEADER)
    medians = {
        variant: {
            **results[0],
            **{
                key: statistics.median(r[key] for r in results)
                for key in ("steps_per_s", "first_step_s", "compile_s", "wall_s")
            },
        }
        for variant, results in runs.items()
    }
    hand = medians.get("hand")
    for variant, result in medians.items():
        print(_row(variant, result, hand))


if __name__ == "__main__":
    main()
