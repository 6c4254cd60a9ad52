"""`kauldron` as another name for kd: Kauldron code and the libraries built on it run on ours unchanged.

    import kd
    kd.kauldron_alias.install()      # `kd-train` does this itself when no real Kauldron is installed
    from kauldron import kd as kd2   # kd2 is kd: the very module object, never a second copy
    from kauldron.utils import config_util   # Kauldron's internal paths map onto our public names

`kauldron.kd.X` is `kd.X` and `kauldron.konfig` / `kontext` / `ktyping[.X]` are ours: the very module
objects. Kauldron's other packages and modules (`kauldron.checkpoints`, `kauldron.metrics.base`,
`kauldron.utils.config_util`, ... every module path of Kauldron v1.4.2) are read-only views onto the kd
namespace that holds their names (`kd.ckpts`, `kd.metrics`, `kd.utils.config_util`): `from kauldron.metrics
import base; base.Metric is kd.metrics.Metric`. Nothing is ever a second copy, and nothing is added to kd's
own namespaces. A name that is no module (`kauldron.kd.data.py.Tfds`, a class) is not found as one.
`install()` refuses when the real Kauldron is importable, since the alias would hide it; `uninstall()`
removes the hook and the `kauldron` names it gave.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Sequence
from typing import Any

ROOT = "kauldron"

# Kauldron's module path -> the module of ours holding its names.
MODULES: dict[str, str] = {
    "kauldron.kd": "kd",
    "kauldron.konfig": "konfig",
    "kauldron.kontext": "kontext",
    "kauldron.ktyping": "ktyping",
    "kauldron.ktyping.array_type_meta": "ktyping.array_type_meta",
    "kauldron.typing": "kd.typing",
    "kauldron.random": "kd.random",
    "kauldron.checkpoints": "kd.ckpts",
    "kauldron.checkpoints.checkpoint_items": "kd.ckpts.items",
    "kauldron.modules": "kd.nn",
    "kauldron.metrics": "kd.metrics",
    "kauldron.losses": "kd.losses",
    "kauldron.summaries": "kd.summaries",
    "kauldron.evals": "kd.evals",
    "kauldron.optim": "kd.optim",
    "kauldron.data": "kd.data",
    "kauldron.data.py": "kd.data.py",
    "kauldron.data.tf": "kd.data.tf",
    "kauldron.data.iterators": "kd.data.iters",
    "kauldron.train": "kd.train",
    "kauldron.inspect": "kd.inspect",
    "kauldron.export": "kd.export",
    "kauldron.xm": "kd.xm",
    "kauldron.testing": "kd.testing",
    "kauldron.kxm": "kd.xm",  # `from kauldron import kxm`: Kauldron's launcher API (`kxm.Job(...)`)
    "kauldron.utils": "kd.utils",
    "kauldron.utils.api": "kd.utils",
    "kauldron.utils.config_util": "kd.utils.config_util",
    "kauldron.utils.utils": "kd.utils.utils",
    "kauldron.utils.immutabledict": "kd.utils.immutabledict",
    "kauldron.utils.immutabledict.immutabledict_lib": "kd.utils.immutabledict",
    "kauldron.utils.immutabledict.utils": "kd.utils.immutabledict",
    "kauldron.utils.status_utils": "kd.utils.status_utils",
    "kauldron.utils.kdash": "kd.kdash",
    "kauldron.utils.sharding_utils": "kd.sharding",
    "kauldron.utils.train_property": "kd.nn",
    "kauldron.utils.interms_property": "kd.nn",
    "kauldron.cli": "kd.cli",
    "kauldron.contrib": "kd.contrib",
    "kauldron.contrib.metrics": "kd.contrib.metrics",
    "kauldron.contrib.summaries": "kd.contrib.summaries",
    "kauldron.contrib.train": "kd.contrib.train",
    "kauldron.contrib.modules": "kd.contrib.nn",
    "kauldron.contrib.evals": "kd.contrib.evals",
}
"""Kauldron's module paths and the kd module (or namespace) each is given as: the very module for
`kauldron.kd` / `konfig` / `kontext` / `ktyping`, a view onto the namespace for the others."""

# Kauldron modules that are a module of ours under another name (or one kd's namespace holds under a name taken by
# something else: `kd.cli.main` is kd-train's entry point, Kauldron's `kauldron.cli.main` is its command module).
SUBMODULES: dict[str, str] = {
    "kauldron.cli.main": "kd.cli.commands",
    "kauldron.cli.cmd_utils": "kd.cli.cmd_utils",
    "kauldron.cli.config": "kd.cli.config",
    "kauldron.cli.data": "kd.cli.data",
    "kauldron.cli.patch_config": "kd.cli.patch_config",
    "kauldron.cli.run": "kd.cli.run",
}
"""Kauldron module paths given as a module of ours of another name: `kauldron.cli.main` is `kd.cli.commands`."""

# Kauldron packages with no counterpart, and why.
REFUSED: dict[str, str] = {
}
"""Kauldron packages with no counterpart in kd, and why: importing them is a ModuleNotFoundError saying so."""


class KauldronInstalledError(RuntimeError):
    """The real Kauldron is importable: the alias would hide it."""


# Kauldron v1.4.2's public module paths (under `kauldron.`): the deeper ones are views onto our namespaces.
KAULDRON_MODULES = frozenset(
    """
    checkpoints checkpoints.checkpoint_items checkpoints.checkpointer
    checkpoints.lazy_checkpoint_manager checkpoints.partial_loader data data.data_utils
    data.deprecated data.in_memory data.iterators data.iterators.iterators
    data.iterators.noop_handler data.iterators.pygrain_handler data.iterators.tfdata_handler
    data.loaders data.loaders.base data.loaders.graintfds data.loaders.seqio data.loaders.tfdata
    data.loaders.tfds data.pipelines data.py data.py.base data.py.data_sources data.py.mixtures
    data.py.random_transforms data.py.transform_utils data.tf data.tf.base data.tf.grain_utils
    data.tf.loaders.graintfds data.tf.loaders.seqio data.tf.loaders.spec_ds
    data.tf.loaders.tfds_legacy data.tf.loaders.with_shuffle_buffer data.tf.map_transforms
    data.tf.mixture data.tf.random_transforms data.tf.transform_utils data.transforms
    data.transforms.abc data.transforms.base data.transforms.map_transforms
    data.transforms.normalize data.utils evals evals.eval_impl evals.evaluators
    evals.fewshot_evaluator evals.run_strategies export export.exporter inspect
    inspect.graphviz_utils inspect.inspect inspect.plotting inspect.profile_utils
    inspect.trainer_visu kd konfig konfig.configdict_base konfig.configdict_proxy
    konfig.default_values konfig.export_utils konfig.fake_import_utils konfig.flags_utils
    konfig.immutabledict_lib konfig.module_configdict konfig.py_flag_parser konfig.py_flag_utils
    konfig.ref_utils konfig.utils kontext kontext.annotate kontext.filter_utils kontext.glob_paths
    kontext.path_builder kontext.path_parser kontext.paths kontext.type_utils ktyping
    ktyping.array_type_meta ktyping.array_types ktyping.config ktyping.decorator ktyping.dim_view
    ktyping.dtypes ktyping.errors ktyping.frame_utils ktyping.internal_typing ktyping.log
    ktyping.pytree ktyping.scope ktyping.shape_spec ktyping.shape_spec_parser ktyping.shape_tools
    ktyping.typeguard_checkers ktyping.utils kxm cli cli.cmd_utils cli.config cli.data cli.main
    cli.patch_config cli.run contrib contrib.metrics contrib.metrics.meancov
    contrib.metrics.multilabel_average_precision contrib.metrics.regression contrib.summaries
    contrib.summaries.confusion_matrix contrib.train contrib.train.npz_writer contrib.modules contrib.modules.knnx
    contrib.modules.knnx_examples contrib.modules.readout contrib.evals contrib.evals.checkpointed_evaluator
    contrib.evals.train_eval losses losses.base losses.simple main metrics
    metrics.auto_state metrics.base metrics.base_state metrics.classification metrics.clustering
    metrics.fid metrics.image metrics.lpips metrics.stats modules modules.adapter modules.attention
    modules.deprecated modules.input_embeddings modules.knn_types modules.misc modules.models
    modules.pos_embeddings modules.transformers modules.vit optim optim.combine optim.ema_params
    optim.transform random random.random summaries summaries.deprecated summaries.histograms
    summaries.images summaries.pointclouds summaries.texts train train.auxiliaries
    train.checkpoint_state train.context train.metric_writer train.rngs_lib train.setup_utils
    train.timer train.train_loop train.train_step train.trainer_lib typing typing.array_types
    typing.shape_spec typing.type_check utils utils.api utils.chrono_utils utils.colab
    utils.config_util utils.constants utils.error_utils utils.from_xid utils.immutabledict
    utils.immutabledict.immutabledict_lib utils.immutabledict.utils utils.interms_property
    utils.kdash utils.kdash.build_utils utils.kdash.dashboard_utils utils.kdash.plot_utils
    utils.kdash.xm_utils utils.pd_utils utils.plot_segmentation utils.sharding_utils
    utils.status_utils utils.train_property utils.utils utils.xmanager testing testing.assert_spec
    testing.assert_utils
    """.split()
)

# Kauldron's trees that are ours one to one: `kauldron.kd.data.py` is `kd.data.py`.
SAME_TREE = {
    "kauldron.kd": "kd",
    "kauldron.konfig": "konfig",
    "kauldron.kontext": "kontext",
    "kauldron.ktyping": "ktyping",
}


class _Finder(importlib.abc.MetaPathFinder):
    """Finds `kauldron` and `kauldron.*` and hands back our modules; None for a name that is no module."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: Any = None) -> Any:
        if fullname != ROOT and not fullname.startswith(ROOT + "."):
            return None
        plan = _plan(fullname)
        if plan is None:
            return None
        kind, ours = plan
        is_package = True  # the root and the views: packages of their own (their children are found here)
        if kind == "module":
            found = importlib.util.find_spec(ours)
            is_package = found is not None and found.submodule_search_locations is not None
        return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=is_package)


