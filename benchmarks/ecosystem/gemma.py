"""gemma (google-deepmind/gemma) on kd, through the `kauldron` alias, with no Kauldron and no TensorFlow.

    python benchmarks/ecosystem/gemma.py --gemma-repo /work/.mirror/google-deepmind+gemma/repo
    hatch run ecosystem-gemma --gemma-repo ...        # the same

An on-demand check (not in CI: it installs gemma's dependencies and takes ~10 minutes). It
  0. lists every Kauldron name gemma's code reaches and whether kd has it;
  1. makes a virtual environment with a Python >= 3.12 found on the machine (gemma needs it): gemma from
     PyPI without its dependencies, then those dependencies except `kauldron` (plus chex, which gemma
     imports but receives through Kauldron), our five packages from this checkout, pytest and tensorboard
     (to read the text summaries back);
  2. runs gemma's own unit tests of `gm/` and `peft/` (from the repository at the tag of the PyPI version),
     each file in its own process, with `kd.kauldron_alias.install()` in a conftest.py; tests that need
     the network (gemma's tokenizer files on Google Cloud Storage) are listed by name;
  3. trains `gm.testing.DummyGemma` on synthetic tokens through `kd-train` (gemma_driver/dummy_gemma.py, a
     Kauldron-spelled config: the alias is on by default inside kd-train);
  4. trains gemma's examples/seq2seq.py and examples/lora.py with only the downloads replaced (weights,
     data source, tokenizer: gemma_driver/examples_on_kd.py), gemma's SamplerEvaluator included.
It prints a report and writes it as JSON (--out). Exit status 1 when a test fails for another reason than
the network, or a training does not run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "gemma_driver"
PACKAGES = ["konfig", "kontext", "ktyping", "kd-compat", "kd-train"]
# gemma imports chex itself but gets it through Kauldron; tensorboard reads the SamplerEvaluator's texts;
# gemma's examples_test mocks TFDS's mtnt dataset (tensorflow-datasets without TensorFlow).
EXTRA = ["chex", "pytest", "tensorboard", "tensorflow-datasets>=4.9.10"]
CONFTEST = '''\
"""The kauldron alias for gemma's tests; gemma.examples from the repository's examples/ folder; TFDS's mtnt
builder registered (without TensorFlow, TFDS registers a builder only once its module is imported)."""
import gemma
import kd
import tensorflow_datasets.translate.mtnt  # noqa: F401

kd.kauldron_alias.install()
gemma.__path__.append({ext!r})
'''


def find_python(given: str | None) -> str:
    """An interpreter >= 3.12: --python, else python3.1x on PATH, else pyenv's."""
    candidates = [given] if given else []
    candidates += [shutil.which(f"python3.{minor}") for minor in range(16, 11, -1)]
    pyenv = Path.home() / ".pyenv" / "versions"
    if pyenv.is_dir():
        candidates += [str(p / "bin" / "python") for p in sorted(pyenv.iterdir(), reverse=True)]
    for candidate in filter(None, candidates):
        try:
            out = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info[:2] >= (3, 12))"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except OSError:
            continue
        if out.stdout.strip() == "True":
            return candidate
    raise SystemExit("no Python >= 3.12 found (gemma needs one): pass --python /path/to/python3.12")


