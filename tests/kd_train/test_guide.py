"""The guide in packages/kd-train/README.md does what it says, so it cannot rot.

Its Python blocks marked `<!-- not-run: guide:NAME, ... -->` (the README runner leaves them out, as they
share one session) run here, in order, in one namespace, each `# -> value` / `# prints:` claim checked with
the README runner's rules (tests/integration/test_readme_examples.py); then `CHECKS[NAME]` asserts on what
the block produced: values logged, lines printed, files written. `tempfile.mkdtemp()` in a block makes its
folder under this module's temporary folder.

The command lines the guide shows run through `kd.cli.main` on a copy of `examples/guide/` outside the
repository (a project of one's own), and every message a test checks is quoted in the guide.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib.util
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "packages" / "kd-train" / "README.md"
GUIDE = README.read_text().split("\n## Guide\n", 1)[1]
EXAMPLES = ROOT / "examples" / "guide"
MARK = "guide:"


def _readme_runner() -> types.ModuleType:
    """tests/integration/test_readme_examples.py: its block parser and claim checker."""
    path = ROOT / "tests" / "integration" / "test_readme_examples.py"
    spec = importlib.util.spec_from_file_location("_kd_readme_claims", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their class's module up
    spec.loader.exec_module(module)
    return module


RUNNER = _readme_runner()
BLOCKS = {
    block.skip_reason.split(",")[0][len(MARK) :]: block
    for block in RUNNER.python_blocks(README)
    if block.skip_reason is not None and block.skip_reason.startswith(MARK)
}


def said(*texts: str) -> None:
    """Each text is in the guide word for word (line breaks aside): what a test checks is what the guide tells."""
    guide = " ".join(GUIDE.split())
    for text in texts:
        assert " ".join(text.split()) in guide, f"the guide no longer says {text!r}"


# ---------------------------------------------------------------------------------------------- the session


@dataclasses.dataclass
class Session:
    """The guide's blocks run so far, in one namespace; `output[name]`: what a block printed."""

    namespace: dict[str, Any] = dataclasses.field(repr=False)
    folder: pathlib.Path
    output: dict[str, str] = dataclasses.field(default_factory=dict)
    failed: dict[str, Exception] = dataclasses.field(default_factory=dict)

    def run_through(self, name: str) -> None:
        """Runs the blocks up to `name` not run yet (a `-k` selection still has the ones before it)."""
        for earlier, block in BLOCKS.items():
            if earlier not in self.output:
                self._run(earlier, block)
            if earlier == name:
                break
        if name in self.failed:
            raise self.failed[name]

    def _run(self, name: str, block: Any) -> None:
        tree = ast.parse(block.code, str(README))
        ast.increment_lineno(tree, block.line - 1)
        lines = block.code.splitlines()
        text = io.StringIO()
        try:
            with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
                for stmt in tree.body:
                    RUNNER._run_statement(stmt, block, lines, self.namespace)
        except Exception as e:  # kept: the block's own test reports it
            self.failed[name] = e
        finally:
            self.output[name] = text.getvalue()
            print(f"--- guide:{name} printed:\n{self.output[name]}")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    folder = tmp_path_factory.mktemp("guide")
    module = types.ModuleType("kd_guide_session")
    saved = tempfile.tempdir, list(sys.path)
    tempfile.tempdir = str(folder)  # the blocks' `tempfile.mkdtemp()` workdirs
    sys.path.insert(0, str(EXAMPLES))  # guide:python imports my_config, as from its folder
    sys.modules[module.__name__] = module  # the blocks' dataclasses look their module up
    try:
        yield Session(module.__dict__, folder)
    finally:
        tempfile.tempdir, sys.path[:] = saved
        del sys.modules[module.__name__]
        for name in ("my_config", "my_model"):
            sys.modules.pop(name, None)


# ---------------------------------------------------------------------------------------------- per block


def _tensorboard(folder: str | os.PathLike[str]) -> Any:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(folder), size_guidance={"scalars": 0, "histograms": 0, "tensors": 0})
    events.Reload()
    return events


