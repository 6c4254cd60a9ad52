"""kd.data._tfds reads a real TFDS dataset, built here in ArrayRecord format with no TensorFlow.

The builder below is an ordinary `tfds.core.GeneratorBasedBuilder`; tfds writes its examples with its
own protos and ArrayRecord. The one TensorFlow call on that path is tfds encoding a numpy image
(`tf.image.encode_png`), so the examples hand tfds PIL images, which it encodes with PIL (and decodes
with PIL on reading).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import PIL.Image
import pytest
import tensorflow_datasets as tfds
from kd.data import _tfds

NAME = "kd_tiny_digits"
SPLITS = {"train": 5, "test": 2}

with tfds.core.registered.skip_registration():  # read back from the files, as a dataset prepared elsewhere

    class KdTinyDigits(tfds.core.GeneratorBasedBuilder):
        """Example `i`: an 8x8 one-channel image filled with `10 * i`, label `i % 3`."""

        VERSION = tfds.core.Version("1.0.0")
        # No checksums file beside this module. tfds 4.9.10 would otherwise look for one through
        # `importlib_resources`, which it declares only for Python < 3.9 (not installed here).
        code_path = None

        def _info(self) -> tfds.core.DatasetInfo:
            return tfds.core.DatasetInfo(
                builder=self,
                disable_shuffling=True,  # stored in the order generated: example i at index i
                features=tfds.features.FeaturesDict(
                    {
                        "image": tfds.features.Image(shape=(8, 8, 1), dtype=np.uint8),
                        "label": tfds.features.ClassLabel(num_classes=3),
                    }
                ),
            )

        def _split_generators(self, dl_manager):
            return {split: self._generate_examples(n) for split, n in SPLITS.items()}

        def _generate_examples(self, n):
            for i in range(n):
                image = PIL.Image.fromarray(np.full((8, 8), 10 * i, np.uint8), mode="L")
                yield i, {"image": image, "label": i % 3}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tfds")
    KdTinyDigits(data_dir=str(root), file_format="array_record").download_and_prepare()
    return root


def test_the_dataset_is_written_as_array_record(data_dir: Path):
    files = sorted(p.name for p in (data_dir / NAME / "1.0.0").iterdir())
    assert f"{NAME}-train.array_record-00000-of-00001" in files
    assert f"{NAME}-test.array_record-00000-of-00001" in files


def test_data_source_reads_every_example_back(data_dir: Path):
    source = _tfds.data_source(NAME, split="train", data_dir=data_dir)
    assert len(source) == SPLITS["train"]
    for i in range(SPLITS["train"]):
        example = source[i]
        assert set(example) == {"image", "label"}
        assert example["image"].shape == (8, 8, 1)
        assert example["image"].dtype == np.uint8
        np.testing.assert_array_equal(example["image"], np.full((8, 8, 1), 10 * i, np.uint8))
        assert int(example["label"]) == i % 3
    assert len(_tfds.data_source(NAME, split="test", data_dir=str(data_dir))) == SPLITS["test"]


def test_data_source_takes_slices_of_a_split(data_dir: Path):
    source = _tfds.data_source(NAME, split="train[1:3]", data_dir=data_dir)
    assert len(source) == 2
    assert int(source[0]["image"][0, 0, 0]) == 10


def test_decoders_reach_tfds(data_dir: Path):
    source = _tfds.data_source(
        NAME, split="train", data_dir=data_dir, decoders={"image": tfds.decode.SkipDecoding()}
    )
    encoded = source[2]["image"]
    assert isinstance(encoded, bytes)
    assert encoded.startswith(b"\x89PNG")


def test_a_bad_split_names_the_splits_and_the_near_miss(data_dir: Path):
    with pytest.raises(ValueError, match=r"no split 'tran'.*'train', 'test'.*did you mean 'train'\?"):
        _tfds.data_source(NAME, split="tran", data_dir=data_dir)


def test_a_bad_split_inside_a_split_expression_is_the_one_named(data_dir: Path):
    with pytest.raises(ValueError, match=r"no split 'tset' \(asked for split='train\+tset'\).*'test'\?"):
        _tfds.data_source(NAME, split="train+tset", data_dir=data_dir)


def test_an_unknown_dataset_names_the_near_miss(data_dir: Path):
    with pytest.raises(ValueError, match=r"no TFDS dataset 'kd_tiny_digit'.*did you mean 'kd_tiny_digits'\?"):
        _tfds.data_source("kd_tiny_digit", split="train", data_dir=data_dir)


def test_import_tfds_without_tensorflow_datasets_names_the_extra(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "tensorflow_datasets", None)
    with pytest.raises(ImportError, match=r"pip install 'kd-train\[tfds\]'"):
        _tfds.import_tfds()
    with pytest.raises(ImportError, match=r"pip install 'kd-train\[tfds\]'"):
        _tfds.data_source(NAME, split="train")
