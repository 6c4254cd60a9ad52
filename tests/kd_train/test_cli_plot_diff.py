"""`kd-train plot` and `kd-train diff`: runs' metrics.jsonl drawn as panels (train and evaluator values of a
metric on the same axes), runs' config.json compared."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import konfig
import pytest
from kd.cli import CliError
from kd.cli._diff import config_differences, diff_runs
from kd.cli._plot import metrics_figure, plot_panels, plot_runs, read_metrics, split_name

_TRAIN = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train.py"
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CONFIG_WITH_VAL = """
import konfig

with konfig.imports():
    import kd
    import optax
    from flax import linen as nn


def get_config():
    cfg = kd.train.Trainer()
    cfg.num_train_steps = 6
    cfg.log_metrics_every = 2
    cfg.train_ds = kd.data.InMemoryPipeline(loader=kd.data.SyntheticRegression(num_examples=64), batch_size=8)
    cfg.eval_ds = kd.data.InMemoryPipeline(
        loader=kd.data.SyntheticRegression(num_examples=32, seed=1), batch_size=8
    )
    cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=1), keys="batch.x")
    cfg.optimizer = optax.adam(learning_rate=1e-2)
    cfg.train_losses = {"l2": kd.losses.L2(preds="preds", targets="batch.y")}
    cfg.evals = {"val": kd.evals.Evaluator(run=kd.evals.EveryNSteps(2), num_batches=2)}
    return cfg
"""


def _write_run(folder: pathlib.Path, records: list[dict], config: dict | None = None) -> pathlib.Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    cfg = konfig.ConfigDict(config or {"num_train_steps": 10, "optimizer": {"learning_rate": 0.1}})
    (folder / "config.json").write_text(konfig.to_json(cfg))
    return folder


def _records(loss_start: float = 1.0, steps: int = 5) -> list[dict]:
    return [
        {
            "step": 10 * i,
            "losses/total": loss_start / (i + 1),
            "metrics/accuracy": 0.5 + 0.1 * i,
            "eval/losses/total": loss_start / (i + 2),
            "wall_time": 1.7e9 + i,
        }
        for i in range(steps)
    ]


def _titles(fig) -> list[str]:
    return [ax.get_title() for ax in fig.axes]


def _legend(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def _png_size(path: pathlib.Path) -> tuple[int, int]:
    """(width, height) in pixels, from the PNG's IHDR chunk."""
    data = path.read_bytes()
    assert data[:8] == _PNG_SIGNATURE and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _train_val_records(steps: int = 4) -> list[dict]:
    """What a Trainer with an evaluator `val` logs: its rows, then the evaluator's at the same step."""
    rows: list[dict] = []
    for i in range(steps):
        rows.append(
            {
                "step": 10 * i,
                "losses/xent": 1.0 / (i + 1),
                "metrics/accuracy": 0.5 + 0.1 * i,
                "schedules/learning_rate": 0.1,
                "perf/steps_per_sec": 100.0 + i,
            }
        )
        rows.append({"step": 10 * i, "val/losses/xent": 1.0 + 0.1 * i, "val/metrics/accuracy": 0.5})
    return rows


