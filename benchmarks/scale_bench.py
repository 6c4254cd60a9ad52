"""kd.train.Trainer on several devices: steps/s against the device count, and a transformer LM on a GPU.

    python3 -m hatch run python benchmarks/scale_bench.py                        # (1): 1, 2, 4, 8 devices
    python3 -m hatch run python benchmarks/scale_bench.py --devices 1,2,8 --steps 300 --repeats 1   # a look
    python3 -m hatch run python benchmarks/scale_bench.py --lm --lm-size tiny    # (2), small: runs on a CPU
    python3 -m hatch run python benchmarks/scale_bench.py --lm --lm-size tiny --lm-cpu-devices 2   # sharded
    python3 -m hatch run python benchmarks/scale_bench.py [--lm] --tiny    # a smoke test of (1) or (2)
    python3 -m hatch run python benchmarks/scale_bench.py --lm --lm-size 166m    # (2) on a GPU machine
    python3 -m hatch run python benchmarks/scale_bench.py --lm --lm-size 166m --lm-variants hand,kd,kd1 \
        --attention cudnn --peak-tflops 989                                    # more of (2)

The parent never imports jax (on a GPU it would hold the device's memory): every run is a fresh process
(`--child`), its output kept in a temporary file, its result one JSON line. A run that fails, or is still
going after `--child-timeout` seconds (900), is killed, its output's end printed to stderr, and its row
shows "failed"; the other runs go on.

(1) `--devices 1,2,4,8` (the default part). Each device count runs in fresh processes with
`JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=N` in their environment, set before
jax is imported. The simulated devices all share this machine's CPU cores: the numbers measure what the
sharding machinery (splitting batches, collectives between devices, kd's own bookkeeping) costs as the
device count grows, not a speedup; on real devices each would bring its own compute.
Model: linen MLP 784 -> 512 -> relu -> 512 -> relu -> 10, global batch 256 (split along the data axis),
softmax cross-entropy with integer labels, `optax.adam(1e-3)`, random inputs and labels (seed 0), a pool
of 16 batches cycled in order. Both loops read the loss on the host every `--sync-every` steps (10): kd
logs then (`log_metrics_every=10`), the hand loop calls `float(loss)`. Not reading for longer hangs XLA:CPU
here (jax 0.10.2, 2 cores): with some 30-50 steps in flight on simulated devices, an all-reduce's
rendezvous waits for a device that never arrives and XLA aborts the process after 40 s, in the hand loop
as in kd's default `log_metrics_every=100`. The variants, for each device count:
  hand:     a hand-written sharded loop: a mesh `("data",)` over all devices, `jax.jit(train_step,
            in_shardings=(replicated, NamedSharding(mesh, P("data"))), out_shardings=replicated,
            donate_argnums=0)` called on the numpy batches (jit copies and splits them); params and
            optimizer state replicated;
  dp:       `kd.train.Trainer(sharding=kd.sharding.ShardingStrategy())`: batch split, state replicated
            (kd's default), `kd.data.InMemoryPipeline(shuffle=False)` over the same arrays;
  fsdp:     the same with `ShardingStrategy(params=kd.sharding.FSDPSharding(min_size_to_shard_mb=0))`: every
            parameter (and its adam moments) split along its largest dimension the devices divide (the
            progress lines show the parameters' PartitionSpecs).
Columns, medians over `--repeats` processes (3), run interleaved (every count and variant once, then again,
so that a noisy neighbour hurts all alike):
  steps/s:     steady rate: the updates from step 100 (logged by kd, so done; for hand: after blocking on
               the whole state) to the last, over the seconds between them;
  x 1 dev:     steps/s over the same variant's on 1 device (below 1: more devices cost more here);
  x hand:      steps/s over the hand loop's at the same device count (kd's target: 1.0 or more);
  CPU us/step: the process's CPU time (all threads) in the same window, per update: less hurt by a busy
               neighbour than steps/s, as long as the cores are not oversubscribed;
  first s:     from the parent's start of the process to the end of the first update: start, imports,
               init, compile;
  wall s:      the whole process;
  loss:        the last logged loss (kd and hand differ only by their initial parameters).

(2) `--lm`: a decoder-only transformer language model in flax linen: token embedding + learned positions,
L pre-LayerNorm blocks (causal self-attention by `jax.nn.dot_product_attention`, then an MLP of 4 d with
GELU), a final LayerNorm and an output head (untied; `--tied` uses the embedding's transpose), next-token
softmax cross-entropy over random tokens (a pool of 8 batches), `optax.adamw(3e-4, weight_decay=0.1)`, data
parallel over the devices of the default backend (`--lm-cpu-devices N`: N simulated CPU devices instead).
Sizes (`--lm-size`; `--batch`, `--seq`, `--vocab`, `--dtype`, `--param-dtype`, `--lm-steps` override):
  tiny:  d 128, 2 layers, 4 heads, vocab 1024, seq 128, batch 8, float32, 30 steps logged every 10, 1 process
         per variant: checks the code path on a CPU in a minute or two;
  166m:  d 768, 12 layers, 12 heads, vocab 51200 (GPT-2's 50257 rounded up to a multiple of 1024), seq 1024,
         batch 16, bfloat16 compute with float32 parameters, 200 steps logged every 50, 2 processes per
         variant: 164.5M parameters (124.4M in matmuls), 14.08 TFLOP per step, for a GPU.
The variants:
  hand:     a hand-written sharded loop: `jax.jit(train_step, in_shardings=(replicated, P("data")),
            out_shardings=(replicated, None), donate_argnums=0)`, compiled ahead of time
            (`.lower().compile()`, which also gives XLA's FLOP count), each batch `jax.device_put` onto the
            mesh, the loss read every `log_every` steps as kd reads it;
  kd:       `kd.train.Trainer` with the same module (behind `kd.nn.ExternalModule`), optimizer and data
            (`InMemoryPipeline`), logging every `log_every` steps, its default sharding and fused steps
            (`steps_per_call=None`: the updates between logging steps in as few compiled calls as fit);
  kd1:      kd with `steps_per_call=1`, only with `--lm-variants ...,kd1`: what the fused steps cost or buy.
Columns, medians over `--repeats` processes:
  steps/s:     steady rate from step `log_every` (the first logged step after step 1: every step variant is
               compiled by then) to the last, as in (1);
  x hand:      steps/s over the hand loop's (the target for 166m: kd within 3%, i.e. 0.97 or more);
  tokens/s:    batch x seq x steps/s;
  TFLOP/s:     model FLOPs per step (below) x steps/s;
  MFU:         model FLOPs utilisation: TFLOP/s over the peak of all the devices: `--peak-tflops` per device,
               else the bfloat16 dense peak in PEAK_TFLOPS looked up by `jax.devices()[0].device_kind`, times
               the device count; "n/a" where unknown (CPUs). With `--dtype float32` still against that peak;
  mem GiB:     the first device's peak bytes in use (`memory_stats()`), "n/a" where not reported (CPUs);
  first s, wall s, loss: as in (1).
Model FLOPs per step, the count of the PaLM paper (appendix B), stated as used:
    6 * N_matmul * B * T  +  12 * L * d * T * B * T
with B the batch, T the sequence length, L the layers, d the model width and N_matmul the parameters that
take part in a matmul for each token: all of them but the position table and, untied, the input embedding
(a lookup). The first term is the forward (2 N) and backward (4 N) matmuls, the second the attention scores
and weighted values (2 * 2 T d per layer and token forward, times 3 with the backward), over the whole
T x T (causal masking does not reduce what XLA computes). It is printed next to XLA's count for the hand
step, `compiled.cost_analysis()["flops"]` (one device's part of the SPMD program) times the device count,
which also counts the softmax, norms and the optimizer update, but not work inside custom calls (cuDNN).
Targets on one H200 for 166m (issue 14; anchor, a hand-written loop: 21.2 steps/s, 31.7% MFU): kd at 0.97x
the hand loop or more, and its MFU above the anchor's.

Times are wall clock on a shared machine: compare rows of one run, not runs of different days. Nothing
here asserts on a number: this is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

_RESULT = "RESULT "  # prefix of the JSON line a --child process prints
_T0 = "SCALE_BENCH_T0"  # the parent's time.time() just before it starts the child
# Cached bytecode is what users run with; some shells here disable writing it.
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

# ---- (1) the MLP over simulated devices
MLP_VARIANTS = {"hand": "hand loop", "dp": "kd dp", "fsdp": "kd fsdp"}
INPUTS, HIDDEN, CLASSES = 784, 512, 10
MLP_BATCH = 256
MLP_POOL = 16  # batches, cycled
MLP_WINDOW_START = 100  # the steady window: from this step to the last
MLP_LEARNING_RATE = 1e-3

# ---- (2) the language model
LM_VARIANTS = {"hand": "hand loop", "kd": "kd Trainer", "kd1": "kd, 1/call"}
LM_POOL = 8  # batches, cycled
LM_LEARNING_RATE = 3e-4
LM_WEIGHT_DECAY = 0.1
# bfloat16 dense peak per chip, TFLOP/s (vendor data sheets; H100/H200 SXM).
PEAK_TFLOPS = {
    "NVIDIA H200": 989.0,
    "NVIDIA H100 80GB HBM3": 989.0,
    "NVIDIA H100 PCIe": 756.0,
    "NVIDIA A100-SXM4-80GB": 312.0,
    "NVIDIA A100-SXM4-40GB": 312.0,
    "NVIDIA A100 80GB PCIe": 312.0,
    "NVIDIA L4": 121.0,
    "TPU v4": 275.0,
    "TPU v5 lite": 197.0,
    "TPU v5": 459.0,
    "TPU v6 lite": 918.0,
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class LmSize:
    """One `--lm-size`: the model's shape, the batch and the run's length."""

    d_model: int
    layers: int
    heads: int
    vocab: int
    seq: int
    batch: int
    steps: int
    log_every: int
    dtype: str
    param_dtype: str = "float32"
    repeats: int = 1  # processes per variant unless --repeats says otherwise


LM_SIZES = {
    "tiny": LmSize(
        d_model=128, layers=2, heads=4, vocab=1024, seq=128, batch=8, steps=30, log_every=10, dtype="float32"
    ),
    "166m": LmSize(
        d_model=768,
        layers=12,
        heads=12,
        vocab=51200,
        seq=1024,
        batch=16,
        steps=200,
        log_every=50,
        dtype="bfloat16",
        repeats=2,
    ),
}


def _since_start() -> float:
    return time.time() - float(os.environ[_T0])


# ---------------------------------------------------------------------------------------------- shared pieces


def _clock_writer(kd: Any, clocks: dict[int, tuple[float, float, float]]) -> Any:
    """A kd InMemoryWriter that also notes, for each train row, (since the process started, perf, CPU): the
    row of a logging step is written after its values are read from the device, so the step is done."""

    class ClockWriter(kd.writers.InMemoryWriter):
        def write_scalars(self, step: int, scalars: Any) -> None:
            if "perf/train_seconds" in scalars:  # the train loop's rows (perf/steps_per_sec skips the first window)
                clocks[int(step)] = (_since_start(), time.perf_counter(), time.process_time())
            super().write_scalars(step, scalars)

    return ClockWriter()


def _from_clocks(clocks: dict[int, tuple[float, ...]], *, window_start: int, last: int) -> dict[str, float]:
    if 1 not in clocks or window_start not in clocks or last not in clocks:
        raise SystemExit(f"logged steps {sorted(clocks)}: expected rows at 1, {window_start} and {last}")
    (_, wall_0, cpu_0), (_, wall_1, cpu_1) = clocks[window_start], clocks[last]
    return {
        "first_step_s": clocks[1][0],
        "steps_per_s": (last - window_start) / (wall_1 - wall_0),
        "cpu_us_per_step": (cpu_1 - cpu_0) / (last - window_start) * 1e6,
    }


def _hand_loop(
    step_fn: Any,
    state: Any,
    batches: list[Any],
    *,
    steps: int,
    window_start: int,
    sync_every: int,
    put: Any = None,
) -> tuple[Any, Any, dict[str, float]]:
    """Runs `steps` updates, waiting for the loss after step 1 and every `sync_every` steps (where the kd
    Trainer logs, so reads its loss), and for the whole state at step `window_start` and the last one."""
    import jax

    first_step_s = window = None
    loss = None
    for i in range(steps):
        batch = batches[i % len(batches)]
        state, loss = step_fn(state, batch if put is None else put(batch))
        if i == 0:
            jax.block_until_ready(loss)
            first_step_s = _since_start()
        if i + 1 == window_start:
            jax.block_until_ready(state)
            window = (time.perf_counter(), time.process_time())
        elif (i + 1) % sync_every == 0:
            float(loss)  # what a logging step does: the loss to the host
    jax.block_until_ready(state)
    wall, cpu = time.perf_counter() - window[0], time.process_time() - window[1]
    timing = {
        "first_step_s": first_step_s,
        "steps_per_s": (steps - window_start) / wall,
        "cpu_us_per_step": cpu / (steps - window_start) * 1e6,
    }
    return state, loss, timing


def _hand_train_step(model: Any, optimizer: Any, *, inputs: str, labels: str) -> Any:
    """The hand loop's update of `(params, opt_state)`: softmax cross-entropy of `model` on `batch[inputs]`
    against the integer `batch[labels]`, then `optimizer`; returns `(new state, loss)`."""
    import jax
    import optax

    def train_step(state: Any, batch: dict[str, Any]) -> tuple[Any, Any]:
        params, opt_state = state

        def loss_fn(p: Any) -> Any:
            logits = model.apply({"params": p}, batch[inputs])
            return optax.softmax_cross_entropy_with_integer_labels(logits, batch[labels]).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    return train_step


def _data_mesh() -> Any:
    """A one-axis mesh `("data",)` over all devices, its axis typed Auto (jit propagates shardings)."""
    import jax

    return jax.make_mesh((jax.device_count(),), ("data",), axis_types=(jax.sharding.AxisType.Auto,))


def _devices_info() -> dict[str, Any]:
    import jax

    devices = jax.devices()
    return {
        "jax": jax.__version__,
        "backend": jax.default_backend(),
        "device_count": len(devices),
        "device_kind": devices[0].device_kind,
    }


def _peak_memory_gib() -> float | None:
    import jax

    try:
        stats = jax.devices()[0].memory_stats()
    except Exception:  # not every backend reports it
        return None
    if not stats or "peak_bytes_in_use" not in stats:
        return None
    return stats["peak_bytes_in_use"] / 2**30


# ---------------------------------------------------------------------------------------------- (1) the MLP


def _mlp_pool() -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    n = MLP_POOL * MLP_BATCH
    return {
        "x": rng.normal(size=(n, INPUTS)).astype(np.float32),
        "label": rng.integers(0, CLASSES, size=(n,)).astype(np.int32),
    }


def _mlp(nn: Any) -> Any:
    class Mlp(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            x = nn.relu(nn.Dense(HIDDEN)(x))
            x = nn.relu(nn.Dense(HIDDEN)(x))
            return nn.Dense(CLASSES)(x)

    return Mlp()


def child_mlp_hand(spec: dict[str, Any]) -> dict[str, Any]:
    """hand: jit with NamedSharding inputs, batch split along `data`, params replicated."""
    import jax
    import optax
    from flax import linen as nn
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    steps = spec["steps"]
    data = _mlp_pool()
    batches = [{k: v[i * MLP_BATCH : (i + 1) * MLP_BATCH] for k, v in data.items()} for i in range(MLP_POOL)]
    model, optimizer = _mlp(nn), optax.adam(MLP_LEARNING_RATE)
    mesh = _data_mesh()
    replicated, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))

    def init(key: jax.Array) -> Any:
        params = model.init(key, jax.numpy.zeros((1, INPUTS)))["params"]
        return params, optimizer.init(params)

    state = jax.jit(init, out_shardings=replicated)(jax.random.key(0))

    train_step = _hand_train_step(model, optimizer, inputs="x", labels="label")

    step_fn = jax.jit(
        train_step, in_shardings=(replicated, split), out_shardings=replicated, donate_argnums=0
    )
    state, loss, timing = _hand_loop(
        step_fn, state, batches, steps=steps, window_start=MLP_WINDOW_START, sync_every=spec["sync_every"]
    )
    return {**timing, "final_loss": float(loss), "devices": jax.device_count()}


def child_mlp_kd(spec: dict[str, Any]) -> dict[str, Any]:
    """dp / fsdp: kd.train.Trainer with that sharding, logging every `sync_every` steps to a clock writer."""
    import jax
    import kd
    import optax
    from flax import linen as nn

    steps = spec["steps"]
    if spec["variant"] == "dp":
        strategy = kd.sharding.ShardingStrategy()
    else:
        strategy = kd.sharding.ShardingStrategy(params=kd.sharding.FSDPSharding(min_size_to_shard_mb=0))
    clocks: dict[int, tuple[float, float, float]] = {}
    data = _mlp_pool()
    trainer = kd.train.Trainer(
        seed=0,
        train_ds=kd.data.InMemoryPipeline(loader=lambda: data, batch_size=MLP_BATCH, shuffle=False),
        model=kd.nn.ExternalModule(model=_mlp(nn), keys="batch.x"),
        optimizer=optax.adam(MLP_LEARNING_RATE),
        train_losses={
            "xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="batch.label")
        },
        num_train_steps=steps,
        log_metrics_every=spec["sync_every"],
        writer=_clock_writer(kd, clocks),
        sharding=strategy,
    )
    state, logged = trainer.train()
    specs = {str(tuple(leaf.sharding.spec)) for leaf in jax.tree.leaves(state.params)}
    return {
        **_from_clocks(clocks, window_start=MLP_WINDOW_START, last=steps),
        "final_loss": float(logged["losses/xent"]),
        "devices": jax.device_count(),
        "param_specs": sorted(specs),
    }


# ---------------------------------------------------------------------------------------------- (2) the LM


def _lm_module(nn: Any, size: LmSize, *, tied: bool, attention: str | None) -> Any:
    """The decoder-only transformer (module docstring), `tokens (B, T) int32 -> logits (B, T, V) float32`."""
    import jax
    import jax.numpy as jnp

    dtype, param_dtype = jnp.dtype(size.dtype), jnp.dtype(size.param_dtype)

    def dense(features: int, **kwargs: Any) -> Any:
        return nn.Dense(features, dtype=dtype, param_dtype=param_dtype, **kwargs)

    def norm() -> Any:
        return nn.LayerNorm(dtype=dtype, param_dtype=param_dtype)

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            b, t, d = x.shape
            head_dim = d // size.heads
            qkv = dense(3 * d)(norm()(x)).reshape(b, t, 3, size.heads, head_dim)
            q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
            attended = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation=attention)
            x = x + dense(d)(attended.reshape(b, t, d))
            h = dense(4 * d)(norm()(x))
            return x + dense(d)(nn.gelu(h))

    class TransformerLM(nn.Module):
        @nn.compact
        def __call__(self, tokens: jax.Array) -> jax.Array:
            embed = nn.Embed(size.vocab, size.d_model, dtype=dtype, param_dtype=param_dtype)
            positions = self.param(
                "positions", nn.initializers.normal(0.02), (size.seq, size.d_model), param_dtype
            )
            x = embed(tokens) + positions[: tokens.shape[1]].astype(dtype)
            for _ in range(size.layers):
                x = Block()(x)
            x = norm()(x)
            logits = embed.attend(x) if tied else dense(size.vocab, use_bias=False)(x)
            return logits.astype(jnp.float32)

    return TransformerLM()


def _lm_pool(size: LmSize) -> dict[str, Any]:
    """`LM_POOL` batches of random token sequences: `inputs` and `targets` (the next tokens), int32."""
    import numpy as np

    rng = np.random.default_rng(0)
    tokens = rng.integers(0, size.vocab, size=(LM_POOL * size.batch, size.seq + 1)).astype(np.int32)
    return {"inputs": tokens[:, :-1].copy(), "targets": tokens[:, 1:].copy()}


def _lm_size(spec: dict[str, Any]) -> LmSize:
    return LmSize(**spec["size"])


def _lm_flops(params: Any, size: LmSize, *, tied: bool) -> dict[str, float]:
    """The parameter counts and the model FLOPs of one step (module docstring)."""
    import jax
    import numpy as np

    n_params = sum(int(np.prod(leaf.shape)) for leaf in jax.tree.leaves(params))
    n_matmul = n_params - size.seq * size.d_model - (0 if tied else size.vocab * size.d_model)
    tokens = size.batch * size.seq
    flops = 6 * n_matmul * tokens + 12 * size.layers * size.d_model * size.seq * tokens
    return {"n_params": n_params, "n_matmul": n_matmul, "model_flops_per_step": float(flops)}


def child_lm_hand(spec: dict[str, Any]) -> dict[str, Any]:
    """hand: the LM's jitted, donated, data-parallel step, compiled ahead of time."""
    import jax
    import optax
    from flax import linen as nn
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    size = _lm_size(spec)
    model = _lm_module(nn, size, tied=spec["tied"], attention=spec["attention"])
    optimizer = optax.adamw(LM_LEARNING_RATE, weight_decay=LM_WEIGHT_DECAY)
    data = _lm_pool(size)
    batches = [{k: v[i * size.batch : (i + 1) * size.batch] for k, v in data.items()} for i in range(LM_POOL)]
    mesh = _data_mesh()
    replicated, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))

    def init(key: jax.Array) -> Any:
        params = model.init(key, jax.numpy.zeros((1, size.seq), jax.numpy.int32))["params"]
        return params, optimizer.init(params)

    state = jax.jit(init, out_shardings=replicated)(jax.random.key(0))

    train_step = _hand_train_step(model, optimizer, inputs="inputs", labels="targets")

    put = lambda batch: jax.device_put(batch, split)  # noqa: E731
    compiled = (
        jax.jit(
            train_step, in_shardings=(replicated, split), out_shardings=(replicated, None), donate_argnums=0
        )
        .lower(state, put(batches[0]))
        .compile()
    )
    flops = _lm_flops(state[0], size, tied=spec["tied"])
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    # The compiled program is one device's part of the SPMD step: all devices together run N times it.
    per_device = float(cost["flops"]) if cost and cost.get("flops", -1) > 0 else None
    xla_flops = None if per_device is None else per_device * jax.device_count()
    state, loss, timing = _hand_loop(
        compiled,
        state,
        batches,
        steps=spec["steps"],
        window_start=size.log_every,
        sync_every=size.log_every,
        put=put,
    )
    return {
        **timing,
        **flops,
        "xla_flops_per_step": xla_flops,
        "final_loss": float(loss),
        "peak_mem_gib": _peak_memory_gib(),
        **_devices_info(),
    }


