#!/usr/bin/env bash
# One session on a borrowed accelerator machine (the `device` tool: a bare TPU v5e with its own JAX, no
# network): installs the stack beside the machine's JAX, then runs the phases asked for, writing to $OUT.
#
#   here:   PATH=$PATH:$(python3 -m hatch env find default)/bin bash benchmarks/device/tpu.sh --wheels
#           (builds kd's wheels with uv, downloads with the system's pip what the machine's index lacks)
#   there:  bash benchmarks/device/tpu.sh lane suite lm   # carry=[".whl-tpu"]
#
# Phases: lane (hatch run test-device's in-process suite), suite (benchmarks/model_suite.py; SUITE_ARGS adds its
# flags, e.g. --models=mlp,cnn or --variants=kd,kd1: 15 processes, ~6 min on a v5e), lm
# (benchmarks/lm_bench.py: examples/lm.py by kd-train beside a hand loop; LM_ARGS adds its flags), explore
# (lm_bench.py --explore: hand loops of batch / attention / remat choices), startup (benchmarks/startup_bench.py),
# vit (examples/digits_vit.py by kd-train, cold then again on the warm compilation cache: the time to step 1).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WHEELS="$ROOT/.whl-tpu"

if [[ "${1:-}" == "--wheels" ]]; then
  rm -rf "$WHEELS/ours" && mkdir -p "$WHEELS/ours"
  for package in konfig kontext ktyping kd-compat kd-train; do
    uv build -q --wheel "$ROOT/packages/$package" -o "$WHEELS/ours" || exit 1
  done
  # What the machine's own package index lacks (pure Python or manylinux wheels for CPython 3.11).
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 -d "$WHEELS" etils==1.15.0 grain==0.2.18 array-record==0.8.6 \
    dm-tree==0.1.10 cloudpickle==3.1.3 tensorboardX==2.6.5 more-itertools==11.2.1 portpicker wrapt flatbuffers \
    || { echo 'pip download failed: run this outside hatch (python3 with pip), uv on PATH'; exit 1; }
  ls "$WHEELS" "$WHEELS/ours"
  exit 0
fi

OUT="${OUT:-/tmp/out}"
mkdir -p "$OUT"
SITE=/tmp/site
export PYTHONUNBUFFERED=1
started=$(date +%s)
# From the machine's index (with what they need), then the carried wheels without their needs (a warm
# machine keeps the index's packages from an earlier call; kd's own are installed again: they change).
[[ -d "$SITE/index" ]] || for name in flax optax orbax-checkpoint scikit-learn matplotlib tensorboard tqdm einops absl-py protobuf \
  attrs fsspec importlib_resources zipp typing_extensions packaging pillow humanize msgpack rich treescope \
  simplejson tensorstore aiofiles psutil pyyaml nest_asyncio toolz; do
  PIP_CONFIG_FILE=/dev/null python3 -m pip install --isolated -q --only-binary=:all: --no-compile \
    --index-url file:///opt/pypi/simple --target "$SITE/index" "$name" >/dev/null 2>&1 || echo "index: no $name"
done
PIP_CONFIG_FILE=/dev/null python3 -m pip install --isolated -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target "$SITE/ours" "$WHEELS"/*.whl "$WHEELS"/ours/*.whl || exit 1
# Bytecode, compiled once here in parallel: without it every process compiles each module it imports again
# (3.3 s of a 13 s start on the v5e), which start-up figures would count.
python3 -m compileall -q -j 0 "$SITE/ours" "$SITE/index" >/dev/null 2>&1
unset PYTHONDONTWRITEBYTECODE
# The machine's JAX first, then kd and the carried wheels, then the index's packages.
export PYTHONPATH="${PYTHONPATH:-}:$SITE/ours:$SITE/index"
export PATH="$PATH:$SITE/ours/bin"
echo "installed in $(( $(date +%s) - started )) s"
python3 -c "import jax, flax, optax, kd, grain; print('jax', jax.__version__, jax.devices(), 'flax', flax.__version__, 'optax', optax.__version__)" 2>&1 | tail -3

for phase in "$@"; do
  echo "=== $phase ($(date +%T))"
  case "$phase" in
    lane|lane1|lane2) # the whole lane (~8 min on a v5e), or its half 1 or 2 (one call each, under the 10-minute limit)
      part=${phase#lane}; shard=${part:+--shard=$part/2}
      timeout "${LANE_SECONDS:-570}" python3 tests/device_lane.py -q -rfE -p no:cacheprovider --durations=10 \
        $shard ${LANE_ARGS:-} 2>&1 | tee "$OUT/$phase.log" | tail -80 ;;
    suite) python3 benchmarks/model_suite.py --repeats "${REPEATS:-3}" --steps "${STEPS:-600}" ${SUITE_ARGS:-} 2>&1 | tee "$OUT/suite.log" | tail -40 ;;
    startup) python3 benchmarks/startup_bench.py 2>&1 | tee "$OUT/startup.log" | tail -12 ;;
    explore) python3 benchmarks/lm_bench.py --explore ${LM_ARGS:-} 2>&1 | tee "$OUT/explore.log" | tail -30 ;;
    lm) python3 benchmarks/lm_bench.py ${LM_ARGS:-} 2>&1 | tee "$OUT/lm.log" | tail -30 ;;
    vit) # examples/digits_vit.py through kd-train twice on one compilation cache: cold, then a rerun
      for run in cold warm; do
        KD_COMPILATION_CACHE=/tmp/vit-cache python3 -u -c '
import subprocess, sys, time
start = time.time()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
for line in proc.stdout:
    if line.startswith(("step ", "compiled", "done:")):
        print(f"{time.time() - start:6.1f}s  {line.rstrip()}", flush=True)
sys.exit(proc.wait())' kd-train --cfg=examples/digits_vit.py --cfg.workdir=/tmp/vit-$run \
          --cfg.num_train_steps=50 --cfg.evals.test.run.n=50 2>&1 | sed "s/^/$run /" | tee -a "$OUT/vit.log"
      done ;;
    *) echo "unknown phase $phase" ;;
  esac
done
