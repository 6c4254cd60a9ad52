"""Where in a run an exception was raised: `during("step 1200")` marks what passes through it.

    with during(f"evaluator 'val' at step {step}"):
        evaluator.evaluate(state, step)
    ...
    where_raised(error)  # "evaluator 'val' at step 1200": the innermost `during` it passed through

The command line heads a crash in user code with it ("error while training, step 1200: ..."). Pure Python,
the bottom of kd-train: the loop, its hooks and the command line mark their phases, and none imports another
for it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_ATTRIBUTE = "_kd_where"


@contextlib.contextmanager
def during(what: str) -> Iterator[None]:
    """Marks an exception raised inside with `what` (unless an inner `during` marked it already)."""
    try:
        yield
    except Exception as e:
        if getattr(e, _ATTRIBUTE, None) is None:
            try:
                setattr(e, _ATTRIBUTE, what)
            except (AttributeError, TypeError):  # an exception type with __slots__: left unmarked
                pass
        raise


def where_raised(error: BaseException) -> str | None:
    """The phase `error` was raised in (see `during`), or None when no `during` marked it."""
    return getattr(error, _ATTRIBUTE, None)
