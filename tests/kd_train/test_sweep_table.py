"""The sweep summary: each item's final losses and metrics as a table of at most 100 columns, and whole in
`<base>/sweep_summary.csv` and `<base>/sweep_summary.jsonl`."""

from __future__ import annotations

import csv
import json
import math
import pathlib

import kd.cli
import pytest
from kd.cli._sweep_table import final_values, sweep_summary

_SWEEP_CONFIG = """
import konfig

with konfig.imports():
    import kd
    import optax
    from flax import linen as nn


def get_config():
    cfg = kd.train.Trainer()
    cfg.num_train_steps = 4
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


def sweep_lr():
    for learning_rate in (1e-2, 1e-1):
        yield {"optimizer.learning_rate": learning_rate}
"""


def _write_run(folder: pathlib.Path, rows: list[dict], *, done: bool = True) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if done:
        (folder / "DONE").write_text(json.dumps({"step": rows[-1]["step"] if rows else 0}) + "\n")
    return str(folder)


def _rows(loss: float = 0.5, steps: tuple[int, ...] = (10, 20)) -> list[dict]:
    rows: list[dict] = []
    for step in steps:
        rows.append(
            {
                "step": step,
                "wall_time": 1.7e9 + step,
                "losses/xent": loss / step,
                "metrics/accuracy": 1 - loss / step,
                "perf/steps_per_sec": 100.0,
                "schedules/learning_rate": 0.1,
            }
        )
        rows.append({"step": step, "val/losses/xent": 2 * loss / step, "val/metrics/accuracy": 0.5})
    return rows


