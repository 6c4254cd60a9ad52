"""Which evaluators a command asks for: `--evals=val,test` checked against a config's evaluators.

    problem = names_problem(["vall"], ["val", "test"], source=" in the run's config")
    # "no evaluator named 'vall' in the run's config; did you mean 'val'? its evaluators: ['val', 'test']"

Pure Python: the command line checks the names before JAX is imported, `kd.evals.select_evaluators` when
it runs them; both word a bad name this way.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def names_problem(names: Sequence[str], available: Sequence[str], *, source: str = "") -> str | None:
    """What is wrong with asking for `names` among `available` (none given, an unknown one), or None."""
    if not names:
        return f"expected evaluator names, got none; the config's evaluators: {list(available)}"
    for name in names:
        if name not in available:
            close = difflib.get_close_matches(name, list(available), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            return f"no evaluator named {name!r}{source}; {hint}its evaluators: {list(available)}"
    return None