def uv() -> list[str]:
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def make_env(python: str, venv: Path, version: str) -> Path:
    """The environment, made once per gemma version (a marker file says which)."""
    exe = venv / "bin" / "python"
    marker = venv / "kd-gemma-check.json"
    wanted = {"gemma": version, "python": python, "extra": EXTRA}
    if marker.exists() and json.loads(marker.read_text()) == wanted:
        _run([*uv(), "pip", "install", "-q", "-p", str(exe), *_ours()])  # our checkout may have changed
        return exe
    shutil.rmtree(venv, ignore_errors=True)
    _run([*uv(), "venv", "-q", "-p", python, str(venv)])
    _run([*uv(), "pip", "install", "-q", "-p", str(exe), f"gemma=={version}", "--no-deps"])
    requires = subprocess.run(
        [str(exe), "-c", "import importlib.metadata as m; print('\\n'.join(m.requires('gemma') or []))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    deps = [r for r in requires if "extra ==" not in r and not re.match(r"kauldron\b", r)]
    _run([*uv(), "pip", "install", "-q", "-p", str(exe), *deps, *EXTRA, *_ours()])
    marker.write_text(json.dumps(wanted))
    return exe


def _ours() -> list[str]:
    return [arg for name in PACKAGES for arg in ("-e", str(REPO / "packages" / name))]


def _run(cmd: list[str]) -> None:
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def check_environment(exe: Path) -> dict[str, str | None]:
    code = (
        "import importlib.util as u, gemma, kd; "
        "print(repr({'kauldron': str(u.find_spec('kauldron')) if u.find_spec('kauldron') else None, "
        "'tensorflow': str(u.find_spec('tensorflow')) if u.find_spec('tensorflow') else None, "
        "'gemma': gemma.__version__, 'kd': kd.__file__}))"
    )
    out = subprocess.run([str(exe), "-c", code], capture_output=True, text=True, check=True).stdout
    found = eval(out)  # a dict literal printed just above
    if found["kauldron"] or found["tensorflow"]:
        raise SystemExit(f"the environment must have neither Kauldron nor TensorFlow: {found}")
    return found


def extract(gemma_repo: Path, tag: str, work: Path) -> Path:
    """gemma's repository at `tag`: tests of gm/ and peft/, examples/ (also as gemma.examples)."""
    src = work / "src"
    src.mkdir(parents=True)
    archive = work / "gemma.tar"
    subprocess.run(["git", "-C", str(gemma_repo), "archive", "-o", str(archive), tag], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(src, filter="data")
    tests = work / "tests"
    for part in ("gm", "peft"):
        for path in (src / "gemma" / part).rglob("*_test.py"):
            target = tests / path.relative_to(src / "gemma")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    ext = work / "ext"
    shutil.copytree(src / "examples", ext / "examples")
    (ext / "examples" / "__init__.py").write_text("")
    (tests / "conftest.py").write_text(CONFTEST.format(ext=str(ext)))
    return src


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--gemma-repo",
        type=Path,
        default=Path("/work/.mirror/google-deepmind+gemma/repo"),
        help="a git clone (or bare mirror) of google-deepmind/gemma",
    )
    parser.add_argument(
        "--version", default="4.0.1", help="gemma's PyPI version; its tests come from tag v<version>"
    )
    parser.add_argument("--python", help="an interpreter >= 3.12 (default: found on the machine)")
    parser.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "kd-gemma-venv")
    parser.add_argument("--out", type=Path, default=Path("gemma_check.json"))
    parser.add_argument("--only", choices=["symbols", "tests", "dummy", "examples"], action="append")
    args = parser.parse_args()
    if not (args.gemma_repo / "HEAD").exists() and not (args.gemma_repo / ".git").exists():
        raise SystemExit(f"--gemma-repo {args.gemma_repo}: not a git repository of google-deepmind/gemma")
    python = find_python(args.python)
    exe = make_env(python, args.venv, args.version)
    report: dict = {"environment": check_environment(exe), "python": python}
    checks = args.only or ["symbols", "tests", "dummy", "examples"]
    with tempfile.TemporaryDirectory(prefix="kd-gemma-") as tmp:
        work = Path(tmp)
        src = extract(args.gemma_repo, f"v{args.version}", work)
        for check in checks:
            out = work / f"{check}.json"
            print(f"== {check}", flush=True)
            cmd = [str(exe), str(DRIVER / "driver.py"), check, "--out", str(out)]
            cmd += {
                "symbols": ["--src", str(src)],
                "tests": ["--tests", str(work / "tests")],
                "dummy": ["--workdir", str(work / "dummy")],
                "examples": ["--examples", str(src / "examples"), "--workdir", str(work / "examples")],
            }[check]
            proc = subprocess.run(cmd, env=dict(os.environ, PYTHONHASHSEED="0"))
            report[check] = (
                json.loads(out.read_text()) if out.exists() else {"error": f"exit {proc.returncode}"}
            )
    ok = _summarise(report)
    args.out.write_text(json.dumps(report, indent=1))
    print(f"report: {args.out}")
    return 0 if ok else 1


def _summarise(report: dict) -> bool:
    ok = True
    symbols = report.get("symbols")
    if symbols is not None and "missing" in symbols:
        print(f"Kauldron names gemma uses: {symbols['names']}; missing on kd: {symbols['missing'] or 'none'}")
    tests = report.get("tests")
    if tests is not None:
        by = {}
        for name, case in tests.items():
            by.setdefault(case.get("outcome", "error"), []).append(name)
        print("gemma's tests:", {k: len(v) for k, v in sorted(by.items())})
        for name in by.get("network", []):
            print(f"  needs the network: {name}")
        for name in by.get("tensorflow", []):
            print(f"  needs TensorFlow: {name}")
        for kind in ("failed", "error"):
            for name in by.get(kind, []):
                ok = False
                print(f"  {kind.upper()}: {name}: {tests[name]['message'][:300]}")
    dummy = report.get("dummy")
    if dummy is not None:
        losses = dummy.get("losses") or []
        print(f"DummyGemma through kd-train: exit {dummy.get('returncode')}, losses {losses}")
        ok &= dummy.get("returncode") == 0 and len(losses) >= 2 and losses[-1][1] < losses[0][1]
    examples = report.get("examples")
    if examples is not None:
        for name, result in examples.items() if "error" not in examples else []:
            print(
                f"{name}: train {result['train_losses']} test {result['test_losses']}; params changed "
                f"{result['params_changed']}/{result['params']} (LoRA {result['lora_params_changed']}); "
                f"sampled: {sum(len(v) for v in result['sampling_texts'].values())} texts"
            )
        ok &= "error" not in examples and len(examples) == 2
    return ok


if __name__ == "__main__":
    sys.exit(main())
