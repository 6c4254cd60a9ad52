"""Credentials stay with their endpoint: a config (data, which may come from someone else) cannot send the keys
of your environment to a server it chooses, and commands that only read a run never build its writers.

The hostile endpoint is a real HTTP server on 127.0.0.1 that records every request (headers and body); W&B and
MLflow talk to it for real where they are let through. Nothing leaves the machine.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import kd
import konfig
import pytest

with konfig.imports():
    import kd as kd_config  # a config's `kd`: its calls are config nodes, built by `konfig.resolve`

ROOT = Path(__file__).resolve().parents[2]
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"
ENV_KEY = "e" * 40  # a key of "your environment"
CONFIG_KEY = "c" * 40  # a key a config brings for its own server
ENV_TOKEN = "mlflow-token-of-your-environment"


@dataclasses.dataclass
class Recorder:
    """A local HTTP server that answers every request 401 and keeps each connection's address and what each
    request carried."""

    url: str
    connections: list[tuple[str, int]]
    requests: list[tuple[str, str, dict[str, str], bytes]]

    def untouched(self) -> bool:
        return self.connections == [] and self.requests == []

    def carries(self, secret: str) -> bool:
        """Whether any request held `secret`: in a header, a Basic `Authorization` decoded, or the body."""
        for _, _, headers, body in self.requests:
            texts = [*headers.values(), body.decode("latin-1")]
            auth = headers.get("Authorization", "")
            if auth.lower().startswith("basic "):
                texts.append(base64.b64decode(auth.split()[1] + "==").decode("latin-1"))
            if body[:2] == b"\x1f\x8b":
                texts.append(gzip.decompress(body).decode("latin-1"))
            if any(secret in text for text in texts):
                return True
        return False


class _Handler(http.server.BaseHTTPRequestHandler):
    def _record(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.requests.append((self.command, self.path, dict(self.headers), body))  # type: ignore[attr-defined]
        answer = b'{"error_code": "UNAUTHENTICATED", "errors": [{"message": "unauthorized"}]}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _record

    def log_message(self, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.connections: list[tuple[str, int]] = []
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []

    def verify_request(self, request: object, client_address: tuple[str, int]) -> bool:  # type: ignore[override]
        self.connections.append(client_address)
        return True


@pytest.fixture
def hostile() -> Iterator[Recorder]:
    server = _Server()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Recorder(f"http://127.0.0.1:{server.server_address[1]}", server.connections, server.requests)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _own_environment(tmp_path, monkeypatch):
    """No credentials, servers or settings of the machine's own: each test sets what it needs."""
    for name in list(os.environ):
        if name.startswith(("WANDB_", "MLFLOW_")):
            monkeypatch.delenv(name)
    netrc = tmp_path / "netrc"
    netrc.write_text("")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.mlflow/credentials, no ~/.config/wandb
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(tmp_path / "wandb-config"))
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")


