"""kontext vs Kauldron's kontext, side by side in one run.

The main row: resolving the keys of 20 losses / metrics (with their ``get_values`` signature checked)
against a context of ~1,000 leaves, the work a trainer does for every step. Other rows time the
pieces (lookups, parsing with a cold cache, flattening, a glob write) and the import.

Run: ``hatch run bench:python benchmarks/kontext_bench.py``. Times are the best of several repeats.
``--tiny``: each row timed once, one import run (a smoke test of the same code, seconds; the numbers mean little).
"""

# No `from __future__ import annotations`: the loss classes below are annotated with a local `key`.
import argparse
import dataclasses
import os
import subprocess
import sys
import timeit
from collections.abc import Callable
from typing import Any

import kontext
import kontext._parser as kontext_parser
import numpy as np

try:
    from kauldron import kontext as kauldron_kontext
except Exception as error:
    kauldron_kontext = None
    KAULDRON_ERROR = f"{type(error).__name__}: {error}"
else:
    KAULDRON_ERROR = ""


def make_context() -> dict[str, Any]:
    """~1,000 leaves: a batch, model outputs with intermediates, and a params tree."""
    rng = np.random.default_rng(0)
    batch = {
        "image": rng.normal(size=(8, 16, 16, 3)).astype(np.float32),
        "label": rng.integers(0, 10, size=(8,)),
        "mask": np.ones((8,), np.float32),
        "depth": rng.normal(size=(8, 16, 16, 1)),
        "segmentation": rng.integers(0, 5, size=(8, 16, 16)),
        "boxes": rng.normal(size=(8, 4, 4)),
        "meta": {"id": np.arange(8), "weight": np.ones(8)},
    }
    preds = {
        "logits": rng.normal(size=(8, 10)),
        "depth": rng.normal(size=(8, 16, 16, 1)),
        "segmentation": rng.normal(size=(8, 16, 16, 5)),
        "boxes": rng.normal(size=(8, 4, 4)),
        "embedding": rng.normal(size=(8, 32)),
        "aux": [rng.normal(size=(8, 10)) for _ in range(3)],
    }
    params = {
        f"block_{b}": {
            f"layer_{i}": {"kernel": np.zeros((2, 2)), "bias": np.zeros(2), "scale": np.ones(2)}
            for i in range(20)
        }
        for b in range(16)
    }
    interms = {f"block_{b}": {"__call__": [np.zeros((8, 4))]} for b in range(16)}
    context = {"batch": batch, "preds": preds, "params": params, "interms": interms, "step": 0}
    return context


# (name, {key: path or None}); the first 10 read batch/preds, the rest reach deeper, use indices and slices.
KEYS: list[tuple[str, dict[str, Any]]] = [
    ("xent", {"logits": "preds.logits", "labels": "batch.label", "mask": "batch.mask"}),
    ("accuracy", {"logits": "preds.logits", "labels": "batch.label", "mask": None}),
    ("l2_depth", {"preds": "preds.depth", "targets": "batch.depth", "mask": None}),
    ("l1_depth", {"preds": "preds.depth", "targets": "batch.depth", "mask": "batch.mask"}),
    ("seg_xent", {"logits": "preds.segmentation", "labels": "batch.segmentation", "mask": None}),
    ("miou", {"logits": "preds.segmentation", "labels": "batch.segmentation", "mask": "batch.mask"}),
    ("box_l1", {"preds": "preds.boxes", "targets": "batch.boxes", "mask": None}),
    ("giou", {"preds": "preds.boxes", "targets": "batch.boxes", "mask": "batch.mask"}),
    ("aux0", {"logits": "preds.aux[0]", "labels": "batch.label", "mask": None}),
    ("aux_last", {"logits": "preds.aux[-1]", "labels": "batch.label", "mask": "batch.mask"}),
    ("weighted", {"logits": "preds.logits", "labels": "batch.label", "mask": "batch.meta.weight"}),
    ("embed_norm", {"preds": "preds.embedding", "targets": "batch.meta.id", "mask": None}),
    (
        "kernel_l2_0",
        {"preds": "params.block_0.layer_0.kernel", "targets": "params.block_0.layer_1.kernel", "mask": None},
    ),
    (
        "kernel_l2_15",
        {
            "preds": "params.block_15.layer_19.kernel",
            "targets": "params.block_15.layer_18.kernel",
            "mask": None,
        },
    ),
    (
        "bias_l2",
        {"preds": "params.block_7.layer_3.bias", "targets": "params.block_7.layer_4.bias", "mask": None},
    ),
    (
        "scale_l2",
        {"preds": "params.block_9.layer_9.scale", "targets": "params.block_9.layer_10.scale", "mask": None},
    ),
    ("interm_0", {"preds": "interms.block_0.__call__[0]", "targets": "batch.meta.weight", "mask": None}),
    ("interm_5", {"preds": "interms.block_5.__call__[0][..., :2]", "targets": "batch.meta.id", "mask": None}),
    ("image_stats", {"preds": "batch.image[0]", "targets": "batch.image[-1]", "mask": "batch.mask"}),
    ("label_hist", {"logits": "preds.aux[1]", "labels": "batch.label", "mask": None}),
]


