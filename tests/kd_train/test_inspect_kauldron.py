"""kd.inspect: Kauldron's inspection names, returning data and matplotlib figures, on real tiny Trainers."""

from __future__ import annotations

import json
import subprocess
import sys

import jax
import kd
import numpy as np
import optax
import pytest
import train_fixtures as lib


@pytest.fixture(scope="module")
def trainer() -> kd.train.Trainer:
    return lib.make_trainer(
        schedules={"lr": optax.linear_schedule(1.0, 0.0, 4)},
        train_metrics={"mean_pred": lib.Mean(values="preds")},
    )


# ---------------------------------------------------------------------------------------------- batch


def test_batch_stats_have_one_row_per_leaf_with_numbers_for_numeric_leaves():
    batch = {
        "a": np.asarray(["a", "bb"]),
        "b": np.asarray([1, 2, 3]),
        "c": {"f": np.asarray([True, False]), "g": np.asarray(1)},
    }
    rows = kd.inspect.get_batch_stats(batch)
    assert [row["Name"] for row in rows] == ["batch.a", "batch.b", "batch.c.f", "batch.c.g"]
    b = rows[1]
    assert (b["Dtype"], b["Shape"], b["Min"], b["Max"], b["Mean"]) == ("int64", (3,), 1.0, 3.0, 2.0)
    assert b["StdDev"] == pytest.approx(np.std([1, 2, 3]))
    assert rows[0]["Mean"] == rows[2]["Min"] == "-"  # strings and booleans have no statistics
    # read by column, as Kauldron's DataFrame
    assert rows["Name"] == ["batch.a", "batch.b", "batch.c.f", "batch.c.g"] and rows["Max"][3] == 1.0
    with pytest.raises(KeyError, match=r"no column 'Nmae'; did you mean 'Name'\? The columns: Name, Dtype"):
        rows["Nmae"]
    with pytest.raises(KeyError, match=r"no column 'stddev'; did you mean 'StdDev'\?"):
        rows["stddev"]


def test_batch_stats_of_a_trainers_batch(trainer):
    batch = next(iter(trainer.train_ds))
    (x, y) = kd.inspect.get_batch_stats(batch)
    assert (x["Name"], x["Shape"], x["Dtype"]) == ("batch.x", (8, 2), "float32")
    assert x["Min"] == pytest.approx(float(batch["x"].min())) and y["Max"] == pytest.approx(
        float(batch["y"].max())
    )


def test_plot_batch_draws_a_row_per_image_or_video_leaf():
    rng = np.random.default_rng(0)
    batch = {
        "image": rng.uniform(-1, 1, (10, 8, 8, 3)).astype(np.float32),  # rescaled to [0, 1]
        "video": rng.integers(0, 255, (2, 5, 8, 8, 1), dtype=np.uint8),
        "x": np.zeros((10, 2), np.float32),  # not an image
    }
    fig = kd.inspect.plot_batch(batch)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    labels = [ax.get_ylabel() for ax in fig.axes if ax.get_ylabel()]
    assert labels == ["batch.image", "batch.video"]
    assert len(visible) == 8 + 5  # the first 8 images; the 5 frames of the first video
    first = visible[0].images[0].get_array()
    assert first.shape == (8, 8, 3) and 0.0 <= first.min() and first.max() <= 1.0
    np.testing.assert_array_equal(visible[8].images[0].get_array(), batch["video"][0, 0, ..., 0])


def test_plot_batch_without_images_is_none(trainer):
    assert kd.inspect.plot_batch(next(iter(trainer.train_ds))) is None


# ---------------------------------------------------------------------------------------------- specs


