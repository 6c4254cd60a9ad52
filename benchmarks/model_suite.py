"""A model suite: each model trained by kd's defaults, by kd one update per call, and by a hand-written loop.

    python3 -m hatch run python benchmarks/model_suite.py                  # 300 steps, median of 3 processes
    python3 -m hatch run python benchmarks/model_suite.py --models cnn,vit --repeats 5
    python3 -m hatch run python benchmarks/model_suite.py --tiny           # 20 steps, 1 process: a smoke test

Models (sklearn's 8x8 digits as float32 (8, 8, 1) images in [0, 1] and their labels, batch 64, adam 1e-3,
softmax cross-entropy with integer labels; the LM on random tokens):
  mlp:  linen Dense(128) -> relu -> Dense(10) on the flattened images;
  cnn:  linen Conv(16, 3x3) -> relu -> Conv(32, 3x3, strides 2) -> relu -> Dense(10) on the flattened maps;
  vit:  kd.nn.Vit over kd.nn.VitEncoder.from_spec(num_heads=2, hidden_size=32, num_layers=2, patch_size=2);
  lm:   a decoder LM of kd.nn blocks: Embed(256, 64) + learned positions, 2 kd.nn.PreNormBlock (2 heads,
        causal mask), LayerNorm, Dense(256); sequences of 32 tokens, batch 16;
  nnx:  the mlp written as an flax.nnx Module.
Variants, each run in its own fresh process, interleaved (hand, kd, kd1, hand, ...), `--repeats` times:
  hand: `jax.jit(train_step, donate_argnums=0)` over (params, opt_state) (for nnx: the split state), the
        pool's batches put on the device once, blocking at step 1, at the window's start and at the end (as
        benchmarks/trainer_bench.py's (a));
  kd:   `kd.train.Trainer` with its defaults (fused steps), `kd.data.InMemoryPipeline`, logging every
        `--steps // 3` steps into a writer that notes the clock when a row is written (its values are read
        from the device, so the step is done);
  kd1:  the same with `steps_per_call=1`.
  warm: kd again, with the persistent compilation cache the repeat's `kd` run filled (kd and kd1 each start
        with an empty cache folder of their own, as a first `kd-train` run does; kd-train turns the cache on).
Columns (medians): steady steps/s over the window from the first logging step after step 1 to the last
step; first step s (from the parent's Popen to the end of the first update); init+1 s (from the end of the
imports and data loading to the end of the first update: init, tracing, compiling, step 1); wall s (the whole
process);
compile s (XLA's backend compile seconds, persistent-cache reads included) and programs (how many it
compiled or read); peak RSS MiB (os.wait4); and each one's ratio to the hand loop (`x hand`: for steps/s
above 1 is faster).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODELS = ("mlp", "cnn", "vit", "lm", "nnx")
VARIANTS = ("hand", "kd", "kd1", "warm")
BATCH, LM_BATCH, LM_SEQ, LM_VOCAB = 64, 16, 32, 256
POOL = 20  # batches, cycled
_RESULT = "RESULT "
_T0 = "MODEL_SUITE_T0"  # the parent's time.time() just before it starts the child
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _since_start() -> float:
    return time.time() - float(os.environ[_T0])


_COMPILES: list[float] = []  # this child's backend compile seconds, one entry per program


def _count_compiles() -> None:
    """Records each program XLA compiles (or reads from the persistent cache) in `_COMPILES`."""
    from jax import monitoring

    def listener(event: str, duration: float, **_: Any) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            _COMPILES.append(duration)

    monitoring.register_event_duration_secs_listener(listener)


# ---------------------------------------------------------------------------------------------- the models


def _data(model: str) -> dict[str, Any]:
    """`POOL` batches of examples: digits `image` / `label`, or for the LM `inputs` / `targets`."""
    import numpy as np

    if model == "lm":
        rng = np.random.default_rng(0)
        tokens = rng.integers(0, LM_VOCAB, size=(POOL * LM_BATCH, LM_SEQ + 1)).astype(np.int32)
        return {"inputs": tokens[:, :-1].copy(), "targets": tokens[:, 1:].copy()}
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import digits_data  # scikit-learn's digits, read without importing scikit-learn (as the examples do)

    raw_images, raw_labels = digits_data.raw_digits()
    images = (raw_images / 16.0).astype(np.float32)[..., None]
    index = np.resize(np.arange(len(images)), POOL * BATCH)
    return {"image": images[index], "label": raw_labels.astype(np.int32)[index]}


def _linen(model: str) -> Any:
    """The linen module of `model` (not nnx): one array in, logits out."""
    import jax
    from flax import linen as nn

    if model == "mlp":

        class Mlp(nn.Module):
            @nn.compact
            def __call__(self, x: jax.Array) -> jax.Array:
                x = x.reshape(x.shape[0], -1)
                return nn.Dense(10)(nn.relu(nn.Dense(128)(x)))

        return Mlp()
    if model == "cnn":

        class Cnn(nn.Module):
            @nn.compact
            def __call__(self, x: jax.Array) -> jax.Array:
                x = nn.relu(nn.Conv(16, (3, 3))(x))
                x = nn.relu(nn.Conv(32, (3, 3), strides=2)(x))
                return nn.Dense(10)(x.reshape(x.shape[0], -1))

        return Cnn()
    import kd

    if model == "vit":
        encoder = kd.nn.VitEncoder.from_spec(num_heads=2, hidden_size=32, num_layers=2, patch_size=2)
        return kd.nn.Vit(encoder=encoder, num_classes=10, image="batch.image")

    class DecoderLm(nn.Module):
        @nn.compact
        def __call__(self, tokens: jax.Array) -> jax.Array:
            x = nn.Embed(LM_VOCAB, 64)(tokens)
            x = x + self.param("positions", nn.initializers.normal(0.02), (LM_SEQ, 64))
            mask = nn.make_causal_mask(tokens)
            for _ in range(2):
                x = kd.nn.PreNormBlock.from_spec(num_heads=2)(x, mask)
            return nn.Dense(LM_VOCAB)(nn.LayerNorm()(x))

    return DecoderLm()


def _nnx_class() -> Any:
    import kontext
    from flax import nnx

    class NnxMlp(nnx.Module):
        image: kontext.Key = "batch.image"

        def __init__(self, *, rngs: nnx.Rngs) -> None:
            self.hidden = nnx.Linear(64, 128, rngs=rngs)
            self.out = nnx.Linear(128, 10, rngs=rngs)

        def __call__(self, image: Any) -> Any:
            return self.out(nnx.relu(self.hidden(image.reshape(image.shape[0], -1))))

    return NnxMlp


def _keys(model: str) -> tuple[str, str]:
    return ("inputs", "targets") if model == "lm" else ("image", "label")


# ---------------------------------------------------------------------------------------------- the children


def child_hand(model: str, steps: int, window_start: int) -> dict[str, Any]:
    import jax
    import optax

    x_key, y_key = _keys(model)
    data = _data(model)
    batch_size = LM_BATCH if model == "lm" else BATCH
    batches = [
        jax.device_put({k: v[i * batch_size : (i + 1) * batch_size] for k, v in data.items()})
        for i in range(POOL)
    ]
    optimizer = optax.adam(1e-3)
    setup_done = _since_start()  # imports and data done: the model's init and first step follow
    if model == "nnx":
        from flax import nnx

        graphdef, params = nnx.split(_nnx_class()(rngs=nnx.Rngs(0)), nnx.Param)

        def apply(p: Any, x: Any) -> Any:
            return nnx.merge(graphdef, p)(x)

        state = (params, jax.jit(optimizer.init)(params))
    else:
        module = _linen(model)

        def apply(p: Any, x: Any) -> Any:
            return module.apply({"params": p}, x)

        @jax.jit
        def init(key: jax.Array, x: jax.Array) -> Any:
            params = module.init(key, x)["params"]
            return params, optimizer.init(params)

        state = init(jax.random.key(0), batches[0][x_key])

    def train_step(state: Any, batch: dict[str, Any]) -> tuple[Any, jax.Array]:
        params, opt_state = state

        def loss_fn(p: Any) -> jax.Array:
            logits = apply(p, batch[x_key])
            if isinstance(logits, dict):  # kd.nn.Vit
                logits = logits["logits"]
            return optax.softmax_cross_entropy_with_integer_labels(logits, batch[y_key]).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    step_fn = jax.jit(train_step, donate_argnums=0)
    first_step_s = window = None
    for i in range(steps):
        state, loss = step_fn(state, batches[i % POOL])
        if i == 0:
            jax.block_until_ready(loss)
            first_step_s = _since_start()
        if i + 1 == window_start:
            jax.block_until_ready(state)
            window = time.perf_counter()
    jax.block_until_ready(state)
    return {
        "first_step_s": first_step_s,
        "from_setup_s": first_step_s - setup_done,
        "steps_per_s": (steps - window_start) / (time.perf_counter() - window),
        "final_loss": float(loss),
    }


def child_kd(model: str, steps: int, window_start: int, steps_per_call: int | None = None) -> dict[str, Any]:
    import kd
    import optax

    x_key, y_key = _keys(model)
    data = _data(model)
    if model == "nnx":
        network: Any = _nnx_class()
    elif model == "vit":
        network = _linen(model)
    else:
        network = kd.nn.ExternalModule(model=_linen(model), keys=f"batch.{x_key}")
    clocks: dict[int, tuple[float, float]] = {}  # step -> (since the process started, perf counter)

    class ClockWriter(kd.writers.InMemoryWriter):
        def write_scalars(self, step: int, scalars: Any) -> None:
            if "perf/train_seconds" in scalars:  # the train loop's rows (evaluators write rows of their own)
                clocks[int(step)] = (_since_start(), time.perf_counter())
            super().write_scalars(step, scalars)

    logits = "preds.logits" if model == "vit" else "preds"
    trainer = kd.train.Trainer(
        seed=0,
        train_ds=kd.data.InMemoryPipeline(
            loader=lambda: data, batch_size=LM_BATCH if model == "lm" else BATCH
        ),
        model=network,
        optimizer=optax.adam(1e-3),
        train_losses={
            "xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(logits=logits, labels=f"batch.{y_key}")
        },
        num_train_steps=steps,
        log_metrics_every=window_start,
        writer=ClockWriter(),
        steps_per_call=steps_per_call,
    )
    setup_done = _since_start()  # imports, data and the Trainer done: train() inits, compiles and steps
    _, logged = trainer.train()
    if 1 not in clocks or window_start not in clocks or steps not in clocks:
        raise SystemExit(f"logged steps {sorted(clocks)}: expected rows at 1, {window_start} and {steps}")
    return {
        "first_step_s": clocks[1][0],
        "from_setup_s": clocks[1][0] - setup_done,
        "steps_per_s": (steps - window_start) / (clocks[steps][1] - clocks[window_start][1]),
        "final_loss": float(logged["losses/xent"]),
    }


def run_child(model: str, variant: str, steps: int) -> dict[str, Any]:
    window_start = steps // 3 if steps >= 30 else steps // 2
    _count_compiles()
    if variant == "hand":
        result = child_hand(model, steps, window_start)
    else:
        from kd.cli._compile_cache import enable_compilation_cache

        enable_compilation_cache()  # as kd-train does, in the folder the parent chose (KD_COMPILATION_CACHE)
        result = child_kd(model, steps, window_start, steps_per_call=1 if variant == "kd1" else None)
    return {**result, "compile_s": sum(_COMPILES), "programs": len(_COMPILES)}


# ---------------------------------------------------------------------------------------------- the parent


def spawn(model: str, variant: str, steps: int, cache: str) -> dict[str, Any]:
    """One `--child` process (kd's with its compilation cache in `cache`): its JSON result, plus `wall_s` and
    `rss_mib` (peak RSS) seen from here."""
    command = [sys.executable, __file__, "--child", f"{model},{variant}", "--steps", str(steps)]
    env = {**_ENV, "KD_COMPILATION_CACHE": cache}
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    with tempfile.TemporaryFile("w+") as out:
        start = time.time()
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env={**env, _T0: repr(start)})
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.time() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        output = out.read()
    lines = [line for line in output.splitlines() if line.startswith(_RESULT)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{model} {variant} (exit code {proc.returncode}):\n{output[-3000:]}")
    return {**json.loads(lines[-1][len(_RESULT) :]), "wall_s": wall, "rss_mib": usage.ru_maxrss / 1024}


_COLUMNS = [  # key, header, format
    ("steps_per_s", "steps/s", "{:.0f}"),
    ("first_step_s", "first s", "{:.2f}"),
    ("from_setup_s", "init+1 s", "{:.2f}"),
    ("wall_s", "wall s", "{:.2f}"),
    ("compile_s", "compile s", "{:.2f}"),
    ("programs", "programs", "{:.0f}"),
    ("rss_mib", "RSS MiB", "{:.0f}"),
]


def print_table(steps: int, repeats: int, runs: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    print()
    print(f"{steps} steps (median of {repeats} processes); x hand: the ratio to the hand loop's median")
    header = f"{'model':<6} {'variant':<7}" + "".join(f" {name:>9} {'x hand':>6}" for _, name, _ in _COLUMNS)
    header += f" {'loss':>7}"
    print(header)
    print("-" * len(header))
    for (model, variant), results in runs.items():
        medians = {key: statistics.median(r[key] for r in results) for key, _, _ in _COLUMNS}
        hand = {key: statistics.median(r[key] for r in runs[(model, "hand")]) for key, _, _ in _COLUMNS}
        cells = "".join(
            f" {fmt.format(medians[key]):>9} {medians[key] / hand[key]:>6.2f}" for key, _, fmt in _COLUMNS
        )
        loss = statistics.median(r["final_loss"] for r in results)
        print(f"{model:<6} {variant:<7}{cells} {loss:>7.4f}")
    kd_over_hand = [
        statistics.median(r["steps_per_s"] for r in runs[(m, "kd")])
        / statistics.median(r["steps_per_s"] for r in runs[(m, "hand")])
        for m, v in runs
        if v == "kd"
    ]
    if kd_over_hand:
        print(f"kd/hand steady steps/s, median over the models: {statistics.median(kd_over_hand):.2f}")
    for model in dict.fromkeys(m for m, v in runs if v == "warm"):
        first = {v: statistics.median(r["first_step_s"] for r in runs[(model, v)]) for v in ("kd", "warm")}
        init = {v: statistics.median(r["from_setup_s"] for r in runs[(model, v)]) for v in ("kd", "warm")}
        print(
            f"{model}: a second run (cache warm) reaches step 1 in {first['warm'] / first['kd']:.2f}x the first's "
            f"time from the process start, {init['warm'] / init['kd']:.2f}x from the Trainer's start"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help=f"of {', '.join(MODELS)} (default all)")
    parser.add_argument("--steps", type=int, default=300, help="updates per run (default 300)")
    parser.add_argument("--repeats", type=int, default=3, help="processes per model and variant (default 3)")
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help=f"of {', '.join(VARIANTS)} (default all; hand always runs)"
    )
    parser.add_argument("--tiny", action="store_true", help="--steps 20 --repeats 1: a smoke test")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # "model,variant": one run, in a subprocess
    args = parser.parse_args()
    if args.tiny:
        args.steps, args.repeats = 20, 1
    if args.child is not None:
        model, variant = args.child.split(",")
        print(_RESULT + json.dumps(run_child(model, variant, args.steps)), flush=True)
        return
    models = [m for m in args.models.split(",") if m]
    unknown = sorted(set(models) - set(MODELS))
    if unknown or args.steps < 4:
        raise SystemExit(f"--models: unknown {unknown}, expected some of {MODELS}; --steps at least 4")
    asked = {v for v in args.variants.split(",") if v}
    if asked - set(VARIANTS):
        raise SystemExit(f"--variants: unknown {sorted(asked - set(VARIANTS))}, expected some of {VARIANTS}")
    # The hand loop is what the others are measured against; warm reads the cache its repeat's kd run filled.
    variants = [v for v in VARIANTS if v in asked | {"hand"} | ({"kd"} if "warm" in asked else set())]
    from importlib.metadata import version  # the children import jax, not this process

    print(
        f"kd vs a hand loop; jax {version('jax')}, flax {version('flax')}, optax {version('optax')}, {os.cpu_count()} CPUs"
    )
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {(m, v): [] for m in models for v in variants}
    caches = tempfile.TemporaryDirectory(prefix="model_suite_cache_")
    for repeat in range(args.repeats):
        for model in models:
            for variant in variants:
                # kd and kd1 start cold (a folder of their own); warm reads what this repeat's kd wrote.
                folder = "kd" if variant == "warm" else variant
                cache = os.path.join(caches.name, f"{repeat}-{model}-{folder}")
                result = spawn(model, variant, args.steps, cache)
                runs[(model, variant)].append(result)
                print(
                    f"  run {repeat + 1}/{args.repeats} {model:<4} {variant:<5} {result['steps_per_s']:.0f} steps/s, "
                    f"first step {result['first_step_s']:.2f} s, wall {result['wall_s']:.2f} s, "
                    f"RSS {result['rss_mib']:.0f} MiB",
                    flush=True,
                )
    print_table(args.steps, args.repeats, runs)


if __name__ == "__main__":
    main()
