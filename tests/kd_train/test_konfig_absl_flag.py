"""`konfig.DEFINE_config_file`: Kauldron's absl flag, in a real absl program (absl comes with kd-train's stack)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def test_an_absl_program_reads_its_config_file_and_overrides(tmp_path) -> None:
    (tmp_path / "conf.py").write_text(
        textwrap.dedent(
            """
            import konfig

            def get_config():
                return konfig.ConfigDict({"seed": 0, "opt": {"lr": 0.1, "name": "adam"}})
            """
        )
    )
    (tmp_path / "main.py").write_text(
        textwrap.dedent(
            """
            import json
            import konfig
            from absl import app

            _CFG = konfig.DEFINE_config_file("cfg")

            def main(argv):
                cfg = _CFG.value
                print(json.dumps({"seed": cfg.seed, "lr": cfg.opt.lr, "name": cfg.opt.name, "rest": argv[1:]}))

            app.run(main)
            """
        )
    )
    run = [sys.executable, str(tmp_path / "main.py"), f"--cfg={tmp_path / 'conf.py'}"]
    proc = subprocess.run(
        [*run, "--cfg.seed=3", "--cfg.opt.lr=0.5"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.splitlines()[-1]) == {"seed": 3, "lr": 0.5, "name": "adam", "rest": []}
    proc = subprocess.run(  # absl's other spellings: a single dash, the value as the next argument
        [*run, "-cfg.seed", "5", "--cfg.opt.name=sgd"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.splitlines()[-1]) == {"seed": 5, "lr": 0.1, "name": "sgd", "rest": []}
    # A typo in a field is the config's error, named by its path, not absl's "unknown flag".
    proc = subprocess.run([*run, "--cfg.opt.lrr=0.5"], capture_output=True, text=True, check=False)
    assert proc.returncode != 0 and "lrr" in proc.stderr and "lr" in proc.stderr


def test_the_flag_s_value_is_the_config_with_its_file_and_overrides(tmp_path) -> None:
    # As ml_collections' and Kauldron's config flags: `FLAGS.cfg` is the config, `FLAGS["cfg"]` says where from;
    # overrides in an argv parsed later (not sys.argv) are defined by `define_overrides` first.
    (tmp_path / "conf.py").write_text("import konfig\ndef get_config():\n    return konfig.ConfigDict({'seed': 0})\n")
    script = textwrap.dedent(
        """
        import json, sys
        import konfig
        from absl import flags

        holder = konfig.DEFINE_config_file("cfg")
        argv = ["prog", f"--cfg={sys.argv[1]}", "--cfg.seed=7"]
        flags.FLAGS["cfg"].define_overrides(argv[1:])
        flags.FLAGS(argv)
        flag = flags.FLAGS["cfg"]
        print(json.dumps({
            "seed": flags.FLAGS.cfg.seed, "holder": holder.value.seed, "file": flag.config_filename,
            "overrides": flag.override_values, "serialized": flag.serialize(),
        }))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "conf.py")], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == {
        "seed": 7,
        "holder": 7,
        "file": str(tmp_path / "conf.py"),
        "overrides": {"seed": 7},  # read as the command line's values are
        "serialized": f"--cfg={tmp_path / 'conf.py'}",
    }
