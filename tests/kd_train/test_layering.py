"""kd-train's subpackages import in one direction, read from the source (``tests/import_graph.py``).

Bottom to top (CONTRIBUTING.md has the same map): a module imports only modules of its own subpackage or
of a lower layer; the modules of one subpackage import each other without a cycle. A back-edge that truly
must stay is one import inside a function marked `# late import: <reason>` and listed in `MARKED` here.
Subpackages meet through their public `__init__` only: none imports another one's private module (kd's own
root-level `kd._x` modules, the plumbing several subpackages share, are open to all).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.import_graph import import_graph, modules_without_purpose  # noqa: E402

SOURCE = ROOT / "packages" / "kd-train" / "src" / "kd"
GRAPH = import_graph(SOURCE, "kd")
LAYERS = (
    ("_run_signature",),  # tells this user's own runs from foreign ones (stdlib only)
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
    ),  # small pieces
    ("_interrupts",),  # Ctrl-C during a save (kd.ckpts saves in it; kd.train's handler ends it)
    ("metrics", "nn", "optim", "data", "sharding", "ckpts", "_konfig_surface"),  # the parts with no other part below them
    ("losses", "summaries", "writers"),  # built on metrics / the terminal
    ("runtime",),  # a model run's parts: the model adapter, Context, state, RNG streams, errors
    ("train",),  # the Trainer, its plan, runner and hooks
    ("utils",),  # Kauldron's kd.utils (config_util fills ROOT_CFG_REF fields the Trainer's way)
    ("evals",),  # evaluators (their step is a TrainStep) and `kd-train eval`
    ("inspect", "export"),  # Kauldron's kd.inspect (a Trainer's figures, data) and kd.export (served models)
    ("contrib",),  # Kauldron's contributed metrics, summaries, writers, modules and evaluators
    ("cli",),  # the command line
    ("__main__", ""),  # `python -m kd`; kd/__init__.py: the namespaces, loaded lazily
)
# (module, imported): the back-edges kept on purpose, each a marked `# late import:` in the code.
MARKED: set[tuple[str, str]] = set()
# The subpackages allowed to import other subpackages' private modules: none (each meets the others
# through their public __init__).
PRIVATE_IMPORTS_ALLOWED_IN: set[str] = set()


def _part(module: str) -> str:
    """`kd.train._plan` -> `train`; `kd` -> `""`."""
    return module.split(".")[1] if "." in module else ""


def _layer(part: str) -> int:
    for index, layer in enumerate(LAYERS):
        if part in layer:
            return index
    raise AssertionError(f"kd.{part} is in no layer of LAYERS: place it")


def test_every_part_of_kd_train_is_in_a_layer():
    for module in GRAPH.edges:
        _layer(_part(module))


def test_imports_go_down_the_layers():
    upward = [
        f"{module} imports {target}"
        for module, targets in GRAPH.edges.items()
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
    imports = {(module, target) for module, targets in GRAPH.edges.items() for target in targets}
    imports |= {(module, target) for module, target, _ in GRAPH.type_only_imports + GRAPH.marked_back_edges}
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
    assert GRAPH.cycles() == []


def test_the_kept_back_edges_are_exactly_the_marked_ones():
    assert {(module, target) for module, target, _ in GRAPH.marked_back_edges} == MARKED


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
