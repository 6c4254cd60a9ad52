"""`kd.train.Trainer.eval_only()`: a config that evaluates a trained run's latest checkpoint (Kauldron's
eval-only job), the trained run named by its folder (`cfg.aux.workdir`)."""

from __future__ import annotations

import json

import konfig
import pytest

with konfig.imports():
    import kd
    import optax
    import train_fixtures as lib


def _trained(workdir) -> dict:
    """Trains a small konfig-built run with an evaluator; returns its final evaluation's values."""
    cfg = kd.train.Trainer(
        workdir=str(workdir),
        train_ds=lib.Regression(),
        eval_ds=lib.Regression(num_epochs=1, seed=5),
        model=lib.Mlp(),
        optimizer=optax.adam(1e-2),
        train_losses={"l2": lib.MSE()},
        num_train_steps=6,
        evals={"val": kd.evals.Evaluator()},
    )
    konfig.resolve(cfg).train()
    rows = [json.loads(line) for line in (workdir / "metrics.jsonl").read_text().splitlines()]
    (last,) = [row for row in rows if row["step"] == 6 and "val/losses/l2" in row]
    return {k.removeprefix("val/"): v for k, v in last.items() if k.startswith("val/")}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("trained")
    return workdir, _trained(workdir)


def _eval_only_cfg(workdir_out):
    cfg = kd.train.Trainer.eval_only()
    cfg.workdir = str(workdir_out)
    cfg.evals["again"] = kd.evals.Evaluator(run=kd.evals.StandaloneLastCheckpoint(), num_batches=None)
    cfg.evals["short"] = kd.evals.Evaluator(num_batches=1)
    return cfg


