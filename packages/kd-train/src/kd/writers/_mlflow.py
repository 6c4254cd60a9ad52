"""`MlflowWriter`: the run in MLflow (the `kd-train[mlflow]` extra): params, metrics, images, texts.

    cfg.writer = kd.writers.MultiWriter(writers=[kd.writers.KDMetricWriter(),
                                                 kd.writers.MlflowWriter(tracking_uri="http://mlflow:5000")])
    # or, without editing the config: MLFLOW_TRACKING_URI=http://mlflow:5000 kd-train ... --track=mlflow

The client is mlflow-skinny (no server, no SQL store), imported when the writer is made, never by `import kd`.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import re
import time
from typing import Any

from kd.writers._tracker import Summary, TrackerWriter, import_extra, unreachable

# MLflow's limits (mlflow.utils.validation): per log_batch request, and of a param's name and value.
_METRICS_PER_BATCH, _PARAMS_PER_BATCH = 1000, 100
_MAX_KEY, _MAX_PARAM_VALUE, _MAX_TAG_VALUE = 250, 6000, 8000
_BAD_NAME_CHARACTERS = re.compile(r"[^\w./\- :]")  # what MLflow's names may not hold


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
    training raised) or when the process exits. A resume continues the MLflow run whose id
    `<workdir>/mlflow_run.json` holds (RUNNING again), without logging a step twice; params it already has are kept (MLflow's
    params cannot change). The tags: each `key=value` tag (a sweep item's override) becomes the MLflow tag
    `key` with that value, another tag `t` the tag `t` with an empty value, `group` the tag `group`.

    A server that cannot be reached: before the run is created, a connection to it is tried for
    `connect_timeout` seconds; failing that (or any MLflow call later) one warning, and training goes on
    without MLflow (the values stay in the workdir's files). MLflow's own retries of a request that fails
    mid-run follow `MLFLOW_HTTP_REQUEST_MAX_RETRIES` and `MLFLOW_HTTP_REQUEST_TIMEOUT`.

    Attributes (and those of `TrackerWriter`: project, name, group, tags, workdir):
      tracking_uri: the server (`http://host:5000`), `databricks`, or a local store `file:/path` (MLflow 3
        wants `MLFLOW_ALLOW_FILE_STORE=true` for that); None: `MLFLOW_TRACKING_URI`, else MLflow's default.
      connect_timeout: seconds to wait for an http(s) server to accept a connection before the run starts.
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

        client = MlflowClient(tracking_uri=self.tracking_uri)
        _check_reachable(client.tracking_uri, self.connect_timeout)
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
        metrics = [Metric(_name(k), v, now, step) for k, v in values.items()]
        for start in range(0, len(metrics), _METRICS_PER_BATCH):
            self._client.log_batch(self._run_id, metrics=metrics[start : start + _METRICS_PER_BATCH])

    def _send_summaries(self, step: int, summaries: dict[str, Summary]) -> None:
        numbers = {}
        for name, summary in summaries.items():
            if summary.kind == "image":
                image = summary.data[..., 0] if summary.data.shape[-1] == 1 else summary.data
                self._client.log_image(self._run_id, image, key=_name(name), step=step)
            elif summary.kind in ("text", "texts"):
                text = summary.data if summary.kind == "text" else "\n".join(summary.data)
                self._client.log_text(self._run_id, text, f"summaries/{_name(name)}/step_{step}.txt")
            elif summary.kind == "scalar":
                numbers[name] = summary.data
        if numbers:
            self._send_scalars(step, numbers)

    def _send_config(self, flat_config: dict[tuple[Any, ...], Any], config_json: str) -> None:
        self._log_config(self._client.get_run(self._run_id), flat_config, config_json)

    def _finish(self, failed: bool) -> None:
        atexit.unregister(self.close)
        self._client.set_terminated(self._run_id, "FAILED" if failed else "FINISHED")

    # ---------------------------------------------------------------- internals

    def _tags(self) -> dict[str, str]:
        tags = {}
        for tag in self.run_tags():
            key, _, value = tag.partition("=")
            tags[_name(key.strip())] = value.strip()[:_MAX_TAG_VALUE]
        if self.group is not None:
            tags["group"] = self.group
        return tags

    def _log_config(self, run: Any, flat_config: dict[tuple[Any, ...], Any], config_json: str | None) -> None:
        """The params the run lacks (MLflow keeps a param's first value), and `config.json` as an artifact."""
        from mlflow.entities import Param

        have = set(run.data.params)
        params = {}
        for keys, value in flat_config.items():
            key = _name(".".join(str(k) for k in keys))
            if key and key not in have and len(key) <= _MAX_KEY:
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


def _check_reachable(uri: str, timeout: float) -> None:
    """ConnectionError if an http(s) server does not accept a connection within `timeout` seconds (MLflow's
    own retries of an unreachable server take minutes)."""
    problem = unreachable(str(uri), timeout)
    if problem is not None:
        raise ConnectionError(f"no MLflow server answers at {uri}: {problem}")
