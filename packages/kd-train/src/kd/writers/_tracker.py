"""`TrackerWriter`: what `WandbWriter` and `MlflowWriter` share: one tracker run per training run, continued on
resume, written by process 0 only, and never a reason for training to stop.

    writer = kd.writers.MultiWriter(writers=[kd.writers.KDMetricWriter(), kd.writers.WandbWriter(project="digits")])

The life of a tracker run, as the Trainer drives it (`write_config`, then `resume_from`, then the values):

- The run starts at `resume_from`: a fresh start (-1) opens a new tracker run (also on a writer whose run is
  open: `trainer.train()` again in one process ends it and starts another); a resume continues the run whose
  id `<workdir>/<tracker>_run.json` holds (the file is written when the run is opened, at each `flush` and
  at `close`).
- That file also holds, per logged name, the last step sent. Steps a resumed run computes again (those after
  its checkpoint that the earlier invocation had already sent) are not sent again: trackers keep what they
  were sent and cannot take a step back, so each name has each step once.
- The steps are written to that file only at `flush` (the Trainer flushes its writer before each checkpoint
  save) and at `close`, once the tracker's client has what was sent (W&B's `log` is asynchronous). The
  trade-off: a process killed without warning (SIGKILL, OOM) after its last checkpoint leaves the steps
  sent since that flush out of the file, so its resume sends them once more (a step may be twice in the
  tracker) rather than leaving them out.
- A value the tracker cannot take (a histogram of an overflowing range, a malformed point cloud, a name too
  long) is left out, with one warning per name; the tracker is turned off only when it fails as a whole.
- On a host other than process 0 nothing is opened or sent.
- A tracker that cannot be reached (or fails later) gets one warning; training goes on, and the values stay
  in the workdir's own files (`metrics.jsonl`, TensorBoard). W&B then writes the run offline (see
  `WandbWriter`).

`flatten_config` gives the config as the tracker's config / params, one entry per konfig path.
"""

from __future__ import annotations

import dataclasses
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from etils import epath
from konfig import JSON_MARKERS as MARKERS  # the JSON format's own markers
from konfig import JSON_RAW_KEY_PREFIX as RAW_PREFIX

from kd._atomic import write_text_atomic
from kd._root_ref import ROOT_CFG_REF, RootRef
from kd.writers import _tensorboard as tb
from kd.writers._base import Writer

# Lists longer than this (of numbers or strings) are one config entry, not one per item.
_MAX_LIST_ITEMS = 32


