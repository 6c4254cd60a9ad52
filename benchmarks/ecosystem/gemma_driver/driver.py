"""Runs inside the gemma environment (gemma from PyPI, our packages, no Kauldron): the three checks.

python driver.py tests --tests DIR --out results.json      # gemma's unit tests, one process per file
python driver.py dummy --workdir DIR --out results.json    # DummyGemma through `kd-train`
python driver.py examples --examples DIR --workdir DIR --out results.json   # seq2seq and LoRA
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
# A failure whose message says it reads Google Cloud Storage (the tokenizer files of gemma's releases).
NETWORK_MARKERS = ("gcsfs", "gs://", "Google Storage")
# gm/tests/examples_test.py mocks TFDS's mtnt dataset, whose builder TFDS registers only with TensorFlow.
TENSORFLOW_MARKERS = ("No module named 'tensorflow_datasets'", "Dataset mtnt not found")


def run_tests(tests_dir: Path, out: Path, timeout: int) -> None:
    """Each `*_test.py` under tests_dir in its own pytest process (gemma's tests patch flax globally, so
    one process for all lets one file's patch break another's tests), the alias on through conftest.py."""
    results: dict[str, dict[str, str]] = {}
    files = sorted(tests_dir.rglob("*_test.py"))
    for path in files:
        rel = path.relative_to(tests_dir).as_posix()
        report = out.parent / f"junit-{rel.replace('/', '_')}.xml"
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", rel],
            cwd=tests_dir,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        cases = _junit_cases(report) if report.exists() else {}
        if not cases:
            cases = {"<collection>": {"outcome": "error", "message": (proc.stdout + proc.stderr)[-2000:]}}
        for case in cases.values():
            if case["outcome"] != "passed" and any(m in case["message"] for m in TENSORFLOW_MARKERS):
                case["outcome"] = "tensorflow"
        for name, case in cases.items():
            results[f"{rel}::{name}"] = case
        shown = {
            k: sum(1 for c in cases.values() if c["outcome"] == k)
            for k in {c["outcome"] for c in cases.values()}
        }
        print(f"  {rel}: {shown} ({time.monotonic() - started:.0f} s)", flush=True)
    out.write_text(json.dumps(results, indent=1))


def _junit_cases(report: Path) -> dict[str, dict[str, str]]:
    cases = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        problem = next((c for c in case if c.tag in ("failure", "error")), None)
        skipped = next((c for c in case if c.tag == "skipped"), None)
        if problem is not None:
            text = (problem.get("message") or "") + "\n" + (problem.text or "")
            outcome = "network" if any(m in text for m in NETWORK_MARKERS) else "failed"
            cases[case.get("name")] = {"outcome": outcome, "message": text.strip()[:1500]}
        elif skipped is not None:
            cases[case.get("name")] = {"outcome": "skipped", "message": skipped.get("message") or ""}
        else:
            cases[case.get("name")] = {"outcome": "passed", "message": ""}
    return cases


def _losses(metrics_file: Path, name: str) -> list[tuple[int, float]]:
    rows = [json.loads(line) for line in metrics_file.read_text().splitlines() if line.strip()]
    return [(row["step"], row[name]) for row in rows if name in row]


def run_dummy(workdir: Path, out: Path) -> None:
    """`kd-train` on dummy_gemma.py, a Kauldron-spelled config: the alias is on inside kd-train by default."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    cmd = [
        str(Path(sys.executable).with_name("kd-train")),
        f"--cfg={HERE / 'dummy_gemma.py'}",
        f"--cfg.workdir={workdir}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    result: dict = {
        "command": " ".join(cmd),
        "returncode": proc.returncode,
        "output": proc.stdout[-3000:] + proc.stderr[-3000:],
    }
    if proc.returncode == 0:
        result["losses"] = _losses(workdir / "metrics.jsonl", "losses/xentropy")
    out.write_text(json.dumps(result, indent=1))