class _Loader(importlib.abc.Loader):
    """Returns the existing module of ours (or a view); keeps our module's own `__spec__`, which the import
    system overwrites with the alias's."""

    def __init__(self) -> None:
        self._original_spec: Any = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _target(spec.name)
        if not isinstance(module, _View) and not getattr(module, "__kd_alias__", False):
            self._original_spec = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        if self._original_spec is not None:
            module.__spec__ = self._original_spec


def _plan(name: str) -> tuple[str, str] | None:
    """How `name` is given: ("root", ""), ("module", ours), ("view", our namespace), ("refused", why), or
    None (no such module: not found, so konfig takes a class as the attribute it is)."""
    if name == ROOT:
        return ("root", "")
    for refused, why in REFUSED.items():
        if name == refused or name.startswith(refused + "."):
            return ("refused", why)
    if name in SUBMODULES:
        return ("module", SUBMODULES[name])
    for prefix, ours in SAME_TREE.items():
        if name == prefix or name.startswith(prefix + "."):
            # One to one: the very module of ours, or nothing (a view here would become an attribute of ours).
            candidate = ours + name[len(prefix) :]
            return ("module", candidate) if _is_our_module(candidate) else None
    if name in MODULES or name[len(ROOT) + 1 :] in KAULDRON_MODULES:
        parent = name
        while parent and parent not in MODULES:
            parent = parent.rpartition(".")[0]
        if parent:
            return ("view", MODULES[parent])
    return None