def child_lm_kd(spec: dict[str, Any]) -> dict[str, Any]:
    """kd / kd1: kd.train.Trainer on the same LM, optimizer and data, logging into a clock writer."""
    import kd
    import optax
    from flax import linen as nn

    size = _lm_size(spec)
    module = _lm_module(nn, size, tied=spec["tied"], attention=spec["attention"])
    clocks: dict[int, tuple[float, float, float]] = {}
    data = _lm_pool(size)
    trainer = kd.train.Trainer(
        seed=0,
        train_ds=kd.data.InMemoryPipeline(loader=lambda: data, batch_size=size.batch, shuffle=False),
        model=kd.nn.ExternalModule(model=module, keys="batch.inputs"),
        optimizer=optax.adamw(LM_LEARNING_RATE, weight_decay=LM_WEIGHT_DECAY),
        train_losses={
            "xent": kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds", labels="batch.targets")
        },
        num_train_steps=spec["steps"],
        log_metrics_every=size.log_every,
        writer=_clock_writer(kd, clocks),
        steps_per_call=1 if spec["variant"] == "kd1" else None,
    )
    state, logged = trainer.train()
    return {
        **_from_clocks(clocks, window_start=size.log_every, last=spec["steps"]),
        **_lm_flops(state.params, size, tied=spec["tied"]),
        "final_loss": float(logged["losses/xent"]),
        "peak_mem_gib": _peak_memory_gib(),
        **_devices_info(),
    }


