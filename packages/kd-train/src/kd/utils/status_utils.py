"""`status`: Kauldron's messages about a run (`kd.utils.status.log(...)`).

kd.utils.status.log("Restored the EMA params")   # logged (INFO) on every host, printed on the lead one
"""

from __future__ import annotations

import logging
import sys

_LOG = logging.getLogger("kd")


class _Status:
    """Where the run is and how to tell the user (Kauldron's `status`); no XManager here."""

    @property
    def on_xmanager(self) -> bool:
        return False

    @property
    def is_lead_host(self) -> bool:
        import jax

        return jax.process_index() == 0

    def log(self, msg: str, *, stacklevel: int = 1) -> None:
        """Logs `msg` (INFO, logger "kd") and prints it on the lead host, above any progress bar."""
        _LOG.info(msg, stacklevel=1 + stacklevel)
        if "jax" not in sys.modules or self.is_lead_host:
            from kd._terminal import print_line

            print_line(str(msg), sys.stderr)

    def log_status(self, msg: str) -> None:
        """Kauldron shows these in the XManager UI too; here the same as `log`."""
        self.log(msg, stacklevel=2)


status = _Status()

__all__ = ["status"]
