"""kd.export: a trained Trainer's model exported with `jax.export`, loaded back and run without its code."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jax
import kd
import numpy as np
import pytest
import train_fixtures as lib


def _trained(**fields) -> tuple[kd.train.Trainer, kd.train.TrainState]:
    trainer = lib.make_trainer(**fields)
    state, _ = trainer.train()
    return trainer, state


def _eval_preds(trainer: kd.train.Trainer, state: kd.train.TrainState, batch: dict) -> np.ndarray:
    context = trainer.trainstep.forward(state.params, state.collections, batch, state.step, is_training=False)
    return np.asarray(context.preds)


def _export(trainer, state, workdir: Path, *, is_training: bool = False, **fields) -> str:
    exporter = kd.export.JaxModelExporter(workdir=os.fspath(workdir), **fields)
    return kd.export.export_model(trainer, state, exporter=exporter, is_training=is_training)


@pytest.fixture(scope="module")
def trained() -> tuple[kd.train.Trainer, kd.train.TrainState]:
    return _trained()


@pytest.fixture(scope="module")
def folder(trained, tmp_path_factory) -> str:
    return _export(*trained, tmp_path_factory.mktemp("export"))


def test_exported_model_runs_in_a_fresh_process_without_the_model_code(trained, folder, tmp_path):
    trainer, state = trained
    batch = lib.Regression(batch_size=5, seed=3).batch(0)  # a batch size the model was not trained on
    np.save(tmp_path / "x.npy", batch["x"])
    script = (
        "import json, sys\n"
        "import numpy as np\n"
        "from kd.export import load_exported\n"
        f"model = load_exported({folder!r})\n"
        f"out = model(x=np.load({str(tmp_path / 'x.npy')!r}))\n"
        f"np.save({str(tmp_path / 'preds.npy')!r}, np.asarray(out['preds']))\n"
        "loaded = ['flax', 'optax', 'kd.train', 'kd.export._exporter', 'train_fixtures']\n"
        "print(json.dumps([m for m in loaded if m in sys.modules]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
    np.testing.assert_allclose(np.load(tmp_path / "preds.npy"), _eval_preds(trainer, state, batch), atol=1e-6)


def test_folder_holds_the_serialization_the_variables_and_the_signature(folder):
    assert sorted(os.listdir(folder)) == ["exported.bin", "signature.json", "variables.npz"]
    assert folder.endswith("train_model.jax_exported")
    signature = json.loads(Path(folder, "signature.json").read_text())
    assert signature["inputs"] == {"x": {"key": "batch.x", "shape": ["b", 2], "dtype": "float32"}}
    assert signature["model"] == "Mlp" and signature["is_training"] is False
    assert signature["platforms"] == ["cpu", "tpu"]


def test_loaded_variables_are_the_trained_ones(trained, folder):
    _, state = trained
    model = kd.export.load_exported(folder)
    jax.tree.map(np.testing.assert_array_equal, model.params, jax.device_get(state.params))


def test_a_batch_is_read_by_the_models_keys(trained, folder):
    trainer, state = trained
    model = kd.export.load_exported(folder)
    batch = lib.Regression(batch_size=3).batch(1)
    out = model(batch)  # `y` is not an input: it is left out
    np.testing.assert_allclose(out["preds"], _eval_preds(trainer, state, batch), atol=1e-6)
    assert out["interms"]["hidden"]["__call__"][0].shape == (3, 16)


def test_it_is_called_as_a_kauldron_export(trained, folder):
    trainer, state = trained
    exported = jax.export.deserialize(bytearray(Path(folder, "exported.bin").read_bytes()))
    batch = lib.Regression(batch_size=2).batch(0)
    out = exported.call(params=state.params, collections={}, key=jax.random.PRNGKey(0), x=batch["x"])
    np.testing.assert_allclose(out["preds"], _eval_preds(trainer, state, batch), atol=1e-6)


def test_wrong_inputs_are_named(folder):
    model = kd.export.load_exported(folder)
    with pytest.raises(TypeError, match=r"expected the inputs \['x'\]; missing \['x'\], unknown \['image'\]"):
        model(image=np.zeros((2, 2), np.float32))


def test_collections_are_exported_and_used_in_eval_mode(tmp_path):
    trainer, state = _trained(model=lib.BatchNormed())
    model = kd.export.load_exported(_export(trainer, state, tmp_path))
    assert set(model.collections) == {"batch_stats"}
    batch = lib.Regression(batch_size=4, seed=1).batch(0)
    np.testing.assert_allclose(model(batch)["preds"], _eval_preds(trainer, state, batch), atol=1e-5)


def test_an_nnx_model_is_exported(tmp_path):
    trainer, state = _trained(model=functools.partial(lib.NnxMlp, din=2, dout=1))
    model = kd.export.load_exported(_export(trainer, state, tmp_path))
    assert model.signature["model"] == "NnxMlp"
    batch = lib.Regression(batch_size=6).batch(2)
    out = model(batch)
    np.testing.assert_allclose(out["preds"], _eval_preds(trainer, state, batch), atol=1e-6)
    assert out["interms"]["h"][0].shape == (6, 16)  # what the module sows


def test_a_model_without_keys_takes_the_batch(tmp_path):
    trainer, state = _trained(model=lib.TakesBatch())
    model = kd.export.load_exported(_export(trainer, state, tmp_path))
    assert model.input_names == ["batch"]
    batch = lib.Regression(batch_size=3).batch(0)
    np.testing.assert_allclose(model(batch=batch)["preds"], _eval_preds(trainer, state, batch), atol=1e-6)


def test_training_mode_folds_the_callers_key_into_the_streams(tmp_path):
    trainer, state = _trained(model=lib.DropoutKwarg())
    model = kd.export.load_exported(_export(trainer, state, tmp_path, name="train_mode", is_training=True))
    x = np.ones((16, 2), np.float32)
    first = np.asarray(model(x=x, key=np.array([0, 1], np.uint32))["preds"])
    assert set(np.unique(first)) <= {0.0, 2.0} and 0.0 in first  # dropout at rate 0.5 is on
    np.testing.assert_array_equal(model(x=x, key=np.array([0, 1], np.uint32))["preds"], first)
    assert not np.array_equal(model(x=x, key=np.array([0, 2], np.uint32))["preds"], first)


def test_noop_exporter_writes_nothing(trained, tmp_path):
    trainer, state = trained
    exporter = kd.export.NoopExporter(workdir=os.fspath(tmp_path))
    assert kd.export.export_model(trainer, state, exporter=exporter) is None
    assert os.listdir(tmp_path) == []


def test_an_exporter_outside_a_trainer_needs_its_workdir(trained):
    trainer, state = trained
    exporter = kd.export.JaxModelExporter(rng_streams=kd.train.RngStreams(seed=0))
    with pytest.raises(kd.train.ConfigError, match=r"JaxModelExporter\.workdir: still ROOT_CFG_REF\.workdir"):
        exporter.export(
            model=trainer.model, state=state, element_spec=trainer.element_spec, is_training=False
        )


def test_an_exporter_with_its_fields_given_exports_without_a_trainer(trained, tmp_path):
    trainer, state = trained
    exporter = kd.export.JaxModelExporter(
        workdir=os.fspath(tmp_path), rng_streams=kd.train.RngStreams(seed=0), platforms=("cpu",)
    )
    folder = exporter.export(
        model=lib.Mlp(), state=state, element_spec=trainer.element_spec, is_training=False
    )
    batch = lib.Regression(batch_size=2).batch(0)
    out = kd.export.load_exported(folder)(batch)
    np.testing.assert_allclose(out["preds"], _eval_preds(trainer, state, batch), atol=1e-6)


def test_a_folder_without_a_signature_is_not_loaded(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"holds no signature\.json"):
        kd.export.load_exported(tmp_path)


def test_kd_export_lists_kauldrons_names():
    for name in ("ModelExporter", "JaxModelExporter", "NoopExporter"):
        assert name in kd.export.__all__ and hasattr(kd.export, name)


def test_an_export_for_another_platform_says_so_when_called(trained, tmp_path):
    other = "cuda" if jax.devices()[0].platform == "tpu" else "tpu"  # a platform this process lacks
    folder = _export(*trained, tmp_path, platforms=(other,))
    model = kd.export.load_exported(folder)  # loading needs no such device
    with pytest.raises(ValueError, match=rf"exported for \['{other}'\], but this process runs on"):
        model(x=np.zeros((2, 2), np.float32))


def test_exporting_again_replaces_the_folder(tmp_path):
    first_trainer, first_state = _trained(num_train_steps=1)
    trainer, state = _trained()
    _export(first_trainer, first_state, tmp_path)
    model = kd.export.load_exported(_export(trainer, state, tmp_path))
    batch = lib.Regression(batch_size=2).batch(0)
    np.testing.assert_allclose(model(batch)["preds"], _eval_preds(trainer, state, batch), atol=1e-6)


def test_export_model_writes_into_the_trainers_workdir(tmp_path):
    trainer, state = _trained(workdir=os.fspath(tmp_path))
    folder = kd.export.export_model(trainer, state)
    assert folder == os.path.join(os.fspath(tmp_path), "train_model.jax_exported")
    assert kd.export.load_exported(folder).signature["platforms"] == ["cpu", "tpu"]


def test_a_batch_is_read_at_each_inputs_key_path_as_kontext_parses_it(trained, folder, tmp_path):
    trainer, state = trained
    moved = tmp_path / "moved"
    shutil.copytree(folder, moved)
    signature = json.loads((moved / "signature.json").read_text())
    signature["inputs"]["x"]["key"] = "batch.obs['x.y']"  # a key with a dot in it, nested
    (moved / "signature.json").write_text(json.dumps(signature))
    model = kd.export.load_exported(moved)
    batch = lib.Regression(batch_size=3).batch(1)
    out = model({"obs": {"x.y": batch["x"]}})
    np.testing.assert_allclose(out["preds"], _eval_preds(trainer, state, batch), atol=1e-6)
    with pytest.raises(KeyError, match=r"input .*x.* reads .batch\.obs.*which the batch does not hold"):
        model({"obs": {"x": batch["x"]}})
