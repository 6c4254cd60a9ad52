"""Safe mode by capability: `allowed=["kd"]` admits kd's *declared* surface (kd/_konfig_surface.py), not
every attribute under kd; the same for optax, flax and jax, whose surfaces kd declares. Every attack below
was found (or is a variant of one found) with only what an honest run records (kd, optax, flax) or with a
hostile run.json; each is refused as a konfig error naming the config path, and none runs (canaries).
Honest configs still build: flax.linen.relu (a jax custom_jvp), optax's schedules (closures), classmethods
a surface names."""

from __future__ import annotations

import json

import konfig
import pytest
from kd._run_policy import run_policy

RECORDED = ["kd", "optax", "flax", "functools"]


def build(node: object, allowed: list[str] = RECORDED, **doc: object) -> object:
    return konfig.resolve(konfig.from_json(json.dumps({"x": {"inner": node}, **doc})), allowed=allowed)


def refused(node: object, allowed: list[str] = RECORDED, **doc: object) -> str:
    with pytest.raises(konfig.DisallowedTargetError) as info:
        build(node, allowed, **doc)
    message = str(info.value)
    assert "cfg.x.inner" in message, message
    return message


def q(name: str, *args: object, **kwargs: object) -> dict:
    return {"__qualname__": name, **{str(i): a for i, a in enumerate(args)}, **kwargs}


# --- the attacks of issue 38, and variants -----------------------------------------------------------