def _session(writer: kd.writers.Writer) -> list[str]:
    """A fresh run of two steps; the RuntimeWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        writer.resume_from(-1)
        for step in (1, 2):
            writer.write_scalars(step, {"losses/total": 1.0 / step})
        writer.close()
    return [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


# ---------------------------------------------------------------------------------------------- W&B


def test_a_config_base_url_is_not_sent_the_key_of_the_environment_and_the_run_is_written_offline(
    tmp_path, monkeypatch, hostile
):
    monkeypatch.setenv("WANDB_API_KEY", ENV_KEY)
    writer = kd.writers.WandbWriter(
        workdir=str(tmp_path), mode="online", init_timeout=3, settings={"base_url": hostile.url}
    )
    (message,) = _session(writer)
    assert message.startswith(
        f"WandbWriter: W&B is not sent the key of your environment (WandbWriter.settings['base_url'] "
        f"('{hostile.url}') is not the endpoint your environment names (WANDB_BASE_URL / wandb login: "
        "https://api.wandb.ai); a key from your environment is sent only there: set "
        f"WANDB_BASE_URL={hostile.url} yourself to use that server); the run is written offline instead"
    )
    assert list((tmp_path / "wandb").glob("offline-run-*"))
    assert hostile.untouched()  # not a request, not even a connection


def test_a_key_the_config_gives_goes_to_its_server_and_the_key_of_the_environment_never_does(
    tmp_path, monkeypatch, hostile
):
    monkeypatch.setenv("WANDB_API_KEY", ENV_KEY)
    writer = kd.writers.WandbWriter(
        workdir=str(tmp_path),
        mode="online",
        init_timeout=3,
        settings={"base_url": hostile.url, "api_key": CONFIG_KEY},
    )
    (message,) = _session(writer)  # the server refuses the key: offline, as for any server that says no
    assert "written offline" in message
    assert hostile.carries(CONFIG_KEY)  # W&B did talk to it, with the key meant for it
    assert not hostile.carries(ENV_KEY)


def test_the_server_of_wandb_login_is_the_environments_too(tmp_path, monkeypatch):
    from kd.writers._wandb import credentials_problem

    (tmp_path / "wandb-config").mkdir()
    (tmp_path / "wandb-config" / "settings").write_text("[default]\nbase_url = https://wandb.example.org\n")
    monkeypatch.setenv("WANDB_API_KEY", ENV_KEY)
    problem = credentials_problem({"base_url": "https://api.wandb.ai"})
    assert "(WANDB_BASE_URL / wandb login: https://wandb.example.org)" in problem
    same_server = "HTTPS://wandb.example.org:443/"  # spelled otherwise
    assert credentials_problem({"base_url": same_server}) is None
    monkeypatch.setenv("WANDB_BASE_URL", "https://api.wandb.ai")  # the variable comes first
    assert credentials_problem({"base_url": "https://api.wandb.ai"}) is None


@pytest.mark.parametrize(
    ("setting", "value"), [("https_proxy", "http://127.0.0.1:9"), ("insecure_disable_ssl", True)]
)
def test_a_proxy_or_no_certificate_check_from_a_config_is_not_given_the_key_of_the_environment(
    monkeypatch, setting, value
):
    from kd.writers._wandb import credentials_problem

    monkeypatch.setenv("WANDB_API_KEY", ENV_KEY)
    assert credentials_problem({setting: value}).startswith(f"WandbWriter.settings[{setting!r}] ({value!r})")


def test_without_a_key_of_yours_or_offline_nothing_is_kept_back_and_nothing_is_sent(
    tmp_path, monkeypatch, hostile
):
    from kd.writers._wandb import credentials_problem

    assert credentials_problem({"base_url": hostile.url}) is None  # no key of yours to send: W&B has none
    monkeypatch.setenv("WANDB_API_KEY", ENV_KEY)
    writer = kd.writers.WandbWriter(workdir=str(tmp_path), mode="offline", settings={"base_url": hostile.url})
    assert _session(writer) == [] and hostile.untouched()  # offline, W&B sends nothing anywhere


# ---------------------------------------------------------------------------------------------- MLflow


@pytest.mark.parametrize(
    "held",
    [
        "MLFLOW_TRACKING_TOKEN",
        "MLFLOW_TRACKING_USERNAME, MLFLOW_TRACKING_PASSWORD",
        "~/.mlflow/credentials",
    ],
)
def test_a_config_tracking_uri_is_refused_the_mlflow_credentials_of_the_environment_naming_the_field(
    tmp_path, monkeypatch, hostile, held
):
    if held.startswith("~"):
        (tmp_path / ".mlflow").mkdir()
        (tmp_path / ".mlflow" / "credentials").write_text(
            f"[mlflow]\nmlflow_tracking_username = me\nmlflow_tracking_password = {ENV_TOKEN}\n"
        )
    else:
        for name in held.split(", "):
            monkeypatch.setenv(name, ENV_TOKEN)
    writer = kd.writers.MlflowWriter(workdir=str(tmp_path), tracking_uri=hostile.url, connect_timeout=2)
    (message,) = _session(writer)
    assert message == (
        f"MlflowWriter: MlflowWriter.tracking_uri ('{hostile.url}') is not the server your environment names "
        f"(MLFLOW_TRACKING_URI: not set); the credentials of your environment ({held}) are sent only there: set "
        f"MLFLOW_TRACKING_URI={hostile.url} yourself to use that server; training goes on without MLflow, and "
        "the values are still written to the workdir's files (metrics.jsonl, TensorBoard)."
    )
    assert hostile.untouched() and not (tmp_path / "mlflow_run.json").exists()


def test_the_mlflow_token_goes_to_the_server_the_environment_names(tmp_path, monkeypatch, hostile):
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", ENV_TOKEN)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", hostile.url)
    writer = kd.writers.MlflowWriter(workdir=str(tmp_path), tracking_uri=hostile.url + "/", connect_timeout=2)
    (message,) = _session(writer)  # the same server, written otherwise: the server says no, training goes on
    assert "MLflow could not start the run" in message
    assert hostile.carries(f"Bearer {ENV_TOKEN}")  # what MLflow carries to any server it is given


def test_a_file_store_takes_no_credentials_and_is_not_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", ENV_TOKEN)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    writer = kd.writers.MlflowWriter(workdir=str(tmp_path), tracking_uri=(tmp_path / "mlruns").as_uri())
    assert _session(writer) == [] and (tmp_path / "mlflow_run.json").exists()


def test_making_a_writer_opens_no_connection_and_no_file(tmp_path, monkeypatch, hostile):
    monkeypatch.setenv("WANDB_API_KEY", ENV_KEY)
    monkeypatch.setenv("WANDB_BASE_URL", hostile.url)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", hostile.url)
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", ENV_TOKEN)
    folder = tmp_path / "not-yet"
    kd.writers.WandbWriter(workdir=str(folder), mode="online")
    kd.writers.MlflowWriter(workdir=str(folder), tracking_uri=hostile.url)
    kd.writers.TensorBoardWriter(workdir=str(folder))
    kd.writers.JsonlWriter(workdir=str(folder))
    kd.writers.KDMetricWriter()
    assert hostile.untouched() and not folder.exists()


# ---------------------------------------------------------------------------------------------- reading a run

CONFIG_MODULE = """
import konfig

