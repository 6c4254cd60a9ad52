"""konfig's command line, on top of the core: `--cfg=path/to/config.py --cfg.a.b=VALUE` flags, override
paths with globs, `py::` values and sweeps. `import konfig` loads it; nothing below imports it.

- `_flags`: `parse_flags`, `split_flags`, `build_config`, `apply_overrides`, `parse_value`, config modules.
- `_override_paths`: the override path grammar (`a.b[0]`, `*`, `**`, `+new`) and setting values by it.
- `_py_expr`: `py::` values, a Python expression read with `ast` into config nodes.
- `_sweep`: `sweep()` / `sweep_<name>()` generators of overrides, expanded as a product.

Usage:
    cfg, rest = konfig.parse_flags(sys.argv[1:])
"""

from ._absl import DEFINE_config_file as DEFINE_config_file
from ._flags import apply_overrides as apply_overrides
from ._flags import build_config as build_config
from ._flags import load_config_module as load_config_module
from ._flags import parse_flags as parse_flags
from ._flags import parse_value as parse_value
from ._flags import split_flags as split_flags
from ._py_expr import parse_py_expression as parse_py_expression
from ._sweep import SweepItem as SweepItem
from ._sweep import expand_sweep as expand_sweep
from ._sweep import sweep_items as sweep_items

__all__ = [
    "DEFINE_config_file",
    "SweepItem",
    "apply_overrides",
    "build_config",
    "expand_sweep",
    "load_config_module",
    "parse_flags",
    "parse_py_expression",
    "parse_value",
    "split_flags",
    "sweep_items",
]
