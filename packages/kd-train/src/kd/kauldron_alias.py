"""`kauldron` as another name for kd: Kauldron code and the libraries built on it run on ours unchanged.

    import kd
    kd.kauldron_alias.install()      # `kd-train` does this itself when no real Kauldron is installed
    from kauldron import kd as kd2   # kd2 is kd: the very module object, never a second copy
    from kauldron.utils import config_util   # Kauldron's internal paths map onto our public names

`kauldron.kd.X` is `kd.X`, `kauldron.konfig` / `kontext` / `ktyping` are ours, Kauldron's packages are
the namespaces holding their names (`kauldron.checkpoints` is `kd.ckpts`, `kauldron.modules` is `kd.nn`,
`kauldron.utils.sharding_utils` is `kd.sharding`, ...). A deeper module of one of those
(`kauldron.metrics.base`) is a read-only view onto the namespace: its names are ours, looked up there.
`install()` refuses when the real Kauldron is importable, since the alias would hide it. `uninstall()`
removes the hook and the `kauldron` modules it made.
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

# Kauldron's module path -> ours (the very module object).
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
}

# Kauldron packages with no counterpart, and why.
REFUSED: dict[str, str] = {
    "kauldron.contrib": "kd has no kd.contrib (Kauldron's unsupported research code)",
    "kauldron.cli": "kd's command line is `kd-train` (kd.cli); Kauldron's absl-flags CLI is not ported",
}


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
    ktyping.typeguard_checkers ktyping.utils kxm losses losses.base losses.simple main metrics
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
    utils.status_utils utils.train_property utils.utils utils.xmanager
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
        if _plan(fullname) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)


class _FromListFinder(importlib.abc.MetaPathFinder):
    """Last on the path: `from kauldron.metrics import base` asks for `kd.metrics.base` (the import system
    names submodules after the parent's own `__name__`); a name no other finder has, that is a Kauldron
    module under the same namespace, is given as that Kauldron module."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: Any = None) -> Any:
        kauldron_name = _kauldron_name(fullname)
        if kauldron_name is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(kauldron_name), is_package=True)


def _kauldron_name(ours: str) -> str | None:
    """The Kauldron module that `ours` (`kd.metrics.base`, not a module of ours) stands for, or None."""
    parent, _, leaf = ours.rpartition(".")
    if not parent:
        return None
    for kauldron_parent, our_parent in MODULES.items():
        name = f"{kauldron_parent}.{leaf}"
        # Only names known without asking the import system (which would ask this finder again).
        if our_parent == parent and (name in MODULES or name[len(ROOT) + 1 :] in KAULDRON_MODULES):
            return name
    return None


class _Loader(importlib.abc.Loader):
    """Returns the existing module of ours; restores its own `__spec__`, which the import system overwrites."""

    def __init__(self, kauldron_name: str | None = None) -> None:
        self._kauldron_name = kauldron_name  # set when the spec's name is ours (`kd.metrics.base`)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        name = self._kauldron_name or spec.name
        module = sys.modules.get(name) if self._kauldron_name else None
        if module is None:
            module = _target(name)
        self._original_spec = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        if self._original_spec is not None and getattr(module, "__name__", "").split(".")[0] != ROOT:
            module.__spec__ = self._original_spec
        elif isinstance(module, _View):
            module.__spec__ = self._original_spec
        if self._kauldron_name:
            sys.modules.setdefault(self._kauldron_name, module)  # one object under both names


def _plan(name: str) -> tuple[str, str] | None:
    """How `name` is given: ("module", ours), ("view", our namespace), ("refused", why) or None (no module)."""
    if name == ROOT:
        return ("root", "")
    for refused, why in REFUSED.items():
        if name == refused or name.startswith(refused + "."):
            return ("refused", why)
    if name in MODULES:
        return ("module", MODULES[name])
    for prefix, ours in SAME_TREE.items():
        if name.startswith(prefix + "."):
            candidate = ours + name[len(prefix) :]
            try:
                found = importlib.util.find_spec(candidate)
            except (ImportError, ValueError):
                found = None
            if found is not None:
                return ("module", candidate)
    if name[len(ROOT) + 1 :] in KAULDRON_MODULES:
        parent = name.rpartition(".")[0]
        while parent and parent not in MODULES:
            parent = parent.rpartition(".")[0]
        if parent:
            return ("view", MODULES[parent])
    return None


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


class _View(types.ModuleType):
    """A Kauldron module deeper than the namespace that holds its names (`kauldron.metrics.base`)."""

    def __init__(self, name: str, namespace: str) -> None:
        super().__init__(name, f"Kauldron's {name}: its names are looked up in {namespace}")
        self.__path__: list[str] = []
        self._kd_namespace = namespace

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        namespace = importlib.import_module(self._kd_namespace)
        try:
            return getattr(namespace, attr)
        except AttributeError:
            raise AttributeError(
                f"{self.__name__}.{attr}: kd has no such name (the kauldron alias looks up "
                f"{self.__name__}'s names in {self._kd_namespace})"
            ) from None


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
_FROMLIST_FINDER = _FromListFinder()


def real_kauldron() -> str | None:
    """Where the real Kauldron would be imported from, or None (asked of the other finders only)."""
    existing = sys.modules.get(ROOT)
    if existing is not None and not getattr(existing, "__kd_alias__", False):
        return getattr(existing, "__file__", None) or repr(existing)
    for finder in sys.meta_path:
        if finder in (_FINDER, _FROMLIST_FINDER) or not hasattr(finder, "find_spec"):
            continue
        try:
            spec = finder.find_spec(ROOT, None)
        except (ImportError, ValueError):
            continue
        if spec is not None:
            return spec.origin or str(list(spec.submodule_search_locations or []))
    return None


def is_installed() -> bool:
    """Whether the alias is active."""
    return _FINDER in sys.meta_path


def _activate() -> None:
    sys.meta_path.insert(0, _FINDER)
    sys.meta_path.append(_FROMLIST_FINDER)


def install() -> None:
    """Makes `import kauldron...` give kd's modules. Idempotent.

    Usage: `kd.kauldron_alias.install()`; raises KauldronInstalledError when the real Kauldron is importable.
    """
    if is_installed():
        return
    found = real_kauldron()
    if found is not None:
        raise KauldronInstalledError(
            f"the real Kauldron is installed ({found}): kd's `kauldron` alias would hide it. Use Kauldron "
            "itself, or uninstall it (pip uninstall kauldron) to run Kauldron code on kd"
        )
    _activate()


def uninstall() -> None:
    """Removes the alias and forgets the `kauldron` modules it gave (ours stay loaded). Idempotent."""
    for finder in (_FINDER, _FROMLIST_FINDER):
        while finder in sys.meta_path:
            sys.meta_path.remove(finder)
    for name, module in list(sys.modules.items()):
        if name == ROOT or name.startswith(ROOT + ".") or isinstance(module, _View):
            del sys.modules[name]
    for name, module in list(sys.modules.items()):  # `kd.utils.sharding_utils`: an alias name of ours
        if module is not None and name.startswith("kd.") and getattr(module, "__name__", name) != name:
            del sys.modules[name]


def install_if_possible() -> bool:
    """`install()` unless the real Kauldron is importable (then nothing: True when the alias is active).

    Usage: `kd.kauldron_alias.install_if_possible()` (what `kd-train` does at start).
    """
    if not is_installed() and real_kauldron() is None:
        _activate()
    return is_installed()


__all__ = [
    "MODULES",
    "REFUSED",
    "KauldronInstalledError",
    "install",
    "install_if_possible",
    "is_installed",
    "real_kauldron",
    "uninstall",
]