def _csv(base: pathlib.Path) -> list[dict[str, str]]:
    with (base / "sweep_summary.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def _jsonl(base: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in (base / "sweep_summary.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def real_sweep(tmp_path_factory) -> tuple[pathlib.Path, list[tuple[str, str]]]:
    """A real two-item sweep (`--sweep=lr`) of a tiny regression with an evaluator `val`, in this process."""
    root = tmp_path_factory.mktemp("sweep")
    (root / "sweep_cfg.py").write_text(_SWEEP_CONFIG)
    base = root / "runs"
    code = kd.cli.main([f"--cfg={root / 'sweep_cfg.py'}", "--sweep=lr", f"--cfg.workdir={base}"])
    assert code == 0
    folders = sorted(p for p in base.iterdir() if p.is_dir())
    assert len(folders) == 2
    return base, [(folder.name, str(folder)) for folder in folders]


def _last_row_values(workdir: str) -> dict[str, float]:
    """The last value of each name in a real run's metrics.jsonl, read here independently."""
    last: dict[str, float] = {}
    for line in pathlib.Path(workdir, "metrics.jsonl").read_text().splitlines():
        last.update(json.loads(line))
    return last


def test_a_real_sweep_is_summarised_in_csv_jsonl_and_a_table(real_sweep):
    base, items = real_sweep
    text = sweep_summary(items, str(base))
    rows = _jsonl(base)
    assert [r["item"] for r in rows] == [name for name, _ in items]
    for row, (_, workdir) in zip(rows, items):
        last = _last_row_values(workdir)
        assert row["workdir"] == workdir
        assert row["step"] == 4
        assert row["done"] is True
        assert row["note"] == ""
        assert row["losses/l2"] == pytest.approx(last["losses/l2"])
        assert row["val/losses/l2"] == pytest.approx(last["val/losses/l2"])
        assert not any(name.startswith(("perf/", "schedules/")) for name in row)
    table = _csv(base)
    assert list(table[0]) == ["item", "workdir", "step", "done", "note", "val/losses/l2", "losses/l2"]
    assert [r["step"] for r in table] == ["4", "4"]
    assert float(table[0]["losses/l2"]) == rows[0]["losses/l2"]
    lines = text.splitlines()
    assert lines[0] == "sweep summary: 2 of 2 items finished; final values:"
    assert lines[1].split() == ["#", "item", "step", "val/losses/l2", "losses/l2"]
    assert lines[2].split()[:3] == ["1", items[0][0], "4"]
    assert lines[-2:] == [f"  {base / 'sweep_summary.csv'}", f"  {base / 'sweep_summary.jsonl'}"]
    assert all(len(line) <= 100 for line in lines[:-2])


def test_an_item_that_did_not_run_is_listed_with_a_note(real_sweep):
    base, items = real_sweep
    missing = ("learning_rate=1.0", str(base / "learning_rate=1.0"))
    lines = sweep_summary([*items, missing], str(base)).splitlines()
    assert lines[0] == "sweep summary: 2 of 3 items finished; final values:"
    assert lines[4].split() == ["3", "learning_rate=1.0", "-", "not", "run", "(no", "workdir)"]
    row = _jsonl(base)[2]
    assert row == {
        "item": missing[0],
        "workdir": missing[1],
        "step": None,
        "done": False,
        "note": row["note"],
    }
    assert _csv(base)[2]["losses/l2"] == ""


def test_the_last_row_having_a_name_gives_its_final_value(tmp_path):
    rows = [
        {"step": 1, "losses/xent": 0.9, "metrics/accuracy": 0.1},
        {"step": 2, "losses/xent": 0.5},
        {"step": 3, "perf/steps_per_sec": 10.0},
    ]
    step, values = final_values(_write_run(tmp_path / "run", rows))
    assert step == 3
    assert values == {"losses/xent": 0.5, "metrics/accuracy": 0.1}


def test_values_from_kd_train_eval_are_read_too(tmp_path):
    workdir = _write_run(tmp_path / "run", [{"step": 4, "losses/l2": 0.2}])
    (tmp_path / "run" / "eval_metrics.jsonl").write_text(
        json.dumps({"step": 4, "test/metrics/r2": 0.8}) + "\n"
    )
    assert final_values(workdir) == (4, {"losses/l2": 0.2, "test/metrics/r2": 0.8})


def test_a_truncated_last_line_is_skipped(tmp_path):
    workdir = _write_run(tmp_path / "run", [{"step": 2, "losses/l2": 0.2}])
    with (tmp_path / "run" / "metrics.jsonl").open("a") as f:
        f.write('{"step": 3, "losses/l')
    assert final_values(workdir) == (2, {"losses/l2": 0.2})


def test_a_null_final_value_is_nan_in_the_table_and_null_in_the_files(tmp_path):
    rows = [{"step": 1, "losses/xent": 0.5}, {"step": 2, "losses/xent": None}]
    item = ("lr=10", _write_run(tmp_path / "lr=10", rows))
    lines = sweep_summary([item], str(tmp_path)).splitlines()
    assert lines[2].split() == ["1", "lr=10", "2", "nan", "not", "finite:", "losses/xent"]
    assert _jsonl(tmp_path)[0]["losses/xent"] is None
    assert _csv(tmp_path)[0]["losses/xent"] == "nan"


def test_columns_are_evaluator_metrics_then_their_losses_then_training_losses_then_metrics(tmp_path):
    rows = [
        {"step": 5, "metrics/accuracy": 0.9, "losses/xent": 0.3, "losses/reg": 0.1, "losses/total": 0.4},
        {"step": 5, "val/losses/xent": 0.5, "val/metrics/accuracy": 0.8},
    ]
    sweep_summary([("a", _write_run(tmp_path / "a", rows))], str(tmp_path))
    assert list(_csv(tmp_path)[0])[5:] == [
        "val/metrics/accuracy",
        "val/losses/xent",
        "losses/total",  # the total of two or more losses comes first
        "losses/xent",
        "losses/reg",
        "metrics/accuracy",
    ]


def test_a_total_that_repeats_a_single_loss_comes_after_it(tmp_path):
    rows = [{"step": 5, "losses/l2": 0.3, "losses/total": 0.3}]
    sweep_summary([("a", _write_run(tmp_path / "a", rows))], str(tmp_path))
    assert list(_csv(tmp_path)[0])[5:] == ["losses/l2", "losses/total"]


def test_the_table_shows_at_most_six_values_and_says_the_files_hold_all(tmp_path):
    row = {"step": 5, **{f"losses/part{i}": 0.1 * i for i in range(9)}}
    text = sweep_summary([("a", _write_run(tmp_path / "a", [row]))], str(tmp_path))
    lines = text.splitlines()
    assert len(lines[1].split()) == 3 + 6
    assert "6 of 9 values shown; all of them are in:" in lines
    assert len(_csv(tmp_path)[0]) == 5 + 9


def test_long_names_are_shortened_to_fit_100_columns(tmp_path):
    row = {
        "step": 123456,
        **{f"validation_hard/metrics/accuracy_top{k}": 0.123456789 for k in range(4)},
        **{f"losses/reconstruction_{k}": 12345.6789 for k in range(4)},
    }
    items = [
        (
            f"optimizer.learning_rate={lr},model.encoder.features=1024,seed=0,data.batch_size=512",
            _write_run(tmp_path / f"lr{lr}", [row], done=lr != 3e-4),
        )
        for lr in (1e-3, 3e-4, 1e-4)
    ]
    lines = sweep_summary(items, str(tmp_path / "sweep")).splitlines()
    assert all(len(line) <= 100 for line in lines if not line.startswith("  /"))
    assert lines[2].split()[:2] == ["1", "optimizer.learning_rate=0.001"]
    assert "(every item also has model.encoder.features=1024,seed=0,data.batch_size=512)" in lines
    assert any(line.startswith("(column names without losses/ or metrics/") for line in lines)
    assert lines[3].endswith("unfinished")
    assert _jsonl(tmp_path / "sweep")[0]["item"] == items[0][0]  # the files hold the whole names


def test_an_item_clipped_in_the_middle_keeps_its_head_and_tail(tmp_path):
    name = "a" * 30 + "_middle_" + "z" * 30
    text = sweep_summary(
        [(name, _write_run(tmp_path / "run", [{"step": 1, "losses/l2": 0.1}]))], str(tmp_path)
    )
    item = text.splitlines()[2].split()[1]
    assert len(item) == 32
    assert item.startswith("aaaa") and item.endswith("zzzz") and ".." in item


def test_an_item_without_metrics_says_which_file_is_missing_or_empty(tmp_path):
    (tmp_path / "crashed").mkdir()
    empty = _write_run(tmp_path / "empty", [], done=False)
    good = _write_run(tmp_path / "good", _rows())
    items = [("crashed", str(tmp_path / "crashed")), ("empty", empty), ("good", good)]
    lines = sweep_summary(items, str(tmp_path)).splitlines()
    assert lines[0] == "sweep summary: 1 of 3 items finished; final values:"
    assert lines[2].endswith("no metrics.jsonl: stopped before logging?")
    assert lines[3].endswith("no losses or metrics logged")
    assert [r["note"] for r in _jsonl(tmp_path)] == [
        "no metrics.jsonl: stopped before logging?",
        "no losses or metrics logged",
        "",
    ]


def test_a_base_that_cannot_hold_the_files_is_said_in_the_table(tmp_path):
    base = tmp_path / "a_file"
    base.write_text("not a folder")
    text = sweep_summary([("a", _write_run(tmp_path / "a", _rows()))], str(base))
    assert "could not write the summary files into:" in text
    assert text.splitlines()[-1].startswith(f"  {base}: ")
    assert base.read_text() == "not a folder"


def test_values_are_shown_with_four_significant_digits(tmp_path):
    rows = [{"step": 7, "losses/l2": 0.000123456, "metrics/psnr": 31.41592}]
    lines = sweep_summary([("a", _write_run(tmp_path / "a", rows))], str(tmp_path)).splitlines()
    assert lines[2].split() == ["1", "a", "7", "0.0001235", "31.42"]
    assert math.isclose(float(_csv(tmp_path)[0]["losses/l2"]), 0.000123456)


def test_item_labels_keep_a_tuple_values_commas_inside_its_part():
    from kd.cli._sweep_table import _item_labels

    names = [
        f"optimizer.learning_rate={lr},__args__.dataset_names=({ds}),__args__.dataset_weights=(1.0, 1.0)"
        for lr in (0.0001, 1e-05)
        for ds in ("'imagenet2012', 'coco'", "'imagenet2012', 'coco', 'cifar100'")
    ]
    shown, common = _item_labels(names)
    assert common == ["__args__.dataset_weights=(1.0, 1.0)"]
    assert shown[0].startswith("optimizer.learn") and shown[0].endswith("'coco')")  # clipped in the middle
    assert shown[1].endswith("'cifar100')")
    from kd.cli._sweep_table import _parts

    assert _parts("model=Vit(depth=2,width=3),seed=0") == ["model=Vit(depth=2,width=3)", "seed=0"]
    assert _parts("tag='a,b=c',seed=1") == ["tag='a,b=c'", "seed=1"]
    assert _parts(names[1]) == [
        "optimizer.learning_rate=0.0001",
        "__args__.dataset_names=('imagenet2012', 'coco', 'cifar100')",
        "__args__.dataset_weights=(1.0, 1.0)",
    ]
