"""kd.writers.TensorBoardWriter: event files read back with TensorBoard's own reader (no TensorFlow)."""

from __future__ import annotations

import dataclasses
import io
import pathlib
import subprocess
import sys
import warnings

import jax
import kd
import numpy as np
import pytest
import train_fixtures as lib
from PIL import Image
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

_KEEP_ALL = {"scalars": 0, "images": 0, "histograms": 0, "tensors": 0}


def _events(folder) -> EventAccumulator:
    events = EventAccumulator(str(folder), size_guidance=_KEEP_ALL)
    events.Reload()
    return events


def _scalars(events: EventAccumulator, tag: str) -> list[tuple[int, float]]:
    return [(e.step, e.value) for e in events.Scalars(tag)]


def _image(events: EventAccumulator, tag: str, index: int = -1) -> tuple[int, np.ndarray]:
    """`(step, pixels)` of the `index`-th image written under `tag`, decoded by an independent PNG reader."""
    event = events.Images(tag)[index]
    pixels = np.asarray(Image.open(io.BytesIO(event.encoded_image_string)))
    assert pixels.shape[:2] == (event.height, event.width)
    return event.step, pixels


def _writer(tmp_path, **fields) -> kd.writers.TensorBoardWriter:
    return kd.writers.TensorBoardWriter(workdir=str(tmp_path), **fields)


# ---------------------------------------------------------------------------------------------- scalars, routing


def test_scalars_go_to_the_train_folder_at_their_steps(tmp_path):
    writer = _writer(tmp_path)
    writer.write_scalars(1, {"losses/total": 0.5, "perf/steps_per_sec": np.float32(10.0)})
    writer.write_scalars(3, {"losses/total": 0.25})
    writer.close()
    events = _events(tmp_path / "train")
    assert _scalars(events, "losses/total") == [(1, 0.5), (3, 0.25)]
    assert _scalars(events, "perf/steps_per_sec") == [(1, 10.0)]


def test_evaluator_values_go_to_its_folder_under_the_training_tag(tmp_path):
    writer = _writer(tmp_path, evals=["val"])
    writer.write_scalars(2, {"losses/total": 0.5, "val/losses/total": 0.75})
    writer.close()
    assert _scalars(_events(tmp_path / "train"), "losses/total") == [(2, 0.5)]
    assert _scalars(_events(tmp_path / "val"), "losses/total") == [(2, 0.75)]
    assert _events(tmp_path / "train").Tags()["scalars"] == ["losses/total"]


def test_an_evaluators_name_field_names_its_folder_as_in_the_trainer(tmp_path):
    writer = _writer(tmp_path, evals={"key": kd.evals.Evaluator(name="holdout")})
    assert writer.route("holdout/metrics/acc") == ("holdout", "metrics/acc")
    assert writer.route("key/metrics/acc") == ("train", "key/metrics/acc")


def test_the_longest_evaluator_name_wins(tmp_path):
    writer = _writer(tmp_path, evals=["val", "val/hard"])
    assert writer.route("val/hard/losses/total") == ("val/hard", "losses/total")
    assert writer.route("val/losses/total") == ("val", "losses/total")


def test_a_name_only_starting_like_an_evaluator_stays_in_train(tmp_path):
    assert _writer(tmp_path, evals=["val"]).route("validation/x") == ("train", "validation/x")


def test_array_scalars_are_left_out(tmp_path):
    writer = _writer(tmp_path)
    writer.write_scalars(1, {"losses/total": 0.5, "metrics/per_class": np.ones((3,))})
    writer.close()
    assert _events(tmp_path / "train").Tags()["scalars"] == ["losses/total"]


# ---------------------------------------------------------------------------------------------- images


def test_an_image_batch_is_tiled_in_one_image_one_pixel_apart(tmp_path):
    images = np.random.default_rng(0).uniform(size=(3, 4, 5, 3)).astype(np.float32)
    writer = _writer(tmp_path)
    writer.write_summaries(7, {"summaries/inputs": images})
    writer.close()
    step, pixels = _image(_events(tmp_path / "train"), "summaries/inputs")
    assert step == 7 and pixels.shape == (4, 3 * 5 + 2, 3)
    expected = np.round(images * 255).astype(np.uint8)
    for i in range(3):
        np.testing.assert_array_equal(pixels[:, i * 6 : i * 6 + 5], expected[i])
    assert not pixels[:, [5, 11]].any()  # the gaps


