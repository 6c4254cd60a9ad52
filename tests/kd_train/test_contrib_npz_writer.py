"""kd.contrib.train.NpzWriter: the array summaries of each summary step, saved as `.npz` files and read back."""

from __future__ import annotations

import json
import warnings

import jax.numpy as jnp
import kd
import numpy as np
import pytest
import train_fixtures as lib
from etils import epath

NpzWriter = kd.contrib.train.NpzWriter


def _files(folder) -> list[str]:
    return sorted(path.name for path in epath.Path(folder).iterdir() if path.name.endswith(".npz"))


def _load(path) -> dict[str, np.ndarray]:
    with np.load(str(path)) as data:  # no pickle: every saved array reads back without allow_pickle
        return {name: data[name] for name in data.files}


# ---------------------------------------------------------------------------------------------- files


def test_a_summary_step_writes_one_file_named_by_the_step(tmp_path):
    writer = NpzWriter(output_dir=tmp_path / "out")
    embedding = np.arange(12, dtype=np.float32).reshape(3, 4)
    writer.write_summaries(100, {"summaries/embedding": embedding})
    writer.write_summaries(2000, {"summaries/embedding": embedding + 1})
    assert _files(tmp_path / "out") == ["000000100.npz", "000002000.npz"]
    np.testing.assert_array_equal(_load(tmp_path / "out" / "000000100.npz")["summaries/embedding"], embedding)
    np.testing.assert_array_equal(
        _load(tmp_path / "out" / "000002000.npz")["summaries/embedding"], embedding + 1
    )


def test_jax_arrays_are_saved_as_numpy_arrays(tmp_path):
    writer = NpzWriter(output_dir=tmp_path)
    writer.write_summaries(1, {"summaries/logits": jnp.ones((2, 5), jnp.float32)})
    loaded = _load(tmp_path / "000000001.npz")["summaries/logits"]
    assert loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, np.ones((2, 5)))


def test_texts_histograms_and_object_arrays_are_not_saved(tmp_path):
    writer = NpzWriter(output_dir=tmp_path)
    writer.write_summaries(
        1,
        {
            "summaries/kept": np.zeros(3),
            "summaries/text": "a caption",
            "summaries/number": 42,
            "summaries/histogram": kd.summaries.HistogramValue(values=np.arange(4.0), num_buckets=2),
            "summaries/objects": np.array([{"a": 1}], dtype=object),
        },
    )
    assert set(_load(tmp_path / "000000001.npz")) == {"summaries/kept"}


def test_key_patterns_keep_the_summaries_one_of_them_matches_part_of(tmp_path):
    writer = NpzWriter(output_dir=tmp_path, key_patterns=[r"layer\d+/embedding", "logits"])
    writer.write_summaries(
        5,
        {
            "summaries/layer0/embedding": np.ones(2),
            "summaries/layer12/embedding": np.ones(2),
            "summaries/logits": np.ones(2),
            "summaries/layerX/embedding": np.ones(2),
            "summaries/other": np.ones(2),
        },
    )
    assert set(_load(tmp_path / "000000005.npz")) == {
        "summaries/layer0/embedding",
        "summaries/layer12/embedding",
        "summaries/logits",
    }


def test_no_matching_array_writes_no_file(tmp_path):
    writer = NpzWriter(output_dir=tmp_path / "out", key_patterns=["nothing"])
    writer.write_summaries(5, {"summaries/logits": np.ones(2)})
    assert not (tmp_path / "out").exists()


def test_arrays_logged_later_at_the_same_step_join_its_file(tmp_path):
    writer = NpzWriter(output_dir=tmp_path)
    writer.write_summaries(7, {"summaries/a": np.zeros(1)})
    writer.write_summaries(7, {"summaries/b": np.ones(1)})
    assert set(_load(tmp_path / "000000007.npz")) == {"summaries/a", "summaries/b"}