def import_extra(module: str, writer: str, extra: str) -> Any:
    """`module` imported, or an ImportError saying which extra of kd-train to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"kd.writers.{writer} needs {module.split('.')[0]}, which is not installed here: "
            f"pip install 'kd-train[{extra}]'"
        ) from e


# ---------------------------------------------------------------- the config, flattened


def flatten_config(config_json: str) -> dict[tuple[Any, ...], Any]:
    """konfig JSON (what `konfig.to_json` writes) as `{keys: value}`, one entry per leaf, keys as konfig's paths.

    A call node gives its target at its own path (`("model",): "flax.linen:Dense"`) and its arguments below
    (`("model", "features"): 32`; positional arguments are int keys); a list gives its items by index; a
    reference is shown as the path it names (`"cfg.num_train_steps"`), an operation as a call of it
    (`"floordiv(cfg.num_train_steps, 20)"`). Values are JSON's (str, int, float, bool, None).

    Usage: `format_path(keys)` names an entry as `--cfg.` takes it: `model.layers[0].features`.
    """
    flat: dict[tuple[Any, ...], Any] = {}
    _flatten(json.loads(config_json), (), flat)
    return flat


def format_path(keys: tuple[Any, ...]) -> str:
    """`("model", "layers", 0, "features")` -> `model.layers[0].features` (konfig's path, without `cfg.`)."""
    text = ""
    for key in keys:
        if isinstance(key, str) and key.isidentifier():
            text += f".{key}" if text else key
        else:
            text += f"[{key!r}]"
    return text


def _flatten(node: Any, keys: tuple[Any, ...], flat: dict[tuple[Any, ...], Any]) -> None:
    if isinstance(node, list):
        if len(node) > _MAX_LIST_ITEMS and all(_is_leaf(item) for item in node):
            flat[keys] = json.dumps(node)
            return
        for index, item in enumerate(node):
            _flatten(item, (*keys, index), flat)
        return
    if not isinstance(node, dict):
        flat[keys] = node
        return
    if "__tuple__" in node and len(node) == 1:
        _flatten(node["__tuple__"], keys, flat)
        return
    if MARKERS & node.keys():  # konfig's JSON markers (a reference, a set, bytes, ...): shown as they are
        flat[keys] = _show(node)
        return
    target = node.get("__qualname__", node.get("__const__"))
    if target is not None and keys:  # the root's target is the Trainer: no entry of its own
        flat[keys] = target
    for key, value in node.items():
        if isinstance(key, str) and key.startswith("__") and key.endswith("__"):
            continue  # __qualname__, __const__, __id__, __konfig_version__
        _flatten(value, (*keys, _key(key, call=target is not None)), flat)


def _key(key: str, *, call: bool) -> Any:
    if call and key.isdigit():
        return int(key)  # a positional argument
    if key.startswith(RAW_PREFIX):
        import ast

        try:
            return ast.literal_eval(key[len(RAW_PREFIX) :])
        except (ValueError, SyntaxError):
            return key
    return key


def _is_leaf(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _show(node: Any) -> str:
    """A reference as `cfg.a.b`, an operation as `op(arg, ...)`, another marker as its compact JSON."""
    if isinstance(node, dict) and "__ref__" in node:
        return "cfg" + "".join(
            f".{k}" if isinstance(k, str) and k.isidentifier() else f"[{k!r}]" for k in node["__ref__"]
        )
    if isinstance(node, dict) and "__op__" in node:
        args = [_show(a) for a in node.get("args", [])]
        args += [f"{k}={_show(v)}" for k, v in node.get("kwargs", {}).items()]
        return f"{node['__op__']}({', '.join(args)})"
    if isinstance(node, dict) and "__path__" in node:
        return str(node["__path__"])
    return json.dumps(node) if not isinstance(node, str) else repr(node)


# ---------------------------------------------------------------- values


def number(value: Any) -> float | None:
    """The value of a one-element number or array, else None (larger arrays are left out, as in JSON lines).
    bfloat16 and the other ml_dtypes floats count as numbers."""
    try:
        array = _real(np.asarray(value))
    except Exception:
        return None
    if array.size != 1 or not tb._is_real(array.dtype):
        return None
    return float(array.item())


def _real(array: np.ndarray) -> np.ndarray:
    """`array`, an ml_dtypes float one (bfloat16, float8_*: numpy does not call them floating) as float32."""
    if tb._is_real(array.dtype) or array.dtype.kind != "V":
        return array
    try:
        import ml_dtypes

        ml_dtypes.finfo(array.dtype)  # raises for what is not an ml_dtypes float
    except Exception:
        return array
    return array.astype(np.float32)


@dataclasses.dataclass(frozen=True)
class Summary:
    """One summary value as a tracker can show it: `kind` is "image" (`data`: a uint8 `(h, w, c)` grid),
    "histogram" (`data`: finite values, `num_buckets`), "text" (`data`: a str), "texts" (a list of str),
    "points" (`data`: `(n, 3)` points, `colors`: `(n, 3)` in [0, 255] or None) or "scalar" (a float)."""

    kind: str
    data: Any
    num_buckets: int = 30
    colors: Any = None


def summary_of(value: Any, *, num_buckets: int = 30, max_image_columns: int = 8) -> Summary | None:
    """What `value` is, by the rule of `kd.writers.TensorBoardWriter` (images are tiled the same way); None
    for what no tracker can show (an empty batch, an empty histogram, an unknown type)."""
    if isinstance(value, str):
        return Summary("text", value)
    texts = tb._texts(value)
    if texts is not None:
        return Summary("texts", texts) if texts else None
    if hasattr(value, "point_clouds") and hasattr(value, "point_colors"):  # kd.summaries.PointCloud
        points = np.asarray(value.point_clouds, np.float64).reshape(-1, 3)
        colors = None
        if value.point_colors is not None:
            raw = np.asarray(value.point_colors)
            scaled = np.clip(raw, 0.0, 1.0) * 255.0 if np.issubdtype(raw.dtype, np.floating) else raw
            colors = np.clip(np.round(np.nan_to_num(scaled)), 0, 255).reshape(-1, 3)
        return Summary("points", points, colors=colors) if points.shape[0] else None
    if hasattr(value, "values") and hasattr(value, "num_buckets"):  # kd.summaries.HistogramValue
        values = tb._finite(value.values)
        return Summary("histogram", values, num_buckets=int(value.num_buckets)) if values.size else None
    try:
        array = _real(np.asarray(value))
    except Exception:
        return None
    if not tb._is_real(array.dtype):
        return None
    if array.ndim in (3, 4) and array.shape[-1] in tb._IMAGE_CHANNELS:
        batch = array if array.ndim == 4 else array[None]
        if 0 in batch.shape[:3]:
            return None
        return Summary("image", tb._tile(tb._to_uint8(batch), max_image_columns))
    if array.size == 1:
        return Summary("scalar", float(array.item()))
    values = tb._finite(array)
    return Summary("histogram", values, num_buckets=num_buckets) if values.size else None


# ---------------------------------------------------------------- the writer


@dataclasses.dataclass(kw_only=True)
class TrackerWriter(Writer):
    """A writer sending the run to an experiment tracker (see the module docstring). Subclasses implement
    `_open`, `_send_scalars`, `_send_summaries`, `_send_config` and `_finish` (and, where it helps, `_prepare`:
    a summary converted on its own, and `_flush_client`: the client has what was sent).

    Attributes:
      project: the tracker's project (W&B) or experiment (MLflow); None: the tracker's own default (its
        environment variable, `WANDB_PROJECT` / `MLFLOW_EXPERIMENT_NAME`, first).
      name: the run's display name; None: the workdir's folder name.
      group: a group of runs (a sweep's items share one); None: none.
      tags: the run's tags (a "a,b" string is split); the Trainer's `setup.tags` are added.
      workdir: the Trainer's; it keeps the tracker run's id for a resume. None: a tracker run all the same,
        started afresh by each invocation.
    """

    TRACKER: ClassVar[str] = "tracker"  # the tracker's name in messages
    RUN_FILE: ClassVar[str] = "tracker_run.json"  # in the workdir: the run id and the steps sent
    FLAG: ClassVar[str | None] = None  # its name in `kd-train --track=...`
    PROJECT_ENV: ClassVar[tuple[str, ...]] = ()  # the environment variables naming the tracker's project

    project: str | None = None
    name: str | None = None
    group: str | None = None
    tags: Sequence[str] | str = ()
    workdir: Any = ROOT_CFG_REF.workdir
    setup: Any = dataclasses.field(default=ROOT_CFG_REF.setup, repr=False)  # its `tags` join ours

    # new (nothing opened yet), open, closed (by `close`; a resume opens it again), off (unreachable, not process 0)
    _state: str = dataclasses.field(default="new", init=False, repr=False, compare=False)
    _run_id: str | None = dataclasses.field(default=None, init=False, repr=False, compare=False)
    _config_json: str | None = dataclasses.field(default=None, init=False, repr=False, compare=False)
    _sent: dict[str, int] = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False)
    _sent_before: dict[str, int] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _warned: bool = dataclasses.field(default=False, init=False, repr=False, compare=False)
    _dropped: set[str] = dataclasses.field(default_factory=set, init=False, repr=False, compare=False)
    # `_sent` moved on since the run file was written
    _unsaved: bool = dataclasses.field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        kind = type(self).__name__
        for field in ("project", "name", "group"):
            value = getattr(self, field)
            if value is not None and not isinstance(value, str):
                raise TypeError(
                    f"{kind}.{field}: expected a str or None, found {value!r} ({type(value).__name__})"
                )
        tags = self.tags.split(",") if isinstance(self.tags, str) else self.tags
        if not isinstance(tags, Sequence) or not all(isinstance(t, str) for t in tags):
            raise TypeError(f"{kind}.tags: expected a list of str (or one 'a,b' str), found {self.tags!r}")
        self.tags = tuple(dict.fromkeys(t.strip() for t in tags if t.strip()))

    # ---------------------------------------------------------------- the Writer protocol

    def write_config(self, config_json: str) -> None:
        self._config_json = config_json
        if self._state == "open":
            self._guard("sending the config", self._send_config, flatten_config(config_json), config_json)

    def resume_from(self, step: int) -> None:
        """A fresh start (-1) opens a new tracker run; a resume continues the one the workdir names, and steps
        it already has are not sent again."""
        if self._state == "open" and step >= 0:  # trained again in this process, from a checkpoint
            self._sent_before = dict(self._sent)
            return
        if self._state == "open":  # trained again from step 0: this run ends, another starts
            self.flush()
            self._state = "closed"
            self._guard("ending the run", self._finish, "finished")
        if self._state == "off":
            return
        self._start(*(self._recorded() if step >= 0 else (None, {})))

    def write_scalars(self, step: int, scalars: Mapping[str, Any]) -> None:
        if not self._ready():
            return
        values = {}
        for name, value in scalars.items():
            v = number(value) if self._new(name, step) else None
            if v is not None:
                values[name] = v
        if values and self._guard(
            f"sending the values of step {step}", self._send_scalars, int(step), values
        ):
            self._record(step, values)

    def write_summaries(self, step: int, summaries: Mapping[str, Any]) -> None:
        if not self._ready():
            return
        shown = {}
        for name, value in summaries.items():
            if not self._new(name, step):
                continue
            try:  # each value on its own: one the tracker cannot take is left out, not the tracker
                summary = summary_of(value)
                item = None if summary is None else self._prepare(name, summary)
            except Exception as e:
                self._drop(name, e)
                continue
            if item is not None:
                shown[name] = item
        if shown and self._guard(
            f"sending the summaries of step {step}", self._send_summaries, int(step), shown
        ):
            self._record(step, shown)

    def flush(self) -> None:
        """Records, in `<workdir>/<RUN_FILE>`, the steps the tracker has (see the module docstring): once its
        client has what was sent (`_flush_client`); a client that cannot say so leaves the file as it was."""
        if self._state != "open" or not self._unsaved:
            return
        try:
            confirmed = self._flush_client()
        except Exception:
            confirmed = False  # steps since the last flush are sent again by a resume, not lost
        if confirmed:
            self._write_record()

    def close(self, *, failed: bool = False, killed: bool = False) -> None:
        """Ends the tracker run, as finished, as failed (`failed`: training raised) or as killed (`killed`:
        Ctrl-C, preempted); a resume continues it all the same."""
        self.flush()
        if self._state == "open":
            self._state = "closed"
            self._guard(
                "ending the run", self._finish, "failed" if failed else "killed" if killed else "finished"
            )

    @property
    def run_id(self) -> str | None:
        """The tracker run's id once it is open (kept in `<workdir>/<RUN_FILE>`)."""
        return self._run_id

    # ---------------------------------------------------------------- for subclasses

    def _open(
        self, run_id: str | None, flat_config: dict[tuple[Any, ...], Any] | None, config_json: str | None
    ) -> str:
        """Opens (`run_id` None) or continues the tracker run, with the config when known; returns its id.
        Raises when the tracker cannot be reached."""
        raise NotImplementedError

    def _send_scalars(self, step: int, values: dict[str, float]) -> None:
        raise NotImplementedError

    def _prepare(self, name: str, summary: Summary) -> Any:
        """`summary` as `_send_summaries` takes it (W&B: its media object); raising leaves this value out."""
        return summary

    def _send_summaries(self, step: int, summaries: dict[str, Any]) -> None:
        raise NotImplementedError

    def _send_config(self, flat_config: dict[tuple[Any, ...], Any], config_json: str) -> None:
        raise NotImplementedError

    def _flush_client(self) -> bool:
        """Waits until the client has what was sent; False when it cannot tell (the steps are not recorded)."""
        return True

    def _finish(self, status: str) -> None:
        """Ends the tracker run; `status`: "finished", "failed" or "killed"."""
        raise NotImplementedError

    def _drop(self, name: str, error: BaseException) -> None:
        """One value left out (the tracker cannot take it): one warning per name, the tracker goes on."""
        if name not in self._dropped:
            self._dropped.add(name)
            warnings.warn(
                f"{type(self).__name__}: {name!r} is left out of {self.TRACKER} ({_short_error(error)}); "
                "the other values are still sent, and this one is still in the workdir's files "
                "(metrics.jsonl, TensorBoard).",
                RuntimeWarning,
                stacklevel=4,
            )

    def _warn(self, message: str) -> None:
        """Warns once per writer; later problems are silent (the first one said training goes on without it)."""
        if not self._warned:
            self._warned = True
            warnings.warn(f"{type(self).__name__}: {message}", RuntimeWarning, stacklevel=4)

    def local_workdir(self) -> str | None:
        """The workdir when it is a local folder (trackers write their own files there), else None."""
        folder = self._folder()
        return None if folder is None or "://" in str(folder) else os.fspath(folder)

    def run_name(self) -> str | None:
        """`name`, else the workdir's folder name (None without a workdir: the tracker names the run)."""
        folder = self._folder()
        return self.name or (os.path.basename(os.fspath(folder).rstrip("/")) if folder is not None else None)

    def run_tags(self) -> tuple[str, ...]:
        """`tags` and the Trainer's `setup.tags`, each once."""
        setup_tags = getattr(self.setup, "tags", ()) if not isinstance(self.setup, RootRef) else ()
        return tuple(dict.fromkeys([*self.tags, *(setup_tags or ())]))

    # ---------------------------------------------------------------- internals

    def _folder(self) -> epath.Path | None:
        if self.workdir is None or isinstance(self.workdir, RootRef):
            return None
        return epath.Path(self.workdir)

    def _ready(self) -> bool:
        """Opened (on first use when no `resume_from` came first: the workdir's run goes on)."""
        if self._state == "new":
            self._start(*self._recorded())
        return self._state == "open"

    def _start(self, run_id: str | None, sent_before: dict[str, int]) -> None:
        import jax

        if jax.process_index() != 0:  # one host writes; the others compute
            self._state = "off"
            return
        flat = flatten_config(self._config_json) if self._config_json is not None else None
        try:
            self._run_id = self._open(run_id, flat, self._config_json)
        except Exception as e:
            self._state = "off"
            self._warn(
                f"{self.TRACKER} {_trouble(e)} ({_short_error(e)}); training goes on without it, "
                "and the values are still written to the workdir's files (metrics.jsonl, TensorBoard)."
            )
            return
        self._state = "open"
        self._sent_before = sent_before if run_id is not None and run_id == self._run_id else {}
        self._sent = dict(self._sent_before)
        self._write_record()

    def _guard(self, what: str, send: Any, *args: Any) -> bool:
        """`send(*args)`; on an error, one warning and the tracker is left alone for the rest of this run."""
        if self._state not in ("open", "closed"):
            return False
        try:
            send(*args)
        except Exception as e:
            self._state = "off"
            self._warn(
                f"{self.TRACKER} failed while {what} ({_short_error(e)}); nothing more is sent to it in "
                "this invocation, and the values are still written to the workdir's files "
                "(metrics.jsonl, TensorBoard). Running the same command again continues the tracker run."
            )
            return False
        return True

    def _new(self, name: str, step: int) -> bool:
        """Whether the tracker lacks `name` at `step` (a resumed run computes steps the last one had sent)."""
        return step > self._sent_before.get(name, -(2**62))

    def _record(self, step: int, names: Mapping[str, Any]) -> None:
        """The steps sent, in memory: `flush` writes them to the run file once the tracker has them."""
        for name in names:
            self._sent[name] = max(int(step), self._sent.get(name, int(step)))
        self._unsaved = True

    def _recorded(self) -> tuple[str | None, dict[str, int]]:
        """`(run id, {name: last step sent})` from `<workdir>/<RUN_FILE>`; `(None, {})` without one."""
        folder = self._folder()
        path = None if folder is None else folder / self.RUN_FILE
        if path is None or not path.exists():
            return None, {}
        try:
            record = json.loads(path.read_text())
            steps = {str(k): int(v) for k, v in dict(record.get("steps") or {}).items()}
        except (OSError, ValueError, TypeError, AttributeError):
            return None, {}  # unreadable: a new tracker run rather than a stopped training run
        run_id = record.get("run_id")
        return (run_id, steps) if isinstance(run_id, str) and run_id else (None, {})

    def _write_record(self) -> None:
        folder = self._folder()
        if folder is None or self._run_id is None:
            return
        record = {"tracker": self.TRACKER, "run_id": self._run_id, "steps": self._sent}
        try:
            folder.mkdir(parents=True, exist_ok=True)
            write_text_atomic(folder / self.RUN_FILE, json.dumps(record, indent=1, sort_keys=True))
        except Exception as e:  # a full or read-only disk, a cloud store's error: the tracker goes on
            self._warn(
                f"cannot write {folder / self.RUN_FILE} ({_short_error(e)}); a resumed run may start a new "
                f"{self.TRACKER} run or send steps again."
            )
            return
        self._unsaved = False


def unreachable(url: str, timeout: float) -> str | None:
    """Why an http(s) `url`'s host does not accept a TCP connection within `timeout` seconds, or None when it
    does (or when it cannot be told: another scheme, or a proxy in the environment, which the client uses)."""
    import socket
    import urllib.parse

    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return None
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")):
        return None
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        socket.create_connection((parsed.hostname, port), timeout=timeout).close()
    except (OSError, ValueError) as e:
        return f"no connection to {parsed.hostname}:{parsed.port or parsed.scheme} ({e})"
    return None


def same_server(url: str, other: str) -> bool:
    """Whether two server URLs name one endpoint: the same scheme, host and port (a scheme's default port
    written or not, letters in any case) and path (a trailing `/` or not)."""
    import urllib.parse

    def key(text: str) -> tuple[str, str, int | None, str]:
        parsed = urllib.parse.urlsplit(str(text).strip())
        scheme, path = parsed.scheme.lower(), parsed.path.rstrip("/")
        try:
            port = parsed.port or {"http": 80, "https": 443}.get(scheme)
        except ValueError:  # not a port number: the address as written
            return scheme, parsed.netloc.lower(), None, path
        return scheme, (parsed.hostname or "").lower(), port, path

    return key(url) == key(other)


def is_connection_error(error: BaseException) -> bool:
    """Whether `error` (or what it was raised from) says the tracker could not be reached or did not answer."""
    seen: BaseException | None = error
    for _ in range(8):
        if seen is None:
            break
        if isinstance(seen, (ConnectionError, TimeoutError)) or type(seen).__name__ in (
            "ConnectionError",
            "ConnectTimeout",
            "ReadTimeout",
            "Timeout",
            "CommError",
            "MaxRetryError",
        ):
            return True
        text = str(seen).lower()
        if any(w in text for w in ("connection refused", "timed out", "failed to establish", "max retries")):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _trouble(error: BaseException) -> str:
    return "cannot be reached" if is_connection_error(error) else "could not start the run"


def _short_error(error: BaseException) -> str:
    text = " ".join(str(error).split())
    text = text if len(text) <= 300 else text[:297] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