def child_probe(spec: dict[str, Any]) -> dict[str, Any]:
    """The versions and devices the children see (the parent never imports jax: it would hold the GPU)."""
    from importlib.metadata import version

    import kd  # noqa: F401  (compiles its bytecode, warms the page cache)

    return {**_devices_info(), "flax": version("flax"), "optax": version("optax")}


CHILDREN = {
    ("mlp", "hand"): child_mlp_hand,
    ("mlp", "dp"): child_mlp_kd,
    ("mlp", "fsdp"): child_mlp_kd,
    ("lm", "hand"): child_lm_hand,
    ("lm", "kd"): child_lm_kd,
    ("lm", "kd1"): child_lm_kd,
    ("probe", "probe"): child_probe,
}


# ---------------------------------------------------------------------------------------------- the parent


def _child_env(cpu_devices: int | None) -> dict[str, str]:
    env = dict(_ENV)
    if cpu_devices is not None:
        env["JAX_PLATFORMS"] = "cpu"
        flags = [
            f for f in env.get("XLA_FLAGS", "").split() if "xla_force_host_platform_device_count" not in f
        ]
        env["XLA_FLAGS"] = " ".join([*flags, f"--xla_force_host_platform_device_count={cpu_devices}"])
    return env


def spawn(spec: dict[str, Any], *, cpu_devices: int | None = None, timeout: float | None = None) -> dict:
    """One `--child` process: its JSON result, plus `wall_s` (from its start to its exit).

    Raises RuntimeError with the end of its output when it fails, or is killed after `timeout` seconds."""
    command = [sys.executable, __file__, "--child", json.dumps(spec)]
    name = f"{spec['part']} {spec['variant']}"
    with tempfile.TemporaryFile("w+") as out:
        start = time.time()
        env = {**_child_env(cpu_devices), _T0: repr(start)}
        try:
            proc = subprocess.run(command, stdout=out, stderr=out, env=env, timeout=timeout, check=False)
            problem = f"exit code {proc.returncode}" if proc.returncode else None
        except subprocess.TimeoutExpired:  # run() has killed it
            problem = f"killed after {timeout:.0f} s (--child-timeout)"
        wall = time.time() - start
        out.seek(0)
        output = out.read()
    lines = [line for line in output.splitlines() if line.startswith(_RESULT)]
    if problem or not lines:
        raise RuntimeError(f"{name} ({problem or 'no result'}):\n{output[-4000:]}")
    return {**json.loads(lines[-1][len(_RESULT) :]), "wall_s": wall}