def test_json_spec_like_gives_dtypes_and_shapes_in_json_types():
    spec = kd.inspect.json_spec_like(
        {
            "image": np.zeros((2, 8, 8, 3), np.uint8),
            "mask": jax.ShapeDtypeStruct((2,), jax.numpy.bool_),
            "w": jax.numpy.zeros((3, 4), jax.numpy.bfloat16),
            "meta": [1, "a", None, 2.5],
            "state": lib.Average(total=np.zeros((), np.float32), count=np.ones((), np.int32)),
        }
    )
    assert spec == {
        "image": "ui8[2 8 8 3]",
        "mask": "bool[2]",
        "w": "bf16[3 4]",
        "meta": [1, "a", None, 2.5],
        "state": {"total": "f32[]", "count": "i32[]"},
    }
    json.dumps(spec)


def test_plot_context_is_the_trainers_context_as_specs(trainer):
    context = kd.inspect.plot_context(trainer)
    assert context["batch"] == {"x": "f32[8 2]", "y": "f32[8 1]"}
    assert context["params"]["hidden"]["kernel"] == "f32[2 16]"
    assert context["preds"] == "f32[8 1]"
    assert context["grads"] == context["updates"] == "[same as params]"
    assert context["metric_states"]["mean_pred"] == {"total": "f32[]", "count": "f32[]"}
    json.dumps(context)


def test_plot_sharding_gives_each_state_array_with_where_it_lives(trainer):
    sharding = kd.inspect.plot_sharding(trainer)
    assert (
        sharding["params"]["hidden"]["kernel"]
        == f"f32[2 16] NamedSharding(devices {jax.device_count()}, P())"
    )
    assert sharding["step"].startswith("i32[] ")


_TWO_DEVICES = """
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import json, sys
sys.path.insert(0, {tests!r})
import kd, train_fixtures as lib
trainer = lib.make_trainer(model=lib.SixDense(), sharding=kd.sharding.ShardingStrategy(
    params=kd.sharding.FSDPSharding(min_size_to_shard_mb=0)))
print(json.dumps(kd.inspect.plot_sharding(trainer)["params"]["dense_1"]))
"""


def test_plot_sharding_shows_a_split_array_on_two_devices():
    script = _TWO_DEVICES.format(tests=str(__import__("pathlib").Path(__file__).parent))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    dense = json.loads(proc.stdout.strip().splitlines()[-1])
    assert dense["kernel"] == "f32[4 4] NamedSharding(devices 2, P('devices',))"


# ---------------------------------------------------------------------------------------------- schedules


def test_plot_schedules_draws_each_schedule_over_the_steps():
    schedules = {
        "lr": optax.linear_schedule(1.0, 0.0, 100),
        "model": {"temperature": optax.cosine_decay_schedule(2.0, 100)},
        "python": lambda step: 1.0 if step < 50 else 0.5,  # Python control flow: evaluated step by step
    }
    fig = kd.inspect.plot_schedules(schedules, num_steps=100)
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert sorted(lines) == ["lr", "model.temperature", "python"]
    steps = lines["lr"].get_xdata()
    np.testing.assert_array_equal(steps, np.arange(101))  # a short run: each step once
    np.testing.assert_allclose(lines["lr"].get_ydata(), 1.0 - steps / 100, atol=1e-6)
    assert lines["model.temperature"].get_ydata()[0] == pytest.approx(2.0)
    assert lines["python"].get_ydata()[49] == 1.0 and lines["python"].get_ydata()[50] == 0.5


def test_plot_schedules_of_a_trainer_samples_at_most_1000_steps(trainer):
    fig = kd.inspect.plot_schedules(trainer.schedules, num_steps=100_000)
    (line,) = fig.axes[0].get_lines()
    assert len(line.get_xdata()) == 1000 and line.get_xdata()[-1] == 100_000


def test_drawing_loads_matplotlib_and_importing_does_not():
    code = (
        "import sys, kd\n"
        "kd.inspect.get_batch_stats({'x': [1.0]})\n"
        "before = 'matplotlib' in sys.modules\n"
        "kd.inspect.plot_schedules({'lr': lambda s: s}, num_steps=3)\n"
        "print(before, 'matplotlib' in sys.modules, 'matplotlib.pyplot' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True", "False"]  # a Figure, no pyplot (no global state)


