"""kd.xm's errors: a job spec that cannot run as written (a malformed platform, a negative size)."""

from __future__ import annotations


class JobError(ValueError):
    """A `kd.xm.Job` (or its requirements) that cannot be launched as written; the message names the field."""


class PlatformError(JobError):
    """A `platform=` string that does not parse (`"a10O=1"`): says what was expected and the near miss."""