ATTACKS = {
    "kd.xm.run_processes": lambda c: q("kd.xm:run_processes", [q("kd.xm:Process", argv=["touch", c])]),
    "kd.xm.local_processes": lambda c: q("kd.xm:local_processes", command=["sh", "-c", f"touch {c}"]),
    "kd.xm.Process": lambda c: q("kd.xm:Process", argv=["touch", c]),
    "kd:xm.run_processes": lambda c: q("kd:xm.run_processes", [q("kd:xm.Process", argv=["touch", c])]),
    "kd._atomic.write_text_atomic": lambda c: q("kd._atomic:write_text_atomic", c, "x"),
    "kd.cli.main": lambda c: q("kd.cli:main", ["inspect", f"--cfg={c}"]),
    "kd.kauldron_alias.install": lambda c: q("kd.kauldron_alias:install"),
    "kd.evals.evaluate_checkpoints": lambda c: q("kd.evals:evaluate_checkpoints", None),
    "kd.ckpts.workdir_from_xid": lambda c: q("kd.ckpts:workdir_from_xid", 1),
    "kd.export": lambda c: q("kd.export:export_params", None, c),
    "kd.inspect": lambda c: q("kd.inspect:inspect_report", None),
    "kd.inspect.lower_trainstep": lambda c: q("kd.inspect:lower_trainstep", None),
    "kd.konfig.resolve": lambda c: q("kd:konfig.resolve", {"__qualname__": "os:system", "0": f"touch {c}"}),
    "konfig.build_config": lambda c: q("konfig:build_config", c),
    "kd.nn private module": lambda c: q("kd.nn._vit:_variant", "x"),
    "kd.data.py module walk": lambda c: q("kd.data:py.os.system", f"touch {c}"),
    "flax.io.GFile": lambda c: q("flax.io:GFile", c, "w"),
    "flax.io.copy": lambda c: q("flax.io:copy", "/etc/hostname", c),
    "flax.io.makedirs": lambda c: q("flax.io:makedirs", c),
    "flax.io.listdir": lambda c: q("flax.io:listdir", "/root"),
    "flax.linen.tabulate": lambda c: q("flax.linen:tabulate", None, None),
    "flax.serialization through linen": lambda c: q("flax.linen:module.os.system", f"touch {c}"),
    "flax.training.checkpoints": lambda c: q("flax.training.checkpoints:save_checkpoint", c, {}, 0),
    "optax.tree_utils": lambda c: q("optax:tree_utils.tree_map", None, None),
    "functools other than partial": lambda c: q("functools:reduce", q("os:system"), [f"touch {c}"]),
    "functools.partial of os.system": lambda c: q("functools:partial", {"__const__": "os:system"}, f"touch {c}"),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_attack_with_what_an_honest_run_records_is_refused(name, tmp_path):
    canary = tmp_path / "canary"
    message = refused(ATTACKS[name](str(canary)))
    assert "safe mode refused" in message.lower(), message
    assert not canary.exists()


KAULDRON_ATTACKS = {
    "kauldron.xm.run_processes": lambda c: q("kauldron.xm:run_processes", [q("kauldron.xm:Process", argv=["touch", c])]),
    "kauldron.kd:xm.run_processes": lambda c: q("kauldron.kd:xm.run_processes", []),
    "kauldron.kd:cli.main": lambda c: q("kauldron.kd:cli.main", ["inspect", f"--cfg={c}"]),
    "kauldron.konfig.resolve": lambda c: q("kauldron.konfig:resolve", {}),
    "kauldron.evals.evaluate_checkpoints": lambda c: q("kauldron.evals:evaluate_checkpoints", None),
}


@pytest.fixture
def kauldron_alias():
    from kd import kauldron_alias

    installed = kauldron_alias.is_installed()
    kauldron_alias.install()
    yield
    if not installed:
        kauldron_alias.uninstall()


@pytest.mark.parametrize("name", sorted(KAULDRON_ATTACKS))
def test_an_attack_through_the_kauldron_alias_is_refused(name, kauldron_alias, tmp_path):
    canary = tmp_path / "canary"
    refused(KAULDRON_ATTACKS[name](str(canary)), [*RECORDED, "kauldron", "kontext", "ktyping"])
    assert not canary.exists()


def test_kd_names_by_kauldrons_module_names_still_build(kauldron_alias):
    built = build(q("kauldron.losses:L2", preds="preds.x", targets="batch.y"), [*RECORDED, "kauldron"])
    import kd

    assert isinstance(built["x"]["inner"], kd.losses.L2)


def test_a_method_of_a_built_object_reached_by_a_reference_is_refused(tmp_path):
    # `cfg.ref.ckpt.save(...)`: kd.ckpts.Checkpointer is on the surface; its methods are not.
    canary = tmp_path / "ckpt"
    message = refused(
        {"__op__": "call", "args": [{"__ref__": ["ckpt", "save"]}, None], "kwargs": {"step": 1}},
        ckpt=q("kd.ckpts:Checkpointer", workdir=str(canary), save_interval_steps=1),
    )
    assert "Checkpointer.save" in message
    assert not canary.exists()


def test_references_and_computed_names_cannot_reach_a_refused_function():
    # A name computed by an op, then read from a surface class; a module named through a constant.
    message = refused(
        {"__op__": "call", "args": [{"__op__": "getattr", "args": [{"__ref__": ["cls"]}, {"__op__": "add", "args": ["restore", "_latest"]}]}, None]},
        cls={"__const__": "kd.ckpts:Checkpointer"},
    )
    assert "Checkpointer.restore_latest" in message
    with pytest.raises(konfig.DisallowedTargetError, match="kd:xm"):
        build({"__ref__": ["mod", "run_processes"]}, mod={"__const__": "kd:xm"})


# --- a hostile run.json never widens the policy ---------------------------------------------------

HOSTILE = {
    "pydoc": q("pydoc:pipepager", "x", "sh -c 'touch CANARY'"),
    "typing": q("typing:_eval_type", q("typing:ForwardRef", "__import__('os').system('touch CANARY')"), {}, {}),
    "pathlib": q("pathlib:Path.write_text", q("pathlib:Path", "CANARY"), "x"),
    "codecs": q("codecs:open", "CANARY", "w"),
    "tarfile": q("tarfile:open", "CANARY", "w"),
    "logging": q("logging:FileHandler", "CANARY"),
    "numpy": q("numpy:save", "CANARY", [1]),
    "operator": q("operator:methodcaller", "write_text", "x"),
    "linecache": q("linecache:getline", "/etc/passwd", 1),
    "posixpath": q("posixpath:expandvars", "$HOME"),
    "shutil": q("shutil:copyfile", "/etc/hostname", "CANARY"),
    "subprocess": q("subprocess:run", ["touch", "CANARY"]),
    "builtins": q("builtins:eval", "1"),
    "importlib": q("importlib:import_module", "os"),
    "socket": q("socket:create_connection", ["127.0.0.1", 9]),
    "webbrowser": q("webbrowser:open", "http://127.0.0.1:9"),
    "glob": q("glob:glob", "/root/*"),
    "pickle": q("pickle:loads", "x"),
    "sqlite3": q("sqlite3:connect", "CANARY"),
    "tempfile": q("tempfile:mkstemp"),
    "zipfile": q("zipfile:ZipFile", "CANARY", "w"),
    "runpy": q("runpy:run_path", "CANARY"),
    "etils": q("etils.epath:Path", "CANARY"),
    "orbax": q("orbax.checkpoint:PyTreeCheckpointer"),
    "tensorboardX": q("tensorboardX:SummaryWriter", "CANARY"),
}


@pytest.mark.parametrize("module", sorted(HOSTILE))
def test_a_module_a_foreign_run_json_records_is_left_out_and_refused(module, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"imports": [*RECORDED, module], "argv": ["kd-train"], "cwd": "/"}))
    (run / "config.json").write_text("{}")
    allowed, how = run_policy(str(run), None)
    assert module not in allowed and f"left out: {module}" in how
    node = json.loads(json.dumps(HOSTILE[module]).replace("CANARY", str(tmp_path / "canary")))
    refused(node, allowed)
    assert not (tmp_path / "canary").exists()


def test_a_foreign_runs_argv_and_cwd_never_go_on_sys_path(tmp_path):
    import sys

    from kd._run_policy import config_folder_on_path

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "cfg.py").write_text("")
    run = tmp_path / "run"
    run.mkdir()
    record = {"imports": ["kd"], "argv": ["kd-train", f"--cfg={elsewhere / 'cfg.py'}"], "cwd": str(tmp_path)}
    (run / "run.json").write_text(json.dumps(record))
    (run / "config.json").write_text("{}")
    config_folder_on_path(str(run))
    assert str(elsewhere) not in sys.path


