"""kd.writers.WandbWriter and MlflowWriter: real W&B offline run files and a real MLflow file store, read back.

W&B runs offline (nothing leaves the machine); its `run-<id>.wandb` files are read with `wandb_runs` below (the
record log W&B writes, parsed into W&B's own protobuf records). MLflow writes a `file:` store in the test's
folder, read back with `mlflow.tracking.MlflowClient`. An unreachable tracker is a closed port on localhost.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import struct
import subprocess
import sys
import time
import tomllib
import zlib
from pathlib import Path
from typing import Any

import jax
import kd
import numpy as np
import pytest
from kd.cli import _track
from kd.writers import _tracker

ROOT = Path(__file__).resolve().parents[2]
CONFIG_JSON = json.dumps(
    {
        "__konfig_version__": 1,
        "__qualname__": "kd.train:Trainer",
        "seed": 3,
        "num_train_steps": 40,
        "model": {
            "__qualname__": "flax.linen:Sequential",
            "layers": [{"__qualname__": "flax.linen:Dense", "features": 8}, {"__const__": "flax.linen:relu"}],
        },
        "schedules": {
            "lr": {
                "__qualname__": "optax:cosine_decay_schedule",
                "0": 0.1,
                "decay_steps": {"__op__": "floordiv", "args": [{"__ref__": ["num_train_steps"]}, 2]},
            }
        },
        "shape": {"__tuple__": [2, 3]},
        "workdir": None,
    }
)


# ---------------------------------------------------------------------------------------------- reading W&B back

_BLOCK, _HEADER = 32768, 7  # W&B's record log: LevelDB's log format after a 7-byte file header


def _wandb_records(path: Path) -> list[Any]:
    """The records of a `run-<id>.wandb` file (checksums checked), as W&B's protobuf `Record`s."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    ident, magic, _version = struct.unpack("<4sHB", data[:_HEADER])
    assert (ident, magic) == (b":W&B", 0xBEE1), f"{path} is not a W&B record log"
    records, pending, pos = [], b"", _HEADER
    while pos + _HEADER <= len(data):
        if _BLOCK - pos % _BLOCK < _HEADER:  # a block's tail too short for a header is padding
            pos += _BLOCK - pos % _BLOCK
            continue
        checksum, length, kind = struct.unpack("<IHB", data[pos : pos + _HEADER])
        if kind == 0 and length == 0:
            break
        chunk = data[pos + _HEADER : pos + _HEADER + length]
        assert zlib.crc32(chunk, zlib.crc32(bytes([kind]))) & 0xFFFFFFFF == checksum, f"bad record at {pos}"
        pos += _HEADER + length
        pending = chunk if kind in (1, 2) else pending + chunk  # full / first, then middle / last
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            records.append(record)
    return records


def _finished_records(path: Path) -> list[Any]:
    """The records of a finished run: W&B's service process writes the file on its own, and may still be at it
    when `run.finish()` returns; its last record is `exit`."""
    deadline = time.monotonic() + 30
    while True:
        records = _wandb_records(path)
        if any(r.WhichOneof("record_type") == "exit" for r in records):
            return records
        assert time.monotonic() < deadline, f"{path} has no exit record 30 s after its run finished"
        time.sleep(0.05)


@dataclasses.dataclass
class WandbRun:
    """One offline run folder: the run's identity, config and history rows (values decoded from JSON)."""

    folder: Path
    run_id: str
    project: str
    name: str
    group: str
    tags: list[str]
    config: dict[str, Any]
    rows: list[dict[str, Any]]

    def steps(self, name: str) -> list[tuple[int, Any]]:
        return [(row["step"], row[name]) for row in self.rows if name in row]


def wandb_runs(workdir: Path) -> list[WandbRun]:
    """Every W&B offline run folder under `<workdir>/wandb`, in the order they were started."""
    runs = []
    for folder in sorted((workdir / "wandb").glob("offline-run-*")):
        (log,) = folder.glob("run-*.wandb")
        run, config, rows = None, {}, []
        for record in _finished_records(log):
            kind = record.WhichOneof("record_type")
            if kind == "run":
                run = record.run
                config.update({i.key: json.loads(i.value_json) for i in run.config.update})
            elif kind == "config":
                config.update({i.key: json.loads(i.value_json) for i in record.config.update})
            elif kind == "history":
                rows.append(
                    {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in record.history.item}
                )
        assert run is not None, f"{log} has no run record"
        config.pop("_wandb", None)
        runs.append(
            WandbRun(
                folder, run.run_id, run.project, run.display_name, run.run_group, list(run.tags), config, rows
            )
        )
    return runs


# ---------------------------------------------------------------------------------------------- helpers