with konfig.imports():
    import kd
    import optax
    from flax import linen as nn


def get_config():
    cfg = kd.train.Trainer()
    cfg.num_train_steps = 4
    cfg.log_metrics_every = 2
    cfg.train_ds = kd.data.InMemoryPipeline(loader=kd.data.SyntheticRegression(num_examples=32), batch_size=8)
    cfg.eval_ds = kd.data.InMemoryPipeline(loader=kd.data.SyntheticRegression(num_examples=16, seed=1), batch_size=8)
    cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=1), keys="batch.x")
    cfg.optimizer = optax.adam(learning_rate=1e-2)
    cfg.train_losses = {"l2": kd.losses.L2(preds="preds", targets="batch.y")}
    cfg.checkpointer = kd.ckpts.Checkpointer(save_interval_steps=4)
    cfg.evals = {"val": kd.evals.Evaluator(run=kd.evals.EveryNSteps(4), num_batches=1)}
    return cfg
"""


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A finished run (a checkpoint at step 4) trained with kd's default writers."""
    folder = tmp_path_factory.mktemp("credentials")
    (folder / "credentials_cfg.py").write_text(CONFIG_MODULE)
    workdir = folder / "run"
    konfig.resolve(
        konfig.build_config(str(folder / "credentials_cfg.py"), overrides={"workdir": str(workdir)})
    ).train()
    return workdir


def _with_hostile_writers(run: Path, into: Path, server: str) -> Path:
    """A copy of `run` whose config.json names writers pointing elsewhere: a folder `elsewhere` and W&B at
    `server` (the Trainer's writer), a folder for the evaluator's own writer."""
    copy = into / "run"
    shutil.copytree(run, copy)
    config = json.loads((copy / "config.json").read_text())
    elsewhere = str(into / "elsewhere")
    config["writer"] = {
        "__qualname__": "kd.writers:MultiWriter",
        "writers": [
            {"__qualname__": "kd.writers:JsonlWriter", "workdir": elsewhere, "filename": "stolen.jsonl"},
            {"__qualname__": "kd.writers:TensorBoardWriter", "workdir": elsewhere},
            {"__qualname__": "kd.writers:WandbWriter", "mode": "online", "settings": {"base_url": server}},
        ],
    }
    config["evals"]["val"]["writer"] = {"__qualname__": "kd.writers:JsonlWriter", "workdir": elsewhere}
    (copy / "config.json").write_text(json.dumps(config))
    return copy


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "JAX_PLATFORMS": "cpu", **extra}


def test_kd_train_eval_writes_with_its_own_writers_never_those_the_runs_config_names(
    trained, tmp_path, hostile
):
    run = _with_hostile_writers(trained, tmp_path, hostile.url)
    result = subprocess.run(
        [KD_TRAIN, "eval", f"--workdir={run}", "--no-follow"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(WANDB_API_KEY=ENV_KEY),  # a WandbWriter built from the config would refuse it, or send it
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["step"] for line in (run / "eval_metrics.jsonl").read_text().splitlines()] == [4]
    assert list((run / "val").glob("events.*"))  # kd's own TensorBoard writer, in the run's folder
    assert not (tmp_path / "elsewhere").exists() and hostile.untouched()


def test_an_eval_only_run_never_builds_the_trained_runs_writers(trained, tmp_path, monkeypatch, hostile):
    run = _with_hostile_writers(trained, tmp_path, hostile.url)
    monkeypatch.setenv("WANDB_API_KEY", ENV_KEY)
    cfg = kd_config.train.Trainer.eval_only()
    cfg.aux.workdir = str(run)
    cfg.workdir = str(tmp_path / "evaluation")
    cfg.evals["last"] = kd_config.evals.Evaluator(num_batches=1)
    konfig.resolve(cfg).train()
    assert "last/losses/l2" in (tmp_path / "evaluation" / "metrics.jsonl").read_text()
    assert not (tmp_path / "elsewhere").exists() and hostile.untouched()


def test_kd_train_inspect_of_a_run_never_builds_its_writers(trained, tmp_path, monkeypatch, hostile, capsys):
    run = _with_hostile_writers(trained, tmp_path, hostile.url)
    monkeypatch.setenv("WANDB_API_KEY", ENV_KEY)
    from kd.cli import main

    assert main(["inspect", f"--cfg={run / 'config.json'}"]) == 0
    assert "== Parameters ==" in capsys.readouterr().out  # the report of the run's model
    assert not (tmp_path / "elsewhere").exists() and hostile.untouched()
