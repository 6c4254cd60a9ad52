"""`kd.kauldron_alias`: `import kauldron...` gives kd's own modules; Kauldron-spelled configs run unchanged."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap

import kd
import konfig
import kontext
import ktyping
import pytest

KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"


@pytest.fixture
def alias():
    kd.kauldron_alias.install()
    yield kd.kauldron_alias
    kd.kauldron_alias.uninstall()


def test_kauldron_names_are_the_very_modules_of_ours(alias) -> None:
    from kauldron import kd as kauldron_kd
    from kauldron import konfig as kauldron_konfig
    from kauldron.ktyping import array_type_meta

    assert kauldron_kd is kd
    assert kauldron_konfig is konfig
    assert importlib.import_module("kauldron.kontext") is kontext
    assert importlib.import_module("kauldron.ktyping") is ktyping
    assert array_type_meta is ktyping.array_type_meta
    assert importlib.import_module("kauldron.kd.train") is kd.train
    assert importlib.import_module("kauldron.kd.data.py") is kd.data.py
    # One class, not a second copy: what konfig resolves by Kauldron's path is ours.
    assert importlib.import_module("kauldron.kd.train").Trainer is kd.train.Trainer
    # Our modules keep their own spec (the import system would have overwritten it), and no `__path__`
    # is added to a module that is no package.
    assert kd.__spec__.name == "kd" and kd.train.__spec__.name == "kd.train"
    assert not hasattr(ktyping.array_type_meta, "__path__")


def test_kauldrons_packages_are_views_onto_our_namespaces(alias) -> None:
    from kauldron.checkpoints import checkpoint_items
    from kauldron.metrics import base
    from kauldron.utils import config_util, sharding_utils
    from kauldron.utils.immutabledict import immutabledict_lib

    assert importlib.import_module("kauldron.checkpoints").Checkpointer is kd.ckpts.Checkpointer
    assert importlib.import_module("kauldron.modules").Identity is kd.nn.Identity
    assert importlib.import_module("kauldron.typing").Float is kd.typing.Float
    assert base.Metric is kd.metrics.Metric
    assert checkpoint_items.is_checkpoint_item is kd.ckpts.items.is_checkpoint_item
    assert config_util.ROOT_CFG_REF is kd.train.ROOT_CFG_REF
    assert sharding_utils.ShardingStrategy is kd.sharding.ShardingStrategy
    assert immutabledict_lib.ImmutableDict is konfig.ImmutableDict
    from kauldron import kxm  # Kauldron's tiny_vit_advanced: `cfg.xm_job = kxm.Job(...)`

    assert kxm.Job is kd.xm.Job and kxm.JobRequirements is kd.xm.JobRequirements
    from kauldron.testing import assert_utils  # Kauldron's partial_loader_test

    assert kd.ckpts.partial_loader.PartialKauldronLoader is kd.ckpts.PartialKauldronLoader  # `kd.ckpts.partial_loader.X`

    assert assert_utils.assert_trees_all_same_type is kd.testing.assert_trees_all_same_type
    assert importlib.import_module("kauldron.testing").assert_step_specs is kd.testing.assert_step_specs
    with pytest.raises(
        AttributeError, match=r"kauldron.metrics.base.NoSuchMetric: kd has no such name .*kd.metrics"
    ):
        base.NoSuchMetric  # noqa: B018
    assert importlib.reload(base) is base


def test_the_alias_adds_nothing_to_our_namespaces(alias) -> None:
    # `kauldron.optim.ema_params` is a Kauldron module and kd's function: kd.optim keeps its function.
    import kauldron.optim.ema_params  # noqa: F401
    from kauldron.metrics import base  # noqa: F401

    assert callable(kd.optim.ema_params) and not isinstance(kd.optim.ema_params, type(sys))
    assert "kd.metrics.base" not in sys.modules and not hasattr(kd.metrics, "base")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("konfig.utils")  # Kauldron's internal konfig modules are not made up
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("kauldron.ktyping.log")  # one of Kauldron's ktyping modules kd does not have


def test_a_view_is_only_ever_onto_our_namespaces() -> None:
    # Safe mode judges an object by its module's name: a view must not be a way to reach another module.
    with pytest.raises(ValueError, match="no view"):
        kd.kauldron_alias._View("kd.x", "os")
    with pytest.raises(ValueError, match="no view"):
        kd.kauldron_alias._View("kauldron.x", "os")
    cfg = konfig.from_json(
        json.dumps(
            {
                "__konfig_version__": 1,
                "v": {"__qualname__": "kd.kauldron_alias:_View", "0": "kauldron.x", "1": "os"},
            }
        )
    )
    with pytest.raises(konfig.DisallowedTargetError):
        konfig.resolve(cfg, allowed=["kd", *kd._run_policy.NEVER_FROM_RUN_FOLDERS])


def test_names_that_are_no_module_are_not_found(alias) -> None:
    # konfig asks whether `kauldron.kd.data.py.Tfds` is a module: it is a class, so the finder says no.
    assert importlib.util.find_spec("kauldron.kd.data.py.Tfds") is None
    with pytest.raises(ModuleNotFoundError, match=r"kauldron\.nothing_here"):
        importlib.import_module("kauldron.nothing_here")



def test_a_refused_kauldron_package_says_why(alias, monkeypatch) -> None:
    monkeypatch.setitem(kd.kauldron_alias.REFUSED, "kauldron.elsewhere", "kd has no kd.elsewhere (a reason)")
    with pytest.raises(ModuleNotFoundError, match=r"kd has no kd\.elsewhere \(a reason\)"):
        importlib.import_module("kauldron.elsewhere.deeper")


def test_kauldron_contrib_is_kd_contrib(alias) -> None:
    from kauldron.contrib.metrics import meancov
    from kauldron.contrib.modules import knnx  # noqa: F401  (a view onto kd.contrib.nn)

    assert meancov.MeanCov is kd.contrib.metrics.MeanCov
    assert importlib.import_module("kauldron.kd").contrib is kd.contrib


def test_uninstall_forgets_the_alias(alias) -> None:
    import kauldron.kd
    import kauldron.metrics.base  # noqa: F401

    alias.uninstall()
    assert not alias.is_installed()
    assert not [name for name in sys.modules if name.split(".")[0] == "kauldron"]
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("kauldron.kd")
    alias.install()  # the fixture uninstalls again


def test_the_alias_refuses_when_the_real_kauldron_is_importable(tmp_path, monkeypatch) -> None:
    (tmp_path / "kauldron").mkdir()
    (tmp_path / "kauldron" / "__init__.py").write_text("")
    (tmp_path / "kauldron" / "sub.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    with pytest.raises(kd.kauldron_alias.KauldronInstalledError, match="the real Kauldron is installed"):
        kd.kauldron_alias.install()
    assert kd.kauldron_alias.install_if_possible() is False
    assert not kd.kauldron_alias.is_installed()
    import kauldron.sub  # the real one

    kd.kauldron_alias.uninstall()  # leaves a real Kauldron's modules alone
    assert sys.modules["kauldron.sub"] is kauldron.sub
    for name in [n for n in sys.modules if n.split(".")[0] == "kauldron"]:
        del sys.modules[name]


def test_an_empty_kauldron_folder_is_not_kauldron(tmp_path, monkeypatch) -> None:
    (tmp_path / "kauldron").mkdir()  # a namespace package: nothing to hide
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    assert kd.kauldron_alias.real_kauldron() is None


def test_a_kauldron_config_runs_through_kd_train_unchanged(tmp_path) -> None:
    config = tmp_path / "kauldron_config.py"
    config.write_text(
        textwrap.dedent(
            """
            from kauldron import konfig

            with konfig.imports():
                from kauldron import kd
                import optax
                from flax import linen as nn


            def get_config():
                return kd.train.Trainer(
                    train_ds=kd.data.InMemoryPipeline(
                        loader=kd.data.SyntheticRegression(num_examples=64), batch_size=16, shuffle=True
                    ),
                    model=kd.nn.ExternalModule(model=nn.Dense(features=1), keys="batch.x"),
                    eval_ds=kd.data.InMemoryPipeline(
                        loader=kd.data.SyntheticRegression(num_examples=32, seed=1), batch_size=16, num_epochs=1
                    ),
                    evals={"val": kd.evals.Evaluator(run=kd.evals.EveryNSteps(10))},
                    train_losses={"l2": kd.losses.L2(preds="preds", targets="batch.y")},
                    optimizer=optax.adam(1e-2),
                    num_train_steps=20,
                    log_metrics_every=10,
                )
            """
        )
    )
    workdir = tmp_path / "run"
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        [KD_TRAIN, f"--cfg={config}", f"--cfg.workdir={workdir}"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in (workdir / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows if "losses/l2" in row] == [1, 10, 20]
    saved = json.loads((workdir / "config.json").read_text())
    assert saved["__qualname__"] == "kauldron.kd.train:Trainer"  # the config as written, Kauldron's paths
    # `kd-train eval` resolves that config.json in safe mode: the recorded "kauldron" allows kd's modules.
    proc = subprocess.run(
        [KD_TRAIN, "eval", f"--workdir={workdir}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    evaluated = [json.loads(line) for line in (workdir / "eval_metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in evaluated] == [20] and "val/losses/l2" in evaluated[0]


def test_safe_mode_sees_through_the_alias(alias) -> None:
    # A run folder allowing "kauldron" must not reach what kd refuses (kd.cli, konfig) by Kauldron's names.
    for target in ("kauldron.kd.cli:main", "kauldron.konfig:resolve"):
        cfg = konfig.from_json(json.dumps({"__qualname__": target, "0": []}))
        with pytest.raises(konfig.DisallowedTargetError, match=r"(?i)safe mode refused"):
            konfig.resolve(cfg, allowed=["kauldron", "!kd.cli", "!konfig"])