def check_setup(ns: dict[str, Any], out: str) -> None:
    trainer = ns["tiny_trainer"]()
    assert (trainer.num_train_steps, trainer.log_metrics_every, trainer.workdir) == (20, 10, None)
    assert trainer.element_spec["x"].shape == (16, 2)
    said("20\nsteps, logging at steps 1, 10 and 20")


def check_loss(ns: dict[str, Any], out: str) -> None:
    import jax.numpy as jnp

    assert "step 20 | l2 " in out
    loss = ns["loss"]
    values = jnp.asarray([[1.0], [2.0], [3.0], [4.0]])
    zeros, mask = jnp.zeros((4, 1)), jnp.asarray([[1.0], [1.0], [0.0], [0.0]])
    per_value = np.log(np.cosh(np.asarray(values)))
    # weight * sum(values * mask) / sum(mask), or / the number of values with normalize_by="values"
    masked = loss.get_state(preds=values, targets=zeros, mask=mask).compute()
    assert float(masked) == pytest.approx(0.5 * per_value[:2].sum() / 2)
    by_values = dataclasses.replace(loss, normalize_by="values").get_state(
        preds=values, targets=zeros, mask=mask
    )
    assert float(by_values.compute()) == pytest.approx(0.5 * per_value[:2].sum() / 4)
    bad = ns["tiny_trainer"](train_losses={"wrong": ns["LogCosh"](preds="preds", targets="batch.x")})
    with pytest.raises(
        ns["kd"].train.ShapeMismatchError, match=r"train_losses\['wrong'\] \(LogCosh\)"
    ) as error:
        bad.check()
    assert "[16 1]" in str(error.value) and "[16 2]" in str(error.value)  # preds against batch.x
    said("kd.train.ShapeMismatchError", "`losses/total` when there are two or more")


def check_metric(ns: dict[str, Any], out: str) -> None:
    kd, trainer, state, val = ns["kd"], ns["trainer"], ns["state"], ns["val"]
    errors = []
    for batch in ns["eval_ds"]:  # the evaluator's batches, predicted here one by one
        context = trainer.trainstep.forward(
            state.params, state.collections, batch, state.step, is_training=False
        )
        errors.append(np.abs(np.asarray(context.preds) - batch["y"]))
    assert len(errors) == 4
    assert val["metrics/max_err"] == pytest.approx(max(e.max() for e in errors), rel=1e-5)
    assert val["metrics/mae"] == pytest.approx(np.concatenate(errors).mean(), rel=1e-5)
    assert "step 20 | val/l2 " in out and "val/max_err" in out  # the evaluator ran at the last step
    with pytest.raises(kd.metrics.StateMergeError):
        ns["one"].merge(kd.metrics.AverageState(total=1.0, count=1.0))
    said("states of two types raise\n`kd.metrics.StateMergeError`", "`val/metrics/max_err`")


def check_summary(ns: dict[str, Any], out: str) -> None:
    events = _tensorboard(os.path.join(ns["workdir"], "train"))
    assert [e.step for e in events.Histograms("summaries/preds")] == [1, 10, 20]
    texts = events.Tensors("summaries/worst")
    assert [e.step for e in texts] == [1, 10, 20]  # the first step, every 10, the last
    assert all(e.tensor_proto.string_val[0].startswith(b"largest error") for e in texts)
    said("`summaries/worst` under Text and `summaries/preds` under Histograms,\nat steps 1, 10 and 20")


def check_data(ns: dict[str, Any], out: str) -> None:
    workdir = ns["workdir"]
    assert "resuming from step 12 (" in out

    def position(step: int) -> Any:
        return json.loads(
            pathlib.Path(workdir, "checkpoints", f"ckpt_{step}", "data", "metadata").read_text()
        )

    assert (position(12), position(20)) == ({"index": 12}, {"index": 20})
    # "as if the first had not stopped": the same parameters as 20 steps in one go
    kd = ns["kd"]
    whole, _ = ns["tiny_trainer"](train_ds=ns["data"], writer=kd.writers.InMemoryWriter()).train()
    for resumed, uninterrupted in zip(jax.tree.leaves(ns["state"].params), jax.tree.leaves(whole.params)):
        np.testing.assert_array_equal(np.asarray(resumed), np.asarray(uninterrupted))
    said("The second run continues with batch 12, as if the first had not stopped.")


