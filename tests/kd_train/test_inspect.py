"""Inspecting a run without running it: parameter table, context paths, the compiled step's cost, the report."""

from __future__ import annotations

import math
import re

import jax
import jax.numpy as jnp
import kd
import kontext
import numpy as np
import pytest
import train_fixtures as lib
from flax import linen as nn
from kd import _human_text
from kd import inspect as kinspect
from kd.inspect import _cost
from precision import ON_CPU


def _trainer(**fields) -> kd.train.Trainer:
    return lib.make_trainer(**fields)


def _row(table: str, first_cell: str) -> str:
    """The line of `table` whose first column is `first_cell`."""
    rows = [line for line in table.splitlines() if line.split("  ", 1)[0].strip() == first_cell]
    assert len(rows) == 1, f"{first_cell!r} in\n{table}"
    return rows[0]


def _real_params() -> dict:
    """The fixture Mlp's parameters from flax's own init (independent of the Trainer)."""
    return lib.Mlp().init(jax.random.key(0), jnp.zeros((8, 2)))["params"]


@pytest.fixture(scope="module")
def report() -> str:
    return kinspect.inspect_report(_trainer())


# ---------------------------------------------------------------------------------------------- parameters


def test_parameter_table_lists_each_module_with_its_count():
    real = _real_params()
    table = kinspect.parameter_table(_trainer().state_specs.params)
    for module in ("hidden", "out"):
        expected = sum(np.size(leaf) for leaf in jax.tree.leaves(real[module]))
        assert _row(table, module).split()[-1] == f"{expected:,}"
    assert "kernel (2, 16) float32" in _row(table, "hidden")
    assert "bias (16,) float32" in _row(table, "hidden")


def test_parameter_table_ends_with_total_count_and_bytes():
    total = sum(np.size(leaf) for leaf in jax.tree.leaves(_real_params()))
    table = kinspect.parameter_table(_trainer().state_specs.params)
    assert table.splitlines()[-1] == f"Total: {total} parameters ({total * 4} B)"


def test_parameter_table_columns_are_aligned():
    table = kinspect.parameter_table(lib.SixDense().init(jax.random.key(0), jnp.zeros((1, 2)))["params"])
    rows = table.splitlines()[:-1]
    assert len(rows) == 7  # header + six modules
    assert len({len(row) for row in rows}) == 1  # counts right-aligned in one column
    assert len({row.index("kernel") for row in rows[1:]}) == 1


def test_parameter_counts_of_real_arrays_match_those_of_the_specs():
    real = _real_params()
    counts = kinspect.parameter_counts(real)
    assert counts == kinspect.parameter_counts(_trainer().state_specs.params)
    assert counts == {"hidden": 2 * 16 + 16, "out": 16 + 1, "total": 65}


def test_top_level_leaves_are_grouped_under_root():
    counts = kinspect.parameter_counts(
        {"scale": np.ones(3, np.float32), "dense": {"kernel": np.ones((2, 2))}}
    )
    assert counts == {_human_text.ROOT_MODULE: 3, "dense": 4, "total": 7}


def test_human_units():
    assert _human_text.human_bytes(884) == "884 B"
    assert _human_text.human_bytes(4_810 * 4) == "18.8 KB"
    assert _human_text.human_bytes(3 * 1024**3) == "3 GB"
    assert _human_text.human_flops(1_230_000) == "1.23 MFLOP"
    assert _human_text.human_count(2_500) == "2.5 K"


# ---------------------------------------------------------------------------------------------- context


def test_context_table_lists_batch_and_preds_paths_with_shapes():
    table = kinspect.context_table(_trainer().context_specs)
    assert _row(table, "batch.x").endswith("(8, 2) float32")
    assert _row(table, "batch.y").endswith("(8, 1) float32")
    assert _row(table, "preds").endswith("(8, 1) float32")
    assert _row(table, "grads.hidden.kernel").endswith("(2, 16) float32")
    assert _row(table, "step").endswith("() int32")


def test_context_table_paths_resolve_in_the_context():
    context = _trainer().context_specs
    for line in kinspect.context_table(context).splitlines()[1:]:
        path = line.split("  ", 1)[0]
        leaf = kontext.get_by_path(context, path)
        assert line.endswith(f"{tuple(leaf.shape)} {leaf.dtype}"), line


def test_context_table_collapses_long_subtrees_per_module():
    table = kinspect.context_table(_trainer().context_specs, max_leaves=2)
    assert _row(table, "grads.hidden.*").endswith("2 leaves: bias, kernel; 48 values float32")
    assert "grads.hidden.kernel" not in table
    assert _row(table, "opt_state[0].count").endswith("() int32")  # a one-leaf module keeps its own path
    assert re.search(r"Collapsed .*grads \(4 leaves\)", table.splitlines()[-1])
    assert _row(table, "batch.x")  # batch is never collapsed


