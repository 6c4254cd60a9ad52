"""kd.data.py.DataSource (grain) against NumPy batches and kd.data.InMemoryPipeline: host examples/s.

    python3 -m hatch run python benchmarks/data_bench.py                           # 300 batches, best of 3
    python3 -m hatch run python benchmarks/data_bench.py --batches 100 --repeats 1   # a quick look
    python3 -m hatch run python benchmarks/data_bench.py --variants numpy,grain0     # some rows only
    python3 -m hatch run python benchmarks/data_bench.py --tiny    # 10 batches, 1 round, 1 warm-up: a smoke test

Workload: scikit-learn's bundled digits (`sklearn.datasets.load_digits`: 1797 8x8 images, values 0..16),
loaded once, as examples `{"image": uint8 (8, 8, 1), "label": int64}`; batches of 64, shuffled, seed 0, the
images mapped to float32 with `ValueRange(vrange=(0, 1))` (its default `in_vrange=(0, 255)`: x / 255,
clipped) and cropped at a random place to (6, 6, 1), one place per example. Every row yields the same kind
of batch, `{"image": float32 (64, 6, 6, 1), "label": int64 (64,)}`, but not the same examples or crops.
The rows:
  numpy:     the floor: a Python loop over the preloaded arrays, a permutation of the examples per epoch
             (`np.random.default_rng(0)`), each batch gathered with fancy indexing, then the value range
             and the crop vectorised over the batch (random offsets per example, one gather through
             `sliding_window_view`); an epoch's short last batch is dropped;
  inmemory:  `kd.data.InMemoryPipeline` (shuffle=True, seed=0) over the same arrays, which gathers the
             batch, then the same vectorised value range and crop in the loop (the pipeline has no
             transforms of its own);
  grain0:    `kd.data.py.DataSource` over the list of example dicts, `transforms=[kd.data.ValueRange(key=
             "image", vrange=(0, 1)), kd.data.py.RandomCrop(key="image", shape=(6, 6, 1))]`, batch_size=64,
             shuffle=True, seed=0, num_workers=0: each example read, transformed and batched one at a time
             in this process;
  grain2:    the same with num_workers=2: grain's worker processes make the batches (here on a machine
             with as many cores as the workers, the loop included).

How it is measured, for each row and each of `--repeats` rounds (interleaved numpy, inmemory, grain0,
grain2, numpy, ... so that a noisy neighbour hurts all alike), with `time.perf_counter`:
  start-up s:  from making the pipeline (a fresh one each round) through `it = iter(pipeline)` to the
               first `next(it)`: building grain's dataset, and starting the workers for grain2 (kd and
               kd.data.py are imported once before the rounds, and that time is printed on its own);
  then `--warmup` more batches, untimed (the workers' buffers fill), then `--batches` batches timed:
  examples/s:  `--batches * 64` over those seconds, the best round; `x numpy` is the ratio to the numpy
               row's (above 1 is faster). Start-up s is the shortest of the rounds; `1st round` is the first
               round's start-up (the first grain pipeline of the process also pays jax's first PRNG calls).
The grain iterator is closed (its workers stopped) after each round.

Times are wall clock on a shared machine: compare rows of one run, not runs of different days.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

BATCH_SIZE = 64
CROP = (6, 6, 1)
SEED = 0
VARIANTS = {
    "numpy": ("numpy", "preloaded arrays: shuffled gather + vectorised range & crop per batch"),
    "inmemory": ("kd InMemory", "kd.data.InMemoryPipeline gather + the same vectorised range & crop"),
    "grain0": ("kd.data.py w=0", "DataSource, ValueRange + RandomCrop per example, num_workers=0"),
    "grain2": ("kd.data.py w=2", "DataSource, ValueRange + RandomCrop per example, num_workers=2"),
}


def _digits() -> dict[str, np.ndarray]:
    """The digits as arrays: `image` uint8 `(1797, 8, 8, 1)`, `label` int64 `(1797,)`."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    return {
        "image": digits.images.astype(np.uint8)[..., None],
        "label": digits.target.astype(np.int64),
    }


def _transforms() -> list[Any]:
    import kd
    import kd.data.py

    return [
        kd.data.ValueRange(key="image", vrange=(0, 1)),
        kd.data.py.RandomCrop(key="image", shape=CROP),
    ]