def _try_spawn(spec: dict[str, Any], failures: dict[Any, str], key: Any, **kwargs: Any) -> dict | None:
    """`spawn`, or None after printing the failure (to stderr) and noting its last line under `key`."""
    try:
        return spawn(spec, **kwargs)
    except RuntimeError as e:
        lines = [line for line in str(e).splitlines()[1:] if line.strip() and not line.startswith("    @")]
        print("  FAILED " + "\n".join([str(e).splitlines()[0], *lines]), file=sys.stderr, flush=True)
        fatal = [line.split("] ", 1)[-1] for line in lines if line[:1] == "F" and line[1:5].isdigit()]
        why = (fatal or lines or [""])[-1]  # XLA's fatal log line (an abort), else the output's last line
        failures[key] = f"{str(e).splitlines()[0]} {why[:200]}"
        return None


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


def _medians(runs: list[dict[str, Any]], keys: list[str]) -> dict[str, float | None]:
    return {key: _median(runs, key) for key in keys}


def _fmt(value: float | None, fmt: str) -> str:
    return "n/a" if value is None else fmt.format(value)


def _ratio(value: float | None, reference: float | None, fmt: str = "{:.2f}") -> str:
    return "n/a" if value is None or not reference else fmt.format(value / reference)


def _flops_text(flops: float | None) -> str:
    if flops is None:
        return "n/a"
    return f"{flops / 1e12:.3f} TFLOP" if flops >= 1e11 else f"{flops / 1e9:.3f} GFLOP"


