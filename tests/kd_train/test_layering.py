"""kd-train's subpackages import in one direction, read from the source (``tests/import_graph.py``).

Bottom to top (`LAYERS`, the map CONTRIBUTING.md shows): a module imports only modules of its own subpackage
or of a lower layer; the modules of one subpackage import each other without a cycle, and those of kd.train
and kd.cli only modules listed before them in `TRAIN_LAYERS` and `CLI_LAYERS`. A back-edge that truly must
stay is one import inside a function marked `# late import: <reason>` and listed in `MARKED` here.
Subpackages meet through their public `__init__` only: none imports another one's private module (kd's own
root-level `kd._x` modules, the plumbing several subpackages share, are open to all).
"""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.import_graph import (  # noqa: E402
    ImportGraph,
    import_graph,
    inside,
    modules_without_purpose,
    unplaced,
    upward_imports,
)
from tests.layer_map import Layer, LayerMap, stale_in_contributing  # noqa: E402

SOURCE = ROOT / "packages" / "kd-train" / "src" / "kd"
# kd's parts (a subpackage, or a module at kd's root), bottom to top: a part imports only parts of lower
# layers. CONTRIBUTING.md shows these maps (`python tests/layer_map.py --write`).
LAYERS = LayerMap(
    "kd",
    (
        Layer(
            ("_run_signature",),
            "signs run records: kd-train eval tells the user's own runs from foreign ones",
        ),
        Layer(
            (
                "_atomic",
                "_root_ref",
                "_path_trie",
                "_terminal",
                "_interfaces",
                "_evaluator_names",
                "_label_range",
                "_human_text",
                "_phase",
                "_run_policy",
                "xm",
                "random",
                "typing",
                "kdash",
                "kauldron_alias",
                "testing",
            ),
            "small pieces, open to all: atomic writes; ROOT_CFG_REF; path tries; print_line above a progress bar;"
            " the Protocols between the parts (Hook, Writer, Checkpointer, Evaluator, TrainingData); --evals names;"
            " the label-range check (losses, train); sizes, aligned columns and arrays' shapes as text; where in a run an"
            " exception was raised; what a run folder's config.json may build when resolved again; kd.xm (a run's"
            " job spec); kd.random (keys as objects); kd.typing (Kauldron's typing names); Kauldron's dashboards;"
            " the kauldron import alias (it imports kd's modules by name only); kd.testing (a Trainer, duck-typed)",
        ),
        Layer(
            ("_interrupts",), "Ctrl-C during a save, above _terminal (kd.ckpts saves in it; kd.train ends it)"
        ),
        Layer(
            ("metrics", "nn", "optim", "data", "sharding", "ckpts", "_konfig_surface"),
            "the parts with no other part below them (orbax is called from kd/ckpts/_orbax.py only); what a"
            " config in konfig's safe mode may build from kd",
        ),
        Layer(("losses", "summaries", "writers"), "built on metrics / the terminal"),
        Layer(
            ("runtime",),
            "a model run's parts: the model adapter (as_model, LinenModel, NnxModel, InterestFilter), Context,"
            " TrainState, AuxState, RNG streams, fill_from_root, parameter_table, intermediate_specs, ConfigError and"
            " the other errors",
        ),
        Layer(("train",), "the Trainer, its step, plan, runner and hooks"),
        Layer(("utils",), "Kauldron's kd.utils (config_util fills ROOT_CFG_REF fields the Trainer's way)"),
        Layer(("evals",), "evaluators (their step is a TrainStep), kd-train eval"),
        Layer(
            ("inspect", "export"),
            "kd.inspect (a run before it runs: reports, tables, a step's cost; Kauldron's figures and data);"
            " kd.export (served models)",
        ),
        Layer(("contrib",), "Kauldron's contributed metrics, summaries, writers, modules and evaluators"),
        Layer(("cli",), "the command line (through the other parts' public names)"),
        Layer(("__main__", ""), "python -m kd; kd/__init__.py: the namespaces, loaded lazily"),
    ),
)
# kd.train's modules, bottom to top: each imports only modules listed before it. The loop reads up the
# one-module layers: _plan, _feed, _step, _runner, _hooks, _loop, _trainer.
TRAIN_LAYERS = LayerMap(
    "kd.train",
    (
        Layer(("_types",), "the values that pass between the loop's parts, named once (annotations only)"),
        Layer(
            ("_plan",),
            "pure Python: the calls from start to stop and what is due after each (every boundary rule)",
        ),
        Layer(
            ("_feed",),
            "how batches reach a call: host batches (stacked for a fused call) or example rows on the device",
        ),
        Layer(
            ("_first_batch", "_precision"),
            "what the first batch tells before the first compile (labels within the logits' classes);"
            " MixedPrecision: the dtypes a model computes in",
        ),
        Layer(("_step",), "TrainStep: the compiled init, single step, fused steps, eval step"),
        Layer(
            ("_stop",),
            "StopRequest: a hook's request to end the run after a step, and how the run remembers it",
        ),
        Layer(
            ("_runner",),
            "CallRunner.run(state, call): the one place that knows fused vs single calls and the feeds",
        ),
        Layer(
            ("_compiles", "_progress", "_nonfinite", "_preemption", "_profiler"),
            "what a run watches: seconds compiling per program; the progress bar; NaN or infinite losses (without"
            " waiting for the host); SIGTERM and a first Ctrl-C; a profiler trace of a few steps",
        ),
        Layer(
            ("_evaluations",),
            "the run's evaluators as one kind: each wrapped once into an Evaluation, then run and written alike",
        ),
        Layer(
            ("_hooks",),
            "one class per concern after a call: profiler, progress, preemption, non-finite watch, call timer,"
            " metrics, summaries, evaluators, checkpoints",
        ),
        Layer(
            ("_hook", "_early_stopping", "_user_hooks"),
            "the user's hooks: kd.train.Hook, EarlyStopping, and UserHooks (the Trainer's hooks as one hook of"
            " the loop, before the checkpoint's)",
        ),
        Layer(
            ("_run_record",),
            "the workdir's record of its run: provenance, parameter table, element spec, completion",
        ),
        Layer(
            ("_lr_find",),
            "lr_find, the learning-rate range test",
        ),
        Layer(
            ("_loop",), "TrainingRun: set-up (run record, restore or init, feed, hooks, plan) and tear-down"
        ),
        Layer(
            ("_setup", "_eval_only", "_predict"),
            "Setup (Kauldron's cfg.setup); the Trainer's other runs: eval_only() (another run's last checkpoint),"
            " predict (the model's outputs)",
        ),
        Layer(
            ("_trainer",),
            "Trainer: the frozen, checked description of a run; train() is the loop over planned calls",
        ),
        Layer(
            ("_forward", "_timer", ""),
            "Kauldron's names beside the Trainer: forward, forward_with_loss, Auxiliaries; PerformanceTimer;"
            " kd/train/__init__.py: the public names",
        ),
    ),
)
# kd.cli's modules, bottom to top: each imports only modules listed before it.
CLI_LAYERS = LayerMap(
    "kd.cli",
    (
        Layer(
            ("_errors", "_usage", "_workdirs"),
            "CliError / RunError and their wording; USAGE, the parser, error: ...; run folders",
        ),
        Layer(
            ("_compile_cache", "_distributed"),
            "JAX's persistent compilation cache (on by default); several hosts: jax.distributed.initialize",
        ),
        Layer(
            ("_stopped", "_track", "_resolve"),
            "a stopped or crashed run's paragraph; --track's trackers; flags -> checked Trainer",
        ),
        Layer(
            ("_diff", "_plot", "_sweep_table"),
            "kd-train diff, kd-train plot; a sweep's summary table (read from the runs' metrics files)",
        ),
        Layer(
            ("_predict", "_lr_find", "_eval", "_inspect", "_launch", "_train"),
            "one module per command (lr-find builds its Trainer as predict does)",
        ),
        Layer(
            ("cmd_utils", "config", "data", "patch_config", "run", "commands"),
            "Kauldron's commands that look into a config (python -m kd.cli.commands config show --cfg=...)",
        ),
        Layer(
            ("_main",), "main(): the commands by name, Ctrl-C, exit codes (only kd.cli's __init__ imports it)"
        ),
        Layer(("",), "kd/cli/__init__.py: main, CliError, RunError; Kauldron's command modules by name"),
    ),
)
# (module, imported): the back-edges kept on purpose, each a marked `# late import:` in the code.
MARKED: set[tuple[str, str]] = set()
# The subpackages allowed to import other subpackages' private modules: none (each meets the others
# through their public __init__).
PRIVATE_IMPORTS_ALLOWED_IN: set[str] = set()


