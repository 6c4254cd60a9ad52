"""`import kd` is cheap and gives Kauldron's namespaces and names, loaded on first use."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

KAULDRON_NAMES = {
    "train": ["Trainer", "TrainState", "TrainStep", "Context", "RngStream", "RngStreams", "ROOT_CFG_REF"],
    "losses": [
        "L1",
        "L2",
        "Huber",
        "SoftmaxCrossEntropy",
        "SoftmaxCrossEntropyWithIntLabels",
        "SigmoidBinaryCrossEntropy",
    ],
    "metrics": [
        "Accuracy",
        "Precision1",
        "Norm",
        "Std",
        "TreeMap",
        "TreeReduce",
        "SkipIfMissing",
        "AverageState",
    ],
    "summaries": ["ShowImages", "Histogram"],
    "data": ["InMemoryPipeline"],
    "ckpts": ["Checkpointer"],
    "evals": ["Evaluator", "EveryNSteps", "Once"],
    "nn": ["ExternalModule", "FlatAutoencoder", "train_property"],
    "sharding": ["ShardingStrategy", "FIRST_DIM", "REPLICATED"],
}


def test_import_kd_imports_no_jax_and_loads_a_namespace_on_first_use() -> None:
    code = (
        "import json, sys, kd\n"
        "before = sorted(m for m in ('jax', 'flax', 'optax', 'orbax') if m in sys.modules)\n"
        "kd.train\n"
        "after = 'jax' in sys.modules and 'kd.train' in sys.modules\n"
        "print(json.dumps([before, after]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [[], True]


@pytest.mark.parametrize("namespace", sorted(KAULDRON_NAMES))
def test_namespace_has_kauldrons_names(namespace: str) -> None:
    import kd

    module = getattr(kd, namespace)
    missing = [name for name in KAULDRON_NAMES[namespace] if not hasattr(module, name)]
    assert missing == []
    assert set(KAULDRON_NAMES[namespace]) <= set(module.__all__)


def test_from_kd_import_kd_is_kauldrons_spelling() -> None:
    import kd
    from kd import kd as kd_again

    assert kd_again is kd


def test_unknown_namespace_is_an_attribute_error() -> None:
    import kd

    with pytest.raises(AttributeError, match="no attribute 'trian'"):
        kd.trian  # noqa: B018


def test_importing_every_namespace_starts_no_jax_backend():
    # On several hosts `jax.distributed.initialize` must come before any backend starts, and the config is
    # loaded (its imports run) first: a module-level `jnp.array(...)` anywhere in kd breaks multi-host runs.
    code = (
        "import jax._src.xla_bridge as xb, kd\n"
        "for name in sorted(kd._NAMESPACES): __import__('kd.' + name)\n"
        "import kd.data.py, kd.data.iters\n"
        "assert not xb.backends_are_initialized(), 'importing kd started a JAX backend'\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr[-2000:]