def test_a_file_is_replaced_whole_with_no_temporary_file_left(tmp_path):
    writer = NpzWriter(output_dir=tmp_path)
    writer.write_summaries(3, {"summaries/a": np.zeros(1)})
    writer.write_summaries(3, {"summaries/a": np.ones(1)})
    assert [path.name for path in tmp_path.iterdir()] == ["000000003.npz"]
    np.testing.assert_array_equal(_load(tmp_path / "000000003.npz")["summaries/a"], np.ones(1))


# ---------------------------------------------------------------------------------------------- scalars


def test_save_scalars_adds_the_losses_and_metrics_of_the_same_step(tmp_path):
    writer = NpzWriter(output_dir=tmp_path, save_scalars=True)
    writer.write_scalars(10, {"losses/total": 0.5, "metrics/accuracy": 0.9})
    writer.write_summaries(10, {"summaries/logits": np.ones(2)})
    loaded = _load(tmp_path / "000000010.npz")
    assert set(loaded) == {"losses/total", "metrics/accuracy", "summaries/logits"}
    assert loaded["losses/total"].shape == ()
    np.testing.assert_allclose(loaded["metrics/accuracy"], 0.9)


def test_save_scalars_leaves_out_the_schedules_and_performance_values(tmp_path):
    writer = NpzWriter(output_dir=tmp_path, save_scalars=True)
    writer.write_scalars(10, {"losses/total": 0.5, "schedules/lr": 0.1, "perf/steps_per_sec": 30.0})
    writer.write_summaries(10, {"summaries/logits": np.ones(2)})
    assert set(_load(tmp_path / "000000010.npz")) == {"losses/total", "summaries/logits"}


def test_scalars_are_left_out_by_default(tmp_path):
    writer = NpzWriter(output_dir=tmp_path)
    writer.write_scalars(10, {"losses/total": 0.5})
    writer.write_summaries(10, {"summaries/logits": np.ones(2)})
    assert set(_load(tmp_path / "000000010.npz")) == {"summaries/logits"}


def test_scalars_of_an_earlier_step_are_not_saved_with_a_later_one(tmp_path):
    writer = NpzWriter(output_dir=tmp_path, save_scalars=True)
    writer.write_scalars(10, {"losses/total": 0.5})
    writer.write_summaries(20, {"summaries/logits": np.ones(2)})
    assert set(_load(tmp_path / "000000020.npz")) == {"summaries/logits"}


def test_a_metric_step_without_summaries_writes_no_file(tmp_path):
    writer = NpzWriter(output_dir=tmp_path / "out", save_scalars=True)
    writer.write_scalars(10, {"losses/total": 0.5})
    assert not (tmp_path / "out").exists()


def test_a_summary_step_with_no_summaries_still_saves_its_scalars(tmp_path):
    writer = NpzWriter(output_dir=tmp_path, save_scalars=True)
    writer.write_scalars(10, {"losses/total": 0.5})
    writer.write_summaries(10, {})
    assert set(_load(tmp_path / "000000010.npz")) == {"losses/total"}


# ---------------------------------------------------------------------------------------------- folders


def test_the_default_folder_is_array_dumps_of_the_collection_in_the_workdir(tmp_path):
    writer = NpzWriter(workdir=tmp_path, collection="sampling")
    writer.write_summaries(1, {"summaries/x": np.ones(1)})
    assert _files(tmp_path / "array_dumps" / "sampling") == ["000000001.npz"]


def test_a_writer_with_no_collection_saves_the_training_under_train(tmp_path):
    writer = NpzWriter(workdir=tmp_path)
    writer.write_summaries(1, {"summaries/x": np.ones(1)})
    assert _files(tmp_path / "array_dumps" / "train") == ["000000001.npz"]


def test_an_evaluators_values_go_to_its_own_folder_without_its_prefix(tmp_path):
    writer = NpzWriter(workdir=tmp_path, evals=["val"], save_scalars=True)
    writer.write_scalars(4, {"losses/total": 0.1, "val/losses/total": 0.2})
    writer.write_summaries(4, {"summaries/x": np.zeros(1)})
    writer.write_summaries(4, {"val/summaries/x": np.ones(1)})
    train = _load(tmp_path / "array_dumps" / "train" / "000000004.npz")
    val = _load(tmp_path / "array_dumps" / "val" / "000000004.npz")
    assert set(train) == set(val) == {"losses/total", "summaries/x"}
    np.testing.assert_allclose(val["losses/total"], 0.2)
    np.testing.assert_array_equal(val["summaries/x"], np.ones(1))