def _is_our_module(name: str) -> bool:
    try:
        found = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return found is not None and not isinstance(found.loader, _Loader)


def _target(name: str) -> types.ModuleType:
    plan = _plan(name)
    if plan is None:
        raise ModuleNotFoundError(f"No module named {name!r} (not a Kauldron module kd maps)", name=name)
    kind, target = plan
    if kind == "root":
        return _root_module()
    if kind == "refused":
        raise ModuleNotFoundError(f"No module named {name!r} under the kauldron alias: {target}", name=name)
    if kind == "module":
        return importlib.import_module(target)
    return _View(name, target)


_VIEWABLE = frozenset(MODULES.values()) - set(SAME_TREE.values())


class _View(types.ModuleType):
    """A Kauldron module over the namespace of ours that holds its names (`kauldron.metrics.base` over
    `kd.metrics`): attribute reads only, so every class is ours (never a second copy)."""

    def __init__(self, name: str, namespace: str) -> None:
        # Only Kauldron's names over our namespaces: a config must not make a view onto any module.
        if not name.startswith(ROOT + ".") or namespace not in _VIEWABLE:
            raise ValueError(f"kauldron alias: no view {name!r} onto {namespace!r}")
        super().__init__(name, f"Kauldron's {name}: its names are looked up in {namespace}")
        self.__path__: list[str] = []
        self._kd_namespace = namespace

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if f"{self.__name__}.{attr}" in SUBMODULES:  # a module, though our namespace has that name for another
            return importlib.import_module(SUBMODULES[f"{self.__name__}.{attr}"])
        namespace = importlib.import_module(self._kd_namespace)
        try:
            return getattr(namespace, attr)
        except AttributeError:
            raise AttributeError(
                f"{self.__name__}.{attr}: kd has no such name (the kauldron alias looks up "
                f"{self.__name__}'s names in {self._kd_namespace})"
            ) from None

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(dir(importlib.import_module(self._kd_namespace))))