@functools.cache
def _graph() -> ImportGraph:
    return import_graph(SOURCE, "kd")


def _part(module: str) -> str:
    """`kd.train._plan` -> `train`; `kd` -> `""`."""
    return module.split(".")[1] if "." in module else ""


def _layer(part: str) -> int:
    try:
        return LAYERS.layer_of(part)
    except LookupError as error:
        raise AssertionError(f"{error} (LAYERS in tests/kd_train/test_layering.py)") from None


def test_every_part_of_kd_train_is_in_a_layer():
    parts = {LAYERS.dotted(_part(module)) for module in _graph().edges}
    problems = unplaced(parts, LAYERS.order(), "LAYERS (tests/kd_train/test_layering.py)")
    assert problems == [], "\n".join(problems)


def test_imports_go_down_the_layers():
    upward = [
        f"{module} imports {target}"
        for module, targets in _graph().edges.items()
        for target in sorted(targets)
        if _part(target) != _part(module) and _layer(_part(target)) >= _layer(_part(module))
    ]
    assert upward == [], "imports that do not go down LAYERS:\n" + "\n".join(upward)


def _is_private_module_of_another_part(module: str, target: str) -> bool:
    """`kd.train._hooks` seen from `kd.evals._standalone`: yes; `kd.train`, `kd._atomic`, `kd.train._x`
    seen from kd.train: no."""
    parts = target.split(".")
    return _part(target) != _part(module) and any(part.startswith("_") for part in parts[2:])