def _header(probe: dict[str, Any], what: str) -> None:
    print(f"scale_bench: {what}")
    print(
        f"jax {probe['jax']}, flax {probe['flax']}, optax {probe['optax']}, python {sys.version.split()[0]}; "
        f"default backend {probe['backend']}: {probe['device_count']} x {probe['device_kind']} "
        f"({os.cpu_count()} CPUs)"
    )
    print("command: " + shlex.join(["python", *sys.argv]))


def _variants(value: str, known: dict[str, str], flag: str) -> list[str]:
    asked = [v for v in value.split(",") if v]
    unknown = sorted(set(asked) - set(known))
    if unknown or not asked:
        expected = ", ".join(known)
        raise SystemExit(f"{flag}: unknown {', '.join(unknown) or '(none)'}; expected some of {expected}")
    return [v for v in known if v in asked]


def bench_devices(args: argparse.Namespace) -> None:
    counts = [int(n) for n in args.devices.split(",") if n]
    variants = _variants(args.variants, MLP_VARIANTS, "--variants")
    steps, sync = args.steps, args.sync_every
    if steps <= MLP_WINDOW_START or steps % sync or MLP_WINDOW_START % sync:
        raise SystemExit(
            f"--steps {steps} --sync-every {sync}: steps must be above {MLP_WINDOW_START}, and both it and "
            f"{MLP_WINDOW_START} multiples of --sync-every"
        )
    bad = [n for n in counts if n < 1 or MLP_BATCH % n]
    if bad:
        raise SystemExit(f"--devices: {bad} do not divide the batch of {MLP_BATCH}")
    started = time.perf_counter()
    _header(spawn({"part": "probe", "variant": "probe"}), "(1) steps/s against simulated CPU devices")
    print(
        f"model: MLP {INPUTS} -> {HIDDEN} -> {HIDDEN} -> {CLASSES}, global batch {MLP_BATCH}, adam "
        f"{MLP_LEARNING_RATE}, {steps} steps, window steps {MLP_WINDOW_START}..{steps}, the loss read every "
        f"{sync} steps; children run with JAX_PLATFORMS=cpu "
        "XLA_FLAGS=--xla_force_host_platform_device_count=N (the devices share the CPUs)"
    )
    repeats = args.repeats or 3
    runs: dict[tuple[int, str], list[dict[str, Any]]] = {(n, v): [] for n in counts for v in variants}
    failures: dict[Any, str] = {}
    for repeat in range(repeats):
        for n in counts:
            for variant in variants:
                spec = {"part": "mlp", "variant": variant, "steps": steps, "sync_every": sync}
                result = _try_spawn(spec, failures, (n, variant), cpu_devices=n, timeout=args.child_timeout)
                if result is None:
                    continue
                if result["devices"] != n:
                    raise RuntimeError(f"asked for {n} simulated devices, the child saw {result['devices']}")
                runs[(n, variant)].append(result)
                specs = f", params {' '.join(result['param_specs'])}" if "param_specs" in result else ""
                print(
                    f"  run {repeat + 1}/{repeats} {n} dev {MLP_VARIANTS[variant]:<10} "
                    f"{result['steps_per_s']:.1f} steps/s ({result['cpu_us_per_step']:.0f} us CPU each), "
                    f"first step {result['first_step_s']:.2f} s, wall {result['wall_s']:.2f} s{specs}",
                    flush=True,
                )
    print()
    print(f"(1) {steps} steps, batch {MLP_BATCH} (median of {repeats} processes)")
    header = (
        f"{'devices':>7} {'variant':<10} {'steps/s':>9} {'x 1 dev':>8} {'x hand':>7} {'CPU us/step':>12} "
        f"{'first s':>8} {'wall s':>7} {'loss':>7}"
    )
    print(header)
    print("-" * len(header))
    keys = ["steps_per_s", "cpu_us_per_step", "first_step_s", "wall_s", "final_loss"]
    for n in counts:
        for variant in variants:
            name = MLP_VARIANTS[variant]
            if not runs[(n, variant)]:
                print(f"{n:>7} {name:<10} failed: {failures.get((n, variant), '')}")
                continue
            m = _medians(runs[(n, variant)], keys)
            one = _median(runs.get((1, variant), []), "steps_per_s")
            hand = _median(runs.get((n, "hand"), []), "steps_per_s")
            print(
                f"{n:>7} {name:<10} {m['steps_per_s']:>9.1f} {_ratio(m['steps_per_s'], one):>8} "
                f"{_ratio(m['steps_per_s'], hand):>7} {m['cpu_us_per_step']:>12.0f} "
                f"{m['first_step_s']:>8.2f} {m['wall_s']:>7.2f} {m['final_loss']:>7.4f}"
            )
    print(f"(1) took {time.perf_counter() - started:.0f} s")