def test_eval_only_evaluates_the_trained_runs_last_checkpoint_with_its_model(trained, tmp_path):
    source, values_in_training = trained
    cfg = _eval_only_cfg(tmp_path / "evals")
    cfg.aux.workdir = str(source)  # Kauldron: cfg.aux.xid = ...

    trainer = konfig.resolve(cfg)
    state, values = trainer.train()

    assert trainer.setup.eval_only and int(state.step) == 6
    assert values["again/losses/l2"] == pytest.approx(values_in_training["losses/l2"], rel=1e-6)
    assert "short/losses/l2" in values  # one batch: another number, same model
    rows = [json.loads(line) for line in (tmp_path / "evals" / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [6] and rows[0]["again/losses/l2"] == values["again/losses/l2"]
    assert (tmp_path / "evals" / "DONE").exists()
    assert not (source / "eval_metrics.jsonl").exists()  # the trained run's folder is only read


def test_the_eval_only_node_starts_with_aux_workdir_and_evals_to_fill():
    cfg = kd.train.Trainer.eval_only()
    assert dict(cfg.evals) == {} and "workdir" in cfg.aux
    with pytest.raises(konfig.ResolveError, match=r"cfg\.aux\.workdir must name the trained run's folder"):
        konfig.resolve(cfg)


def test_eval_only_without_a_run_folder_says_what_to_set(tmp_path):
    cfg = _eval_only_cfg(tmp_path / "out")
    cfg.aux.workdir = str(tmp_path / "not_a_run")
    with pytest.raises(Exception, match=r"holds no config\.json, so it is not a kd-train run folder"):
        konfig.resolve(cfg)


def test_eval_only_given_a_kauldron_xid_names_the_folder_to_give_instead(tmp_path):
    cfg = kd.train.Trainer.eval_only(aux={"xid": 12345, "wid": 1})
    cfg.evals["a"] = kd.evals.Evaluator()
    with pytest.raises(Exception, match=r"XManager experiment.*--cfg\.aux\.workdir="):
        konfig.resolve(cfg)


def test_kauldrons_form_evaluates_the_run_in_cfg_workdir_and_writes_in_its_eval_only_folder(trained):
    # Kauldron's mnist_eval_only: `--cfg.workdir=` the trained run's folder, nothing in cfg.aux.
    source, values_in_training = trained
    before = {name: (source / name).read_text() for name in ("config.json", "metrics.jsonl")}
    cfg = _eval_only_cfg(source)

    trainer = konfig.resolve(cfg)
    _, values = trainer.train()

    assert trainer.aux["workdir"] == str(source) and trainer.workdir == str(source / "eval_only")
    assert values["again/losses/l2"] == pytest.approx(values_in_training["losses/l2"], rel=1e-6)
    rows = (source / "eval_only" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(row)["step"] for row in rows] == [6]
    assert {name: (source / name).read_text() for name in before} == before  # the trained run's, untouched


def test_the_command_line_runs_an_eval_only_config_and_says_what_it_evaluated(trained, tmp_path):
    source, values_in_training = trained
    result = _kd_train_eval_only(tmp_path, f"--cfg.aux.workdir={source}", f"--cfg.workdir={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[-1].startswith(f"done: evaluated step 6 of {source} in ")
    row = json.loads((tmp_path / "out" / "metrics.jsonl").read_text().splitlines()[0])
    assert row["again/losses/l2"] == pytest.approx(values_in_training["losses/l2"], rel=1e-6)
    assert result.stderr == ""


def test_the_command_line_takes_kauldrons_form_with_the_trained_run_as_workdir(tmp_path):
    source = tmp_path / "trained"
    values_in_training = _trained(source)
    for _ in range(2):  # a second time: its own eval_only/ folder is its run, not another config's
        result = _kd_train_eval_only(tmp_path, f"--cfg.workdir={source}")
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip().splitlines()[-1].startswith(f"done: evaluated step 6 of {source} in ")
    rows = [json.loads(r) for r in (source / "eval_only" / "metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["again/losses/l2"] == pytest.approx(values_in_training["losses/l2"], rel=1e-6)


def _kd_train_eval_only(tmp_path, *flags: str):
    """`kd-train` on a minimal eval-only config file (one evaluator) with `flags`."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    config = tmp_path / "eval_only.py"
    config.write_text(
        "import konfig\n"
        "with konfig.imports():\n"
        "    import kd\n\n\n"
        "def get_config():\n"
        "    cfg = kd.train.Trainer.eval_only()\n"
        '    cfg.evals["again"] = kd.evals.Evaluator(run=kd.evals.StandaloneLastCheckpoint())\n'
        "    return cfg\n"
    )
    here = str(Path(__file__).parent)  # the trained config names train_fixtures, beside this file
    env = {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]),
    }
    kd_train = str(Path(sys.executable).parent / "kd-train")
    return subprocess.run(
        [kd_train, f"--cfg={config}", *flags], capture_output=True, text=True, env=env, timeout=600
    )


def test_eval_only_refuses_the_trained_runs_own_folder_and_fields_it_would_not_use(trained, tmp_path):
    source, _ = trained
    cfg = _eval_only_cfg(source)  # its workdir: the trained run's folder
    cfg.aux.workdir = str(source)
    with pytest.raises(konfig.ResolveError, match=r"cfg\.workdir is the trained run's own folder"):
        konfig.resolve(cfg)
    cfg = _eval_only_cfg(tmp_path / "out")
    cfg.aux.workdir = str(source)
    cfg.num_train_steps = 100
    with pytest.raises(konfig.ResolveError, match=r"cfg\.num_train_steps would not be used"):
        konfig.resolve(cfg)
    before = (source / "config.json").read_text()
    cfg = _eval_only_cfg(tmp_path / "out")
    del cfg.workdir  # no workdir: it writes nothing, least of all into the trained run's folder
    cfg.aux.workdir = str(source)
    trainer = konfig.resolve(cfg)
    assert trainer.workdir is None
    trainer.train()
    assert (source / "config.json").read_text() == before


def test_eval_only_is_refused_in_safe_mode_where_a_run_folder_would_choose_what_it_resolves(trained):
    source, _ = trained
    untrusted = konfig.from_json(
        json.dumps(
            {"__qualname__": "kd.train:Trainer.eval_only", "aux": {"workdir": str(source)}, "evals": {}}
        )
    )
    # Not on kd's declared surface (a classmethod no entry names), so refused before anything is imported;
    # with it named, eval_only refuses itself in safe mode.
    with pytest.raises(konfig.ResolveError, match=r"kd.train:Trainer.eval_only  \(at cfg\)"):
        konfig.resolve(untrusted, allowed=["kd"])
    with pytest.raises(konfig.ResolveError, match=r"cannot be built in konfig's safe mode"):
        konfig.resolve(untrusted, allowed=["kd", "kd.train:Trainer.eval_only"])
