"""What every compatibility patch provides, and the status record `kd_compat.status()` returns.

    class MyPatch(Patch):
        name = "lib_thing"
        breaks = "lib 2.3 calls a removed private function of other_lib"
        affected = "lib >=2.3,<2.4"
        def check(self): ...       # (needed, reason) from package metadata alone
        def install(self): ...     # (applied, reason), after verifying the target
        def remove(self): ...      # put the original back
        def installed(self): ...   # is the replacement in place right now (sys.modules only)

The locking, idempotency and bookkeeping live in `kd_compat._api`; a patch only knows its target.
"""


class Patch:
    """One version-gated, reversible fix of a third-party library. See the README's "Adding a patch".

    Class attributes:
      name: key of this patch in `kd_compat.status()`.
      breaks: one sentence, what fails without the patch.
      affected: which versions need it, e.g. "etils >=1.14.0,<1.15.0 with JAX installed".
    """

    name: str = ""
    breaks: str = ""
    affected: str = ""

    def check(self) -> tuple[bool, str]:
        """Whether the installed versions need this patch, and why (not). Never imports the target."""
        raise NotImplementedError

    def install(self) -> tuple[bool, str]:
        """Replace the target once it is verified to be the expected object; returns (applied, reason).

        Only called when `check()` said the patch is needed, and never twice without `remove()` between.
        """
        raise NotImplementedError

    def remove(self) -> None:
        """Restore what `install()` replaced; does nothing when the replacement is not in place."""
        raise NotImplementedError

    def installed(self) -> bool:
        """Whether the replacement is in place now. Looks only at already-imported modules."""
        raise NotImplementedError


class PatchStatus:
    """What `kd_compat.status()` knows about one patch.

        kd_compat.status()["etils_jax_prng"].applied  # True under etils 1.14.0 after apply()

    Attributes:
      name: the patch's key.
      breaks: what fails without it.
      affected: which versions need it.
      needed: whether the installed versions need it (from package metadata).
      applied: whether its replacement is in place right now.
      checked: whether `apply()` has considered it since import (or since the last `undo()`).
      reason: why it is or is not needed, applied, or left alone.
    """

    __slots__ = ("affected", "applied", "breaks", "checked", "name", "needed", "reason")

    def __init__(
        self,
        *,
        name: str,
        breaks: str,
        affected: str,
        needed: bool,
        applied: bool,
        checked: bool,
        reason: str,
    ) -> None:
        self.name = name
        self.breaks = breaks
        self.affected = affected
        self.needed = needed
        self.applied = applied
        self.checked = checked
        self.reason = reason

    def __repr__(self) -> str:
        return (
            f"PatchStatus(name={self.name!r}, needed={self.needed}, applied={self.applied}, "
            f"checked={self.checked}, reason={self.reason!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PatchStatus):
            return NotImplemented
        return all(getattr(self, field) == getattr(other, field) for field in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # Compared by value, but not meant as a key.