def _root_module() -> types.ModuleType:
    root = types.ModuleType(ROOT, "kd under Kauldron's name (kd.kauldron_alias)")
    root.__path__ = []  # a package: `kauldron.kd`, `kauldron.utils`, ... are found by the alias

    def __getattr__(attr: str) -> Any:  # `from kauldron import kd, konfig` without importing each
        if attr.startswith("__"):
            raise AttributeError(attr)
        try:
            return importlib.import_module(f"{ROOT}.{attr}")
        except ModuleNotFoundError as e:
            raise AttributeError(f"module 'kauldron' (the kd alias) has no attribute {attr!r}: {e}") from None

    root.__getattr__ = __getattr__  # type: ignore[method-assign]
    root.__kd_alias__ = True
    return root


_FINDER = _Finder()


def real_kauldron() -> str | None:
    """Where the real Kauldron would be imported from, or None (asked of the other finders only; an empty
    `kauldron` folder, a namespace package, is not Kauldron)."""
    existing = sys.modules.get(ROOT)
    if existing is not None and not getattr(existing, "__kd_alias__", False):
        return getattr(existing, "__file__", None) or repr(existing)
    for finder in sys.meta_path:
        if finder is _FINDER or not hasattr(finder, "find_spec"):
            continue
        try:
            spec = finder.find_spec(ROOT, None)
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.origin not in (None, "namespace"):
            return spec.origin
    return None


def is_installed() -> bool:
    """Whether the alias is active."""
    return _FINDER in sys.meta_path


def install() -> None:
    """Makes `import kauldron...` give kd's modules, and `jax.random` / flax take `kd.random.PRNGKey`. Idempotent.

    Usage: `kd.kauldron_alias.install()`; raises KauldronInstalledError when the real Kauldron is importable.
    Kauldron code passes its key objects to `jax.random` and flax's `init` (Kauldron patches both on import),
    so the alias enables kd_compat's opt-in `prng_key_wrappers` patch; `uninstall()` disables it again.
    """
    if not is_installed():
        found = real_kauldron()
        if found is not None:
            raise KauldronInstalledError(
                f"the real Kauldron is installed ({found}): kd's `kauldron` alias would hide it. Use Kauldron "
                "itself, or uninstall it (pip uninstall kauldron) to run Kauldron code on kd"
            )
        sys.meta_path.insert(0, _FINDER)
    import kd_compat  # already loaded by `import kd`; the patch lives there, the alias only opts in

    kd_compat.enable("prng_key_wrappers", owner=__name__)


def _given_by_alias(name: str, module: Any) -> bool:
    if isinstance(module, _View) or getattr(module, "__kd_alias__", False):
        return True
    return module is not None and not getattr(module, "__name__", name).startswith(ROOT)  # one of ours


def uninstall() -> None:
    """Removes the alias and forgets the `kauldron` names it gave (ours stay loaded; a real Kauldron's
    modules are left alone), and withdraws its `kd_compat.enable("prng_key_wrappers")`. Idempotent."""
    import kd_compat

    kd_compat.disable("prng_key_wrappers", owner=__name__)  # stays on if someone else enabled it
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name, module in list(sys.modules.items()):
        if (name == ROOT or name.startswith(ROOT + ".")) and _given_by_alias(name, module):
            del sys.modules[name]


def install_if_possible() -> bool:
    """`install()` unless the real Kauldron is importable (then nothing: True when the alias is active).

    Usage: `kd.kauldron_alias.install_if_possible()` (what `kd-train` does at start).
    """
    if is_installed() or real_kauldron() is None:
        install()
    return is_installed()


__all__ = [
    "MODULES",
    "REFUSED",
    "SUBMODULES",
    "KauldronInstalledError",
    "install",
    "install_if_possible",
    "is_installed",
    "real_kauldron",
    "uninstall",
]
