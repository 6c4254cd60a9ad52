"""Kauldron's commands that look into a config (`kauldron.cli`, here `kd.cli.{config,data,run,patch_config,
cmd_utils,commands}`): `<noun> <verb> --cfg=CONFIG.py` with `--patch.<field>` flags, the config patched for a quick
trial (`kd.cli.PatchConfig`), the command line's overrides winning over patches; also as `kd-train config show`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import konfig
import pytest
from kd.cli import cmd_utils, commands, config, data, patch_config, run

REPO = Path(__file__).resolve().parents[2]
DIGITS = str(REPO / "examples" / "digits.py")


@pytest.mark.parametrize(
    ("argv", "group", "verb"),
    [
        (["config", "show"], config.Config, config.Show),
        (["config", "resolve"], config.Config, config.Resolve),
        (["data", "element_spec"], data.Data, data.ElementSpec),
        (["run", "eval_shape"], run.Run, run.EvalShape),
    ],
)
def test_a_noun_and_a_verb_make_the_command(argv, group, verb):
    args = commands.flag_parser(["prog", *argv])
    assert type(args.command) is group and type(args.command.sub_command) is verb
    assert args.patch == patch_config.PatchConfig()  # the defaults: 1 step, a batch per device, no checkpoints


@pytest.mark.parametrize("argv", [[], ["config"], ["unknown"], ["config", "unknown"], ["data", "show"]])
def test_a_missing_or_unknown_noun_or_verb_exits_with_argparse_s_message(argv, capsys):
    with pytest.raises(SystemExit) as info:
        commands.flag_parser(["prog", *argv])
    assert info.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_patch_and_verb_flags_are_read_as_their_fields_types():
    args = commands.flag_parser(
        [
            "prog",
            "--patch.stop_after_steps=5",  # before the noun: patch flags go anywhere
            "data",
            "element_spec",
            "--ds_path=eval_ds",
            "--patch.batch_size=none",
            "--patch.skip_eval",
            "--patch.skip_checkpointer=false",
        ]
    )
    assert args.command.sub_command.ds_path == "eval_ds"
    assert (args.patch.stop_after_steps, args.patch.batch_size) == (5, None)
    assert args.patch.skip_eval is True and args.patch.skip_checkpointer is False
    assert commands.flag_parser(["p", "config", "show", "--patch.batch_size=8"]).patch.batch_size == 8
    assert commands.flag_parser(["p", "config", "show", "--patch.batch_size=devices"]).patch.batch_size == "devices"
    assert commands.flag_parser(["p", "config", "resolve", "--verbose=false"]).command.sub_command.verbose is False
    with pytest.raises(SystemExit):
        commands.flag_parser(["p", "config", "show", "--patch.skip_eval=maybe"])


def _example_cfg() -> konfig.ConfigDict:
    sys.path.insert(0, str(REPO / "examples"))
    try:
        return konfig.build_config(DIGITS)
    finally:
        sys.path.remove(str(REPO / "examples"))


def test_the_patch_of_a_real_config_is_listed_path_by_path_and_leaves_the_original_alone():
    cfg = _example_cfg()
    patched, updates = patch_config.PatchConfig(batch_size=4, profile=True)(cfg)

    assert cfg.train_ds.batch_size == 128 and "profiler" not in cfg  # a copy was patched
    assert patched.train_ds.batch_size == 4 and patched.checkpointer is None
    assert patched.stop_after_steps == 17  # a profile's steps
    assert updates["train_ds.batch_size"] == 4 and updates["stop_after_steps"] == 17
    assert str(updates["evals.test.run"]) == str(patched.evals.test.run)
    import kd

    assert konfig.resolve(patched.evals.test.run) == kd.evals.Once(0)
    profiler = konfig.resolve(patched.profiler)
    assert isinstance(profiler, kd.inspect.Profiler) and profiler.on_colab is True
    assert patch_config.PatchConfig(skip_eval=True)(cfg)[0].evals == {}


def test_tracked_update_sets_every_path_a_glob_names_and_lists_them():
    cfg = konfig.ConfigDict({"a": {"batch_size": 1, "b": {"batch_size": 2}}, "c": {"batch_size": 3}})
    assert cmd_utils.tracked_update(cfg, "a.**.batch_size", 9) == {"a.batch_size": 9, "a.b.batch_size": 9}
    assert (cfg.a.batch_size, cfg.a.b.batch_size, cfg.c.batch_size) == (9, 9, 3)


def test_the_origin_says_the_file_overrides_and_patches():
    origin = patch_config.ConfigOrigin(filename="conf.py", overrides={"seed": 3}, patches={"checkpointer": None})
    text = origin.summary()
    assert "Filename: conf.py" in text and "'seed': 3" in text and "'checkpointer': None" in text
    assert "Patches" not in origin.summary(include_patches=False)


def _command(*argv: str, program: tuple[str, ...] = ("-m", "kd.cli.commands")) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    return subprocess.run(
        [sys.executable, *program, *argv], capture_output=True, text=True, cwd=REPO, env=env, timeout=300
    )


def test_config_show_prints_the_patched_tree_and_an_override_wins_over_its_patch():
    proc = _command("config", "show", f"--cfg={DIGITS}", "--cfg.seed=3", "--cfg.train_ds.batch_size=16")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert f"Filename: {DIGITS}" in out
    overrides, _, rest = out.partition("Overrides:")[2].partition("Patches:")
    assert "'seed': 3" in overrides and "'train_ds.batch_size': 16" in overrides
    assert "train_ds.batch_size" not in rest.partition("<ConfigDict")[0]  # the override's, not a patch
    assert "seed=3" in out and "batch_size=16" in out and "stop_after_steps=1" in out


def test_data_element_spec_and_run_eval_shape_through_kd_train():
    proc = _command("data", "element_spec", f"--cfg={DIGITS}", "--patch.batch_size=4", program=("-m", "kd"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "image: float32[4, 8, 8, 1]" in proc.stdout and "label: int32[4]" in proc.stdout

    proc = _command("run", "eval_shape", f"--cfg={DIGITS}", program=("-m", "kd"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "state_specs:" in proc.stdout and "context_specs:" in proc.stdout
    assert "f32[64 128]" in proc.stdout  # the first dense layer's kernel, from jax.eval_shape


def test_kd_train_says_what_is_missing_from_a_kauldron_command():
    proc = _command("config", f"--cfg={DIGITS}", program=("-m", "kd"))
    assert proc.returncode == 2
    assert "usage: kd-train config" in proc.stderr and "required: verb" in proc.stderr


def test_the_kauldron_alias_gives_these_modules_under_kauldron_s_paths():
    script = (
        "import kd; kd.kauldron_alias.install()\n"
        "from kauldron.cli import main, config, patch_config\n"
        "from kauldron import kd as kd2\n"
        "import kd.cli.commands, kd.cli.config\n"
        "print(main is kd.cli.commands, config is kd.cli.config, kd2.cli.PatchConfig is patch_config.PatchConfig)\n"
        "print(callable(kd2.cli.main))\n"  # kd's own namespace keeps kd-train's entry point
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "True", "True"]