def _peak_flops(peak_tflops: float | None, probe: dict[str, Any]) -> float | None:
    """FLOP/s of all the devices together: `--peak-tflops` per device, else PEAK_TFLOPS by device kind."""
    per_device = peak_tflops if peak_tflops else PEAK_TFLOPS.get(probe["device_kind"])
    return None if per_device is None else per_device * 1e12 * probe["device_count"]


def bench_lm(args: argparse.Namespace) -> None:
    overrides = {
        "batch": args.batch,
        "seq": args.seq,
        "vocab": args.vocab,
        "dtype": args.dtype,
        "param_dtype": args.param_dtype,
        "steps": args.lm_steps,
    }
    size = dataclasses.replace(
        LM_SIZES[args.lm_size], **{k: v for k, v in overrides.items() if v is not None}
    )
    repeats = args.repeats or size.repeats
    if size.steps <= size.log_every:
        raise SystemExit(f"--lm-steps {size.steps}: must be above the logging period {size.log_every}")
    variants = _variants(args.lm_variants, LM_VARIANTS, "--lm-variants")
    cpu_devices = args.lm_cpu_devices
    started = time.perf_counter()
    probe = spawn({"part": "probe", "variant": "probe"}, cpu_devices=cpu_devices)
    _header(probe, "(2) a transformer LM: the kd Trainer against a hand-written sharded loop")
    print(
        f"model: {args.lm_size}: d {size.d_model}, {size.layers} layers, {size.heads} heads, "
        f"vocab {size.vocab}, seq {size.seq}, batch {size.batch}, {'tied' if args.tied else 'untied'} head, "
        f"compute {size.dtype}, params {size.param_dtype}, attention {args.attention or 'xla'}, "
        f"adamw {LM_LEARNING_RATE}; {size.steps} steps, window steps {size.log_every}..{size.steps}"
        + (f"; {cpu_devices} simulated CPU devices" if cpu_devices else "")
    )
    peak = _peak_flops(args.peak_tflops, probe)
    spec = {
        "part": "lm",
        "steps": size.steps,
        "size": dataclasses.asdict(size),
        "tied": args.tied,
        "attention": args.attention,
    }
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    failures: dict[Any, str] = {}
    for repeat in range(repeats):
        for variant in variants:
            result = _try_spawn(
                {**spec, "variant": variant},
                failures,
                variant,
                cpu_devices=cpu_devices,
                timeout=args.child_timeout,
            )
            if result is None:
                continue
            runs[variant].append(result)
            print(
                f"  run {repeat + 1}/{repeats} {LM_VARIANTS[variant]:<11} {result['steps_per_s']:.2f} "
                f"steps/s ({result['cpu_us_per_step']:.0f} us CPU each), first step "
                f"{result['first_step_s']:.2f} s, wall {result['wall_s']:.2f} s, "
                f"loss {result['final_loss']:.4f}",
                flush=True,
            )
    done = [r for v in variants for r in runs[v]]
    print()
    if not done:
        print("(2) every run failed: " + "; ".join(f"{v}: {why}" for v, why in failures.items()))
        return
    flops = done[0]["model_flops_per_step"]
    xla = _median(runs.get("hand", []), "xla_flops_per_step")
    compared = f" ({xla / flops:.2f}x the model's)" if xla else ""
    print(
        f"(2) parameters {done[0]['n_params'] / 1e6:.2f}M, in matmuls N_matmul "
        f"{done[0]['n_matmul'] / 1e6:.2f}M; FLOPs per step: model (6 N_matmul B T + 12 L d T B T) "
        f"{_flops_text(flops)}, XLA's count of the hand step {_flops_text(xla)}{compared}"
    )
    source = "--peak-tflops" if args.peak_tflops else f"bfloat16 dense, {probe['device_kind']}"
    print(
        f"peak {_fmt(peak and peak / 1e12, '{:.0f} TFLOP/s')} ({source}"
        f"{'' if peak else ': unknown, so MFU is n/a'}); median of {repeats} processes"
    )
    header = (
        f"{'variant':<11} {'steps/s':>8} {'x hand':>7} {'tokens/s':>10} {'TFLOP/s':>8} {'MFU':>6} "
        f"{'mem GiB':>8} {'first s':>8} {'wall s':>7} {'loss':>7}"
    )
    print(header)
    print("-" * len(header))
    keys = ["steps_per_s", "peak_mem_gib", "first_step_s", "wall_s", "final_loss"]
    hand = _median(runs.get("hand", []), "steps_per_s")
    for variant in variants:
        name = LM_VARIANTS[variant]
        if not runs[variant]:
            print(f"{name:<11} failed: {failures.get(variant, '')}")
            continue
        m = _medians(runs[variant], keys)
        rate = m["steps_per_s"]
        achieved = flops * rate
        mfu = _fmt(peak and 100 * achieved / peak, "{:.1f}%")
        print(
            f"{name:<11} {rate:>8.2f} {_ratio(rate, hand, '{:.3f}'):>7} "
            f"{rate * size.batch * size.seq:>10.0f} {achieved / 1e12:>8.4g} {mfu:>6} "
            f"{_fmt(m['peak_mem_gib'], '{:.1f}'):>8} {m['first_step_s']:>8.2f} {m['wall_s']:>7.2f} "
            f"{m['final_loss']:>7.4f}"
        )
    print(f"(2) took {time.perf_counter() - started:.0f} s")


