"""`WandbWriter`: the run in Weights & Biases (the `kd-train[wandb]` extra): config, scalars, summaries.

    cfg.writer = kd.writers.MultiWriter(writers=[kd.writers.KDMetricWriter(), kd.writers.WandbWriter(project="digits")])
    # or, without editing the config: kd-train --cfg=... --cfg.workdir=/runs/a --track=wandb

wandb is imported when the writer is made, never by `import kd`.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import string
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from kd.writers._tracker import (
    Summary,
    TrackerWriter,
    format_path,
    import_extra,
    is_connection_error,
    same_server,
    unreachable,
)

STEP = "step"
"""The metric every value is plotted against: the training step (W&B's own `_step` counts `log` calls)."""

_MAX_TAG = 64  # W&B's limit of a tag's length
_DEFAULT_BASE_URL = "https://api.wandb.ai"  # W&B's cloud, where a key goes when nothing names another server


def import_wandb() -> Any:
    return import_extra("wandb", "WandbWriter", "wandb")


@dataclasses.dataclass(kw_only=True)
class WandbWriter(TrackerWriter):
    """Sends the run to Weights & Biases: the config (one entry per konfig path, `model.layers[0].features`),
    the scalars at their training step (W&B's x-axis `step`), the summaries as W&B media, the evaluators'
    values under their names (`val/losses/total`).

    Usage: `kd.writers.MultiWriter(writers=[kd.writers.KDMetricWriter(), kd.writers.WandbWriter(project="p")])`,
    or `kd-train ... --track=wandb` beside the default writers.

    Summaries: images as `wandb.Image` (a batch tiled into one image, as in TensorBoard), histograms as
    `wandb.Histogram`, texts as a one-column `wandb.Table`, point clouds as `wandb.Object3D`.

    The W&B files go to `<workdir>/wandb/` (W&B's default folder without a workdir). A resume continues the
    W&B run whose id `<workdir>/wandb_run.json` holds, without sending a step twice. W&B that cannot be
    reached gets one warning and the run is written offline to `<workdir>/wandb/offline-run-*` instead, for
    `wandb sync` to upload later: a server that refuses connections (tried for 5 s first), or no API key
    for the server (`WANDB_API_KEY`, `settings={"api_key": ...}`, the netrc entry of its host or `wandb
    login`: W&B never prompts for one), under the run's own id; one that fails to start the run
    (`init_timeout` passed) under a new id, as W&B holds the failed one. With `WANDB_MODE=offline` (or
    `mode="offline"`) nothing goes over the network. Tags longer than W&B's 64 characters are cut (with a
    warning). A run ended by Ctrl-C or a preemption (`close(killed=True)`) exits with code 143, a failed one
    with 1.

    Credentials stay with their endpoint: a key from your environment (`WANDB_API_KEY`, an identity token file,
    the netrc entry or `wandb login`) is sent only to the server your environment names (`WANDB_BASE_URL`,
    else `wandb login --host`'s, else https://api.wandb.ai), never to one a config chooses (a config is data,
    and may come from someone else). When the run starts with `settings` that name another `base_url`, a
    proxy or `insecure_disable_ssl` while such a key is there, W&B is not started online: one warning names
    the field, and the run is written offline; set `WANDB_BASE_URL` yourself to use another server. A key the
    config gives itself (`settings={"api_key": ...}`) goes to the server it names.

    Attributes (and those of `TrackerWriter`: project, name, group, tags, workdir):
      entity: the W&B team or user; None: the API key's default.
      mode: "online", "offline" or "disabled"; None: `WANDB_MODE`, else online.
      init_timeout: seconds `wandb.init` may wait for the server; None: W&B's own (`WANDB_INIT_TIMEOUT`, 90).
      settings: more `wandb.Settings` fields, e.g. `{"console": "off"}` (checked when the writer is made).
    """

    TRACKER = "W&B"
    RUN_FILE = "wandb_run.json"
    FLAG = "wandb"
    PROJECT_ENV = ("WANDB_PROJECT",)

    entity: str | None = None
    mode: str | None = None
    init_timeout: float | None = None
    settings: Mapping[str, Any] | None = None

    _run: Any = dataclasses.field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in (None, "online", "offline", "disabled"):
            raise ValueError(
                f"WandbWriter.mode: expected 'online', 'offline', 'disabled' or None, found {self.mode!r}"
            )
        if self.init_timeout is not None and not (
            isinstance(self.init_timeout, (int, float)) and self.init_timeout > 0
        ):
            raise ValueError(
                f"WandbWriter.init_timeout: expected a number of seconds > 0 or None, found {self.init_timeout!r}"
            )
        if self.settings is not None and not isinstance(self.settings, Mapping):
            raise TypeError(
                f"WandbWriter.settings: expected a mapping of wandb.Settings fields, found {self.settings!r}"
            )
        wandb = import_wandb()  # fails when the run is configured, not at its first logging step
        if self.settings:
            _check_settings(wandb, dict(self.settings))

    def _open(
        self, run_id: str | None, flat_config: dict[tuple[Any, ...], Any] | None, config_json: str | None
    ) -> str:
        wandb = import_wandb()
        config = None if flat_config is None else {format_path(k): v for k, v in flat_config.items()}
        # `create_new`: each writer holds its own run, several may be open in one process (a sweep's items).
        options = {"reinit": "create_new", **dict(self.settings or {})}
        if self.init_timeout is not None:
            options["init_timeout"] = float(self.init_timeout)
        kwargs = {
            "project": self.project,
            "entity": self.entity,
            "name": self.run_name(),
            "group": self.group,
            "tags": _cut_tags(self.run_tags()) or None,
            "dir": self.local_workdir(),
            "id": run_id or _new_id(),  # known before W&B answers: the offline fallback keeps it
            "resume": "allow" if run_id is not None else None,
            "config": config if run_id is None else None,
        }
        mode = self.mode or os.environ.get("WANDB_MODE") or "online"
        if kwargs["dir"] is not None:
            os.makedirs(kwargs["dir"], exist_ok=True)
        problem, trouble = None, "cannot be reached"
        if mode == "online":
            # Named to W&B, not left to its process-wide settings (read once, from an older environment maybe).
            base_url = options["base_url"] = options.get("base_url") or own_base_url()
            # Here, when the run starts, not when the writer is made: resolving a config reads no file of yours.
            problem = credentials_problem(dict(self.settings or {}))
            trouble = "is not sent the key of your environment"
            if problem is None:
                problem, trouble = unreachable(str(base_url), timeout=5.0), "cannot be reached"
            if problem is None:  # without a key W&B would prompt for one (and wait at the terminal)
                problem = _no_api_key(str(base_url), options)
                trouble = "has no API key" if problem is not None else trouble
        run = None
        if problem is None:
            try:
                run = wandb.init(mode=self.mode, settings=wandb.Settings(**options), **kwargs)
            except Exception as e:
                if mode != "online":
                    raise
                problem = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
                trouble = "cannot be reached" if is_connection_error(e) else "could not start the run online"
                kwargs["id"] = _new_id()  # the failed start holds its id in W&B's service process
        if run is None:
            run = wandb.init(
                mode="offline", settings=wandb.Settings(**options), **{**kwargs, "resume": "allow"}
            )
            where = os.path.join(kwargs["dir"] or os.getcwd(), "wandb", f"offline-run-*-{run.id}")
            warnings.warn(
                f"WandbWriter: W&B {trouble} ({problem}); the run is written offline instead, to "
                f"{where}: upload it with `wandb sync {where}` once W&B can be reached.",
                RuntimeWarning,
                stacklevel=5,
            )
        self._run = run
        if run_id is not None and config is not None:  # a continued run: the config as this invocation has it
            run.config.update(config, allow_val_change=True)
        run.define_metric(STEP)
        run.define_metric("*", step_metric=STEP, step_sync=True)
        return str(run.id)

    def _send_scalars(self, step: int, values: dict[str, float]) -> None:
        self._run.log({STEP: step, **values})

    def _prepare(self, name: str, summary: Summary) -> Any:
        return _media(import_wandb(), summary)

    def _send_summaries(self, step: int, summaries: dict[str, Any]) -> None:
        self._run.log({STEP: step, **summaries})

    def _send_config(self, flat_config: dict[tuple[Any, ...], Any], config_json: str) -> None:
        self._run.config.update({format_path(k): v for k, v in flat_config.items()}, allow_val_change=True)

    def _flush_client(self) -> bool:
        """`run.log` is asynchronous: reading the run's summary is a round trip to W&B's service process,
        answered once it has taken every `log` before it (an empty answer: it did not answer in time)."""
        return self._run is not None and self._run.summary.get(STEP) is not None

    def _finish(self, status: str) -> None:
        run, self._run = self._run, None
        if run is not None:
            run.finish(exit_code={"finished": 0, "failed": 1}.get(status, 143))


def _new_id() -> str:
    """A W&B run id: 8 characters of [a-z0-9], as W&B makes them."""
    alphabet = string.ascii_lowercase + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(8))