def test_with_output_dir_an_evaluator_gets_a_folder_inside_it(tmp_path):
    writer = NpzWriter(output_dir=tmp_path, evals=["val"])
    writer.write_summaries(4, {"summaries/x": np.zeros(1), "val/summaries/x": np.ones(1)})
    assert _files(tmp_path) == ["000000004.npz"]
    assert _files(tmp_path / "val") == ["000000004.npz"]


def test_resume_from_deletes_the_files_of_later_steps(tmp_path):
    writer = NpzWriter(workdir=tmp_path, evals=["val"])
    for step in (1, 2, 3):
        writer.write_summaries(step, {"summaries/x": np.ones(1), "val/summaries/x": np.ones(1)})
    writer.resume_from(2)
    assert _files(tmp_path / "array_dumps" / "train") == ["000000001.npz", "000000002.npz"]
    assert _files(tmp_path / "array_dumps" / "val") == ["000000001.npz", "000000002.npz"]


# ---------------------------------------------------------------------------------------------- errors


def test_with_no_folder_nothing_is_saved_and_one_warning_says_so(tmp_path):
    writer = NpzWriter(workdir=None)
    with pytest.warns(UserWarning, match="output_dir is None and there is no workdir"):
        writer.write_summaries(1, {"summaries/x": np.ones(1)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        writer.write_summaries(2, {"summaries/x": np.ones(1)})  # said once


def test_asking_for_the_folder_with_none_to_give_names_the_fix():
    with pytest.raises(ValueError, match=r"set NpzWriter\(output_dir=...\) or the Trainer's workdir"):
        NpzWriter(workdir=None)._get_output_dir()


# ---------------------------------------------------------------------------------------------- in a Trainer


def test_it_writes_what_the_default_writers_write_too(tmp_path):
    writer = NpzWriter(workdir=tmp_path)
    writer.write_scalars(3, {"losses/total": 0.25})
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["losses/total"] == 0.25


def test_a_trainer_saves_the_summaries_of_each_summary_step(tmp_path):
    writer = NpzWriter(save_scalars=True)
    trainer = lib.make_trainer(
        workdir=str(tmp_path),
        writer=writer,
        num_train_steps=4,
        log_summaries_every=3,
        train_summaries={"rows": lib.FirstRows()},
    )
    assert isinstance(trainer.writer, NpzWriter)  # kept, not replaced by the default writers
    trainer.train()
    folder = tmp_path / "array_dumps" / "train"
    assert _files(folder) == ["000000001.npz", "000000003.npz", "000000004.npz"]
    saved = _load(folder / "000000004.npz")
    assert set(saved) == {"summaries/rows", "losses/l2"}
    assert saved["summaries/rows"].shape == (2, 1)


def test_a_trainers_evaluator_saves_to_its_own_folder(tmp_path):
    trainer = lib.make_trainer(
        workdir=str(tmp_path),
        writer=NpzWriter(),
        num_train_steps=2,
        log_summaries_every=100,
        eval_ds=lib.Regression(seed=5, num_batches=2, num_epochs=1),
        evals={"val": kd.evals.Evaluator(run=kd.evals.EveryNSteps(2), summaries={"rows": lib.FirstRows()})},
    )
    trainer.train()
    folder = tmp_path / "array_dumps" / "val"
    assert _files(folder) == ["000000000.npz", "000000002.npz"]
    assert set(_load(folder / "000000002.npz")) == {"summaries/rows"}


def test_kauldrons_module_path_gives_this_writer():
    installed_before = kd.kauldron_alias.is_installed()
    kd.kauldron_alias.install()
    try:
        from kauldron.contrib.train import npz_writer

        assert npz_writer.NpzWriter is NpzWriter
    finally:
        if not installed_before:
            kd.kauldron_alias.uninstall()
