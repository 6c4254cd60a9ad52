"""The errors of kd.data: each refines the builtin it subclasses and names what was expected and found."""

from __future__ import annotations


class BatchSizeError(ValueError):
    """A batch size that cannot work: not divisible by the hosts, larger than the data, or not what arrived."""


class LengthMismatchError(ValueError):
    """Arrays that should share their leading (example) dimension do not."""


class StateError(ValueError):
    """An iterator state that this iterator cannot resume from (wrong form, out of range, unreachable)."""


class SeedNotSetError(ValueError):
    """A pipeline needs its seed while it still holds `ROOT_CFG_REF.seed` (no Trainer filled it)."""
