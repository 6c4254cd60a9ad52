"""`MlflowWriter`: the run in MLflow (the `kd-train[mlflow]` extra): params, metrics, images, texts.

    cfg.writer = kd.writers.MultiWriter(writers=[kd.writers.KDMetricWriter(),
                                                 kd.writers.MlflowWriter(tracking_uri="http://mlflow:5000")])
    # or, without editing the config: MLFLOW_TRACKING_URI=http://mlflow:5000 kd-train ... --track=mlflow

The client is mlflow-skinny (no server, no SQL store), imported when the writer is made, never by `import kd`.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import hashlib
import math
import os
import re
import time
from collections.abc import Iterator
from typing import Any

from kd.writers._tracker import Summary, TrackerWriter, import_extra, same_server, unreachable

# MLflow's limits (mlflow.utils.validation): per log_batch request, and of a param's name and value.
_METRICS_PER_BATCH, _PARAMS_PER_BATCH = 1000, 100
_MAX_KEY, _MAX_PARAM_VALUE, _MAX_TAG_VALUE = 250, 6000, 8000
_BAD_NAME_CHARACTERS = re.compile(r"[^\w./\- :]")  # what MLflow's names may not hold
# What MLflow sends to any http(s) tracking server it is given (mlflow.utils.credentials), besides
# `~/.mlflow/credentials`.
_CREDENTIAL_VARIABLES = (
    "MLFLOW_TRACKING_TOKEN",
    "MLFLOW_TRACKING_USERNAME",
    "MLFLOW_TRACKING_PASSWORD",
    "MLFLOW_TRACKING_AWS_SIGV4",
    "MLFLOW_TRACKING_AUTH",
)


def import_mlflow() -> Any:
    mlflow = import_extra("mlflow", "MlflowWriter", "mlflow")
    import_extra("mlflow.entities", "MlflowWriter", "mlflow")
    import_extra("mlflow.tracking", "MlflowWriter", "mlflow")
    return mlflow


@dataclasses.dataclass(kw_only=True)
class MlflowWriter(TrackerWriter):
    """Sends the run to MLflow: the config as params (one per konfig path, `model.layers.0.features`, as
    MLflow's names hold no brackets) and as the artifact `config.json`, the scalars as metrics at their
    training step, images as MLflow's stepped images (`log_image(key=..., step=...)`), texts as artifacts
    `summaries/<name>/step_<step>.txt`, the evaluators' values under their names (`val/losses/total`).
    MLflow has no histograms or point clouds: those stay in the TensorBoard files.

    Usage: `kd.writers.MlflowWriter(tracking_uri="http://mlflow:5000", project="digits")`, or
    `kd-train ... --track=mlflow` beside the default writers (`MLFLOW_TRACKING_URI` names the server).

    The run's status: RUNNING, then FINISHED at `close()` (`kd-train` closes it when training ends, FAILED if
    training raised, KILLED on Ctrl-C or a preemption) or when the process exits. A resume continues the
    MLflow run whose id `<workdir>/mlflow_run.json` holds (RUNNING again), without logging a step twice;
    params it already has are kept (MLflow's params cannot change); two konfig paths that give one param name
    (`aux["a.b"]` and `aux.a.b`) are both kept, the second with a hash of its path at its end. The tags: each `key=value` tag (a sweep item's override) becomes the MLflow tag
    `key` with that value, another tag `t` the tag `t` with an empty value, `group` the tag `group`.

    A server that cannot be reached: before the run is created, a connection to it is tried for
    `connect_timeout` seconds; failing that (or any MLflow call later) one warning, and training goes on
    without MLflow (the values stay in the workdir's files). This writer's requests wait at most
    `connect_timeout` seconds for an answer and are not retried (`MLFLOW_HTTP_REQUEST_TIMEOUT` and
    `MLFLOW_HTTP_REQUEST_MAX_RETRIES` are set to that and 0 during its calls, unless the environment sets
    them already: then MLflow's own timeout and retries apply), so a server that takes connections and never
    answers costs one `connect_timeout`, not MLflow's minutes of retries. A value MLflow refuses (a name
    that MLflow's rules reject) is left out with one warning per name; names over MLflow's 250 characters are
    cut, with a hash of the whole name at their end.

    Credentials stay with their server: MLflow sends the credentials of your environment
    (`MLFLOW_TRACKING_TOKEN`, `MLFLOW_TRACKING_USERNAME` / `PASSWORD`, `~/.mlflow/credentials`, AWS SigV4
    signing, an auth plugin) to any http(s) server it is given, so while such credentials are set, a
    `tracking_uri` other than your `MLFLOW_TRACKING_URI` (a config is data, and may come from someone else) is
    refused when the run starts, before any connection: one warning names the field, and training goes on
    without MLflow; set `MLFLOW_TRACKING_URI` yourself to use another server. A `file:` store and
    `databricks` (whose host and token come together from your Databricks config) send nothing of the kind.

    Attributes (and those of `TrackerWriter`: project, name, group, tags, workdir):
      tracking_uri: the server (`http://host:5000`), `databricks`, or a local store `file:/path` (MLflow 3
        wants `MLFLOW_ALLOW_FILE_STORE=true` for that); None: `MLFLOW_TRACKING_URI`, else MLflow's default.
      connect_timeout: seconds to wait for an http(s) server to accept a connection before the run starts,
        and for each of this writer's requests to be answered.
    """

    TRACKER = "MLflow"
    RUN_FILE = "mlflow_run.json"
    FLAG = "mlflow"
    PROJECT_ENV = ("MLFLOW_EXPERIMENT_NAME", "MLFLOW_EXPERIMENT_ID")

    tracking_uri: str | None = None
    connect_timeout: float = 5.0

    _client: Any = dataclasses.field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tracking_uri is not None and not isinstance(self.tracking_uri, str):
            raise TypeError(
                f"MlflowWriter.tracking_uri: expected a str (http://host:5000, file:/path) or None, "
                f"found {self.tracking_uri!r}"
            )
        if not (isinstance(self.connect_timeout, (int, float)) and self.connect_timeout > 0):
            raise ValueError(
                f"MlflowWriter.connect_timeout: expected a number of seconds > 0, found {self.connect_timeout!r}"
            )
        import_mlflow()  # fails when the run is configured, not at its first logging step

    def _open(
        self, run_id: str | None, flat_config: dict[tuple[Any, ...], Any] | None, config_json: str | None
    ) -> str:
        import_mlflow()
        from mlflow.tracking import MlflowClient

        # Here, when the run starts, not when the writer is made: resolving a config reads no file of yours.
        problem = credentials_problem(self.tracking_uri)
        if problem is not None:
            self._warn(  # whole (the warning for a failed start cuts its error short), and the only one
                f"{problem}; training goes on without MLflow, and the values are still written to the "
                "workdir's files (metrics.jsonl, TensorBoard)."
            )
            raise PermissionError(problem)
        client = MlflowClient(tracking_uri=self.tracking_uri)
        _check_reachable(client.tracking_uri, self.connect_timeout)
        with self._bounded():
            return self._open_run(client, run_id, flat_config, config_json)

    def _open_run(
        self,
        client: Any,
        run_id: str | None,
        flat_config: dict[tuple[Any, ...], Any] | None,
        config_json: str | None,
    ) -> str:
        run = _existing_run(client, run_id)
        if run is None:
            run = client.create_run(
                _experiment_id(client, self.project), run_name=self.run_name(), tags=self._tags()
            )
        else:
            client.update_run(run.info.run_id, status="RUNNING")
        self._client, run_id = client, run.info.run_id
        if flat_config is not None:
            self._log_config(run, flat_config, config_json)
        atexit.register(self.close)  # MLflow's run says FINISHED once this process is done with it
        return run_id

    def _send_scalars(self, step: int, values: dict[str, float]) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        metrics = {k: Metric(_key(k), v, now, step) for k, v in values.items()}
        names = list(metrics)
        with self._bounded():
            for start in range(0, len(names), _METRICS_PER_BATCH):
                batch = names[start : start + _METRICS_PER_BATCH]
                try:
                    self._client.log_batch(self._run_id, metrics=[metrics[n] for n in batch])
                except Exception as e:
                    if not (_refused_value(e) and self._takes_values()):
                        raise
                    for name in batch:  # which one: each on its own, the refused ones left out
                        try:
                            self._client.log_batch(self._run_id, metrics=[metrics[name]])
                        except Exception as one:
                            if not _refused_value(one):
                                raise
                            self._drop(name, one)

    def _send_summaries(self, step: int, summaries: dict[str, Summary]) -> None:
        numbers = {}
        with self._bounded():
            for name, summary in summaries.items():
                try:
                    if summary.kind == "image":
                        image = summary.data[..., 0] if summary.data.shape[-1] == 1 else summary.data
                        self._client.log_image(self._run_id, image, key=_key(name), step=step)
                    elif summary.kind in ("text", "texts"):
                        text = summary.data if summary.kind == "text" else "\n".join(summary.data)
                        self._client.log_text(self._run_id, text, f"summaries/{_key(name)}/step_{step}.txt")
                    elif summary.kind == "scalar":
                        numbers[name] = summary.data
                except Exception as e:
                    if not (_refused_value(e) and self._takes_values()):
                        raise
                    self._drop(name, e)
        if numbers:
            self._send_scalars(step, numbers)

    def _send_config(self, flat_config: dict[tuple[Any, ...], Any], config_json: str) -> None:
        with self._bounded():
            self._log_config(self._client.get_run(self._run_id), flat_config, config_json)

    def _finish(self, status: str) -> None:
        atexit.unregister(self.close)
        with self._bounded():
            self._client.set_terminated(self._run_id, status.upper())  # FINISHED, FAILED, KILLED

    def _takes_values(self) -> bool:
        """Whether the run still takes values (MLflow says INVALID_PARAMETER_VALUE for a deleted run too)."""
        try:
            return self._client.get_run(self._run_id).info.lifecycle_stage == "active"
        except Exception:
            return False

    @contextlib.contextmanager
    def _bounded(self) -> Iterator[None]:
        """MLflow's HTTP timeout `connect_timeout` and no retries, for this writer's calls, unless the
        environment names its own (MLflow reads both at each request)."""
        bounds = {
            "MLFLOW_HTTP_REQUEST_TIMEOUT": str(max(1, math.ceil(self.connect_timeout))),
            "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",
        }
        set_here = [k for k in bounds if k not in os.environ]
        for k in set_here:
            os.environ[k] = bounds[k]
        try:
            yield
        finally:
            for k in set_here:
                os.environ.pop(k, None)

    # ---------------------------------------------------------------- internals

    def _tags(self) -> dict[str, str]:
        tags = {}
        for tag in self.run_tags():
            key, _, value = tag.partition("=")
            tags[_key(key.strip())] = value.strip()[:_MAX_TAG_VALUE]
        if self.group is not None:
            tags["group"] = self.group
        return tags

    def _log_config(self, run: Any, flat_config: dict[tuple[Any, ...], Any], config_json: str | None) -> None:
        """The params the run lacks (MLflow keeps a param's first value), and `config.json` as an artifact."""
        from mlflow.entities import Param

        have = set(run.data.params)
        params, paths = {}, {}
        for keys, value in flat_config.items():
            key = _name(".".join(str(k) for k in keys))
            if key in paths and paths[key] != keys:  # `a["b.c"]` and `a.b.c`: both, the second one marked
                key = _name(f"{key}-{hashlib.sha1(repr(keys).encode()).hexdigest()[:8]}")
            paths.setdefault(key, keys)
            key = _cut(key)
            if key and key not in have:
                text = value if isinstance(value, str) else _json(value)
                params[key] = text if len(text) <= _MAX_PARAM_VALUE else text[: _MAX_PARAM_VALUE - 3] + "..."
        items = [Param(k, v) for k, v in params.items()]
        for start in range(0, len(items), _PARAMS_PER_BATCH):
            self._client.log_batch(run.info.run_id, params=items[start : start + _PARAMS_PER_BATCH])
        if config_json is not None:
            self._client.log_text(run.info.run_id, config_json, "config.json")


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


def _name(name: str) -> str:
    """`name` with the characters MLflow refuses in names replaced by `_`."""
    return _BAD_NAME_CHARACTERS.sub("_", name)


def _cut(name: str) -> str:
    """`name`, or over MLflow's 250 characters its start and a hash of the whole (names stay distinct)."""
    if len(name) <= _MAX_KEY:
        return name
    return f"{name[: _MAX_KEY - 9]}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def _key(name: str) -> str:
    """A logged name as MLflow's metric / image key."""
    return _cut(_name(name))


def _refused_value(error: BaseException) -> bool:
    """Whether MLflow refused one value (a bad name or value), rather than failing as a whole."""
    if type(error).__name__ == "MlflowException" or hasattr(error, "error_code"):
        return getattr(error, "error_code", "") == "INVALID_PARAMETER_VALUE"
    return isinstance(error, (ValueError, TypeError))


def _existing_run(client: Any, run_id: str | None) -> Any:
    """The run `run_id` if this tracking server has it (a workdir moved to another server starts a new one)."""
    if run_id is None:
        return None
    from mlflow.exceptions import MlflowException

    try:
        return client.get_run(run_id)
    except MlflowException as e:
        if getattr(e, "error_code", "") == "RESOURCE_DOES_NOT_EXIST" or "not found" in str(e).lower():
            return None
        raise


def _experiment_id(client: Any, name: str | None) -> str:
    """The id of the experiment `name` (made if new); None: `MLFLOW_EXPERIMENT_ID` / `_NAME`, else "Default"."""
    if name is None:
        if os.environ.get("MLFLOW_EXPERIMENT_ID"):
            return os.environ["MLFLOW_EXPERIMENT_ID"]
        name = os.environ.get("MLFLOW_EXPERIMENT_NAME") or "Default"
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    return client.create_experiment(name)


def credentials_problem(tracking_uri: str | None) -> str | None:
    """Why MLflow would send the credentials of your environment to `tracking_uri` (a config's), an http(s)
    server other than your `MLFLOW_TRACKING_URI`; None when it would not (no such credentials, the same server,
    None: MLflow's own choice, or a store that takes none: `file:`, `databricks`).

    Usage: `credentials_problem("http://mlflow.example:5000")` -> "MlflowWriter.tracking_uri ... " while
    `MLFLOW_TRACKING_TOKEN` is set and `MLFLOW_TRACKING_URI` names another server.
    """
    import urllib.parse

    if tracking_uri is None or urllib.parse.urlsplit(tracking_uri).scheme.lower() not in ("http", "https"):
        return None
    own = os.environ.get("MLFLOW_TRACKING_URI")
    if own and same_server(tracking_uri, own):
        return None
    held = [
        v for v in _CREDENTIAL_VARIABLES if os.environ.get(v, "").strip().lower() not in ("", "false", "0")
    ]
    if _credentials_file_holds_some():
        held.append("~/.mlflow/credentials")
    if not held:
        return None
    return (
        f"MlflowWriter.tracking_uri ({tracking_uri!r}) is not the server your environment names "
        f"(MLFLOW_TRACKING_URI: {own or 'not set'}); the credentials of your environment ({', '.join(held)}) "
        f"are sent only there: set MLFLOW_TRACKING_URI={tracking_uri} yourself to use that server"
    )


def _credentials_file_holds_some() -> bool:
    """Whether `~/.mlflow/credentials` (MLflow's file, read for every http(s) server) has a username or password."""
    import configparser

    parser = configparser.ConfigParser()
    try:
        parser.read(os.path.expanduser("~/.mlflow/credentials"))
    except (OSError, configparser.Error):
        return False
    return any(
        parser.get("mlflow", k, fallback="") for k in ("mlflow_tracking_username", "mlflow_tracking_password")
    )


def _check_reachable(uri: str, timeout: float) -> None:
    """ConnectionError if an http(s) server does not accept a connection within `timeout` seconds (MLflow's
    own retries of an unreachable server take minutes)."""
    problem = unreachable(str(uri), timeout)
    if problem is not None:
        raise ConnectionError(f"no MLflow server answers at {uri}: {problem}")