def check_paths(ns: dict[str, Any], out: str) -> None:
    kd, tiny_trainer = ns["kd"], ns["tiny_trainer"]
    specs = kd.inspect.intermediate_specs(tiny_trainer())
    assert specs["interms.hidden.__call__[0]"].shape == (16, 8)
    table = kd.inspect.context_table(ns["trainer"].context_specs)
    assert "interms.hidden.__call__[0]" in table and "batch.x" in table and "loss_total" in table
    typo = tiny_trainer(train_metrics={"n": kd.metrics.Norm(tensor="interms.hiden.__call__[0]")})
    with pytest.raises(kd.train.KeyPathError) as error:
        typo.check()
    message = str(error.value)
    assert "train_metrics['n']" in message and "interms.hidden.__call__[0]" in message
    assert "interms.out.__call__[0]" in message  # every intermediate the model offers
    said("`kd.train.KeyPathError`, naming the loss or\nmetric, the key, the closest paths")


def check_writers(ns: dict[str, Any], out: str) -> None:
    default, own = pathlib.Path(ns["workdir"]), pathlib.Path(ns["csv_workdir"])
    rows = [json.loads(line) for line in (default / "metrics.jsonl").read_text().splitlines()]
    assert all({"step", "wall_time", "losses/l2"} <= set(row) for row in rows)
    events = _tensorboard(default / "train")
    assert [e.step for e in events.Scalars("losses/l2")] == [row["step"] for row in rows] == [1, 10, 20]
    assert "step 10 | l2 " in out
    csv = (own / "l2.csv").read_text().splitlines()
    logged = [json.loads(line) for line in (own / "metrics.jsonl").read_text().splitlines()]
    assert [float(line.split(",")[1]) for line in csv] == pytest.approx([row["losses/l2"] for row in logged])
    said("`tensorboard --logdir WORKDIR`", "Setting `writer=` replaces the default")


def check_checkpoints(ns: dict[str, Any], out: str) -> None:
    assert "resuming from step 15 (" in out
    assert sorted(os.listdir(os.path.join(ns["workdir"], "checkpoints"))) == ["ckpt_15", "ckpt_20"]  # 2 kept
    kd = ns["kd"]
    for steps, interval in ((5_000, 1000), (30_000, 3000), (200_000, 10_000), (10**6, 10_000)):
        chosen = kd.ckpts.default_checkpointer(workdir="/tmp/run", num_train_steps=steps, log_every=100)
        assert (chosen.save_interval_steps, chosen.max_to_keep) == (interval, 3)
    said("between 1,000 and 10,000 steps", "it keeps the 3 newest", "`checkpointer=None` opts out")


def check_python(ns: dict[str, Any], out: str) -> None:
    import konfig

    workdir = pathlib.Path(ns["cfg"].workdir)
    assert konfig.from_json((workdir / "config.json").read_text()) == ns["cfg"]
    assert (workdir / "DONE").exists() and (workdir / "train").is_dir()
    said("written to `<workdir>/config.json`")


def check_autostate(ns: dict[str, Any], out: str) -> None:
    trainer, state, val = ns["trainer"], ns["state"], ns["val"]
    errors = []
    for batch in ns["eval_ds"]:  # every example the evaluator saw, predicted here
        context = trainer.trainstep.forward(
            state.params, state.collections, batch, state.step, is_training=False
        )
        errors.append(np.abs(np.asarray(context.preds) - batch["y"]).reshape(-1))
    errors = np.concatenate(errors)
    assert errors.shape == (64,)
    assert val["metrics/err/median"] == pytest.approx(np.median(errors), rel=1e-5)
    assert val["metrics/err/worst"] == pytest.approx(errors.max(), rel=1e-5)
    empty = ns["quantiles"].empty()
    assert isinstance(empty, ns["ErrorQuantiles"].State) and empty.parent == ns["quantiles"]
    said("`concat_field()`: concatenated along axis 0, on the host", "`metric.empty()` is its empty state")