def test_subpackages_meet_through_their_public_init_only():
    imports = {(module, target) for module, targets in _graph().edges.items() for target in targets}
    imports |= {
        (module, target) for module, target, _ in _graph().type_only_imports + _graph().marked_back_edges
    }
    private = [
        f"{module} imports {target}"
        for module, target in sorted(imports)
        if _is_private_module_of_another_part(module, target)
        and _part(module) not in PRIVATE_IMPORTS_ALLOWED_IN
    ]
    assert private == [], (
        "imports of another subpackage's private module (use its public names):\n" + "\n".join(private)
    )


def test_no_cycle_inside_a_subpackage():
    assert _graph().cycles() == []


def test_the_kept_back_edges_are_exactly_the_marked_ones():
    assert {(module, target) for module, target, _ in _graph().marked_back_edges} == MARKED


@pytest.mark.parametrize("layer_map", [TRAIN_LAYERS, CLI_LAYERS], ids=lambda layer_map: layer_map.package)
def test_every_module_of_the_subpackage_is_in_its_map(layer_map: LayerMap):
    where = f"the map of {layer_map.package} (tests/kd_train/test_layering.py)"
    problems = unplaced(set(inside(_graph(), layer_map.package)), layer_map.order(), where)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("layer_map", [TRAIN_LAYERS, CLI_LAYERS], ids=lambda layer_map: layer_map.package)
def test_each_module_of_the_subpackage_imports_only_modules_listed_before_it(layer_map: LayerMap):
    upward = upward_imports(inside(_graph(), layer_map.package), layer_map.order())
    assert upward == [], f"imports that do not go down the map of {layer_map.package}:\n" + "\n".join(upward)


def test_every_module_says_what_it_is_for():
    assert modules_without_purpose(SOURCE) == []


def test_the_plan_imports_no_jax():
    # Loaded on its own (not through the package, whose Trainer imports JAX): the plan is pure Python.
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('plan', {str(SOURCE / 'train' / '_plan.py')!r})\n"
        "module = sys.modules['plan'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'numpy', 'kd')))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_contributing_shows_these_maps():
    stale = stale_in_contributing(LAYERS, TRAIN_LAYERS, CLI_LAYERS)
    assert stale == [], "\n".join(stale)