# ---------------------------------------------------------------------------------------------- graph


def test_connection_graph_links_each_key_to_its_input(trainer):
    graph = kd.inspect.get_connection_graph(trainer)
    assert set(graph.edges) == {
        ("model", "preds"),
        ("batch.x", "model.x"),
        ("preds", "l2.preds"),
        ("batch.y", "l2.targets"),
        ("preds", "mean_pred.values"),
    }
    assert graph.node("l2").group == "losses" and graph.node("mean_pred").group == "metrics"
    assert graph.node("batch").outputs == ("x", "y")
    json.dumps(graph.to_dict())


def test_connection_graph_source_is_dot_text(trainer):
    source = kd.inspect.get_connection_graph(trainer).source
    assert source.startswith("digraph {") and source.endswith("}")
    assert '"batch":"x" -> "model":"x";' in source
    assert "subgraph cluster_losses {" in source
    assert '<td port="targets">targets</td>' in source


def test_connection_graph_of_an_nnx_model_reads_its_keys():
    import functools

    trainer = lib.make_trainer(model=functools.partial(lib.NnxMlp, din=2, dout=1))
    assert ("batch.x", "model.x") in kd.inspect.get_connection_graph(trainer).edges


def test_connection_graph_names_intermediates_as_ports():
    trainer = lib.make_trainer(train_metrics={"h": lib.Mean(values="interms.hidden.__call__[0]")})
    graph = kd.inspect.get_connection_graph(trainer)
    assert graph.node("interms").outputs == ("hidden.__call__[0]",)
    assert '"interms":"hidden___call___0_" -> "h":"values";' in graph.source


# ---------------------------------------------------------------------------------------------- report, step


def test_show_trainer_info_has_the_sections_asked_for(trainer):
    text = kd.inspect.show_trainer_info(trainer, profile_statix=True)
    titles = [line for line in text.splitlines() if line.startswith("== ")]
    assert titles == [
        "== Batch statistics ==",
        "== Parameters ==",
        "== Structure of the context ==",
        "== Schedules ==",
        "== Connections (path -> input) ==",
        "== Sharding ==",
        "== Compiled train step (static cost) ==",
    ]
    assert "Total: 65 parameters" in text
    assert "batch.x -> model.x" in text
    assert "lr        1       0.75    0.5     0.25    0" in text


def test_show_trainer_info_leaves_out_what_is_not_asked_for(trainer):
    text = kd.inspect.show_trainer_info(
        trainer,
        print_cfg=True,
        inspect_dataset=False,
        inspect_params=False,
        inspect_sharding=False,
        inspect_connected=False,
        profile_statix=False,
    )
    assert text == "== Config ==\n(none: this Trainer was not resolved from a konfig config)"


def test_lower_trainstep_is_the_trainers_step_lowered(trainer):
    lowered = kd.inspect.lower_trainstep(trainer)
    assert "stablehlo" in lowered.as_text() or "func.func" in lowered.as_text()
    assert not hasattr(kd.train, "lower_trainstep")  # kd.inspect's, as in Kauldron


def test_profiler_is_the_trainers():
    assert kd.inspect.Profiler is kd.train.Profiler
    assert kd.inspect.Profiler(first_step=2, num_steps=1).bounds(2)


def test_kd_inspect_lists_kauldrons_names():
    names = [
        "get_batch_stats",
        "get_connection_graph",
        "json_spec_like",
        "lower_trainstep",
        "plot_batch",
        "plot_context",
        "plot_schedules",
        "plot_sharding",
        "show_trainer_info",
        "Profiler",
    ]
    assert set(names) <= set(kd.inspect.__all__)
    assert all(hasattr(kd.inspect, name) for name in names)