def closed_port() -> int:
    """A localhost port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def file_store(tmp_path, monkeypatch) -> str:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 asks for it to use a file store
    return (tmp_path / "mlruns").as_uri()


@pytest.fixture(autouse=True)
def _quiet_wandb(monkeypatch):
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")
    monkeypatch.delenv("WANDB_PROJECT", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


def _wandb(workdir: Path, **fields: Any) -> kd.writers.WandbWriter:
    return kd.writers.WandbWriter(workdir=str(workdir), mode=fields.pop("mode", "offline"), **fields)


def _mlflow(workdir: Path, uri: str, **fields: Any) -> kd.writers.MlflowWriter:
    return kd.writers.MlflowWriter(workdir=str(workdir), tracking_uri=uri, **fields)


def _client(uri: str):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def _history(uri: str, run_id: str, key: str) -> list[tuple[int, float]]:
    return sorted((m.step, m.value) for m in _client(uri).get_metric_history(run_id, key))


def _session(writer: kd.writers.Writer, resume: int, steps: range, *, config: str = CONFIG_JSON) -> None:
    """What the Trainer does with a writer in one invocation: config, resume point, a value per step, close."""
    writer.write_config(config)
    writer.resume_from(resume)
    for step in steps:
        writer.write_scalars(step, {"losses/total": 1.0 / step, "val/losses/total": 2.0 / step})
    writer.close()


# ---------------------------------------------------------------------------------------------- the config


def test_the_config_is_flattened_to_konfig_paths():
    flat = {_tracker.format_path(k): v for k, v in _tracker.flatten_config(CONFIG_JSON).items()}
    assert flat["seed"] == 3
    assert flat["model"] == "flax.linen:Sequential"
    assert flat["model.layers[0]"] == "flax.linen:Dense"
    assert flat["model.layers[0].features"] == 8
    assert flat["model.layers[1]"] == "flax.linen:relu"
    assert flat["schedules.lr[0]"] == 0.1  # a positional argument
    assert flat["schedules.lr.decay_steps"] == "floordiv(cfg.num_train_steps, 2)"
    assert flat["shape[0]"] == 2 and flat["shape[1]"] == 3
    assert flat["workdir"] is None
    assert not any(k.startswith("__") or "__qualname__" in k for k in flat)


def test_a_long_list_of_numbers_is_one_config_entry():
    flat = _tracker.flatten_config(json.dumps({"__qualname__": "kd.train:Trainer", "ids": list(range(100))}))
    assert flat == {("ids",): json.dumps(list(range(100)))}


# ---------------------------------------------------------------------------------------------- W&B


def test_wandb_run_has_the_config_identity_and_the_setup_tags(tmp_path):
    writer = _wandb(
        tmp_path,
        project="digits",
        group="sweep-a",
        tags="lr=0.1, baseline",
        setup=kd.train.Setup(tags=["nightly"]),
    )
    _session(writer, -1, range(1, 3))
    (run,) = wandb_runs(tmp_path)
    assert (run.project, run.name, run.group) == ("digits", tmp_path.name, "sweep-a")
    assert run.tags == ["lr=0.1", "baseline", "nightly"]
    assert run.config["model.layers[0].features"] == 8
    assert run.config["schedules.lr.decay_steps"] == "floordiv(cfg.num_train_steps, 2)"
    assert json.loads((tmp_path / "wandb_run.json").read_text())["run_id"] == run.run_id == writer.run_id


def test_wandb_scalars_and_evaluator_values_are_at_their_training_step(tmp_path):
    writer = _wandb(tmp_path)
    writer.resume_from(-1)
    writer.write_scalars(1, {"losses/total": 0.5, "metrics/acc": np.float32(0.25), "big": np.zeros(3)})
    writer.write_scalars(10, {"losses/total": 0.25, "val/metrics/acc": 0.75})
    writer.close()
    (run,) = wandb_runs(tmp_path)
    assert run.steps("losses/total") == [(1, 0.5), (10, 0.25)]
    assert run.steps("metrics/acc") == [(1, 0.25)]
    assert run.steps("val/metrics/acc") == [(10, 0.75)]
    assert not any("big" in row for row in run.rows)  # an array is not a scalar (as in metrics.jsonl)


def test_wandb_summaries_are_images_histograms_and_tables(tmp_path):
    writer = _wandb(tmp_path)
    writer.resume_from(-1)
    images = np.zeros((3, 4, 5, 3), np.float32)
    images[1] = 1.0
    writer.write_summaries(
        20,
        {
            "summaries/images": images,
            "summaries/hist": kd.summaries.HistogramValue(values=np.arange(100.0), num_buckets=10),
            "summaries/note": "hello",
            "val/summaries/texts": ["a", "b"],
        },
    )
    writer.close()
    (run,) = wandb_runs(tmp_path)
    (row,) = run.rows
    assert row["step"] == 20
    assert row["summaries/images/_type"] == "image-file"
    assert (row["summaries/images/height"], row["summaries/images/width"]) == (
        4,
        3 * 5 + 2,
    )  # tiled, 1 px apart
    from PIL import Image

    pixels = np.asarray(Image.open(run.folder / "files" / row["summaries/images/path"]))
    assert pixels.shape == (4, 17, 3) and pixels[:, 6:11].min() == 255 and pixels[:, :5].max() == 0
    assert row["summaries/hist/_type"] == "histogram"
    assert sum(row["summaries/hist/values"]) == 100 and len(row["summaries/hist/bins"]) == 11
    assert row["summaries/note/_type"] == "table-file" and row["val/summaries/texts/nrows"] == 2


def test_wandb_resume_continues_the_run_without_sending_a_step_twice(tmp_path):
    _session(_wandb(tmp_path), -1, range(1, 31))  # the first invocation got to step 30
    _session(_wandb(tmp_path), 20, range(21, 41))  # its checkpoint was step 20: 21..30 are computed again
    first, second = wandb_runs(tmp_path)
    assert first.run_id == second.run_id
    steps = [s for run in (first, second) for s, _ in run.steps("losses/total")]
    assert steps == list(range(1, 41))
    assert [s for s, _ in second.steps("val/losses/total")] == list(range(31, 41))


def test_wandb_run_closed_as_failed_exits_with_code_1(tmp_path):
    writer = _wandb(tmp_path)
    writer.resume_from(-1)
    writer.write_scalars(1, {"losses/total": 1.0})
    writer.close(failed=True)
    (run,) = wandb_runs(tmp_path)
    (exit_record,) = [
        r for r in _finished_records(next(run.folder.glob("run-*.wandb"))) if r.HasField("exit")
    ]
    assert exit_record.exit.exit_code == 1


def test_wandb_fresh_start_opens_a_new_run(tmp_path):
    _session(_wandb(tmp_path), -1, range(1, 3))
    _session(_wandb(tmp_path), -1, range(1, 3))  # no checkpoint to resume from: the run starts over
    first, second = wandb_runs(tmp_path)
    assert first.run_id != second.run_id
    assert second.steps("losses/total") == [(1, 1.0), (2, 0.5)]


def test_wandb_that_cannot_be_reached_writes_the_run_offline_with_one_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", "k" * 40)
    monkeypatch.setenv("WANDB_BASE_URL", f"http://127.0.0.1:{closed_port()}")  # the key's own server
    writer = _wandb(tmp_path, mode="online", init_timeout=2)
    with pytest.warns(
        RuntimeWarning, match=r"W&B cannot be reached .*Connection refused.* written offline"
    ) as caught:
        _session(writer, -1, range(1, 4))
    assert len(caught) == 1 and f"`wandb sync {tmp_path / 'wandb'}/offline-run-" in str(caught[0].message)
    (run,) = wandb_runs(tmp_path)
    assert [s for s, _ in run.steps("losses/total")] == [1, 2, 3]
    assert json.loads((tmp_path / "wandb_run.json").read_text())["run_id"] == run.run_id


def test_wandb_that_never_answers_is_given_up_after_init_timeout_and_the_run_is_written_offline(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("WANDB_API_KEY", "k" * 40)
    with socket.socket() as silent:  # accepts connections (the backlog does), answers nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        monkeypatch.setenv("WANDB_BASE_URL", f"http://127.0.0.1:{silent.getsockname()[1]}")
        writer = _wandb(tmp_path, mode="online", init_timeout=2)
        with pytest.warns(RuntimeWarning, match=r"W&B cannot be reached .* written offline") as caught:
            _session(writer, 4, range(5, 7))
    assert len(caught) == 1
    (run,) = wandb_runs(tmp_path)
    assert [s for s, _ in run.steps("losses/total")] == [5, 6]


# ---------------------------------------------------------------------------------------------- MLflow


def test_mlflow_run_has_the_config_as_params_and_the_identity_as_tags(tmp_path, file_store):
    writer = _mlflow(
        tmp_path, file_store, project="digits", name="first", group="sweep-a", tags=["lr=0.1", "x"]
    )
    _session(writer, -1, range(1, 3))
    run = _client(file_store).get_run(writer.run_id)
    assert _client(file_store).get_experiment(run.info.experiment_id).name == "digits"
    assert run.info.run_name == "first" and run.info.status == "FINISHED"
    assert run.data.params["model.layers.0.features"] == "8"
    assert run.data.params["schedules.lr.decay_steps"] == "floordiv(cfg.num_train_steps, 2)"
    assert run.data.params["workdir"] == "null"
    assert run.data.tags["lr"] == "0.1" and run.data.tags["x"] == "" and run.data.tags["group"] == "sweep-a"
    artifacts = [a.path for a in _client(file_store).list_artifacts(writer.run_id)]
    assert "config.json" in artifacts
    config = _client(file_store).download_artifacts(writer.run_id, "config.json", str(tmp_path))
    assert Path(config).read_text() == CONFIG_JSON


def test_mlflow_metrics_are_at_their_training_step(tmp_path, file_store):
    writer = _mlflow(tmp_path, file_store)
    _session(writer, -1, range(1, 4))
    assert _history(file_store, writer.run_id, "losses/total") == [(1, 1.0), (2, 0.5), (3, 1 / 3)]
    assert _history(file_store, writer.run_id, "val/losses/total") == [(1, 2.0), (2, 1.0), (3, 2 / 3)]


def test_mlflow_images_are_stepped_images_and_texts_are_artifacts(tmp_path, file_store):
    writer = _mlflow(tmp_path, file_store)
    writer.resume_from(-1)
    writer.write_summaries(
        5,
        {
            "summaries/images": np.ones((2, 4, 4, 1), np.float32),
            "summaries/note": "hi",
            "summaries/hist": np.arange(10.0),
        },
    )
    writer.close()
    client = _client(file_store)
    images = [a.path for a in client.list_artifacts(writer.run_id, "images")]
    assert any(p.startswith("images/summaries~images+step+5+") and p.endswith(".png") for p in images), images
    text = client.download_artifacts(writer.run_id, "summaries/summaries/note/step_5.txt", str(tmp_path))
    assert Path(text).read_text() == "hi"


def test_mlflow_resume_continues_the_run_without_logging_a_step_twice(tmp_path, file_store):
    first = _mlflow(tmp_path, file_store)
    _session(first, -1, range(1, 31))
    second = _mlflow(tmp_path, file_store)
    _session(second, 20, range(21, 41))
    assert second.run_id == first.run_id
    assert [s for s, _ in _history(file_store, first.run_id, "losses/total")] == list(range(1, 41))
    assert _client(file_store).get_run(first.run_id).info.status == "FINISHED"
    assert (
        len(_client(file_store).search_runs([_client(file_store).get_run(first.run_id).info.experiment_id]))
        == 1
    )


def test_mlflow_run_unknown_to_the_server_starts_a_new_one(tmp_path, file_store):
    (tmp_path / "mlflow_run.json").write_text(json.dumps({"run_id": "0" * 32, "steps": {"losses/total": 30}}))
    writer = _mlflow(tmp_path, file_store)
    _session(writer, 20, range(21, 23))
    assert writer.run_id != "0" * 32
    assert _history(file_store, writer.run_id, "losses/total") == [(21, 1 / 21), (22, 1 / 22)]


def test_mlflow_server_that_cannot_be_reached_warns_once_and_stops_nothing(tmp_path):
    writer = _mlflow(tmp_path, f"http://127.0.0.1:{closed_port()}", connect_timeout=2)
    with pytest.warns(RuntimeWarning, match=r"MLflow cannot be reached .*no MLflow server answers") as caught:
        _session(writer, -1, range(1, 4))
        writer.write_summaries(3, {"summaries/note": "hi"})
    assert len(caught) == 1
    assert writer.run_id is None and not (tmp_path / "mlflow_run.json").exists()


def test_mlflow_failing_mid_run_warns_once_and_the_run_goes_on(tmp_path, file_store):
    writer = _mlflow(tmp_path, file_store)
    writer.resume_from(-1)
    writer.write_scalars(1, {"losses/total": 1.0})
    _client(file_store).delete_run(writer.run_id)  # the server refuses what comes next
    with pytest.warns(RuntimeWarning, match="MLflow failed while sending the values of step 2") as caught:
        writer.write_scalars(2, {"losses/total": 0.5})
        writer.write_scalars(3, {"losses/total": 0.25})
        writer.close()
    assert len(caught) == 1
    assert _history(file_store, writer.run_id, "losses/total") == [(1, 1.0)]


def test_a_run_closed_as_failed_says_so_and_a_resume_makes_it_running_again(tmp_path, file_store):
    writer = _mlflow(tmp_path, file_store)
    writer.resume_from(-1)
    writer.write_scalars(1, {"losses/total": 1.0})
    writer.close(failed=True)
    assert _client(file_store).get_run(writer.run_id).info.status == "FAILED"
    again = _mlflow(tmp_path, file_store)
    again.resume_from(1)
    assert _client(file_store).get_run(writer.run_id).info.status == "RUNNING"
    _track.close_trackers(kd.writers.MultiWriter(writers=[kd.writers.PrintWriter(), again]))
    assert _client(file_store).get_run(writer.run_id).info.status == "FINISHED"


# ---------------------------------------------------------------------------------------------- both


def test_only_process_0_opens_a_tracker_run(tmp_path, file_store, monkeypatch):
    monkeypatch.setattr(jax, "process_index", lambda: 1)  # another host of a multi-host run
    for writer in (_wandb(tmp_path), _mlflow(tmp_path, file_store)):
        _session(writer, -1, range(1, 3))
        assert writer.run_id is None
    assert not (tmp_path / "wandb").exists() and not (tmp_path / "mlruns").exists()
    assert not list(tmp_path.glob("*_run.json"))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: kd.writers.WandbWriter(tags=["a", 1]),
            r"WandbWriter.tags: expected a list of str .* found \['a', 1\]",
        ),
        (
            lambda: kd.writers.WandbWriter(project=3),
            r"WandbWriter.project: expected a str or None, found 3 \(int\)",
        ),
        (
            lambda: kd.writers.WandbWriter(mode="cloud"),
            r"WandbWriter.mode: expected 'online', .* found 'cloud'",
        ),
        (
            lambda: kd.writers.WandbWriter(init_timeout=0),
            r"WandbWriter.init_timeout: expected .* > 0 .* found 0",
        ),
        (lambda: kd.writers.MlflowWriter(connect_timeout=-1), r"MlflowWriter.connect_timeout: .* found -1"),
        (
            lambda: kd.writers.MlflowWriter(tracking_uri=5),
            r"MlflowWriter.tracking_uri: expected a str .* found 5",
        ),
    ],
)
def test_bad_fields_are_named_with_what_was_expected(make, message):
    with pytest.raises((TypeError, ValueError), match=message):
        make()


@pytest.mark.parametrize(
    ("cls", "module", "extra"), [("WandbWriter", "wandb", "wandb"), ("MlflowWriter", "mlflow", "mlflow")]
)
def test_without_the_extra_the_writer_says_what_to_install(monkeypatch, cls, module, extra):
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: `import` raises ImportError
    with pytest.raises(
        ImportError, match=rf"kd.writers.{cls} needs {module}.*pip install 'kd-train\[{extra}\]'"
    ):
        getattr(kd.writers, cls)()


def test_importing_kd_writers_imports_no_tracker_client():
    code = "import sys, kd, kd.writers; print([m for m in ('wandb', 'mlflow') if m in sys.modules])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd="/")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_the_tracker_clients_are_extras_not_core_dependencies():
    project = tomllib.loads((ROOT / "packages" / "kd-train" / "pyproject.toml").read_text())["project"]
    names = {dep.split(">")[0].split("=")[0].split("[")[0].strip() for dep in project["dependencies"]}
    assert not names & {"wandb", "mlflow", "mlflow-skinny", "pillow"}
    extras = project["optional-dependencies"]
    assert any(d.startswith("wandb") for d in extras["wandb"])
    assert any(d.startswith("mlflow-skinny") for d in extras["mlflow"])
    hatch = tomllib.loads((ROOT / "hatch.toml").read_text())["envs"]["default"]["dependencies"]
    assert any(d.startswith("wandb") for d in hatch) and any(d.startswith("mlflow-skinny") for d in hatch)


# ---------------------------------------------------------------------------------------------- the CLI's helpers


def test_track_names_are_checked_with_a_suggestion():
    assert _track.parse_trackers("wandb, MLflow,wandb") == ["wandb", "mlflow"]
    with pytest.raises(
        ValueError, match=r"--track: expected mlflow or wandb .* found 'wandbb'; did you mean 'wandb'"
    ):
        _track.parse_trackers("wandbb")
    with pytest.raises(ValueError, match="--track: expected tracker names"):
        _track.parse_trackers(",")


def test_a_sweep_items_overrides_are_its_tags():
    assert _track.sweep_tags("lr=0.001,seed=1") == ["lr=0.001", "seed=1"]
    assert _track.sweep_tags("shape=(1, 2),seed=1") == ["shape=(1, 2)", "seed=1"]
    assert _track.sweep_tags(None) == []


def test_with_trackers_adds_writers_beside_the_default_and_names_those_of_the_config(monkeypatch):
    default = kd.writers.KDMetricWriter()
    added = _track.with_trackers(
        default, ["wandb", "mlflow"], project="digits", name="lr=0.1", tags=["lr=0.1"]
    )
    inner, wandb_writer, mlflow_writer = added.writers
    assert inner is default
    assert (wandb_writer.project, wandb_writer.name, wandb_writer.tags) == ("digits", "lr=0.1", ("lr=0.1",))
    assert isinstance(mlflow_writer, kd.writers.MlflowWriter) and mlflow_writer.project == "digits"
    configured = kd.writers.MultiWriter(
        writers=[kd.writers.PrintWriter(), kd.writers.WandbWriter(project="mine", tags=["a"])]
    )
    named = _track.with_trackers(configured, ["wandb"], project="digits", group="sweep", tags=["lr=0.1"])
    (_, own) = named.writers  # the config's W&B writer is kept (not doubled), given the item's group and tags
    assert (own.project, own.group, own.tags) == ("mine", "sweep", ("a", "lr=0.1"))
    assert _track.with_trackers(default) is default
    monkeypatch.setenv("WANDB_PROJECT", "from-env")
    assert _track.with_trackers(default, ["wandb"], project="digits").writers[1].project is None


# ---------------------------------------------------------------------------------------------- review of issue 30

_NO_KEY_CHILD = """
import json, os, socket, sys, time, warnings
import kd
listening = socket.socket()  # takes connections (its backlog does), answers nothing: W&B would go on to log in
listening.bind(("127.0.0.1", 0))
listening.listen(8)
writer = kd.writers.WandbWriter(
    workdir=sys.argv[1], mode="online", init_timeout=5,
    settings={"base_url": f"http://127.0.0.1:{listening.getsockname()[1]}"},
)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    writer.resume_from(-1)
    writer.write_scalars(1, {"losses/total": 1.0})
    writer.close()
