"""Start-up: how soon `kd-train` trains its first step, and says a finished run is complete, against a hand loop.

    python3 -m hatch run python benchmarks/startup_bench.py           # median of 3 of each
    python3 -m hatch run python benchmarks/startup_bench.py --tiny    # one of each: a smoke test

The default example (`examples/mlp_regression.py`: an MLP of 32-32-1 on 4096 synthetic rows, batch 64, adam
with a warm-up cosine schedule) started from the command line, each in a fresh process:
  hand:      a hand-written jitted flax+optax loop of the same model, data and optimizer (`python -c`),
             from the process start to the end of its first update;
  kd cold:   `kd-train --cfg=examples/mlp_regression.py` in a new workdir with an empty compilation cache
             folder, from the process start to its `step 1` line (printed once step 1's loss is read);
  kd warm:   the same command in another new workdir, the cache now holding what kd cold compiled;
  complete:  the same command again on kd cold's finished workdir, to the end of the process ("run already
             complete ...").
Prints each one's median seconds and its ratio to the hand loop's (kd warm also to kd cold's).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "JAX_COMPILATION_CACHE_DIR")}

HAND = """
import time, numpy as np, jax, jax.numpy as jnp, optax
from flax import linen as nn
rng = np.random.default_rng(0)
x = rng.uniform(-1.0, 1.0, size=(4096, 2)).astype(np.float32)
y = (np.sin(3 * x[:, :1]) + 0.5 * x[:, 1:2] + 0.01 * rng.normal(size=(4096, 1))).astype(np.float32)
data = jax.device_put({"x": x, "y": y})
model = nn.Sequential([nn.Dense(32), nn.relu, nn.Dense(32), nn.relu, nn.Dense(1)])
schedule = optax.warmup_cosine_decay_schedule(init_value=0.0, peak_value=3e-3, warmup_steps=20, decay_steps=400)
optimizer = optax.adam(schedule)

@jax.jit
def init(key):
    params = model.init(key, jnp.zeros((64, 2)))["params"]
    return params, optimizer.init(params)

def train_step(state, rows):
    params, opt_state = state
    batch = jax.tree.map(lambda a: a[rows], data)
    def loss_fn(p):
        return jnp.mean((model.apply({"params": p}, batch["x"]) - batch["y"]) ** 2)
    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return (optax.apply_updates(params, updates), opt_state), loss

step = jax.jit(train_step, donate_argnums=0)
state, loss = step(init(jax.random.key(0)), np.arange(64, dtype=np.int32))
float(loss)
print("FIRST_STEP", time.time())
"""


def _first_step_hand() -> float:
    start = time.time()
    out = subprocess.run([sys.executable, "-c", HAND], capture_output=True, text=True, env=ENV, check=True)
    line = next(line for line in out.stdout.splitlines() if line.startswith("FIRST_STEP"))
    return float(line.split()[1]) - start


def _kd_train(workdir: Path, cache: Path, *, until: str | None) -> float:
    """Seconds from starting `kd-train` to the first output line starting with `until` (None: its end)."""
    command = [KD_TRAIN, "--cfg=examples/mlp_regression.py", f"--cfg.workdir={workdir}"]
    env = {**ENV, "KD_COMPILATION_CACHE": str(cache)}
    start = time.time()
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen, output = None, []
    for line in proc.stdout:
        output.append(line)
        if seen is None and until is not None and line.startswith(until):
            seen = time.time() - start
    if proc.wait() != 0 or (until is not None and seen is None):
        raise RuntimeError(f"{' '.join(command)} (exit {proc.returncode}):\n{''.join(output)[-3000:]}")
    return seen if until is not None else time.time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="processes of each (default 3)")
    parser.add_argument("--tiny", action="store_true", help="one of each: a smoke test")
    args = parser.parse_args()
    repeats = 1 if args.tiny else args.repeats
    times: dict[str, list[float]] = {"hand": [], "kd cold": [], "kd warm": [], "complete": []}
    with tempfile.TemporaryDirectory(prefix="startup_bench_") as tmp:
        for repeat in range(repeats):
            base, cache = Path(tmp) / str(repeat), Path(tmp) / f"cache{repeat}"
            times["hand"].append(_first_step_hand())
            times["kd cold"].append(_kd_train(base / "cold", cache, until="step 1 "))
            times["kd warm"].append(_kd_train(base / "warm", cache, until="step 1 "))
            times["complete"].append(_kd_train(base / "cold", cache, until=None))
            print(f"  run {repeat + 1}/{repeats}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), flush=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print()
    print(f"start-up of examples/mlp_regression.py (median of {repeats}; seconds from the process start)")
    print(f"{'what':<33} {'seconds':>8} {'x hand':>7}")
    print("-" * 50)
    labels = {
        "hand": "hand loop: step 1 done",
        "kd cold": "kd-train: step 1 (cold cache)",
        "kd warm": "kd-train: step 1 (warm cache)",
        "complete": "kd-train: 'run already complete'",
    }
    for name, label in labels.items():
        print(f"{label:<33} {medians[name]:>8.2f} {medians[name] / medians['hand']:>7.2f}")
    print(f"warm / cold step 1: {medians['kd warm'] / medians['kd cold']:.2f}")


if __name__ == "__main__":
    main()
