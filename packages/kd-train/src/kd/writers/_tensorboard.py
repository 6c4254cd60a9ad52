"""`TensorBoardWriter`: TensorBoard event files (written by tensorboardX, no TensorFlow), one folder per run part.

    trainer = kd.train.Trainer(..., workdir="/tmp/run", evals={"val": kd.evals.Evaluator(...)},
                               writer=kd.writers.TensorBoardWriter())
    # tensorboard --logdir /tmp/run   ->  runs "train" and "val", their curves overlaid per tag

The Trainer's default writer includes it when a workdir is set; tensorboardX (a dependency of kd-train) is
imported when the writer is made.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import struct
import time
import warnings
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from kd._root_ref import ROOT_CFG_REF, RootRef
from kd.writers._base import Writer

TRAIN_FOLDER = "train"
"""The folder (TensorBoard run) of everything not logged by an evaluator."""

_IMAGE_CHANNELS = (1, 3, 4)
_FILE_NUMBERS = itertools.count()
_PNG_COLOR_TYPES = {1: 0, 3: 2, 4: 6}  # grey, RGB, RGBA


def import_tensorboardx() -> Any:
    """tensorboardX, or an ImportError saying which extra to install."""
    try:
        import tensorboardX
        import tensorboardX.event_file_writer
        import tensorboardX.proto.event_pb2
        import tensorboardX.proto.summary_pb2
        import tensorboardX.record_writer
        import tensorboardX.summary
    except ImportError as e:
        raise ImportError(
            "kd.writers.TensorBoardWriter needs tensorboardX, a dependency of kd-train that is not installed "
            "here: pip install tensorboardX"
        ) from e
    return tensorboardX


@dataclasses.dataclass(kw_only=True)
class TensorBoardWriter(Writer):
    """Writes scalars, images, histograms, texts and point clouds as TensorBoard event files under the Trainer's workdir.

    Usage: `writer=kd.writers.MultiWriter(writers=[kd.writers.PrintWriter(), kd.writers.TensorBoardWriter()])`.

    Layout: `<workdir>/train/` holds the training values (`losses/...`, `metrics/...`, `summaries/...`,
    `schedules/...`, `perf/...`) and the config (text `config`); `<workdir>/<evaluator name>/` holds what
    that evaluator logged. The Trainer names an evaluator's values `"<evaluator name>/losses/total"`; a
    value whose name starts with an evaluator's name goes to that evaluator's folder without the prefix,
    so `train` and `val` share the tag `losses/total` and TensorBoard overlays their curves. (An
    evaluator named `train` therefore shares the training folder and tags.)

    What `write_summaries` makes of a value, by its type and shape:
      - `str`: a text; a sequence or 1-d array of `str` (`kd.summaries.ShowTexts`): a text table, one
        row per text.
      - an object with `point_clouds`, `point_colors` and `configs` (a `kd.summaries.PointCloud`): a
        point cloud in TensorBoard's mesh dashboard (vertices `(1, n, 3)`, colours scaled to [0, 255],
        `configs` as its three.js settings; no faces).
      - an object with `values` and `num_buckets` (a `kd.summaries.HistogramValue`): a histogram of
        its values in `num_buckets` buckets.
      - an array `(n, h, w, c)` with c in {1, 3, 4}: the n images (grey, RGB, RGBA) tiled in one image,
        up to `max_image_columns` per row, 1 pixel apart; an array `(h, w, c)`: one image. Floats are
        read in [0, 1] (clipped), integers in [0, 255], booleans as black and white. An empty batch
        writes nothing.
      - an array of one value: a scalar.
      - any other array: a histogram of all its values in `num_buckets` buckets.
    Non-finite values are left out of histograms; other types are skipped with a warning (once per name).
    `write_scalars` writes numbers and one-element arrays; larger arrays are left out (as in `JsonlWriter`).

    Attributes:
      workdir: the Trainer's; None (or not in a Trainer) writes nothing.
      evals: the Trainer's evaluators (name -> evaluator, their `name` field wins as the Trainer's does),
        or a list of evaluator names; only their names are read.
      num_buckets: buckets of the histograms of plain arrays.
      max_image_columns: images per row of a tiled batch.
    """

    workdir: Any = ROOT_CFG_REF.workdir
    evals: Any = dataclasses.field(default=ROOT_CFG_REF.evals, repr=False)  # the Trainer shows them already
    num_buckets: int = 30
    max_image_columns: int = 8
    _files: dict[str, Any] = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False)
    _warned: set[str] = dataclasses.field(default_factory=set, init=False, repr=False, compare=False)
    _purge_step: int | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        import_tensorboardx()  # fails when the run is configured, not at its first logging step

    # ---------------------------------------------------------------- the Writer protocol

    def write_scalars(self, step: int, scalars: Mapping[str, Any]) -> None:
        if not self._writes():
            return
        summary = import_tensorboardx().summary
        for name, value in scalars.items():
            number = _number(value)
            if number is not None:
                self._add(name, step, lambda tag, v=number: summary.scalar(tag, v))

    def write_summaries(self, step: int, summaries: Mapping[str, Any]) -> None:
        if not self._writes():
            return
        for name, value in summaries.items():
            make = self._summary_maker(name, value)
            if make is not None:
                self._add(name, step, make)

    def write_config(self, config_json: str) -> None:
        # TensorBoard renders texts as markdown: a fenced block keeps the JSON's lines and indents.
        self._add("config", 0, lambda tag: _text(tag, f"```json\n{config_json}\n```"))

    def resume_from(self, step: int) -> None:
        """Every folder's next event file starts with TensorBoard's purge marker: readers drop the events
        of steps after `step` that earlier files hold (tensorboardX's `purge_step`)."""
        self.close()
        self._purge_step = int(step) + 1
        if self._writes() and os.path.isdir(os.fspath(self.workdir)):
            for entry in os.scandir(os.fspath(self.workdir)):  # folders written before, even if not again
                if entry.is_dir() and any(n.startswith("events.") for n in os.listdir(entry.path)):
                    self._open(entry.name)

    def flush(self) -> None:
        for file in self._files.values():
            file.flush()

    def close(self) -> None:
        files, self._files = self._files, {}
        for file in files.values():
            file.close()

    # ---------------------------------------------------------------- routing

    def route(self, name: str) -> tuple[str, str]:
        """`(folder, tag)` of a logged name: `"val/losses/total"` -> `("val", "losses/total")` for an
        evaluator `val`, `"losses/total"` -> `("train", "losses/total")`."""
        for evaluator in sorted(self._evaluator_names(), key=len, reverse=True):
            if name.startswith(evaluator + "/"):
                return evaluator, name[len(evaluator) + 1 :]
        return TRAIN_FOLDER, name

    def _evaluator_names(self) -> set[str]:
        evals = self.evals
        if evals is None or isinstance(evals, RootRef):
            return set()
        if isinstance(evals, Mapping):
            return {str(getattr(evaluator, "name", None) or key) for key, evaluator in evals.items()}
        return {str(name) for name in evals}

    def _writes(self) -> bool:
        return self.workdir is not None and not isinstance(self.workdir, RootRef)

    def _add(self, name: str, step: int, make: Any) -> None:
        """Writes `make(tag)` (a Summary proto) for `name` at `step`, in the folder `name` routes to."""
        if not self._writes():
            return
        tbx = import_tensorboardx()
        folder, tag = self.route(name)
        file = self._files.get(folder) or self._open(folder)
        file.write_event(tbx.proto.event_pb2.Event(wall_time=time.time(), step=int(step), summary=make(tag)))

    def _open(self, folder: str) -> Any:
        """A new event file in `<workdir>/<folder>`, starting with the purge marker after `resume_from`."""
        tbx = import_tensorboardx()
        path = os.path.join(os.fspath(self.workdir), folder)
        tbx.record_writer.directory_check(path)  # local folders, and gs:// / s3:// as tensorboardX does
        # tensorboardX's synchronous event file (its FileWriter queues to a thread and its `flush` does
        # not wait for the queue). File names hold the second they were opened in: a unique suffix keeps
        # a file opened within the same second (after `close`, by another writer) from overwriting this.
        suffix = f".{os.getpid()}.{next(_FILE_NUMBERS):06d}"  # zero-padded: names sort in opening order
        file = tbx.event_file_writer.EventsWriter(os.path.join(path, "events"), suffix)
        if self._purge_step is not None:
            event_pb2 = tbx.proto.event_pb2
            start = event_pb2.SessionLog(status=event_pb2.SessionLog.START)
            file.write_event(event_pb2.Event(wall_time=time.time(), step=self._purge_step, session_log=start))
        self._files[folder] = file
        return file

    # ---------------------------------------------------------------- summary values

    def _summary_maker(self, name: str, value: Any) -> Any:
        """A function tag -> Summary proto for `value` (the rule in the class docstring), or None to skip."""
        summary = import_tensorboardx().summary
        if isinstance(value, str):
            return lambda tag: _text(tag, value)
        texts = _texts(value)
        if texts is not None:  # kd.summaries.ShowTexts: a table of texts, one row each
            return None if not texts else (lambda tag: _text_table(tag, texts))
        if hasattr(value, "point_clouds") and hasattr(value, "point_colors"):  # kd.summaries.PointCloud
            return _point_cloud_maker(value)
        if hasattr(value, "values") and hasattr(value, "num_buckets"):
            values = _finite(value.values)
            if values.size == 0:
                return None
            return lambda tag: summary.histogram(tag, values, bins=int(value.num_buckets))
        try:
            array = np.asarray(value)
        except Exception:
            array = None
        if array is None or not _is_real(array.dtype):
            if name not in self._warned:
                self._warned.add(name)
                warnings.warn(
                    f"TensorBoardWriter: summary {name!r} is a {type(value).__name__}, expected a str, an "
                    "array or a kd.summaries.HistogramValue; it is not written.",
                    stacklevel=3,
                )
            return None
        if array.ndim in (3, 4) and array.shape[-1] in _IMAGE_CHANNELS:
            batch = array if array.ndim == 4 else array[None]
            if batch.shape[0] == 0 or batch.shape[1] == 0 or batch.shape[2] == 0:
                return None
            grid = _tile(_to_uint8(batch), self.max_image_columns)
            return lambda tag: _image(tag, grid)
        if array.size == 1:
            return lambda tag: summary.scalar(tag, float(array.item()))
        values = _finite(array)
        if values.size == 0:
            return None
        return lambda tag: summary.histogram(tag, values, bins=self.num_buckets)


def _number(value: Any) -> float | None:
    """The value of a one-element number or array, else None."""
    try:
        array = np.asarray(value)
    except Exception:
        return None
    if array.size != 1 or not _is_real(array.dtype):
        return None
    return float(array.item())


def _is_real(dtype: np.dtype) -> bool:
    return any(np.issubdtype(dtype, kind) for kind in (np.bool_, np.integer, np.floating))


def _finite(values: Any) -> np.ndarray:
    flat = np.asarray(values, np.float64).reshape(-1)
    return flat[np.isfinite(flat)]


def _to_uint8(images: np.ndarray) -> np.ndarray:
    """Floats in [0, 1] (clipped, NaN as 0), integers in [0, 255] or booleans (0 or 255) as uint8."""
    if images.dtype == np.uint8:
        return images
    if images.dtype == np.bool_:
        return images.astype(np.uint8) * 255
    if np.issubdtype(images.dtype, np.floating):
        scaled = np.nan_to_num(np.clip(images.astype(np.float64), 0.0, 1.0)) * 255.0
        return np.round(scaled).astype(np.uint8)
    return np.clip(images, 0, 255).astype(np.uint8)


def _tile(images: np.ndarray, max_columns: int) -> np.ndarray:
    """`(n, h, w, c)` -> one image `(rows * (h + 1) - 1, columns * (w + 1) - 1, c)`, row by row."""
    n, h, w, c = images.shape
    columns = max(1, min(n, max_columns))
    rows = math.ceil(n / columns)
    grid = np.zeros((rows * (h + 1) - 1, columns * (w + 1) - 1, c), np.uint8)
    for i, image in enumerate(images):
        y, x = divmod(i, columns)
        grid[y * (h + 1) : y * (h + 1) + h, x * (w + 1) : x * (w + 1) + w] = image
    return grid


def _png(image: np.ndarray) -> bytes:
    """`(h, w, c)` uint8, c in {1, 3, 4}, as PNG bytes (no imaging library needed)."""
    h, w, c = image.shape
    rows = np.concatenate([np.zeros((h, 1), np.uint8), image.reshape(h, w * c)], axis=1)  # filter 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", w, h, 8, _PNG_COLOR_TYPES[c], 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes()))
        + chunk(b"IEND", b"")
    )