def run_examples(examples_dir: Path, workdir: Path, out: Path) -> None:
    """gemma's seq2seq and LoRA examples, resolved and trained in this process (see examples_on_kd.py)."""
    sys.path[:0] = [str(HERE), str(examples_dir)]
    import kd

    kd.kauldron_alias.install()
    import examples_on_kd
    import jax
    import kontext
    import numpy as np
    from kauldron import konfig

    results = {}
    for example in ("seq2seq", "lora"):
        cfg = examples_on_kd.get_config(example)
        cfg.workdir = str(workdir / example)
        trainer = konfig.resolve(cfg)
        initial = trainer.init_state()
        final, _ = trainer.train()
        before = dict(kontext.flatten_with_path(jax.device_get(initial.params)))
        after = dict(kontext.flatten_with_path(jax.device_get(final.params)))
        changed = sorted(str(p) for p in after if not np.array_equal(before[p], after[p]))
        metrics = Path(cfg.workdir) / "metrics.jsonl"
        results[example] = {
            "model": type(trainer.model).__name__,
            "optimizer": repr(cfg.optimizer)[:200],
            "train_losses": _losses(metrics, "losses/xentropy"),
            "test_losses": _losses(metrics, "test/losses/xentropy"),
            "params": len(after),
            "params_changed": len(changed),
            "lora_params_changed": sum("lora" in p.lower() for p in changed),
            "non_lora_params_changed": sum("lora" not in p.lower() for p in changed),
            "sampling_texts": _sampling_texts(Path(cfg.workdir) / "sampling"),
        }
        print(f"  {example}: {json.dumps(results[example])[:400]}", flush=True)
    out.write_text(json.dumps(results, indent=1))


def _sampling_texts(folder: Path) -> dict[str, list[str]]:
    """The SamplerEvaluator's text summaries, read back from its TensorBoard event file."""
    from tensorboard.backend.event_processing import event_accumulator

    texts: dict[str, list[str]] = {}
    for events in sorted(folder.glob("events.out.tfevents.*")):
        acc = event_accumulator.EventAccumulator(str(events), size_guidance={"tensors": 0})
        acc.Reload()
        for tag in acc.Tags().get("tensors", []):
            for event in acc.Tensors(tag):
                values = event.tensor_proto.string_val
                texts.setdefault(tag, []).extend(v.decode("utf-8", "replace")[:120] for v in values)
    return texts


def run_symbols(src: Path, out: Path) -> None:
    """Every Kauldron name gemma's code reaches (`kd.a.B`, `from kauldron.x import y`, `kontext.f`), and
    whether it resolves on kd through the alias."""
    import importlib
    import re

    import kd

    kd.kauldron_alias.install()
    names: set[str] = set()
    aliases = {"kd": "kauldron.kd", "konfig": "kauldron.konfig", "kontext": "kauldron.kontext"}
    for path in (src / "gemma").rglob("*.py"):
        if path.name.endswith("_test.py"):
            continue
        # Code only: comments and `quoted` names in docstrings are not uses.
        text = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())
        text = re.sub(r"`[^`\n]*`", "", text)
        for module, imported in re.findall(r"^from (kauldron[\w.]*) import ([\w, ]+)", text, re.M):
            imported = ",".join(n.split(" as ")[0] for n in imported.split(","))
            names.update(f"{module}.{n.strip()}" for n in imported.split(",") if n.strip())
            for n in imported.split(","):
                if n.strip() in ("kd", "konfig", "kontext", "ktyping", "typing"):
                    aliases[n.strip()] = f"{module}.{n.strip()}"
        for root, rest in re.findall(r"(?<![\w.])(kd|konfig|kontext)\.([A-Za-z_][\w.]*)", text):
            if re.search(rf"^from kauldron import [\w, ]*\b{root}\b", text, re.M):
                names.add(f"{aliases[root]}.{rest.rstrip('.')}")
    missing = []
    for name in sorted(names):
        if not _resolves(importlib, name):
            missing.append(name)
    result = {"names": len(names), "missing": missing}
    print(f"  {len(names)} Kauldron names used by gemma; missing on kd: {missing}", flush=True)
    out.write_text(json.dumps(result, indent=1))


def _resolves(importlib, dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("check", choices=["symbols", "tests", "dummy", "examples"])
    parser.add_argument("--src", type=Path)
    parser.add_argument("--tests", type=Path)
    parser.add_argument("--examples", type=Path)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--timeout", type=int, default=900)
    args = parser.parse_args()
    if args.check == "symbols":
        run_symbols(args.src, args.out)
    elif args.check == "tests":
        run_tests(args.tests, args.out, args.timeout)
    elif args.check == "dummy":
        run_dummy(args.workdir, args.out)
    else:
        run_examples(args.examples, args.workdir, args.out)


if __name__ == "__main__":
    main()