def test_context_table_with_collapse_off_lists_every_leaf():
    context = _trainer().context_specs
    table = kinspect.context_table(context, collapse=(), max_leaves=0)
    assert len(table.splitlines()) == 1 + len(context.available_paths())


# ---------------------------------------------------------------------------------------------- compiled step


@pytest.mark.skipif(not ON_CPU, reason="an accelerator may need no temporary buffer for this tiny step")
def test_step_cost_reports_positive_flops_and_memory_on_cpu():
    cost = kinspect.step_cost(_trainer())
    assert cost["flops"] > 0 and cost["bytes_accessed"] > 0
    for key in ("argument_bytes", "output_bytes", "temp_bytes", "total_bytes"):
        assert isinstance(cost[key], int) and cost[key] > 0, key


def test_step_cost_and_the_report_say_how_long_the_step_took_to_compile(report):
    assert kinspect.step_cost(_trainer())["compile_seconds"] > 0
    line = next(line for line in report.splitlines() if line.startswith("compile time"))
    assert float(line.split()[2].rstrip("s")) > 0, line


def test_step_cost_total_counts_donated_buffers_once():
    cost = kinspect.step_cost(_trainer())
    assert cost["alias_bytes"] > 0  # the state is donated, as in training
    parts = ("argument_bytes", "output_bytes", "temp_bytes", "generated_code_bytes")
    assert cost["total_bytes"] == sum(cost[key] for key in parts) - cost["alias_bytes"]


@pytest.mark.skipif(not ON_CPU, reason="an accelerator pads small arrays to its memory tiles")
def test_step_arguments_are_the_state_and_one_batch():
    trainer = _trainer()
    leaves = jax.tree.leaves((trainer.state_specs, trainer.element_spec))
    expected = sum(math.prod(leaf.shape) * leaf.dtype.itemsize for leaf in leaves)
    assert kinspect.step_cost(trainer)["argument_bytes"] == expected


def test_lower_trainstep_with_metrics_lowers_the_logging_variant():
    trainer = _trainer(train_metrics={"err": lib.MSE()})
    _, plain = kinspect.lower_trainstep(trainer).out_info
    _, logging = kinspect.lower_trainstep(trainer, return_metrics=True).out_info
    assert plain.metric_states == {}
    assert set(logging.metric_states) == {"err"}


def test_missing_analyses_are_none_and_a_list_of_costs_is_read():
    class OldBackendCompiled:  # older JAX returns a list of dicts; some backends have no memory analysis
        def cost_analysis(self):
            return [{"flops": 10.0, "bytes accessed": 4.0}]

        def memory_analysis(self):
            return None

    compiled = OldBackendCompiled()
    assert _cost._cost(compiled) == {"flops": 10.0, "bytes_accessed": 4.0, "transcendentals": None}
    assert set(_cost._memory(compiled).values()) == {None}


def test_inspecting_runs_no_step_and_allocates_no_state():
    trainer = _trainer(train_metrics={"err": lib.MSE()})
    kinspect.inspect_report(trainer)
    kinspect.step_cost(trainer, return_metrics=True)
    step = trainer.trainstep
    assert dict(step.num_traces) == {}  # no step variant traced for step()
    assert step._jitted == {} and step._jitted_init == {}  # nothing compiled to run, no state initialized
    assert trainer.writer.scalars == {} and trainer.writer.summaries == {}


# ---------------------------------------------------------------------------------------------- report


def test_report_has_each_section(report):
    titles = re.findall(r"^== (.*) ==$", report, flags=re.MULTILINE)
    assert [title.split(" (")[0] for title in titles] == [
        "Run",
        "Context paths",
        "Parameters",
        "Sharding",
        "Compiled train step",
    ]


def test_report_summarizes_the_config(report):
    assert _row(report, "num_train_steps").endswith("4")
    assert re.search(r"^batch size +8 ", report, flags=re.MULTILINE)
    assert _row(report, "model").endswith("Mlp (flax linen)")


def test_report_gives_flops_and_memory_in_human_units(report):
    assert re.search(r"^compute +[\d.]+ K?FLOP per step", report, flags=re.MULTILINE)
    assert re.search(r"argument [\d.]+ [KMG]?B, output [\d.]+ [KMG]?B, temp [\d.]+ [KMG]?B.*; total [\d.]+ [KMG]?B", report)
    if ON_CPU:
        assert "no memory limit, so whether it fits is unknown" in report  # CPU reports no bytes_limit
    else:  # an accelerator reports its memory: the step's share of it
        # human_bytes counts in 1024s and writes GB (as inspect's tables do), not GiB
        assert re.search(r"The step holds [\d.]+ [KMG]?B at once: [\d.]+% of the [\d.]+ GB of .*; it fits", report)