def test_a_batch_wraps_after_max_image_columns(tmp_path):
    writer = _writer(tmp_path, max_image_columns=2)
    writer.write_summaries(1, {"imgs": np.ones((3, 4, 5, 3), np.float32)})
    writer.close()
    _, pixels = _image(_events(tmp_path / "train"), "imgs")
    assert pixels.shape == (2 * 4 + 1, 2 * 5 + 1, 3)
    assert pixels[5:, 6:].max() == 0  # no fourth image


@pytest.mark.parametrize(
    ("shape", "dtype", "decoded_shape"),
    [
        ((4, 5, 3), np.float32, (4, 5, 3)),  # one image (h, w, c)
        ((2, 4, 5, 1), np.uint8, (4, 11)),  # grey
        ((1, 4, 5, 4), np.float32, (4, 5, 4)),  # RGBA
    ],
)
def test_images_of_1_3_or_4_channels_keep_their_pixels(tmp_path, shape, dtype, decoded_shape):
    expected = np.random.default_rng(1).integers(0, 256, shape, dtype=np.uint8)
    images = expected if dtype == np.uint8 else (expected / 255).astype(dtype)
    writer = _writer(tmp_path)
    writer.write_summaries(1, {"img": images})
    writer.close()
    _, pixels = _image(_events(tmp_path / "train"), "img")
    assert pixels.shape == decoded_shape
    first = expected.reshape((-1, *shape[-3:]))[0]
    np.testing.assert_array_equal(pixels[:, :5].reshape(first.shape), first)


def test_float_images_are_clipped_to_0_1(tmp_path):
    writer = _writer(tmp_path)
    writer.write_summaries(1, {"img": np.array([[[-1.0], [0.5], [2.0], [np.nan]]], np.float32)})
    writer.close()
    _, pixels = _image(_events(tmp_path / "train"), "img")
    np.testing.assert_array_equal(pixels, [[0, 128, 255, 0]])


def test_boolean_images_are_black_and_white(tmp_path):
    writer = _writer(tmp_path)
    writer.write_summaries(1, {"mask": np.array([[[True], [False]]])})
    writer.close()
    _, pixels = _image(_events(tmp_path / "train"), "mask")
    np.testing.assert_array_equal(pixels, [[255, 0]])


def test_an_empty_image_batch_writes_nothing(tmp_path):
    writer = _writer(tmp_path)
    empty = kd.summaries.ImagesState(keep_first=2).compute()  # ShowImages before any valid image
    writer.write_summaries(1, {"img": empty, "text": "x"})
    writer.close()
    assert _events(tmp_path / "train").Tags()["images"] == []


# ---------------------------------------------------------------------------------------------- histograms, text


def test_a_histogram_value_is_a_histogram_in_its_buckets(tmp_path):
    value = kd.summaries.HistogramValue(values=np.arange(100, dtype=np.float32), num_buckets=10)
    writer = _writer(tmp_path)
    writer.write_summaries(5, {"summaries/logits": value})
    writer.close()
    [event] = _events(tmp_path / "train").Histograms("summaries/logits")
    histogram = event.histogram_value
    assert event.step == 5
    assert (histogram.num, histogram.min, histogram.max, histogram.sum) == (100, 0, 99, 4950)
    assert sum(histogram.bucket) == 100 and len(histogram.bucket) <= 11


def test_any_other_array_is_a_histogram_of_all_its_values(tmp_path):
    writer = _writer(tmp_path)
    writer.write_summaries(1, {"summaries/rows": np.arange(12.0).reshape(3, 4)})
    writer.close()
    [event] = _events(tmp_path / "train").Histograms("summaries/rows")
    assert (event.histogram_value.num, event.histogram_value.max) == (12, 11)


def test_non_finite_values_are_left_out_of_histograms(tmp_path):
    writer = _writer(tmp_path)
    writer.write_summaries(1, {"h": np.array([1.0, np.nan, np.inf, 2.0]), "all_nan": np.full((3,), np.nan)})
    writer.close()
    events = _events(tmp_path / "train")
    assert events.Histograms("h")[0].histogram_value.num == 2
    assert events.Tags()["histograms"] == ["h"]


def test_a_one_value_summary_is_a_scalar(tmp_path):
    writer = _writer(tmp_path)
    writer.write_summaries(4, {"summaries/ratio": np.array([0.5])})
    writer.close()
    assert _scalars(_events(tmp_path / "train"), "summaries/ratio") == [(4, 0.5)]