CHECKS: dict[str, Callable[[dict[str, Any], str], None]] = {
    "setup": check_setup,
    "loss": check_loss,
    "metric": check_metric,
    "autostate": check_autostate,
    "summary": check_summary,
    "data": check_data,
    "paths": check_paths,
    "writers": check_writers,
    "checkpoints": check_checkpoints,
    "python": check_python,
}


def test_every_guide_block_has_a_check() -> None:
    assert list(BLOCKS) == list(CHECKS)


@pytest.mark.parametrize("name", list(CHECKS))
def test_guide_block_runs_and_does_what_it_says(session: Session, name: str) -> None:
    session.run_through(name)
    CHECKS[name](session.namespace, session.output[name])


# ---------------------------------------------------------------------------------------------- the command line


def kd_train(*args: str) -> tuple[int, str, str]:
    """`kd-train ARGS` in this process: `(exit code, stdout, stderr)`."""
    from kd import cli

    out, err = io.StringIO(), io.StringIO()
    for name in ("my_config", "my_model"):  # imported again from the folder the command names
        sys.modules.pop(name, None)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))
    return code, out.getvalue(), err.getvalue()


PRESS_CTRL_C = """\
import os
import signal

import numpy as np


def batches(press_at, presses):
    for index in range(1000):
        if index == press_at:
            for _ in range(presses):
                os.kill(os.getpid(), signal.SIGINT)  # as a terminal's Ctrl-C
        yield {"x": np.full((16, 2), 0.1, np.float32), "y": np.zeros((16, 1), np.float32)}
"""

BROKEN_DATA = """\
import numpy as np


def batches():
    for step in range(1000):
        if step == 6:
            raise RuntimeError("corrupt record 6 in shard 0")
        yield {"x": np.ones((16, 2), np.float32), "y": np.zeros((16, 1), np.float32)}
"""

OTHER_DATA_CONFIG = """\
import konfig

with konfig.imports():
    import kd
    import {module}

import my_config


def get_config():
    cfg = my_config.get_config()
    cfg.train_ds = kd.data.FromIterable(iterable={call})
    cfg.evals = {{}}
    return cfg
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pathlib.Path]:
    """A repository of one's own: examples/guide/ copied out of this one, with two more configs."""
    folder = tmp_path_factory.mktemp("my_project")
    for source in EXAMPLES.glob("*.py"):
        shutil.copy(source, folder / source.name)
    (folder / "press_ctrl_c.py").write_text(PRESS_CTRL_C)
    (folder / "broken_data.py").write_text(BROKEN_DATA)
    (folder / "ctrl_c_config.py").write_text(
        OTHER_DATA_CONFIG.format(module="press_ctrl_c", call="press_ctrl_c.batches(press_at=5, presses=1)")
    )
    (folder / "crash_config.py").write_text(
        OTHER_DATA_CONFIG.format(module="broken_data", call="broken_data.batches()")
    )
    saved = list(sys.path)
    yield folder
    sys.path[:] = saved  # kd-train put the folder on it
    for name in ("my_config", "my_model", "press_ctrl_c", "broken_data", "ctrl_c_config", "crash_config"):
        sys.modules.pop(name, None)


def _steps(workdir: pathlib.Path) -> list[int]:
    folder = workdir / "checkpoints"
    return sorted(int(p.name[5:]) for p in folder.glob("ckpt_*")) if folder.exists() else []


@dataclasses.dataclass
class Run:
    workdir: pathlib.Path
    interrupted_copy: pathlib.Path  # the workdir as the first invocation left it (stopped at step 10)
    calls: list[tuple[int, str, str]]


