"""`kd-train`'s several-process flags: read from the flags or the environment, a partial set refused by name.

The two-process run itself is tests/integration/test_multi_process.py.
"""

from __future__ import annotations

import argparse

import pytest
from kd.cli import _distributed, main
from kd.cli._errors import CliError


def _opts(**flags) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    _distributed.add_flags(parser)
    return parser.parse_args([f"--{k}={v}" for k, v in flags.items()])


def test_no_coordinator_means_one_process():
    assert _distributed.settings(_opts(), environ={}) is None


def test_flags_give_the_three_settings_as_ints():
    opts = _opts(coordinator_address="10.0.0.1:1234", num_processes=4, process_id=3)
    assert _distributed.settings(opts, environ={}) == {
        "coordinator_address": "10.0.0.1:1234",
        "num_processes": 4,
        "process_id": 3,
    }


def test_the_environment_fills_what_the_flags_leave_out():
    environ = {"JAX_COORDINATOR_ADDRESS": "h:1", "JAX_NUM_PROCESSES": "2", "JAX_PROCESS_ID": "0"}
    assert _distributed.settings(_opts(process_id=1), environ=environ)["process_id"] == 1
    assert _distributed.settings(_opts(), environ=environ)["num_processes"] == 2


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"num_processes": 2}, "--num_processes given without --coordinator_address"),
        ({"coordinator_address": "h:1", "num_processes": 2}, "needs --process_id"),
        (
            {"coordinator_address": "h:1", "num_processes": "two", "process_id": 0},
            "--num_processes: expected an integer, got 'two'",
        ),
        (
            {"coordinator_address": "h:1", "num_processes": 2, "process_id": 2},
            "0 <= process_id < num_processes",
        ),
        ({"coordinator_address": "h", "num_processes": 2, "process_id": 0}, "expected host:port, got 'h'"),
    ],
)
def test_a_partial_or_malformed_set_is_refused_naming_the_gap(flags, message):
    with pytest.raises(CliError, match=message):
        _distributed.settings(_opts(**flags), environ={})


def test_several_processes_need_a_shared_workdir(capsys):
    code = main(
        [
            "--cfg=examples/mlp_regression.py",
            "--coordinator_address=127.0.0.1:1",
            "--num_processes=2",
            "--process_id=0",
        ]
    )
    assert code == 2
    assert "give the same --cfg.workdir=PATH" in capsys.readouterr().err
