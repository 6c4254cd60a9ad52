"""Safe mode holds across kd: the Trainer's model building and kd's importer inherit the policy."""

from __future__ import annotations

import konfig
import pytest

ALLOWED = ["kd", "optax", "flax"]


def test_a_trainers_model_naming_os_system_through_kd_does_not_run(tmp_path):
    canary = tmp_path / "F"
    cfg = konfig.from_json(
        konfig.to_json(
            konfig.ConfigDict(
                {
                    "__qualname__": "kd.train:Trainer",
                    "model": {"__qualname__": "kd.writers._base:os.system", "0": f"id > {canary}"},
                }
            )
        )
    )
    with pytest.raises(konfig.DisallowedTargetError, match=r"'os'|posix|os\.system"):
        konfig.resolve(cfg, allowed=ALLOWED)
    assert not canary.exists()


def test_kd_offers_no_importer_that_escapes_the_policy(tmp_path):
    canary = tmp_path / "F"
    # kd's model building turns the model's qualname into an object: it goes through konfig.import_object.
    cfg = konfig.ConfigDict(
        {
            "__qualname__": "kd.train:Trainer",
            "model": {"__qualname__": "kd.runtime._build_model:_import", "0": "os:system"},
        }
    )
    with pytest.raises(konfig.DisallowedTargetError):
        konfig.resolve(cfg, allowed=ALLOWED)
    import kd.runtime._build_model as build_model

    with pytest.raises(
        konfig.DisallowedTargetError
    ):  # inside a policy it refuses, and what it returns is judged
        konfig.resolve(
            {"f": {"__qualname__": "kd.runtime._build_model:_import", "0": "os:system"}}, allowed=ALLOWED
        )
    assert build_model._import("os:system") is __import__("os").system  # outside safe mode it imports
    assert not canary.exists()


def test_the_interpreter_exits_quietly_after_refused_and_failed_safe_resolves():
    # A refused resolve, then one that fails while building with sub-configs handed over: nothing is printed
    # at exit (no "Exception ignored in audit hook", no AttributeError about HANDED_OVER).
    import subprocess
    import sys

    script = """
import json, konfig
for doc, allowed in [
    ({"__qualname__": "kd.train:Trainer", "model": {"__qualname__": "os:system", "0": "true"}}, ["kd"]),
    ({"__qualname__": "kd.train:Trainer", "model": {"__qualname__": "kd.nn:DummyModel"},
      "train_ds": {"__qualname__": "kd.data:SyntheticRegression"}, "optimizer": {"__qualname__": "optax:sgd", "0": 0.1}},
     ["kd", "optax"]),
]:
    try:
        konfig.resolve(konfig.from_json(json.dumps(doc)), allowed=allowed)
    except konfig.ResolveError:
        pass
print("done")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout == "done\n", result.stderr
    assert result.stderr == "", result.stderr