# --- honest configs build -------------------------------------------------------------------------


def test_honest_names_build_under_the_declared_surfaces():
    import flax.linen as nn
    import jax
    import kd
    import optax

    built = build(
        {
            "model": q("kd.nn:ExternalModule", model=q("flax.linen:Sequential", layers=[q("flax.linen:Dense", 4), {"__const__": "flax.linen:relu"}]), keys="batch.x"),
            "vit": q("kd.nn:VitEncoder.from_variant_str", "Ti/16"),
            "schedule": q("optax:warmup_cosine_decay_schedule", init_value=0.0, peak_value=1.0, warmup_steps=2, decay_steps=10),
            "opt": q("optax:adam", learning_rate={"__ref__": ["x", "inner", "schedule"]}),
            "act": {"__const__": "jax.nn:gelu"},
        },
        [*RECORDED, "jax"],
    )["x"]["inner"]
    assert isinstance(built["model"], kd.nn.ExternalModule)
    assert built["model"].model.layers[1] is nn.relu
    assert isinstance(built["vit"], kd.nn.VitEncoder)
    assert callable(built["schedule"]) and isinstance(built["opt"], optax.GradientTransformation)
    assert built["act"] is jax.nn.gelu


def test_the_declared_surfaces_are_names_not_packages():
    kd_surface = konfig.declared_surface("kd")
    assert "kd.losses:*" in kd_surface and not any(e.lstrip("!").startswith(("kd.xm", "kd.cli", "kd._atomic")) for e in kd_surface if not e.startswith("!"))
    assert konfig.declared_surface("functools") == ("functools:partial",)
    with pytest.raises(konfig.SurfaceError, match="outside 'mylib'"):
        konfig.declare_surface("mylib", ["os:system"])
    with pytest.raises(konfig.SurfaceError, match="dunder"):
        konfig.declare_surface("mylib", ["mylib:__builtins__"])


def test_a_user_adds_their_own_module_by_declaring_it_or_by_a_whole_module_pattern():
    konfig.declare_surface("leaky_user_lib_zz", ["leaky_user_lib_zz:make"])
    # `"mylib.*"` (a glob) or a bare name without a declared surface trusts that whole module, as before
    assert build(q("json:dumps", [1]), [*RECORDED, "json"])["x"]["inner"] == "[1]"


# --- found by an independent review (red team) of the new design --------------------------------


def test_a_foreign_run_recording_kauldron_gets_no_undeclared_package_with_it(tmp_path):
    # The alias's targets are kd, kontext and ktyping; only kd declares a surface, so only kd comes along.
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"imports": ["kauldron"], "argv": ["kd-train"], "cwd": "/"}))
    (run / "config.json").write_text("{}")
    allowed, _ = run_policy(str(run), None)
    assert "kd" in allowed and "kontext" not in allowed and "ktyping" not in allowed
    refused(q("kontext:get_by_path", q("kd.nn:Identity"), "__class__.__init__.__globals__.sys"), allowed)


def test_a_key_path_never_follows_python_internals_even_where_kontext_is_trusted():
    # `kontext.get_by_path(obj, "__class__.__init__.__globals__.sys")` was a way around the dunder refusal.
    with pytest.raises(konfig.ResolveError, match="__globals__"):
        build(q("kontext:get_by_path", q("kd.nn:Identity"), "__class__.__init__.__globals__.sys"), [*RECORDED, "kontext"])
    with pytest.raises(konfig.ResolveError, match="Python internal"):
        build(q("kontext:set_by_path", q("kd.nn:Identity"), "__class__", 1), [*RECORDED, "kontext"])


def test_a_private_attribute_of_a_built_object_is_not_read(tmp_path):
    # `Checkpointer._manager` is a property that makes folders; only the audit hook stopped it before.
    message = refused(
        {"__ref__": ["ckpt", "_manager"]},
        ckpt=q("kd.ckpts:Checkpointer", workdir=str(tmp_path / "victim"), save_interval_steps=1),
    )
    assert "private attribute" in message
    assert not (tmp_path / "victim").exists()


@pytest.mark.parametrize(
    ("node", "words"),
    [
        (q("jax.numpy:ones", [268435456]), "more than 10,000,000 elements"),
        (q("jax.numpy:zeros", [1 << 14, 1 << 14]), "more than 10,000,000 elements"),
        (q("jax.numpy:arange", 10**9), "10,000,000"),
        (q("jax.numpy:einsum_path", "ab,bc->ac", [1], [1], optimize="optimal"), "einsum_path"),
    ],
)
def test_array_sizes_and_exponential_planners_are_bounded(node, words):
    assert words in refused(node, [*RECORDED, "jax"])


@pytest.mark.parametrize(
    "name",
    ["jax.numpy:set_printoptions", "flax.nnx:set_graph_mode", "flax.linen:set_logical_axis_rules", "kd.typing:enable_kd_type_checking"],
)
def test_functions_that_change_global_state_are_off_the_surfaces(name):
    refused(q(name), [*RECORDED, "jax"])