@pytest.fixture(scope="module")
def run(project: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """`kd-train --cfg=my_config.py --cfg.workdir=W` stopped at step 10, run again, and again."""
    workdir = tmp_path_factory.mktemp("runs") / "guide_run"
    command = (f"--cfg={project / 'my_config.py'}", f"--cfg.workdir={workdir}")
    calls = [kd_train(*command, "--cfg.stop_after_steps=10")]
    copy = workdir.parent / "interrupted"
    shutil.copytree(workdir, copy)
    calls += [kd_train(*command), kd_train(*command)]
    return Run(workdir, copy, calls)


def test_the_same_command_resumes_from_the_latest_checkpoint(run: Run) -> None:
    code, out, _ = run.calls[1]
    assert (run.calls[0][0], code) == (0, 0)
    assert f"resuming from step 10 ({run.workdir / 'checkpoints' / 'ckpt_10'})" in out
    assert _steps(run.workdir) == [10, 20]  # the stop step of each invocation
    said("`resuming from step N (...)`")


def test_a_complete_run_says_so_and_does_nothing(run: Run) -> None:
    code, out, _ = run.calls[2]
    assert code == 0
    assert out.startswith(f"run already complete at step 20 ({run.workdir}): nothing to do")
    said("`run already complete at step N (...): nothing to do` (exit 0)")


def test_the_default_writers_fill_the_workdir(run: Run) -> None:
    names = set(os.listdir(run.workdir))
    assert {"metrics.jsonl", "config.json", "train", "val", "checkpoints", "DONE"} <= names
    rows = [json.loads(line) for line in (run.workdir / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows if "losses/l2" in row] == [1, 10, 20]  # each once, across the resume
    assert [row["step"] for row in rows if "val/losses/l2" in row] == [0, 10, 20]  # the evaluator's rows
    val = _tensorboard(run.workdir / "val")
    assert [e.step for e in val.Scalars("losses/l2")] == [0, 10, 20]  # the evaluator's folder, the same tag
    said("each evaluator's in\n  `<workdir>/<evaluator>/` under the same tags")


def test_eval_evaluates_each_checkpoint_of_the_run(run: Run) -> None:
    code, out, _ = kd_train("eval", f"--workdir={run.workdir}", "--poll_seconds=0")
    assert code == 0, out
    rows = [json.loads(line) for line in (run.workdir / "eval_metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [10, 20]
    assert all("val/losses/l2" in row for row in rows)
    said("kd-train eval --workdir=/tmp/guide_run", "`RUN/eval_metrics.jsonl`")


def test_a_run_of_another_config_is_refused(run: Run, project: pathlib.Path) -> None:
    code, _, err = kd_train(
        f"--cfg={project / 'my_config.py'}", f"--cfg.workdir={run.workdir}", "--cfg.seed=1"
    )
    assert code == 2
    assert "holds a run of another config: + cfg.seed: 1 (its config.json -> this one)" in err
    said("A workdir holding a run of another config with checkpoints is refused, listing the changes")


def test_a_damaged_checkpoint_is_set_aside(run: Run, project: pathlib.Path) -> None:
    workdir = run.interrupted_copy
    position = workdir / "checkpoints" / "ckpt_10" / "data" / "metadata"
    position.write_text(position.read_text().replace('"index": 10', '"index": 3'))  # edited: digests differ
    code, _, err = kd_train(f"--cfg={project / 'my_config.py'}", f"--cfg.workdir={workdir}")
    assert code == 0
    assert "checkpoints.unreadable" in err and "10" in err
    assert [p.name for p in (workdir / "checkpoints.unreadable").iterdir()] == ["ckpt_10"]
    assert _steps(workdir) == [20]  # none left: trained again from step 0
    said("moved to `<workdir>/checkpoints.unreadable/`", "(from step 0 when none is left)")


def test_logs_without_a_checkpoint_are_refused_unless_force(
    project: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    workdir = tmp_path / "run"
    command = (f"--cfg={project / 'my_config.py'}", f"--cfg.workdir={workdir}", "--cfg.checkpointer=None")
    assert kd_train(*command)[0] == 0
    assert not (workdir / "checkpoints").exists()
    code, _, err = kd_train(*command)
    assert code == 2
    assert "holds the logs of a run (metrics.jsonl up to step 20) but no checkpoint" in err
    code, out, _ = kd_train(*command, "--force")
    assert code == 0
    (archived,) = (workdir / "previous").iterdir()
    assert f"--force: the earlier run's files moved to {archived}; starting over" in out
    assert (archived / "metrics.jsonl").exists() and (workdir / "metrics.jsonl").exists()
    said("is refused (exit 2)", "`--force` moves the old files to `WORKDIR/previous/<time>/`")


def test_ctrl_c_once_saves_the_step_and_exits_130(project: pathlib.Path, tmp_path: pathlib.Path) -> None:
    code, _, err = kd_train(f"--cfg={project / 'ctrl_c_config.py'}", f"--cfg.workdir={tmp_path}")
    assert code == 130
    assert "interrupted (Ctrl-C) at step 10 of 20: the state is checkpointed; " in err
    assert _steps(tmp_path) == [10]
    said("`interrupted (Ctrl-C) at step N of M: the state is checkpointed; ...`), exit 130")


def test_ctrl_c_twice_stops_at_once(project: pathlib.Path, tmp_path: pathlib.Path) -> None:
    config = (f"--cfg={project / 'ctrl_c_config.py'}", f"--cfg.workdir={tmp_path}")
    code, _, err = kd_train(*config, "--cfg.train_ds.iterable.presses=2")
    assert code == 130
    assert "interrupted (Ctrl-C): stopped at once" in err
    assert _steps(tmp_path) == []
    said("Twice: stops at once, without saving (exit 130)")


def test_a_crash_in_user_code_shows_where_and_the_users_frames(project: pathlib.Path) -> None:
    code, _, err = kd_train(f"--cfg={project / 'crash_config.py'}")
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == "error while training, step 7: RuntimeError: corrupt record 6 in shard 0"
    assert lines[1] == f'  File "{project / "broken_data.py"}", line 7, in batches'
    assert lines[-1].startswith("(your code's frames; --traceback=full or KD_TRACEBACK=full shows all ")
    said(lines[0], lines[-1].split(" all ")[0])


def test_traceback_full_shows_every_frame(project: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RuntimeError, match="corrupt record 6"):
        kd_train(f"--cfg={project / 'crash_config.py'}", "--traceback=full")
    monkeypatch.setenv("KD_TRACEBACK", "full")
    with pytest.raises(RuntimeError, match="corrupt record 6"):
        kd_train(f"--cfg={project / 'crash_config.py'}")
    said("`--traceback=full` (with any command) or the environment variable `KD_TRACEBACK=full`")


def test_inspect_prints_the_context_paths(project: pathlib.Path) -> None:
    code, out, _ = kd_train("inspect", f"--cfg={project / 'my_config.py'}")
    assert code == 0
    table = out.split("== Context paths (what kontext keys can name) ==\n", 1)[1].split("\n\n", 1)[0]
    assert "batch.x" in table and "(16, 2) float32" in table
    assert "interms.hidden.__call__[0]" in table  # the intermediate a metric of the config names
    said("kd-train inspect --cfg=examples/guide/my_config.py  ")


def test_a_config_of_ones_own_trains_and_inspects_from_outside_the_repository(
    project: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    """A real `kd-train` process, started in another folder: the config's folder is put on `sys.path`."""
    executable = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"
    environment = {k: v for k, v in os.environ.items() if k != "KD_TRACEBACK"} | {"JAX_PLATFORMS": "cpu"}
    environment.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [executable, "inspect", "--interms", f"--cfg={project / 'my_config.py'}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environment,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "Path                        Shape    Dtype",
        "interms.__call__[0]         (16, 1)  float32",
        "interms.hidden.__call__[0]  (16, 8)  float32",
        "interms.out.__call__[0]     (16, 1)  float32",
        "3 intermediates; a key names one as its path (`interms.<...>`).",
    ]
    said(
        "kd-train inspect --interms --cfg=examples/guide/my_config.py",
        "puts the config file's folder\nfirst on `sys.path`",
    )


def test_replacing_the_workdir_of_a_trainer_gives_the_defaults_of_a_workdir(session: Session) -> None:
    """The defaults of a run with a workdir (checkpoints, metrics.jsonl, TensorBoard files) hold for a Trainer
    made by `dataclasses.replace(trainer, workdir=...)` from one without a workdir too."""
    session.run_through("setup")
    kd = session.namespace["kd"]
    trainer = dataclasses.replace(
        session.namespace["tiny_trainer"](), workdir=str(session.folder / "replaced")
    )
    assert isinstance(trainer.checkpointer, kd.ckpts.DefaultCheckpointer)
    assert {type(w) for w in trainer.writer.writers} == {
        kd.writers.PrintWriter,
        kd.writers.JsonlWriter,
        kd.writers.TensorBoardWriter,
    }
