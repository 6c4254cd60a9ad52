"""`kd-train[tfds]` pulls no TensorFlow, and reading a TFDS dataset through kd.data._tfds loads none.

The extra's requirements are read from packages/kd-train/pyproject.toml and resolved by uv against the
registry this environment installs from, for every platform (`--universal`): adding TensorFlow to the
extra, directly or through a dependency, fails here.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

from uv_run import run, uv

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = REPO / "packages" / "kd-train" / "pyproject.toml"
TENSORFLOW = {
    "tensorflow",
    "tensorflow-cpu",
    "tf-nightly",
    "tensorflow-intel",
    "tensorflow-macos",
    "tf-keras",
}


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _tfds_extra() -> list[str]:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    return project["optional-dependencies"]["tfds"]


def _min_python() -> str:
    """`3.11` from kd-train's `requires-python = ">=3.11"`."""
    requires = tomllib.loads(PYPROJECT.read_text())["project"]["requires-python"]
    match = re.fullmatch(r">=\s*(\d+\.\d+)", requires.strip())
    assert match, f"requires-python {requires!r} is not of the form '>=X.Y'"
    return match.group(1)


def test_the_tfds_extra_resolves_without_tensorflow(tmp_path: Path):
    requirements = tmp_path / "requirements.in"
    requirements.write_text("\n".join(_tfds_extra()) + "\n")
    python_version = _min_python()
    proc = run(
        [
            uv(),
            "pip",
            "compile",
            str(requirements),
            "--universal",
            "--python-version",
            python_version,
            "--no-header",
            "--no-annotate",
            "--quiet",
        ],
        cwd=tmp_path,
    )
    # One `name==version[ ; marker]` line per pinned distribution (a name may repeat under markers).
    pinned = {
        _normalized(line.split("==")[0].strip())
        for line in proc.stdout.splitlines()
        if line.strip() and not line.startswith(("#", " "))
    }
    assert {"tensorflow-datasets", "grain", "array-record"} <= pinned, proc.stdout
    assert not pinned & TENSORFLOW, f"kd-train[tfds] pulls {sorted(pinned & TENSORFLOW)}:\n{proc.stdout}"


_BUILD_AND_READ = """
import importlib.util
import sys

import numpy as np
import PIL.Image
import tensorflow_datasets as tfds

from kd.data import _tfds


class KdTfdsExtraDigits(tfds.core.GeneratorBasedBuilder):
    VERSION = tfds.core.Version("1.0.0")
    code_path = None  # no checksums file (tfds 4.9.10 looks for one through an undeclared package)

    def _info(self):
        return tfds.core.DatasetInfo(
            builder=self,
            disable_shuffling=True,
            features=tfds.features.FeaturesDict(
                {"image": tfds.features.Image(shape=(8, 8, 1), dtype=np.uint8), "label": tfds.features.ClassLabel(num_classes=3)}
            ),
        )

    def _split_generators(self, dl_manager):
        return {"train": self._generate_examples(4)}

    def _generate_examples(self, n):
        for i in range(n):
            yield i, {"image": PIL.Image.fromarray(np.full((8, 8), i, np.uint8), mode="L"), "label": i % 3}


data_dir = sys.argv[1]
KdTfdsExtraDigits(data_dir=data_dir, file_format="array_record").download_and_prepare()
source = _tfds.data_source("kd_tfds_extra_digits", split="train", data_dir=data_dir)
assert len(source) == 4
assert [int(source[i]["image"][0, 0, 0]) for i in range(4)] == [0, 1, 2, 3]
loaded = sorted(m for m in sys.modules if m == "tensorflow" or m.startswith("tensorflow."))
assert not loaded, loaded
assert importlib.util.find_spec("tensorflow") is None, "tensorflow is installed in the test environment"
print("read", len(source), "examples without TensorFlow")
"""


def test_reading_a_tfds_dataset_loads_no_tensorflow(tmp_path: Path):
    proc = run([sys.executable, "-c", _BUILD_AND_READ, str(tmp_path / "data")], cwd=tmp_path)
    assert "read 4 examples without TensorFlow" in proc.stdout
    # tfds prints a banner whenever it tries to import TensorFlow and fails: it never tried.
    assert "Failed to import TensorFlow" not in proc.stdout + proc.stderr