def _check_settings(wandb: Any, settings: dict[str, Any]) -> None:
    """A ValueError naming a `settings` key that `wandb.Settings` lacks (and its near miss), or a bad value."""
    import difflib

    fields = getattr(wandb.Settings, "model_fields", None)  # pydantic's
    if fields:
        for key in settings:
            if key not in fields:
                close = difflib.get_close_matches(str(key), list(fields), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ValueError(f"WandbWriter.settings: {key!r} is not a wandb.Settings field{hint}")
    try:
        wandb.Settings(**settings)
    except Exception as e:
        raise ValueError(f"WandbWriter.settings: {' '.join(str(e).split())[:500]}") from None


def _cut_tags(tags: Any) -> list[str]:
    """`tags`, each cut to W&B's 64 characters (a sweep's override can be longer), with one warning."""
    cut = [t if len(t) <= _MAX_TAG else t[: _MAX_TAG - 3] + "..." for t in tags]
    if cut != list(tags):
        long = [t for t in tags if len(t) > _MAX_TAG]
        warnings.warn(
            f"WandbWriter: W&B takes tags of up to {_MAX_TAG} characters; cut: {long!r}",
            RuntimeWarning,
            stacklevel=6,
        )
    return list(dict.fromkeys(cut))


def own_base_url() -> str:
    """The W&B server your own environment names: `WANDB_BASE_URL`, else the `base_url` of W&B's settings
    files (`wandb login --host=...` writes it to `$WANDB_CONFIG_DIR/settings`, by default
    `~/.config/wandb/settings`; a `wandb/settings` in the current folder comes first, as W&B reads them),
    else W&B's cloud, https://api.wandb.ai."""
    import configparser

    if os.environ.get("WANDB_BASE_URL"):
        return os.environ["WANDB_BASE_URL"]
    config_dir = os.path.expanduser(
        os.environ.get("WANDB_CONFIG_DIR") or os.path.join("~", ".config", "wandb")
    )
    workspace = ".wandb" if os.path.isdir(".wandb") else "wandb"
    for path in (os.path.join(workspace, "settings"), os.path.join(config_dir, "settings")):
        parser = configparser.ConfigParser()
        try:
            parser.read(path)
        except (OSError, configparser.Error):
            continue
        url = parser.get("default", "base_url", fallback=None)
        if url:
            return url.strip()
    return _DEFAULT_BASE_URL


def credentials_problem(settings: Mapping[str, Any]) -> str | None:
    """Why W&B would send the credentials of your environment (`WANDB_API_KEY`, an identity token file, the
    netrc entry, `wandb login`'s key) somewhere that `settings` (a config's) chose rather than your environment:
    another `base_url` than `own_base_url()`, a proxy, or certificate checks turned off. None when nothing of
    yours is sent there: those settings are not given, the config gives its own `api_key`, or there is no key.

    Usage: `credentials_problem({"base_url": "https://wandb.example"})` -> "WandbWriter.settings['base_url'] ..."
    """
    if settings.get("api_key"):
        return None  # the config's own key, for the server it names
    own = own_base_url()
    chosen = settings.get("base_url")
    url = str(chosen or own)
    if chosen and not same_server(str(chosen), own):
        problem = (
            f"WandbWriter.settings['base_url'] ({chosen!r}) is not the endpoint your environment names "
            f"(WANDB_BASE_URL / wandb login: {own}); a key from your environment is sent only there: set "
            f"WANDB_BASE_URL={chosen} yourself to use that server"
        )
    elif settings.get("https_proxy") or settings.get("http_proxy"):
        field = "https_proxy" if settings.get("https_proxy") else "http_proxy"
        problem = (
            f"WandbWriter.settings[{field!r}] ({settings[field]!r}) sends W&B's requests through a server the "
            f"config chooses; a key from your environment does not go through it: set {field.upper()} in your "
            "environment yourself to use that proxy"
        )
    elif settings.get("insecure_disable_ssl"):
        problem = (
            "WandbWriter.settings['insecure_disable_ssl'] (True) turns off the check of the server's "
            "certificate, so a key from your environment could be read on its way: set "
            "WANDB_INSECURE_DISABLE_SSL=true in your environment yourself to allow that"
        )
    else:
        return None
    return problem if _no_api_key(url, {}) is None else None  # no key of yours: nothing to keep back


def _no_api_key(base_url: str, options: Mapping[str, Any]) -> str | None:
    """None when W&B has credentials for `base_url` without asking (the environment, the netrc entry of its
    host, `wandb login`'s settings); else why not, for the warning (W&B itself would prompt at a terminal)."""
    import urllib.parse

    if (
        options.get("api_key")
        or os.environ.get("WANDB_API_KEY")
        or os.environ.get("WANDB_IDENTITY_TOKEN_FILE")
    ):
        return None
    host = urllib.parse.urlparse(base_url).netloc or base_url  # W&B's netrc entry: "host" or "host:port"
    try:
        from wandb.sdk.lib import wbauth  # W&B's own lookup, without its prompt

        auth = wbauth.authenticate_session(
            host=base_url, source="kd.writers.WandbWriter", prompt=False, update_session=False
        )
        found = auth is not None and (not hasattr(auth, "host") or auth.host.is_same_url(base_url))
    except (ImportError, AttributeError, TypeError):  # another W&B version: the netrc entry of the host
        found = _netrc_has(host)
    except Exception as e:  # a key of a bad format
        return f"its credentials for {host} cannot be used: {' '.join(str(e).split())[:200]}"
    if found:
        return None
    return f"no API key for {host}: set WANDB_API_KEY, or run `wandb login --host={base_url}`"


def _netrc_has(host: str) -> bool:
    import netrc

    path = os.environ.get("NETRC") or os.path.expanduser("~/.netrc")
    try:
        entries = netrc.netrc(path)
        entry = entries.authenticators(host) or entries.authenticators(host.partition(":")[0])
    except Exception:
        return False
    return bool(entry and entry[2])


def _media(wandb: Any, summary: Summary) -> Any:
    if summary.kind == "image":
        image = summary.data[..., 0] if summary.data.shape[-1] == 1 else summary.data  # grey: (h, w)
        return wandb.Image(image)
    if summary.kind == "histogram":
        bins = max(1, min(int(summary.num_buckets), 512))  # W&B's limit
        with np.errstate(over="ignore", invalid="ignore"):  # a range too wide raises below, said once
            return wandb.Histogram(np_histogram=np.histogram(summary.data, bins=bins))
    if summary.kind == "text":
        return wandb.Table(columns=["text"], data=[[summary.data]])
    if summary.kind == "texts":
        return wandb.Table(columns=["text"], data=[[t] for t in summary.data])
    if summary.kind == "points":
        if summary.colors is not None and len(summary.colors) != len(summary.data):
            raise ValueError(f"{len(summary.data)} points but {len(summary.colors)} colours")
        points = summary.data if summary.colors is None else np.concatenate([summary.data, summary.colors], 1)
        return wandb.Object3D(points)
    return summary.data  # a scalar
