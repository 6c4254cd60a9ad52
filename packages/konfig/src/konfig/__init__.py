"""konfig: configuration as data. Capture calls as plain nested dicts, resolve later.

Usage:
    import konfig

    with konfig.imports():
        import optax

    cfg = konfig.ConfigDict()
    cfg.num_train_steps = 1000
    cfg.schedule = optax.cosine_decay_schedule(
        init_value=0.1, decay_steps=cfg.ref.num_train_steps
    )
    schedule = konfig.resolve(cfg.schedule)
"""

from ._annotations import ConfigDictLike as ConfigDictLike
from ._annotations import WithRef as WithRef
from ._capture import imports as imports
from ._capture import mock_modules as mock_modules
from ._capture import set_lazy_imported_modules as set_lazy_imported_modules
from ._cli import DEFINE_config_file as DEFINE_config_file
from ._cli import SweepItem as SweepItem
from ._cli import apply_overrides as apply_overrides
from ._cli import build_config as build_config
from ._cli import expand_sweep as expand_sweep
from ._cli import load_config_module as load_config_module
from ._cli import parse_flags as parse_flags
from ._cli import parse_py_expression as parse_py_expression
from ._cli import parse_value as parse_value
from ._cli import split_flags as split_flags
from ._cli import sweep_items as sweep_items
from ._config_dict import ConfigDict as ConfigDict
from ._defaults import register_default_values as register_default_values
from ._diff import ConfigDiff as ConfigDiff
from ._diff import diff as diff
from ._errors import ArgumentError as ArgumentError
from ._errors import CapturedSubclassError as CapturedSubclassError
from ._errors import ConfigValueError as ConfigValueError
from ._errors import CycleError as CycleError
from ._errors import DisallowedTargetError as DisallowedTargetError
from ._errors import JsonFormatError as JsonFormatError
from ._errors import MissingValueError as MissingValueError
from ._errors import NestingError as NestingError
from ._errors import OverrideError as OverrideError
from ._errors import RefControlFlowError as RefControlFlowError
from ._errors import RelativeImportError as RelativeImportError
from ._errors import ResolveError as ResolveError
from ._errors import TargetNotFoundError as TargetNotFoundError
from ._export import export as export
from ._export import export_qualname as export_qualname
from ._immutable_dict import ImmutableDict as ImmutableDict
from ._immutable_dict import freeze_dict_attrs as freeze_dict_attrs
from ._immutable_dict import unfreeze as unfreeze
from ._json_decode import from_json as from_json
from ._json_format import JSON_MARKERS as JSON_MARKERS
from ._json_format import JSON_RAW_KEY_PREFIX as JSON_RAW_KEY_PREFIX
from ._json_writer import to_json as to_json
from ._library_caches import allow_library_cache as allow_library_cache
from ._paths import get_by_path as get_by_path
from ._paths import set_by_path as set_by_path
from ._placeholder import placeholder as placeholder
from ._placeholder import required as required
from ._policy import current_policy as current_policy
from ._ref_copy import ref_copy as ref_copy
from ._refs import ref_fn as ref_fn
from ._repr import register_aliases as register_aliases
from ._resolve import resolve as resolve
from ._surfaces import SurfaceError as SurfaceError
from ._surfaces import declare_surface as declare_surface
from ._surfaces import declared_packages as declared_packages
from ._surfaces import declared_surface as declared_surface
from ._targets import import_object as import_object

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "CapturedSubclassError",
    "ConfigDict",
    "ConfigDictLike",
    "ConfigValueError",
    "CycleError",
    "DisallowedTargetError",
    "ImmutableDict",
    "MissingValueError",
    "NestingError",
    "RefControlFlowError",
    "RelativeImportError",
    "ResolveError",
    "TargetNotFoundError",
    "WithRef",
    "allow_library_cache",
    "get_by_path",
    "SurfaceError",
    "declare_surface",
    "declared_packages",
    "declared_surface",
    "import_object",
    "current_policy",
    "imports",
    "mock_modules",
    "placeholder",
    "ref_copy",
    "ref_fn",
    "register_aliases",
    "register_default_values",
    "required",
    "resolve",
    "set_by_path",
    "set_lazy_imported_modules",
    "apply_overrides",
    "DEFINE_config_file",
    "build_config",
    "load_config_module",
    "parse_flags",
    "split_flags",
    "parse_value",
    "ConfigDiff",
    "diff",
    "export",
    "export_qualname",
    "JsonFormatError",
    "from_json",
    "to_json",
    "JSON_MARKERS",
    "JSON_RAW_KEY_PREFIX",
    "OverrideError",
    "parse_py_expression",
    "SweepItem",
    "expand_sweep",
    "sweep_items",
    "unfreeze",
    "freeze_dict_attrs",
]