print("WARNINGS", json.dumps([str(w.message) for w in caught if w.category is RuntimeWarning]), flush=True)
"""


def test_wandb_without_an_api_key_never_prompts_and_writes_the_run_offline(tmp_path):
    """At a terminal (stdin and stderr a pty) W&B would ask for a key and wait; the writer must not let it."""
    import os
    import pty
    import threading

    netrc = tmp_path / "netrc"
    netrc.write_text("machine example.org login user password " + "k" * 40 + "\n")  # none for 127.0.0.1
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env.update(  # not WANDB_SILENT: a silent W&B does not ask
        WANDB_ERROR_REPORTING="false",
        WANDB_CONFIG_DIR=str(tmp_path / "config"),
        NETRC=str(netrc),
        HOME=str(tmp_path),
        JAX_PLATFORMS="cpu",
        TERM="xterm",  # W&B asks only at a terminal that is not "dumb"
    )
    leader, follower = pty.openpty()
    terminal = []
    drain = threading.Thread(target=lambda: _drain(leader, terminal), daemon=True)
    drain.start()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _NO_KEY_CHILD, str(tmp_path / "run")],
            stdin=follower,
            stderr=follower,
            stdout=subprocess.PIPE,
            env=env,
            cwd="/tmp",
            text=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the writer waited at W&B's prompt: {b''.join(terminal)[-2000:]!r}")
    finally:
        os.close(follower)
    assert proc.returncode == 0, b"".join(terminal)[-3000:]
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("WARNINGS ")]
    (message,) = json.loads(line[len("WARNINGS ") :])
    assert "W&B has no API key (no API key for 127.0.0.1" in message and "written offline" in message
    (run,) = wandb_runs(tmp_path / "run")
    assert run.steps("losses/total") == [(1, 1.0)]


def _drain(fd: int, into: list[bytes]) -> None:
    import os

    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            return
        if not chunk:
            return
        into.append(chunk)


def test_wandb_finds_the_key_of_the_netrc_entry_for_its_host(tmp_path, monkeypatch):
    from kd.writers import _wandb

    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1:9 login user password " + "k" * 40 + "\n")  # W&B's: host:port
    netrc.chmod(0o600)
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("NETRC", str(netrc))
    assert _wandb._no_api_key("http://127.0.0.1:9", {}) is None
    assert "no API key for 10.0.0.1" in _wandb._no_api_key("http://10.0.0.1:9", {})
    assert _wandb._no_api_key("http://10.0.0.1:9", {"api_key": "k" * 40}) is None


def test_mlflow_server_that_never_answers_costs_one_timeout_not_minutes(tmp_path, monkeypatch):
    import os
    import threading

    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_TIMEOUT", raising=False)
    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", raising=False)
    with socket.socket() as silent:  # accepts connections (the backlog does), answers nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        writer = _mlflow(tmp_path, f"http://127.0.0.1:{silent.getsockname()[1]}", connect_timeout=1)
        caught: list[Any] = []

        def session() -> None:
            with pytest.warns(RuntimeWarning, match="MLflow cannot be reached") as got:
                _session(writer, -1, range(1, 3))
            caught.extend(got)

        started = time.monotonic()
        thread = threading.Thread(target=session, daemon=True)
        thread.start()
        thread.join(30)
        seconds = time.monotonic() - started
    assert not thread.is_alive(), "MLflow's own timeout (120 s) and retries (7) held the training loop"
    assert seconds < 20 and len(caught) == 1, (seconds, caught)
    assert "MLFLOW_HTTP_REQUEST_TIMEOUT" not in os.environ  # set for the writer's calls only
    assert "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ


_KILLED_CHILD = """
import os, signal, sys
import kd
writer = kd.writers.WandbWriter(workdir=sys.argv[1], mode="offline")
writer.resume_from(-1)
for step in range(1, 201):
    writer.write_scalars(step, {"loss": 1.0 / step, **{f"m{i}": float(i) for i in range(50)}})
    if step == 150:
        writer.flush()  # what the Trainer does before it saves the checkpoint of step 150