def test_report_contains_context_and_parameter_tables(report):
    assert _row(report, "batch.x").endswith("(8, 2) float32")
    assert "Total: 65 parameters" in report


def test_report_lists_collections_when_the_model_has_them():
    report = kinspect.inspect_report(_trainer(model=lib.BatchNormed()))
    assert "== Collections" in report
    assert "mean (4,) float32, var (4,) float32" in report


def test_report_counts_one_device_in_the_singular(report):
    assert "(1 device);" in report
    assert "1 devices" not in report


def test_counts_are_pluralised_by_number():
    assert (
        kinspect.parameter_table({"w": np.ones(1, np.float32)}).splitlines()[-1] == "Total: 1 parameter (4 B)"
    )
    assert _human_text.counted(1, "devices") == "1 device"
    assert _human_text.counted(0, "arrays") == "0 arrays"
    assert _human_text.counted(1200, "devices") == "1,200 devices"


# ---------------------------------------------------------------------------------------------- intermediates


class _LongNames(nn.Module):
    """A Dense layer whose name makes its intermediate's path longer than a report line."""

    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x):
        return nn.Dense(3, name="layer_with_a_name_long_enough_to_overflow_the_table_" + "x" * 60)(x)


def test_intermediate_specs_of_a_linen_model_match_flax_capture():
    x = jnp.zeros((8, 2))
    _, captured = lib.Mlp().apply(
        {"params": _real_params()}, x, capture_intermediates=True, mutable=["intermediates"]
    )
    expected = kontext.flatten_with_path(captured["intermediates"], prefix="interms")
    specs = kinspect.intermediate_specs(_trainer())
    assert list(specs) == ["interms.__call__[0]", "interms.hidden.__call__[0]", "interms.out.__call__[0]"]
    assert {path: (s.shape, s.dtype) for path, s in specs.items()} == {
        path: (leaf.shape, leaf.dtype) for path, leaf in expected.items()
    }
    assert all(isinstance(spec, jax.ShapeDtypeStruct) for spec in specs.values())


def test_intermediate_specs_include_sown_values():
    specs = kinspect.intermediate_specs(_trainer(model=lib.Sowing()))
    assert (specs["interms.features[0]"].shape, specs["interms.features[0]"].dtype) == ((8, 4), jnp.float32)


def test_intermediate_specs_of_an_nnx_model_are_its_sown_values():
    specs = kinspect.intermediate_specs(_trainer(model=lambda rngs: lib.NnxMlp(2, 1, rngs=rngs)))
    assert {path: (s.shape, s.dtype) for path, s in specs.items()} == {"interms.h[0]": ((8, 16), jnp.float32)}


@pytest.mark.parametrize("model", [lib.Sowing(), lambda rngs: lib.NnxMlp(2, 1, rngs=rngs)])
def test_every_intermediate_path_is_a_key_a_metric_can_read(model):
    paths = list(kinspect.intermediate_specs(_trainer(model=model)))
    metrics = {f"m{i}": lib.Mean(values=path) for i, path in enumerate(paths)}
    trainer = _trainer(model=model, train_metrics=metrics)
    assert len(paths) == len(metrics) > 0
    trainer.check()  # raises KeyPathError for a path the step does not give


def test_intermediate_specs_run_no_step():
    trainer = _trainer()
    kinspect.intermediate_specs(trainer)
    assert dict(trainer.trainstep.num_traces) == {} and trainer.trainstep._jitted == {}


def test_interms_report_lists_path_shape_and_dtype_one_line_each():
    lines = kinspect.interms_report(_trainer(model=lib.Sowing())).splitlines()
    assert lines[0].split() == ["Path", "Shape", "Dtype"]
    assert _row("\n".join(lines), "interms.features[0]").split("  ", 1)[1].split() == ["(8,", "4)", "float32"]
    assert len(lines) == 1 + 4 + 1  # header, four intermediates, the count
    assert lines[-1].startswith("4 intermediates;")
    assert len({line.index("float32") for line in lines[1:-1]}) == 1  # the columns line up


def test_interms_report_fits_100_columns_shortening_long_paths():
    report = kinspect.interms_report(_trainer(model=_LongNames()))
    assert max(len(line) for line in report.splitlines()) <= 100
    (row,) = [line for line in report.splitlines()[1:-1] if "..." in line]
    path = row.split()[0]
    assert path.startswith("interms.layer_with_a_name") and path.endswith("xx.__call__[0]")
    assert row.split()[1:] == ["(8,", "3)", "float32"]


def test_interms_report_of_a_model_with_no_intermediates_says_so():
    report = kinspect.interms_report(_trainer(model=lambda rngs: lib.NnxDropout(rngs=rngs)))
    assert report == "The model offers no intermediates (no module outputs or sown values to capture)."