def make_keyed_objects(key: Any, required: str) -> list[Any]:
    """20 loss / metric objects annotated with the given library's ``Key``."""

    @dataclasses.dataclass
    class Classification:
        logits: key = required
        labels: key = required
        mask: key | None = None

        def get_values(self, logits, labels, mask=None):
            return logits, labels, mask

    @dataclasses.dataclass
    class Regression:
        preds: key = required
        targets: key = required
        mask: key | None = None

        def get_values(self, preds, targets, mask=None):
            return preds, targets, mask

    objects = []
    for _, paths in KEYS:
        cls = Classification if "logits" in paths else Regression
        objects.append(cls(**paths))
    return objects


def best_time(fn: Callable[[], Any], number: int, repeat: int = 7) -> float:
    """Best seconds per call."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def import_time(statement: str, runs: int = 5) -> float:
    """Best wall time of ``statement`` in a fresh interpreter, in seconds.

    A first run writes bytecode caches (even if PYTHONDONTWRITEBYTECODE is set here), as an installed
    package has them; the best of the next `runs` runs is kept.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def run(code: str) -> float:
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)",
            ],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        return float(proc.stdout.strip().splitlines()[-1])

    run(statement)
    return min(run(statement) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="time each row once: a smoke test (seconds)")
    args = parser.parse_args()
    repeat, import_runs = (1, 1) if args.tiny else (7, 5)
    context = make_context()
    n_leaves = len(kontext.flatten_with_path(context))
    paths = [p for _, keys in KEYS for p in keys.values() if p is not None]
    unique_paths = sorted(set(paths))
    ours_objs = make_keyed_objects(kontext.Key, kontext.REQUIRED)

    def ours_resolve() -> None:
        for obj in ours_objs:
            kontext.resolve_from_keyed_obj(context, obj, func=obj.get_values)

    def ours_lookup() -> None:
        for p in paths:
            kontext.get_by_path(context, p)

    def ours_parse_cold() -> None:
        kontext_parser._CACHE.clear()
        for p in unique_paths:
            kontext.Path.from_str(p)

    def ours_flatten() -> None:
        kontext.flatten_with_path(context)

    def ours_glob_set() -> None:
        kontext.set_by_path(context["params"], "**.bias", 0.0)

    typo = dataclasses.replace(ours_objs[13], preds="params.block_15.layer_19.kernal")

    def ours_error() -> None:
        try:
            kontext.resolve_from_keyed_obj(context, typo, func=typo.get_values)
        except KeyError:
            pass

    if kauldron_kontext is not None:
        kd_objs = make_keyed_objects(kauldron_kontext.Key, kauldron_kontext.REQUIRED)

        def kd_resolve() -> None:
            for obj in kd_objs:
                kauldron_kontext.resolve_from_keyed_obj(context, obj, func=obj.get_values)

        def kd_lookup() -> None:
            for p in paths:
                kauldron_kontext.get_by_path(context, p)

        def kd_parse() -> None:
            for p in unique_paths:
                kauldron_kontext.Path.from_str(p)

        def kd_flatten() -> None:
            kauldron_kontext.flatten_with_path(context)

        def kd_glob_set() -> None:
            kauldron_kontext.set_by_path(context["params"], "**.bias", 0.0)

        kd_typo = dataclasses.replace(kd_objs[13], preds="params.block_15.layer_19.kernal")

        def kd_error() -> None:
            try:
                kauldron_kontext.resolve_from_keyed_obj(context, kd_typo, func=kd_typo.get_values)
            except KeyError:
                pass

        # Same answers before timing anything.
        for ours, theirs in zip(ours_objs, kd_objs, strict=True):
            a = kontext.resolve_from_keyed_obj(context, ours, func=ours.get_values)
            b = kauldron_kontext.resolve_from_keyed_obj(context, theirs, func=theirs.get_values)
            assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a), (ours, a, b)
        assert sorted(kontext.set_by_path(context["params"], "**.bias", 0.0)) == sorted(
            kauldron_kontext.set_by_path(context["params"], "**.bias", 0.0)
        )
        # Paths written by Kauldron read back the same leaves with kontext (switching keeps configs working).
        for path, leaf in kauldron_kontext.flatten_with_path(context).items():
            assert kontext.get_by_path(context, path) is leaf, path
    else:
        kd_resolve = kd_lookup = kd_parse = kd_flatten = kd_glob_set = kd_error = None  # type: ignore[assignment]

    rows: list[tuple[str, Callable[[], Any], Callable[[], Any] | None, int]] = [
        (f"resolve keys of 20 losses/metrics ({n_leaves}-leaf context)", ours_resolve, kd_resolve, 50),
        (f"get_by_path x{len(paths)}", ours_lookup, kd_lookup, 50),
        (f"parse {len(unique_paths)} distinct paths (kontext: cold cache)", ours_parse_cold, kd_parse, 10),
        (f"flatten_with_path ({n_leaves} leaves)", ours_flatten, kd_flatten, 5),
        ("set_by_path '**.bias' (320 matches)", ours_glob_set, kd_glob_set, 5),
        ("a mistyped key: error with suggestions", ours_error, kd_error, 3),
    ]

    print(f"kontext {kontext.__version__} vs Kauldron kontext", end="")
    print(f" ({KAULDRON_ERROR})" if KAULDRON_ERROR else "")
    header = f"{'operation':<58} {'kontext':>12} {'kauldron':>12} {'speedup':>9}"
    print(header)
    print("-" * len(header))
    for name, ours, theirs, number in rows:
        number = 1 if args.tiny else number
        t_ours = best_time(ours, number, repeat)
        if theirs is None:
            print(f"{name:<58} {_fmt(t_ours):>12} {'n/a':>12} {'n/a':>9}")
            continue
        t_theirs = best_time(theirs, number, repeat)
        print(f"{name:<58} {_fmt(t_ours):>12} {_fmt(t_theirs):>12} {t_theirs / t_ours:>8.1f}x")

    t_import_ours = import_time("import kontext", import_runs)
    t_import_full = import_time("import kontext; kontext.Key; kontext.path_builder_from", import_runs)
    line = f"{'import kontext (fresh interpreter)':<58} {_fmt(t_import_ours):>12}"
    if kauldron_kontext is not None:
        t_import_kd = import_time("from kauldron import kontext", import_runs)
        print(f"{line} {_fmt(t_import_kd):>12} {t_import_kd / t_import_ours:>8.1f}x")
        print(
            f"{'import kontext + Key + path_builder_from':<58} {_fmt(t_import_full):>12} {_fmt(t_import_kd):>12} "
            f"{t_import_kd / t_import_full:>8.1f}x"
        )
    else:
        print(line)


def _fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


if __name__ == "__main__":
    main()