os.kill(os.getpid(), signal.SIGKILL)  # preempted without grace, OOM-killed
"""


def test_wandb_killed_after_its_checkpoint_resumes_without_a_gap(tmp_path):
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}  # not this process's service
    env.update(JAX_PLATFORMS="cpu", WANDB_SILENT="true", WANDB_ERROR_REPORTING="false")
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_CHILD, str(tmp_path)],
        env=env,
        cwd="/tmp",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == -9, proc.stderr[-2000:]
    # the file says what W&B had at the flush (the checkpoint), not what `log` was given after it
    assert json.loads((tmp_path / "wandb_run.json").read_text())["steps"]["loss"] == 150
    time.sleep(2)  # W&B's service process writes what it got, then ends (its parent is gone)
    writer = _wandb(tmp_path)
    writer.resume_from(150)  # the last checkpoint before the kill
    for step in range(151, 211):
        writer.write_scalars(step, {"loss": 1.0 / step})
    writer.close()
    steps = set()
    deadline = time.monotonic() + 30  # W&B's service process may still be writing the resumed run's file
    while len(logs := sorted((tmp_path / "wandb").glob("offline-run-*/run-*.wandb"))) < 2:
        assert time.monotonic() < deadline, "\n".join(map(str, sorted((tmp_path / "wandb").rglob("*"))))
        time.sleep(0.1)
    killed, resumed = logs  # by their start time
    for records in (_wandb_records(killed), _finished_records(resumed)):
        for record in records:
            if record.WhichOneof("record_type") == "history":
                row = {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in record.history.item}
                if "loss" in row:
                    steps.add(row["step"])
    assert sorted(set(range(1, 211)) - steps) == []


def test_the_run_file_is_written_at_flush_not_at_each_step_and_its_errors_only_warn(
    tmp_path, file_store, monkeypatch
):
    """A cloud workdir's rate limit (a RuntimeError from its client) cannot be made locally: the run file's
    writer is replaced by one raising it (the tracker client itself is real)."""
    writes = []
    real = _tracker.write_text_atomic
    monkeypatch.setattr(
        _tracker, "write_text_atomic", lambda path, text: writes.append(path) or real(path, text)
    )
    writer = _mlflow(tmp_path, file_store)
    writer.resume_from(-1)
    for step in range(1, 21):
        writer.write_scalars(step, {"losses/total": 1.0 / step})
    assert len(writes) == 1  # the run's id, when it was opened
    writer.flush()
    assert len(writes) == 2 and json.loads((tmp_path / "mlflow_run.json").read_text())["steps"] == {
        "losses/total": 20
    }

    def refuse(path, text):
        raise RuntimeError("google.api_core.exceptions.TooManyRequests: 429 rate limit on object")

    monkeypatch.setattr(_tracker, "write_text_atomic", refuse)
    writer.write_scalars(21, {"losses/total": 0.1})
    with pytest.warns(RuntimeWarning, match="cannot write .*mlflow_run.json .*TooManyRequests") as caught:
        writer.flush()
        writer.write_scalars(22, {"losses/total": 0.1})
        writer.close()
    assert len(caught) == 1
    assert [s for s, _ in _history(file_store, writer.run_id, "losses/total")] == list(range(1, 23))


@pytest.mark.parametrize("tracker", ["wandb", "mlflow"])
def test_training_again_from_the_start_in_one_process_opens_a_new_run(tmp_path, file_store, tracker):
    writer = _wandb(tmp_path) if tracker == "wandb" else _mlflow(tmp_path, file_store)
    ids = []
    for attempt in range(2):  # trainer.train() twice, no checkpoint: each starts at step 1
        writer.write_config(CONFIG_JSON)
        writer.resume_from(-1)
        for step in (1, 2, 3):
            writer.write_scalars(step, {"loss": float(10 * attempt + step)})
        writer.flush()
        ids.append(writer.run_id)
    writer.close()
    assert ids[0] != ids[1]
    if tracker == "wandb":
        runs = {run.run_id: run for run in wandb_runs(tmp_path)}  # started in one second: any order
        assert sorted(runs) == sorted(ids)
        assert runs[ids[0]].steps("loss") == [(1, 1.0), (2, 2.0), (3, 3.0)]
        assert runs[ids[1]].steps("loss") == [(1, 11.0), (2, 12.0), (3, 13.0)]
    else:
        assert _history(file_store, ids[0], "loss") == [(1, 1.0), (2, 2.0), (3, 3.0)]
        assert _history(file_store, ids[1], "loss") == [(1, 11.0), (2, 12.0), (3, 13.0)]
        assert {_client(file_store).get_run(i).info.status for i in ids} == {"FINISHED"}


def test_wandb_tags_over_64_characters_are_cut_and_w_and_b_stays_on(tmp_path):
    tag = "name='google/gemma-3-1b-it-finetuned-on-some-dataset-v2-with-lora'"  # 66 characters
    writer = _wandb(tmp_path, tags=[tag, "seed=1"])
    with pytest.warns(RuntimeWarning, match="tags of up to 64 characters") as caught:
        _session(writer, -1, range(1, 3))
    assert len(caught) == 1 and "cannot be reached" not in str(caught[0].message)
    (run,) = wandb_runs(tmp_path)
    assert run.tags == [tag[:61] + "...", "seed=1"]
    assert [s for s, _ in run.steps("losses/total")] == [1, 2]


def test_a_misspelled_wandb_setting_is_a_config_error_naming_it():
    with pytest.raises(
        ValueError,
        match=r"WandbWriter.settings: 'consle' is not a wandb.Settings field; did you mean 'console'",
    ):
        kd.writers.WandbWriter(settings={"consle": "off"})
    with pytest.raises(ValueError, match=r"WandbWriter.settings: .*init_timeout"):
        kd.writers.WandbWriter(settings={"init_timeout": "soon"})


def test_a_value_wandb_cannot_take_is_left_out_and_the_rest_goes_on(tmp_path):
    writer = _wandb(tmp_path)
    writer.resume_from(-1)
    with pytest.warns(RuntimeWarning, match="is left out of W&B") as caught:
        writer.write_summaries(
            2,
            {
                "summaries/w": np.array([-1e308, 1e308, 0.0]),  # a diverging weight: no 30 finite bins
                "summaries/pc": kd.summaries.PointCloud(point_clouds=np.zeros((5, 2))),  # not (n, 3)
                "summaries/pc2": kd.summaries.PointCloud(
                    point_clouds=np.zeros((4, 3)), point_colors=np.zeros((3, 3))
                ),
                "summaries/ok": kd.summaries.HistogramValue(values=np.arange(10.0), num_buckets=5),
            },
        )
        writer.write_summaries(3, {"summaries/w": np.array([-1e308, 1e308])})  # said once per name
    assert sorted(str(c.message).split("'")[1] for c in caught) == [
        "summaries/pc",
        "summaries/pc2",
        "summaries/w",
    ]
    writer.write_scalars(3, {"losses/total": 0.5})
    writer.close()
    (run,) = wandb_runs(tmp_path)
    assert run.steps("losses/total") == [(3, 0.5)]
    assert [row["step"] for row in run.rows if "summaries/ok/_type" in row] == [2]


def test_a_value_mlflow_refuses_is_left_out_and_long_names_are_cut(tmp_path, file_store):
    writer = _mlflow(tmp_path, file_store)
    writer.resume_from(-1)
    long = "a" * 251
    with pytest.warns(RuntimeWarning, match=r"'a/../b' is left out of MLflow") as caught:
        writer.write_scalars(1, {"losses/total": 1.0, long: 1.0, "a/../b": 2.0})
        writer.write_scalars(2, {"losses/total": 0.5, "a/../b": 2.0})
    assert len(caught) == 1
    writer.close()
    client = _client(file_store)
    assert _history(file_store, writer.run_id, "losses/total") == [(1, 1.0), (2, 0.5)]
    (cut,) = [k for k in client.get_run(writer.run_id).data.metrics if k.startswith("aaa")]
    assert len(cut) == 250 and cut.startswith("a" * 241 + "-")
    assert client.get_run(writer.run_id).info.status == "FINISHED"


def test_mlflow_params_colliding_once_flattened_are_both_kept(tmp_path, file_store):
    config = json.dumps({"__qualname__": "kd.train:Trainer", "aux": {"a.b": 1, "a": {"b": 2}}})
    writer = _mlflow(tmp_path, file_store)
    _session(writer, -1, range(1, 2), config=config)
    params = {
        k: v for k, v in _client(file_store).get_run(writer.run_id).data.params.items() if k.startswith("aux")
    }
    assert params["aux.a.b"] == "1" and sorted(params.values()) == ["1", "2"] and len(params) == 2


def test_bfloat16_scalars_and_images_reach_the_tracker(tmp_path):
    import jax.numpy as jnp

    assert _tracker.number(jnp.bfloat16(1.5)) == 1.5
    assert _tracker.summary_of(jnp.ones((2, 4, 4, 3), jnp.bfloat16)).kind == "image"
    writer = _wandb(tmp_path)
    writer.resume_from(-1)
    writer.write_scalars(1, {"losses/total": jnp.bfloat16(1.5)})
    writer.write_summaries(1, {"summaries/images": jnp.ones((2, 4, 4, 3), jnp.bfloat16)})
    writer.close()
    (run,) = wandb_runs(tmp_path)
    assert run.steps("losses/total") == [(1, 1.5)]
    assert any(row.get("summaries/images/_type") == "image-file" for row in run.rows)


def test_trackers_behind_a_collection_writer_are_closed_and_killed_says_so(tmp_path, file_store):
    writer = _mlflow(tmp_path, file_store)
    writer.resume_from(-1)
    writer.write_scalars(1, {"losses/total": 1.0})
    wrapped = kd.writers.CollectionWriter(writer=writer, collection="val")
    assert _track._contains(wrapped, kd.writers.MlflowWriter)
    _track.close_trackers(wrapped, killed=True)  # Ctrl-C or preempted: not FINISHED
    assert _client(file_store).get_run(writer.run_id).info.status == "KILLED"
    wandb_writer = _wandb(tmp_path / "w")
    wandb_writer.resume_from(-1)
    _track.close_trackers(kd.writers.MultiWriter(writers=[wandb_writer]), killed=True)
    (run,) = wandb_runs(tmp_path / "w")
    (exit_record,) = [
        r for r in _finished_records(next(run.folder.glob("run-*.wandb"))) if r.HasField("exit")
    ]
    assert exit_record.exit.exit_code == 143


def test_cli_track_project_of_a_module_config_is_its_last_part():
    assert _track.parse_track("wandb", "pkg.configs.mnist")["project"] == "mnist"
    assert _track.parse_track("wandb", "configs/mnist.py")["project"] == "mnist"


@pytest.mark.parametrize(
    ("flag", "shown"), [("--trac=wandb", "--trac"), ("--tracks=wandb", "--tracks"), ("--t", "--t")]
)
def test_cli_track_abbreviations_and_slips_are_refused_with_the_flag(flag, shown):
    with pytest.raises(kd.cli.CliError, match=f"{shown}: unknown flag; did you mean --track"):
        _track.refuse_track_slips(["--profile", flag])
    _track.refuse_track_slips(["--track=wandb", "--profile"])