def test_a_string_is_a_text_under_its_name(tmp_path):
    writer = _writer(tmp_path, evals=["val"])
    writer.write_summaries(2, {"val/summaries/caption": "a cat"})
    writer.close()
    [event] = _events(tmp_path / "val").Tensors("summaries/caption")
    assert event.step == 2 and event.tensor_proto.string_val == [b"a cat"]


def test_other_summary_types_are_skipped_with_one_warning_per_name(tmp_path):
    writer = _writer(tmp_path)
    with pytest.warns(UserWarning, match=r"summary 'odd' is a dict"):
        writer.write_summaries(1, {"odd": {"a": 1}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        writer.write_summaries(2, {"odd": {"a": 1}})
    assert caught == []


def test_the_config_is_a_text_in_train(tmp_path):
    writer = _writer(tmp_path)
    writer.write_config('{"seed": 1}')
    writer.close()
    [event] = _events(tmp_path / "train").Tensors("config")
    assert event.step == 0 and b'{"seed": 1}' in event.tensor_proto.string_val[0]


# ---------------------------------------------------------------------------------------------- files


@pytest.mark.parametrize("workdir", [None, kd.train.ROOT_CFG_REF.workdir])
def test_no_workdir_writes_nothing(tmp_path, monkeypatch, workdir):
    monkeypatch.chdir(tmp_path)
    writer = kd.writers.TensorBoardWriter(workdir=workdir)
    writer.write_scalars(1, {"a": 1.0})
    writer.write_summaries(1, {"img": np.zeros((1, 2, 2, 3)), "t": "x"})
    writer.write_config("{}")
    writer.close()
    assert list(tmp_path.iterdir()) == []


def test_flush_makes_the_values_readable(tmp_path):
    writer = _writer(tmp_path)
    writer.write_scalars(1, {"a": 1.0})
    writer.flush()
    assert _scalars(_events(tmp_path / "train"), "a") == [(1, 1.0)]
    writer.close()


def test_writing_after_close_adds_a_file_keeping_the_first(tmp_path):
    writer = _writer(tmp_path)
    writer.write_scalars(1, {"a": 1.0})
    writer.close()
    writer.write_scalars(2, {"a": 2.0})  # within the same second: event file names must still differ
    writer.close()
    assert len(list((tmp_path / "train").iterdir())) == 2
    assert _scalars(_events(tmp_path / "train"), "a") == [(1, 1.0), (2, 2.0)]


def test_without_tensorboardx_the_writer_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)  # `import tensorboardX` raises ImportError
    message = r"TensorBoardWriter needs tensorboardX.*pip install tensorboardX"
    with pytest.raises(ImportError, match=message):
        kd.writers.TensorBoardWriter()


_WRITE_WITHOUT_TENSORFLOW = """
import sys, numpy as np, kd
writer = kd.writers.TensorBoardWriter(workdir=sys.argv[1])
writer.write_scalars(1, {"a": 1.0})
writer.write_summaries(1, {"img": np.zeros((1, 2, 2, 3)), "h": np.arange(4.0), "t": "x"})
writer.close()
print(sorted(m for m in sys.modules if m.split(".")[0] in ("tensorflow", "tensorboard", "torch")))
"""


def test_writing_imports_neither_tensorflow_nor_tensorboard(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", _WRITE_WITHOUT_TENSORFLOW, str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert _events(tmp_path / "train").Tags()["images"] == ["img"]


# ---------------------------------------------------------------------------------------------- with the Trainer


@dataclasses.dataclass(frozen=True, kw_only=True)
class _WithImages(lib.Regression):
    """`Regression` batches plus `image`: (b, 4, 4, 3) floats in [0, 1]."""

    @property
    def element_spec(self) -> dict[str, jax.ShapeDtypeStruct]:
        return {**super().element_spec, "image": jax.ShapeDtypeStruct((self.batch_size, 4, 4, 3), np.float32)}

    def batch(self, index: int) -> dict[str, np.ndarray]:
        image = np.random.default_rng([self.seed, index]).uniform(size=(self.batch_size, 4, 4, 3))
        return {**super().batch(index), "image": image.astype(np.float32)}


def _trainer(workdir) -> kd.train.Trainer:
    evaluator = kd.evals.Evaluator(run=kd.evals.EveryNSteps(2), num_batches=1, ds=_WithImages(seed=1))
    return lib.make_trainer(
        workdir=str(workdir),
        train_ds=_WithImages(),
        num_train_steps=4,
        log_metrics_every=2,
        log_summaries_every=2,
        train_summaries={
            "inputs": kd.summaries.ShowImages(images="batch.image", num_images=2),
            "preds": kd.summaries.Histogram(tensor="preds"),
        },
        evals={"val": evaluator},
        writer=kd.writers.MultiWriter(writers=[kd.writers.TensorBoardWriter(), kd.writers.InMemoryWriter()]),
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A 4-step run logging at steps 1, 2, 4 and evaluating at 0, 2, 4: `(trainer, train events, val events)`."""
    workdir = tmp_path_factory.mktemp("run")
    trainer = _trainer(workdir)
    trainer.train()
    trainer.writer.close()
    return trainer, _events(workdir / "train"), _events(workdir / "val")


def test_trainer_fills_workdir_and_evals_of_a_tensorboard_writer_inside_a_multi_writer(tmp_path):
    trainer = _trainer(tmp_path)
    writer = trainer.writer.writers[0]
    assert writer.workdir == str(tmp_path)
    assert list(writer.evals) == ["val"]
    assert writer.route("val/losses/total") == ("val", "losses/total")


def test_trainer_run_has_one_folder_for_training_and_one_per_evaluator(run):
    trainer, _, _ = run
    event_files = pathlib.Path(trainer.workdir).glob("**/events.out.tfevents.*")
    assert sorted(path.parent.name for path in event_files) == ["train", "val"]


def test_trainer_run_writes_training_scalars_at_the_logging_steps(run):
    _, train, _ = run
    assert {"losses/l2", "perf/steps_per_sec"} <= set(train.Tags()["scalars"])
    assert "losses/total" not in train.Tags()["scalars"]  # one loss is its own total
    assert [step for step, _ in _scalars(train, "losses/l2")] == [1, 2, 4]
    assert [step for step, _ in _scalars(train, "perf/steps_per_sec")] == [2, 4]  # none for start-up
    assert not any(tag.startswith("val/") for tag in train.Tags()["scalars"])


def test_trainer_run_writes_evaluator_scalars_under_the_training_tags(run):
    trainer, _, val = run
    memory = trainer.writer.writers[1].scalars
    steps, values = zip(*_scalars(val, "losses/l2"))
    assert steps == (0, 2, 4)
    assert values == pytest.approx([value for _, value in memory["val/losses/l2"]])


def test_trainer_run_writes_the_image_summary_as_images(run):
    _, train, val = run
    assert [event.step for event in train.Images("summaries/inputs")] == [1, 2, 4]
    for events in (train, val):
        _, pixels = _image(events, "summaries/inputs")
        assert pixels.shape == (4, 2 * 4 + 1, 3)  # two 4x4 RGB images side by side


def test_trainer_run_writes_the_histogram_summary_as_histograms(run):
    _, train, val = run
    for events in (train, val):
        event = events.Histograms("summaries/preds")[-1]
        assert event.histogram_value.num == 8  # preds (8, 1)
    assert [event.step for event in val.Histograms("summaries/preds")] == [0, 2, 4]


# A run resumed from a checkpoint


def test_resuming_drops_the_points_after_the_restored_step_in_every_folder(tmp_path):
    first = _writer(tmp_path, evals=["val"])
    for step in (1, 2, 3, 4):
        first.write_scalars(step, {"losses/total": float(step), "val/losses/total": 10.0 + step})
    first.close()  # killed after step 4; its checkpoint was step 2

    second = _writer(tmp_path, evals=["val"])
    second.resume_from(2)
    for step in (3, 4, 5):
        second.write_scalars(step, {"losses/total": -float(step)})
    second.close()

    assert _scalars(_events(tmp_path / "train"), "losses/total") == [
        (1, 1.0),
        (2, 2.0),
        (3, -3.0),
        (4, -4.0),
        (5, -5.0),
    ]
    assert _scalars(_events(tmp_path / "val"), "losses/total") == [(1, 11.0), (2, 12.0)]


def test_resuming_from_the_start_drops_every_point(tmp_path):
    first = _writer(tmp_path)
    first.write_scalars(1, {"losses/total": 1.0})
    first.close()

    second = _writer(tmp_path)
    second.resume_from(-1)
    second.write_scalars(1, {"losses/total": 7.0})
    second.close()

    assert _scalars(_events(tmp_path / "train"), "losses/total") == [(1, 7.0)]