def _image(tag: str, image: np.ndarray) -> Any:
    summary_pb2 = import_tensorboardx().proto.summary_pb2
    h, w, c = image.shape
    encoded = summary_pb2.Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=_png(image))
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, image=encoded)])


def _text(tag: str, text: str) -> Any:
    proto = import_tensorboardx().summary.text(tag, text)
    proto.value[0].tag = tag  # tensorboardX appends "/text_summary"; the tag stays the logged name
    return proto


def _texts(value: Any) -> list[str] | None:
    """The texts of a sequence or 1-d array whose every element is a `str`, else None."""
    if isinstance(value, np.ndarray):
        if value.ndim != 1 or value.dtype.kind not in "OU":
            return None
        items = value.tolist()
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        return None
    if not all(isinstance(item, str) for item in items):
        return None
    return items


def _text_table(tag: str, texts: list[str]) -> Any:
    """A text summary of a 1-d string tensor (TensorBoard shows it as a table, one row per text)."""
    proto = _text(tag, "")
    tensor = proto.value[0].tensor
    del tensor.string_val[:]
    tensor.string_val.extend(text.encode("utf-8") for text in texts)
    tensor.tensor_shape.dim[0].size = len(texts)
    return proto


def _point_cloud_maker(cloud: Any) -> Any:
    """tag -> a mesh-plugin Summary of the points (and colours) of a `kd.summaries.PointCloud`, or None
    when it has no point."""
    points = np.asarray(cloud.point_clouds, np.float64).reshape(-1, 3)
    if points.shape[0] == 0:
        return None
    colors = None
    if cloud.point_colors is not None:
        raw = np.asarray(cloud.point_colors)
        if np.issubdtype(raw.dtype, np.floating):
            colors = np.round(np.nan_to_num(np.clip(raw, 0.0, 1.0)) * 255.0)
        else:
            colors = np.clip(raw, 0, 255).astype(np.float64)
        colors = colors.reshape(-1, 3)[None]
    configs = None if cloud.configs is None else {k: dict(v) for k, v in dict(cloud.configs).items()}
    summary = import_tensorboardx().summary

    def make(tag: str) -> Any:
        return summary.mesh(tag, vertices=points[None], colors=colors, faces=None, config_dict=configs)

    return make
