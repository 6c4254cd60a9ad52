"""Setup shared by konfig's tests."""

import pathlib
import sys

HERE = pathlib.Path(__file__).parent
# Modules imported by their plain names, as user code would: `fake_lib` (and `allowed_lib`, ...) inside
# `konfig.imports()` blocks, and `konfig_example_targets`, which the example config files import.
for folder in (HERE, HERE / "example_configs"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
