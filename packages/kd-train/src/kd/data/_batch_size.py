"""`kd.data.BatchSize`: a global batch size and the share of it each process takes (Kauldron's).

Usage:

    kd.data.BatchSize(64).per_process  # 16 on 4 processes
"""

from __future__ import annotations

import dataclasses
import functools

from kd.data import _checks, _errors, _hosts


@dataclasses.dataclass(frozen=True)
class BatchSize:
    """A batch size over all processes.

    Attributes:
      total: the global batch size: rows of a batch over all hosts and devices.
    """

    total: int

    def __post_init__(self) -> None:
        if not _checks.is_int(self.total, at_least=1):
            raise _errors.BatchSizeError(f"BatchSize: total must be an int >= 1; got {self.total!r}")

    @functools.cached_property
    def per_process(self) -> int:
        """The rows this process takes of each batch: `total / jax.process_count()` (must divide)."""
        _, process_count = _hosts.current_process(None, None)
        return _hosts.host_batch_size(self.total, process_count, owner="BatchSize")
