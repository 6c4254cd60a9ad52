"""Signing a run folder's record, so that `kd-train eval` can tell the user's own runs from a foreign one.

kd-train signs what decides how a run is resolved again (run.json's imports, command line and folder,
and the config.json it wrote) with a key only this user holds (`~/.config/kd/run_key`, made on first
use, readable by the owner only; `KD_RUN_KEY_FILE` names another). A run whose signature checks was
written by this user's kd-train, unchanged since: its recorded imports (the user's own modules too) and
its config's folder are trusted as they were for training. Any other run folder, or one edited since,
is foreign: only the audited, declared surfaces of what it recorded (`kd._run_policy`). The idea of
Jupyter's notebook signatures.

    record["signature"] = sign(record, config_json)
    is_signed(record, config_json)  # True for a run this user's kd-train wrote, unchanged
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from typing import Any

KEY_ENV = "KD_RUN_KEY_FILE"
_SIGNED_FIELDS = ("imports", "argv", "cwd")


def key_path() -> str:
    """Where this user's signing key lives."""
    return os.environ.get(KEY_ENV) or os.path.join(os.path.expanduser("~"), ".config", "kd", "run_key")


def _key(create: bool) -> bytes | None:
    path = key_path()
    try:
        with open(path, "rb") as f:
            key = f.read()
        return key if len(key) >= 32 else None
    except OSError:
        if not create:
            return None
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return _key(create=False)
    except OSError:
        return None  # a read-only home: runs stay unsigned (evaluated as foreign)
    key = secrets.token_bytes(32)
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key


def _message(record: dict[str, Any], config_json: str) -> bytes:
    signed = {name: record.get(name) for name in _SIGNED_FIELDS}
    signed["config_sha256"] = hashlib.sha256(config_json.encode("utf-8", "surrogatepass")).hexdigest()
    return json.dumps(signed, sort_keys=True, separators=(",", ":")).encode()


def sign(record: dict[str, Any], config_json: str) -> str | None:
    """The signature of `record`'s imports, argv and cwd with `config_json`, or None without a key."""
    key = _key(create=True)
    if key is None:
        return None
    return hmac.new(key, _message(record, config_json), hashlib.sha256).hexdigest()


def is_signed(record: Any, config_json: str) -> bool:
    """Did this user's kd-train write `record` (run.json) and `config_json`, unchanged since?"""
    if not isinstance(record, dict) or not isinstance(record.get("signature"), str):
        return False
    key = _key(create=False)
    if key is None:
        return False
    expected = hmac.new(key, _message(record, config_json), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, record["signature"])