# ---------------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", default="1,2,4,8", help="(1): simulated device counts (default 1,2,4,8)")
    parser.add_argument("--steps", type=int, default=500, help="(1): steps per run, a multiple of 100 (500)")
    parser.add_argument("--variants", default="hand,dp,fsdp", help="(1): of hand, dp, fsdp (default all)")
    parser.add_argument(
        "--sync-every",
        type=int,
        default=10,
        help="(1): kd's log_metrics_every, and how often the hand loop reads its loss (default 10)",
    )
    parser.add_argument(
        "--repeats", type=int, help="processes per variant (default 3 for (1); (2): tiny 1, 166m 2)"
    )
    parser.add_argument("--lm", action="store_true", help="run (2), the transformer LM, instead of (1)")
    parser.add_argument("--lm-size", choices=sorted(LM_SIZES), default="tiny", help="(2): model size (tiny)")
    parser.add_argument("--lm-steps", type=int, help="(2): steps per run (the size's default)")
    parser.add_argument("--lm-variants", default="hand,kd", help="(2): of hand, kd, kd1 (default hand,kd)")
    parser.add_argument("--lm-cpu-devices", type=int, help="(2): simulate this many CPU devices instead")
    parser.add_argument("--batch", type=int, help="(2): global batch (the size's default)")
    parser.add_argument("--seq", type=int, help="(2): sequence length (the size's default)")
    parser.add_argument("--vocab", type=int, help="(2): vocabulary size (the size's default)")
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], help="(2): compute dtype")
    parser.add_argument("--param-dtype", choices=["float32", "bfloat16"], help="(2): parameter dtype")
    parser.add_argument("--tied", action="store_true", help="(2): the output head reuses the embedding")
    parser.add_argument(
        "--attention", choices=["xla", "cudnn"], default=None, help="(2): dot_product_attention's (xla)"
    )
    parser.add_argument("--peak-tflops", type=float, help="(2): peak TFLOP/s of one device, for MFU")
    parser.add_argument(
        "--child-timeout", type=float, default=900, help="seconds before a run is killed (default 900)"
    )
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="a smoke test, 1 process per variant: (1) --devices 2 --steps 120; (2) --lm-size tiny --lm-steps 20 --seq 32",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)  # one run, in a subprocess: its JSON spec
    args = parser.parse_args()
    if args.tiny:
        args.devices, args.steps, args.repeats = "2", MLP_WINDOW_START + 2 * args.sync_every, 1
        args.lm_size, args.lm_steps, args.seq = "tiny", 2 * LM_SIZES["tiny"].log_every, 32

    if args.child is not None:
        spec = json.loads(args.child)
        result = CHILDREN[(spec["part"], spec["variant"])](spec)
        print(_RESULT + json.dumps(result), flush=True)
        return
    if args.lm:
        bench_lm(args)
    else:
        bench_devices(args)


if __name__ == "__main__":
    main()