def _range_and_crop(batch: dict[str, np.ndarray], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """`ValueRange(vrange=(0, 1))` (in_vrange (0, 255), clipped, float32) and a random crop per example,
    vectorised over the batch."""
    images = np.clip(np.asarray(batch["image"], dtype=np.float32) / np.float32(255.0), 0.0, 1.0)
    n, h, w, _ = images.shape
    rows = rng.integers(0, h - CROP[0] + 1, size=n)
    cols = rng.integers(0, w - CROP[1] + 1, size=n)
    windows = np.lib.stride_tricks.sliding_window_view(images, CROP, axis=(1, 2, 3))  # (n, 3, 3, 1, 6, 6, 1)
    return {"image": windows[np.arange(n), rows, cols, 0], "label": batch["label"]}


# ---------------------------------------------------------------------------------------------- the rows
# Each returns an iterator of batches; making it (and its first batch) is the start-up.


def _numpy_batches(data: dict[str, np.ndarray]) -> Iterator[dict[str, np.ndarray]]:
    rng = np.random.default_rng(SEED)
    images, labels = data["image"], data["label"]
    per_epoch = len(labels) // BATCH_SIZE
    while True:
        order = rng.permutation(len(labels))
        for i in range(per_epoch):
            rows = order[i * BATCH_SIZE : (i + 1) * BATCH_SIZE]
            yield _range_and_crop({"image": images[rows], "label": labels[rows]}, rng)


def _inmemory_batches(data: dict[str, np.ndarray]) -> Iterator[dict[str, np.ndarray]]:
    import kd

    pipeline = kd.data.InMemoryPipeline(loader=lambda: data, batch_size=BATCH_SIZE, shuffle=True, seed=SEED)
    rng = np.random.default_rng(SEED)
    for batch in pipeline:
        yield _range_and_crop(batch, rng)


def _grain(num_workers: int) -> Callable[[list[dict[str, Any]]], Any]:
    def make(examples: list[dict[str, Any]]) -> Any:
        import kd
        import kd.data.py

        pipeline = kd.data.py.DataSource(
            examples,
            transforms=_transforms(),
            batch_size=BATCH_SIZE,
            shuffle=True,
            seed=SEED,
            num_workers=num_workers,
        )
        return iter(pipeline)

    return make


def _check(batch: dict[str, Any], name: str) -> None:
    image, label = np.asarray(batch["image"]), np.asarray(batch["label"])
    expected = ((BATCH_SIZE, *CROP), np.float32, (BATCH_SIZE,), np.int64)
    if (image.shape, image.dtype, label.shape, label.dtype) != expected:
        raise SystemExit(
            f"{name}: unexpected batch image {image.shape} {image.dtype}, label {label.shape} {label.dtype}"
        )
    if image.min() < 0 or image.max() > 16 / 255 + 1e-6:
        raise SystemExit(f"{name}: image values outside [0, 16/255]: {image.min()}..{image.max()}")


def _run(
    variant: str, data: dict[str, np.ndarray], examples: list[dict[str, Any]], args: Any
) -> dict[str, float]:
    """One round: start-up, warm-up, then `args.batches` batches timed."""
    start = time.perf_counter()
    if variant == "numpy":
        it = _numpy_batches(data)
    elif variant == "inmemory":
        it = _inmemory_batches(data)
    else:
        it = _grain(int(variant.removeprefix("grain")))(examples)
    first = next(it)
    startup = time.perf_counter() - start
    _check(first, variant)
    try:
        for _ in range(args.warmup):
            next(it)
        start = time.perf_counter()
        for _ in range(args.batches):
            next(it)
        seconds = time.perf_counter() - start
    finally:
        close = getattr(it, "close", None)
        if close is not None:
            close()
        del it, first
        gc.collect()
    return {"startup_s": startup, "seconds": seconds, "examples_per_s": args.batches * BATCH_SIZE / seconds}


def bench(args: argparse.Namespace) -> None:
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"--variants: unknown {unknown}; of {', '.join(VARIANTS)}")
    start = time.perf_counter()
    import kd
    import kd.data.py  # noqa: F401

    import_s = time.perf_counter() - start  # not in any row's start-up
    data = _digits()
    examples = [{"image": image, "label": label} for image, label in zip(data["image"], data["label"])]
    print(
        f"digits: {len(examples)} examples, image {data['image'].shape[1:]} uint8 -> float32 {CROP}; "
        f"batch {BATCH_SIZE}, {args.warmup} warm-up + {args.batches} timed batches, best of {args.repeats}; "
        f"`import kd, kd.data.py` took {import_s:.2f} s (before the rounds, in no start-up)"
    )
    results: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    for repeat in range(args.repeats):
        for variant in variants:
            result = _run(variant, data, examples, args)
            results[variant].append(result)
            print(
                f"  round {repeat + 1}/{args.repeats} {variant:<9} start-up {result['startup_s']:7.3f} s, "
                f"{result['examples_per_s']:10.0f} examples/s",
                flush=True,
            )

    best = {v: max(rs, key=lambda r: r["examples_per_s"]) for v, rs in results.items()}
    print()
    header = f"{'pipeline':<15} {'start-up s':>10} {'1st round':>9} {'examples/s':>11} {'batches/s':>10} {'x numpy':>8}  what each batch is"
    print(header)
    print("-" * len(header))
    floor = best["numpy"]["examples_per_s"] if "numpy" in best else None
    for variant in variants:
        name, what = VARIANTS[variant]
        rate = best[variant]["examples_per_s"]
        ratio = f"{rate / floor:.4f}x" if floor else "-"
        print(
            f"{name:<15} {min(r['startup_s'] for r in results[variant]):>10.3f} {results[variant][0]['startup_s']:>9.3f} {rate:>11.0f} {rate / BATCH_SIZE:>10.1f} "
            f"{ratio:>8}  {what}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=300, help="timed batches per round (default 300)")
    parser.add_argument(
        "--repeats", type=int, default=3, help="rounds per pipeline, the best kept (default 3)"
    )
    parser.add_argument("--warmup", type=int, default=5, help="untimed batches after the first (default 5)")
    parser.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help=f"of {', '.join(VARIANTS)}, comma separated (default all)",
    )
    parser.add_argument("--tiny", action="store_true", help="--batches 10 --repeats 1 --warmup 1 (seconds)")
    args = parser.parse_args()
    if args.tiny:
        args.batches, args.repeats, args.warmup = 10, 1, 1
    if args.batches < 1 or args.repeats < 1 or args.warmup < 0:
        raise SystemExit("--batches and --repeats must be >= 1, --warmup >= 0")
    bench(args)


if __name__ == "__main__":  # grain's worker processes import this file again
    main()
