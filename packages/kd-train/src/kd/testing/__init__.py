"""kd.testing: checks for tests of configs and models (Kauldron's `kd.testing`).

    with tfds.testing.mock_data():           # where the data needs mocking
        kd.testing.assert_step_specs(trainer)  # one train step traced abstractly: keys, shapes, dtypes
    kd.testing.assert_trees_all_same_type(state, restored)
"""

import sys as _sys

if "pytest" in _sys.modules:  # inside tests: pytest's rewritten asserts say which leaf differed
    _sys.modules["pytest"].register_assert_rewrite("kd.testing._assert_utils")
del _sys

from kd.testing._assert_spec import assert_step_specs as assert_step_specs  # noqa: E402
from kd.testing._assert_utils import assert_trees_all_same_type as assert_trees_all_same_type  # noqa: E402

__all__ = ["assert_step_specs", "assert_trees_all_same_type"]
