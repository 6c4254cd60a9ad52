"""`kd-train eval` resolves a run folder's config.json in konfig's safe mode: for this user's own unedited
run (signed), the modules it recorded in run.json (never those that run code); for any other, only the
declared surfaces of what it recorded; plus `--allowed`. A run folder is untrusted input: a config.json
naming `os:system`, `kd.xm.run_processes` or `flax.io.GFile` is refused and runs nothing (canary files)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import kd
import konfig
import pytest
from test_cli_eval import CONFIG_MODULE

ROOT = Path(__file__).resolve().parents[2]
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"


def kd_train(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KD_TRAIN, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=300,
    )


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory) -> Path:
    """A finished run of test_cli_eval's config (checkpoints at 8 and 12), trained in this process: its
    files are what `kd-train` writes (config.json, run.json, checkpoints, DONE)."""
    folder = tmp_path_factory.mktemp("policy_config")
    (folder / "policy_cfg.py").write_text(CONFIG_MODULE)
    workdir = tmp_path_factory.mktemp("policy") / "run"
    cfg = konfig.build_config(str(folder / "policy_cfg.py"), overrides={"workdir": str(workdir)})
    konfig.resolve(cfg).train()
    return workdir


@pytest.fixture
def run_copy(trained_run, tmp_path) -> Path:
    workdir = tmp_path / "run"
    shutil.copytree(trained_run, workdir)
    return workdir


def _edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def test_a_run_records_the_top_level_modules_its_config_names(trained_run):
    assert json.loads((trained_run / "run.json").read_text())["imports"] == ["flax", "kd", "optax"]


def test_eval_allows_the_recorded_imports_by_default_and_says_so(run_copy):
    result = kd_train("eval", f"--workdir={run_copy}")
    assert result.returncode == 0, result.stderr
    assert (
        "safe mode: allowed=['flax', 'kd', 'optax', '!kd.cli', '!konfig', '!kd.kauldron_alias'] (this user's own run"
        " (signed): its recorded imports)" in result.stdout
    )
    assert "eval: 2 checkpoint(s) evaluated" in result.stdout


def test_eval_with_an_explicit_allowed_list_adds_it_to_the_runs_policy(run_copy, capsys):
    code = kd.cli.main(["eval", f"--workdir={run_copy}", "--allowed=kd,optax,flax.linen"])
    out = capsys.readouterr().out
    assert code == 0
    assert "safe mode: allowed=['flax', 'kd', 'optax', 'flax.linen', '!kd.cli'" in out
    assert "with --allowed=kd,optax,flax.linen" in out


@pytest.mark.parametrize("where", ["model", "evaluator field"])
@pytest.mark.parametrize("recorded_os", [False, True], ids=["recorded as run.json is", "os recorded too"])
def test_a_config_json_that_names_os_system_is_refused_and_runs_nothing(where, recorded_os, run_copy):
    canary = run_copy.parent / "CANARY"
    attack = {"__qualname__": "os:system", "0": f"touch {canary}"}

    def plant(data: dict) -> None:
        if where == "model":
            data["model"] = attack
        else:
            data["evals"]["val"]["num_batches"] = attack

    _edit_json(run_copy / "config.json", plant)
    if recorded_os:  # whoever wrote config.json wrote run.json too
        _edit_json(run_copy / "run.json", lambda data: data["imports"].append("os"))

    result = kd_train("eval", f"--workdir={run_copy}")

    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr, result.stderr
    assert "os:system" in result.stderr and len(result.stderr.splitlines()) <= 5, result.stderr
    assert "not signed by this user's kd-train" in result.stdout  # edited since: foreign
    if recorded_os:
        assert "left out: os (trust one with --allowed=NAME)" in result.stdout
    assert not canary.exists()


def test_kd_trains_own_command_line_is_never_built_from_a_run_folder(run_copy):
    # `kd.cli:main` is a kd function, and kd is recorded; it would run a Python file the folder ships.
    canary = run_copy.parent / "CANARY"
    (run_copy / "evil.py").write_text(f"open({str(canary)!r}, 'w').close()\n")
    attack = {"__qualname__": "kd.cli:main", "0": ["inspect", f"--cfg={run_copy / 'evil.py'}"]}
    _edit_json(run_copy / "config.json", lambda data: data.update(model=attack))
    result = kd_train("eval", f"--workdir={run_copy}")
    assert result.returncode == 2, result.stderr
    assert "kd.cli" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert not canary.exists()


def test_an_explicit_allowed_list_refuses_what_it_does_not_name(run_copy, capsys):
    canary = run_copy.parent / "CANARY"
    _edit_json(
        run_copy / "config.json",
        lambda data: data.update(model={"__qualname__": "os:system", "0": f"touch {canary}"}),
    )
    code = kd.cli.main(["eval", f"--workdir={run_copy}", "--allowed=kd,optax,flax"])
    assert code == 2
    assert "os:system" in capsys.readouterr().err
    assert not canary.exists()


def test_a_run_without_recorded_imports_asks_for_allowed(run_copy, capsys):
    _edit_json(run_copy / "run.json", lambda data: data.pop("imports"))

    code = kd.cli.main(["eval", f"--workdir={run_copy}"])

    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and "records no imports" in err and "--allowed=" in err, err
    assert kd.cli.main(["eval", f"--workdir={run_copy}", "--allowed=kd,optax,flax"]) == 0


def test_an_io_error_while_evaluating_is_one_paragraph_with_exit_1(run_copy, capsys):
    (run_copy / "eval_metrics.jsonl").unlink(missing_ok=True)
    (run_copy / "eval_metrics.jsonl").mkdir()  # where the evaluation appends its rows: a folder

    code = kd.cli.main(["eval", f"--workdir={run_copy}"])

    err = capsys.readouterr().err
    assert code == 1, err
    assert err.startswith("error: ") and "eval_metrics.jsonl" in err and "--workdir" in err, err
    assert len(err.splitlines()) <= 5 and "Traceback" not in err


def test_training_from_a_run_folders_config_json_uses_the_runs_policy(run_copy):
    canary = run_copy.parent / "CANARY"
    attack = {"__qualname__": "os:system", "0": f"touch {canary}"}
    _edit_json(run_copy / "config.json", lambda data: data["evals"]["val"].update(num_batches=attack))
    _edit_json(run_copy / "run.json", lambda data: data["imports"].append("os"))

    result = kd_train(f"--cfg={run_copy / 'config.json'}", f"--cfg.workdir={run_copy.parent / 'again'}")

    assert result.returncode == 2, result.stderr
    assert "os:system" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert "left out: os" in result.stdout
    assert not canary.exists() and not (run_copy.parent / "again").exists()


def test_inspect_of_a_run_folders_config_json_resolves_it_in_safe_mode(run_copy, capsys):
    # (inspect sets no workdir, so the run's checkpointer is left out)
    code = kd.cli.main(["inspect", f"--cfg={run_copy / 'config.json'}", "--cfg.checkpointer=None"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith(
        f"resolving {run_copy / 'config.json'} in safe mode: allowed=['flax', 'kd', 'optax', '!kd.cli', '!konfig',"
        " '!kd.kauldron_alias'] (this user's own run (signed)"
    )


def test_code_shipped_inside_the_run_folder_is_never_imported(run_copy, capsys):
    canary = run_copy.parent / "CANARY"
    (run_copy / "shipped.py").write_text(f"import os\nos.system('touch {canary}')\ndef f():\n    return 1\n")
    _edit_json(
        run_copy / "config.json",
        lambda data: data["evals"]["val"].update(num_batches={"__qualname__": "shipped:f"}),
    )

    def record(data: dict) -> None:
        data["argv"] = [data["argv"][0], f"--cfg={run_copy / 'shipped.py'}"]
        data["imports"].append("shipped")

    _edit_json(run_copy / "run.json", record)

    code = kd.cli.main(["eval", f"--workdir={run_copy}"])

    assert code == 2
    assert "shipped" in capsys.readouterr().err
    assert not canary.exists() and "shipped" not in sys.modules


def test_a_recorded_import_that_is_not_a_module_name_is_refused(run_copy, capsys):
    _edit_json(run_copy / "run.json", lambda data: data["imports"].append("*"))
    code = kd.cli.main(["eval", f"--workdir={run_copy}"])
    err = capsys.readouterr().err
    assert code == 2 and "not module names (['*'])" in err and "--allowed=" in err, err


# Issue 38's attacks through the command line: one node added to a run's config.json (run.json as it was,
# or with the modules the attack needs recorded too); each refused, naming the config path, running nothing.
CLI_ATTACKS = {
    "kd.xm.run_processes": (
        "eval",
        lambda c: {"__qualname__": "kd.xm:run_processes", "0": [{"__qualname__": "kd.xm:Process", "argv": ["touch", c]}]},
        [],
    ),
    "kd.xm.local_processes": (
        "inspect",
        lambda c: {"__qualname__": "kd.xm:local_processes", "command": ["sh", "-c", f"touch {c}"]},
        [],
    ),
    "kd._atomic.write_text_atomic": (
        "eval",
        lambda c: {"__qualname__": "kd._atomic:write_text_atomic", "0": c, "1": "x"},
        [],
    ),
    "flax.io.GFile": ("eval", lambda c: {"__qualname__": "flax.io:GFile", "0": c, "1": "w"}, []),
    "flax.io.copy": ("inspect", lambda c: {"__qualname__": "flax.io:copy", "0": "/etc/hostname", "1": c}, []),
    "flax.io.listdir": ("inspect", lambda c: {"__qualname__": "flax.io:listdir", "0": "/root"}, []),
    "flax.io.makedirs": ("eval", lambda c: {"__qualname__": "flax.io:makedirs", "0": c}, []),
    "kauldron.kd:xm.run_processes": (
        "inspect",
        lambda c: {"__qualname__": "kauldron.kd:xm.run_processes", "0": [{"__qualname__": "kauldron.kd:xm.Process", "argv": ["touch", c]}]},
        ["kauldron"],
    ),
    "kauldron.xm.run_processes": (
        "eval",
        lambda c: {"__qualname__": "kauldron.xm:run_processes", "0": [{"__qualname__": "kauldron.xm:Process", "argv": ["touch", c]}]},
        ["kauldron"],
    ),
    "pydoc.pipepager": ("eval", lambda c: {"__qualname__": "pydoc:pipepager", "0": "x", "1": f"touch {c}"}, ["pydoc"]),
    "linecache.getline": ("inspect", lambda c: {"__qualname__": "linecache:getline", "0": "/etc/passwd", "1": 1}, ["linecache"]),
    "logging.FileHandler": ("eval", lambda c: {"__qualname__": "logging:FileHandler", "0": c}, ["logging"]),
}


@pytest.mark.parametrize("name", sorted(CLI_ATTACKS))
def test_an_attack_planted_in_a_run_folder_is_refused_through_the_command_line(name, run_copy):
    command, attack, recorded = CLI_ATTACKS[name]
    canary = run_copy.parent / "CANARY"
    _edit_json(run_copy / "config.json", lambda data: data.update(model=attack(str(canary))))
    _edit_json(run_copy / "run.json", lambda data: data["imports"].extend(recorded))

    if command == "eval":
        result = kd_train("eval", f"--workdir={run_copy}", "--no-follow")
    else:
        result = kd_train("inspect", f"--cfg={run_copy / 'config.json'}", "--cfg.checkpointer=None")

    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr, result.stderr
    assert "cfg.model" in result.stderr and "afe mode refused" in result.stderr, result.stderr
    assert "not signed by this user's kd-train" in result.stdout
    assert not canary.exists()


def test_a_folder_outside_the_run_named_by_run_json_never_goes_on_sys_path(run_copy):
    # run.json's argv and cwd name a config beside a planted module, outside the run folder; the module is
    # recorded as an import and config.json uses it. The run is foreign (edited): the module is left out,
    # refused by name, and never imported (its import would create the canary).
    elsewhere = run_copy.parent / "elsewhere"
    elsewhere.mkdir()
    canary = run_copy.parent / "CANARY"
    (elsewhere / "cfg.py").write_text("")
    (elsewhere / "planted_zz.py").write_text(f"open({str(canary)!r}, 'w').close()\ndef f():\n    return 1\n")
    _edit_json(run_copy / "config.json", lambda data: data["evals"]["val"].update(num_batches={"__qualname__": "planted_zz:f"}))

    def record(data: dict) -> None:
        data["argv"], data["cwd"] = ["kd-train", "--cfg=cfg.py"], str(elsewhere)
        data["imports"].append("planted_zz")

    _edit_json(run_copy / "run.json", record)

    result = kd_train("eval", f"--workdir={run_copy}", "--no-follow")

    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert "left out: planted_zz" in result.stdout
    assert "planted_zz:f" in result.stderr and "cfg.evals.val.num_batches" in result.stderr, result.stderr
    assert not canary.exists()