@pytest.fixture(scope="module")
def real_run_with_val(tmp_path_factory) -> pathlib.Path:
    """A tiny real training with an evaluator `val` every 2 steps (its values go to metrics.jsonl too)."""
    root = tmp_path_factory.mktemp("real_val")
    (root / "val_cfg.py").write_text(_CONFIG_WITH_VAL)
    workdir = root / "run"
    result = subprocess.run(
        [sys.executable, "-m", "kd", f"--cfg={root / 'val_cfg.py'}", f"--cfg.workdir={workdir}"],
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return workdir


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory) -> tuple[pathlib.Path, pathlib.Path]:
    """Two tiny real trainings of examples/train.py, 4 and 6 steps, run side by side."""
    root = tmp_path_factory.mktemp("real")
    dirs = (root / "short", root / "long")
    children = [
        subprocess.Popen(
            [sys.executable, str(_TRAIN), f"--cfg.workdir={d}", f"--cfg.num_train_steps={n}"],
            env={**os.environ, "JAX_PLATFORMS": "cpu"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for d, n in zip(dirs, (4, 6))
    ]
    for child in children:
        output, _ = child.communicate(timeout=120)
        assert child.returncode == 0, output
    return dirs


# --- plot ---------------------------------------------------------------------------


def test_plot_saves_a_png_in_the_first_workdir_by_default(tmp_path):
    run = _write_run(tmp_path / "run", _records())
    path = plot_runs([run])
    assert path == run / "metrics.png"
    data = path.read_bytes()
    assert data[:8] == _PNG_SIGNATURE
    assert len(data) > 1024


def test_plot_saves_to_out_and_into_an_out_directory(tmp_path):
    run = _write_run(tmp_path / "run", _records())
    assert plot_runs([run], out=tmp_path / "plots" / "curves.png") == tmp_path / "plots" / "curves.png"
    assert (tmp_path / "plots" / "curves.png").read_bytes()[:8] == _PNG_SIGNATURE
    assert plot_runs([run], out=tmp_path / "plots") == tmp_path / "plots" / "metrics.png"


def test_out_that_is_not_a_png_is_an_error(tmp_path):
    run = _write_run(tmp_path / "run", _records())
    with pytest.raises(CliError, match=r"curves\.svg.*expected a \.png file"):
        plot_runs([run], out=tmp_path / "curves.svg")


def test_one_panel_per_numeric_metric_titled_by_its_name(tmp_path):
    records = [{**r, "note": "text is not a metric"} for r in _records()]
    fig = metrics_figure([_write_run(tmp_path / "run", records)])
    assert _titles(fig) == [
        "losses/total",
        "metrics/accuracy",
    ]  # eval/losses/total is drawn with losses/total


def test_runs_are_overlaid_with_a_legend_naming_each_run(tmp_path):
    a = _write_run(tmp_path / "baseline", _records(1.0))
    b = _write_run(tmp_path / "tuned", _records(2.0))
    losses, accuracy = metrics_figure([a, b]).axes
    assert _legend(losses) == ["baseline: train", "baseline: eval", "tuned: train", "tuned: eval"]
    assert _legend(accuracy) == ["baseline", "tuned"]
    assert len(accuracy.get_lines()) == 2


def test_runs_with_the_same_basename_are_told_apart(tmp_path):
    a = _write_run(tmp_path / "lr_0.1" / "run", _records())
    b = _write_run(tmp_path / "lr_0.3" / "run", _records())
    fig = metrics_figure([a, b], metrics=["metrics/*"])
    assert _legend(fig.axes[0]) == ["lr_0.1/run", "lr_0.3/run"]


@pytest.mark.parametrize(
    ("name", "split"),
    [
        ("losses/xent", ("train", "losses/xent")),
        ("val/losses/xent", ("val", "losses/xent")),
        ("val/metrics/accuracy", ("val", "metrics/accuracy")),
        ("val/hard/metrics/accuracy", ("val/hard", "metrics/accuracy")),
        ("metrics/accuracy/top1", ("train", "metrics/accuracy/top1")),
        ("perf/steps_per_sec", ("train", "perf/steps_per_sec")),
        ("schedules/learning_rate", ("train", "schedules/learning_rate")),
        ("val/losses", ("train", "val/losses")),
    ],
)
def test_split_name_tells_an_evaluators_values_from_the_training_loops(name, split):
    assert split_name(name) == split


def test_train_and_val_values_of_a_metric_share_one_panel(tmp_path):
    panels = plot_panels([_write_run(tmp_path / "run", _train_val_records())])
    losses = panels[0]
    assert [p.title for p in panels] == ["losses/xent", "metrics/accuracy", "schedules/learning_rate"]
    assert [(line.name, line.label) for line in losses.lines] == [
        ("losses/xent", "train"),
        ("val/losses/xent", "val"),
    ]
    assert losses.legend
    assert losses.lines[1].steps == [0, 10, 20, 30]
    assert losses.lines[1].values == pytest.approx([1.0, 1.1, 1.2, 1.3])
    assert [line.linestyle for line in losses.lines] == ["-", "--"]
    assert losses.lines[0].color != losses.lines[1].color


def test_panels_have_the_metric_as_y_label_and_step_as_x_label(tmp_path):
    fig = metrics_figure([_write_run(tmp_path / "run", _train_val_records())])
    assert [ax.get_ylabel() for ax in fig.axes] == _titles(fig)
    assert {ax.get_xlabel() for ax in fig.axes} == {"step"}


def test_a_panel_with_one_line_has_no_legend(tmp_path):
    fig = metrics_figure([_write_run(tmp_path / "run", _train_val_records())])
    losses, accuracy, learning_rate = fig.axes
    assert _legend(losses) == ["train", "val"]
    assert _legend(accuracy) == ["train", "val"]
    assert len(learning_rate.get_lines()) == 1
    assert learning_rate.get_legend() is None


def test_the_train_line_comes_first_even_when_the_evaluator_logged_first(tmp_path):
    records = [
        {"step": 0, "val/losses/xent": 2.0},  # EveryNSteps evaluates at step 0, before the first train row
        {"step": 1, "losses/xent": 1.5},
        {"step": 2, "losses/xent": 1.0, "val/losses/xent": 1.2},
    ]
    (panel,) = plot_panels([_write_run(tmp_path / "run", records)])
    assert [line.label for line in panel.lines] == ["train", "val"]
    assert panel.lines[0].linestyle == "-"


def test_with_several_runs_a_run_keeps_its_color_and_a_split_its_linestyle(tmp_path):
    a = _write_run(tmp_path / "a", _train_val_records())
    b = _write_run(tmp_path / "b", _train_val_records())
    losses = plot_panels([a, b], metrics=["losses/*"])[0]
    assert [line.label for line in losses.lines] == ["a: train", "a: val", "b: train", "b: val"]
    assert [line.color for line in losses.lines] == ["C0", "C0", "C1", "C1"]
    assert [line.linestyle for line in losses.lines] == ["-", "--", "-", "--"]


def test_perf_panels_are_left_out_unless_asked_for(tmp_path):
    run = _write_run(tmp_path / "run", _train_val_records())
    assert "perf/steps_per_sec" not in [p.title for p in plot_panels([run])]
    assert [p.title for p in plot_panels([run], metrics=["perf/*"])] == ["perf/steps_per_sec"]
    assert [p.title for p in plot_panels([run], perf=True)][-1] == "perf/steps_per_sec"
    assert [p.title for p in plot_panels([run], metrics=["losses/*"], perf=True)] == [
        "losses/xent",
        "perf/steps_per_sec",
    ]


def test_a_run_that_logged_only_perf_values_shows_them(tmp_path):
    run = _write_run(tmp_path / "run", [{"step": i, "perf/steps_per_sec": 10.0 + i} for i in range(3)])
    assert [p.title for p in plot_panels([run])] == ["perf/steps_per_sec"]


def test_a_pattern_on_the_logged_name_picks_only_those_lines(tmp_path):
    run = _write_run(tmp_path / "run", _train_val_records())
    panels = plot_panels([run], metrics=["val/*"])
    assert [p.title for p in panels] == ["losses/xent (val)", "metrics/accuracy (val)"]
    assert [[line.name for line in p.lines] for p in panels] == [
        ["val/losses/xent"],
        ["val/metrics/accuracy"],
    ]
    assert not panels[0].legend


def test_values_of_kd_train_eval_join_the_training_curves(tmp_path):
    run = _write_run(tmp_path / "run", [{"step": s, "losses/l2": 1.0 / s} for s in (1, 2, 3, 4)])
    (run / "eval_metrics.jsonl").write_text(
        "".join(json.dumps({"step": s, "wall_time": 1.7e9, "val/losses/l2": 0.5 + s}) + "\n" for s in (2, 4))
    )
    (panel,) = plot_panels([run])
    assert panel.title == "losses/l2"
    assert [(line.label, line.steps) for line in panel.lines] == [("train", [1, 2, 3, 4]), ("val", [2, 4])]


def test_the_png_has_one_panel_per_metric_in_up_to_three_columns(tmp_path):
    run = _write_run(tmp_path / "run", _train_val_records())
    assert _png_size(plot_runs([run], metrics=["losses/*"])) == (480, 340)
    assert _png_size(plot_runs([run], perf=True)) == (1440, 680)  # 4 panels: 3 columns, 2 rows


def test_x_is_the_step(tmp_path):
    fig = metrics_figure([_write_run(tmp_path / "run", _records(steps=3))])
    assert list(fig.axes[0].get_lines()[0].get_xdata()) == [0, 10, 20]


def test_metric_patterns_choose_the_panels_in_pattern_order(tmp_path):
    run = _write_run(tmp_path / "run", _records())
    fig = metrics_figure([run], metrics=["metrics/*", "*losses/*"])
    assert _titles(fig) == ["metrics/accuracy", "losses/total"]
    assert _legend(fig.axes[1]) == ["train", "eval"]


def test_a_pattern_matching_no_metric_is_an_error_listing_the_metrics(tmp_path):
    run = _write_run(tmp_path / "run", _records())
    with pytest.raises(CliError, match=r"'loss/\*'.*matches none.*losses/total"):
        plot_runs([run], metrics=["loss/*"])


def test_positive_values_spanning_more_than_two_decades_get_a_log_axis(tmp_path):
    records = [{"step": i, "losses/total": 10.0**-i, "metrics/accuracy": 0.5 + i / 10} for i in range(5)]
    fig = metrics_figure([_write_run(tmp_path / "run", records)])
    assert [ax.get_yscale() for ax in fig.axes] == ["log", "linear"]


def test_values_crossing_zero_keep_a_linear_axis(tmp_path):
    records = [{"step": i, "metrics/gap": [-1000.0, 0.0, 0.001, 5.0][i]} for i in range(4)]
    fig = metrics_figure([_write_run(tmp_path / "run", records)])
    assert fig.axes[0].get_yscale() == "linear"


def test_null_values_are_skipped(tmp_path):
    records = [
        {"step": 1, "losses/total": 0.5},
        {"step": 2, "losses/total": None},
        {"step": 3, "losses/total": 0.2},
    ]
    fig = metrics_figure([_write_run(tmp_path / "run", records)])
    line = fig.axes[0].get_lines()[0]
    assert list(line.get_xdata()) == [1, 3]
    assert list(line.get_ydata()) == [0.5, 0.2]


def test_a_step_logged_twice_keeps_its_last_value(tmp_path):
    records = [
        {"step": 1, "losses/total": 0.5},
        {"step": 2, "losses/total": 0.4},
        {"step": 2, "losses/total": 0.3},
    ]
    assert read_metrics(_write_run(tmp_path / "run", records)) == {"losses/total": ([1, 2], [0.5, 0.3])}


def test_a_truncated_last_line_is_skipped_with_a_warning(tmp_path, capsys):
    run = _write_run(tmp_path / "run", _records(steps=3))
    with (run / "metrics.jsonl").open("a") as f:
        f.write('{"step": 30, "losses/to')
    steps, _ = read_metrics(run)["losses/total"]
    assert steps == [0, 10, 20]
    assert "metrics.jsonl:4: skipping the truncated last line" in capsys.readouterr().err


def test_a_corrupt_middle_line_is_an_error_naming_file_and_line(tmp_path):
    run = _write_run(tmp_path / "run", _records(steps=3))
    lines = (run / "metrics.jsonl").read_text().splitlines()
    lines[1] = lines[1][:12]
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(CliError, match=r"metrics\.jsonl:2: expected one JSON object per line"):
        plot_runs([run])


def test_a_line_without_a_step_is_an_error_naming_file_and_line(tmp_path):
    run = _write_run(tmp_path / "run", [{"step": 1, "losses/total": 0.5}, {"losses/total": 0.4}])
    with pytest.raises(CliError, match=r'metrics\.jsonl:2: expected a numeric "step"'):
        read_metrics(run)


def test_a_missing_workdir_is_an_error(tmp_path):
    with pytest.raises(CliError, match=r"nowhere: no such run workdir"):
        plot_runs([tmp_path / "nowhere"])


def test_a_workdir_without_metrics_jsonl_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(CliError, match=r"empty: no metrics\.jsonl in this workdir"):
        plot_runs([tmp_path / "empty"])


def test_a_run_without_numeric_metrics_is_an_error(tmp_path):
    run = _write_run(tmp_path / "run", [{"step": 1, "wall_time": 1.7e9, "losses/total": None}])
    with pytest.raises(CliError, match=r"metrics\.jsonl: expected numeric metrics to plot"):
        plot_runs([run])


def test_no_workdirs_is_an_error():
    with pytest.raises(CliError, match=r"at least one run workdir"):
        plot_runs([])


def test_without_matplotlib_the_error_names_the_extra(tmp_path, monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # also when it was never imported
    run = _write_run(tmp_path / "run", _records())
    with pytest.raises(CliError, match=r"pip install 'kd-train\[plot\]'"):
        plot_runs([run])


def test_plot_overlays_two_real_runs(real_runs):
    short, long = real_runs
    fig = metrics_figure([short, long], metrics=["losses/*"])
    assert _titles(fig) == ["losses/l2"]  # examples/mlp_regression.py's one loss (its own total)
    assert _legend(fig.axes[0]) == ["short", "long"]
    path = plot_runs([short, long], metrics=["losses/*"])
    assert path.read_bytes()[:8] == _PNG_SIGNATURE


def test_plot_of_a_real_run_draws_train_and_val_on_the_same_axes(real_run_with_val):
    panels = plot_panels([real_run_with_val])
    assert [p.title for p in panels] == ["losses/l2"]  # perf/* left out
    (losses,) = panels
    assert [(line.name, line.label) for line in losses.lines] == [
        ("losses/l2", "train"),
        ("val/losses/l2", "val"),
    ]
    assert losses.legend
    assert losses.lines[1].steps == [0, 2, 4, 6]  # EveryNSteps(2): step 0, then every 2 steps
    path = plot_runs([real_run_with_val])
    assert path == real_run_with_val / "metrics.png"
    assert _png_size(path) == (480, 340)
    fig = metrics_figure([real_run_with_val], metrics=["perf/*"])
    assert all(title.startswith("perf/") for title in _titles(fig))


# --- diff ---------------------------------------------------------------------------


def test_diff_of_two_real_runs_shows_num_train_steps(real_runs):
    short, long = real_runs
    text = diff_runs(short, long)
    assert "~ cfg.num_train_steps: 4 -> 6" in text
    assert text.startswith(f"--- {short / 'config.json'}\n+++ {long / 'config.json'}\n")


def test_diff_of_identical_configs_says_so(tmp_path):
    a = _write_run(tmp_path / "a", _records())
    b = _write_run(tmp_path / "b", _records())
    assert diff_runs(a, b).startswith("configs are identical")


def test_diff_without_config_json_is_an_error(tmp_path):
    a = _write_run(tmp_path / "a", _records())
    (tmp_path / "b").mkdir()
    with pytest.raises(CliError, match=r"b: no config\.json in this workdir"):
        diff_runs(a, tmp_path / "b")


def test_diff_of_a_missing_workdir_is_an_error(tmp_path):
    a = _write_run(tmp_path / "a", _records())
    with pytest.raises(CliError, match=r"nowhere: no such run workdir"):
        diff_runs(a, tmp_path / "nowhere")


def test_a_config_json_that_is_not_json_is_an_error_naming_it(tmp_path):
    a = _write_run(tmp_path / "a", _records())
    b = _write_run(tmp_path / "b", _records())
    (b / "config.json").write_text("{not json")
    with pytest.raises(CliError, match=r"b/config\.json: expected konfig JSON.*Not JSON"):
        diff_runs(a, b)


def test_a_config_json_that_is_not_a_config_object_is_an_error(tmp_path):
    a = _write_run(tmp_path / "a", _records())
    b = _write_run(tmp_path / "b", _records())
    (b / "config.json").write_text("[1, 2]")
    with pytest.raises(CliError, match=r"b/config\.json: expected konfig JSON.*found a list"):
        diff_runs(a, b)


def test_config_differences_lists_the_differing_paths():
    a = konfig.to_json(konfig.ConfigDict({"seed": 0, "optimizer": {"learning_rate": 0.1}, "tags": ["x"]}))
    b = konfig.to_json(konfig.ConfigDict({"seed": 0, "optimizer": {"learning_rate": 0.3}, "steps": 5}))
    assert config_differences(a, b) == ["cfg.optimizer.learning_rate", "cfg.tags", "cfg.steps"]


def test_config_differences_of_equal_configs_is_empty():
    text = konfig.to_json(konfig.ConfigDict({"seed": 0, "optimizer": {"learning_rate": 0.1}}))
    assert config_differences(text, text) == []


def test_config_differences_names_the_source_of_bad_json():
    good = konfig.to_json(konfig.ConfigDict({"seed": 0}))
    with pytest.raises(CliError, match=r"/tmp/w/config\.json: expected konfig JSON"):
        config_differences("oops", good, sources=("/tmp/w/config.json", "the new config"))
