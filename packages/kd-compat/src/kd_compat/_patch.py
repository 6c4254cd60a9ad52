"""What every compatibility patch provides, and the status record `kd_compat.status()` returns.

    class MyPatch(Patch):
        name = "lib_thing"
        breaks = "lib 2.3 calls a removed private function of other_lib"
        affected = "lib >=2.3,<2.4"
        def check(self): ...       # (needed, reason) from package metadata alone
        def install(self): ...     # (applied, reason), after verifying the target
        def remove(self): ...      # put the original back
        def installed(self): ...   # is the replacement in place right now (sys.modules only)

A patch with `opt_in = True` is never installed by `apply()`; `kd_compat.enable(name)` installs it.
The locking, idempotency and bookkeeping live in `kd_compat._api`; a patch only knows its target.
"""


class PatchSkippedWarning(RuntimeWarning):
    """A patch was needed (or enabled) but not applied, or only in part: e.g. its target is not the function
    it expects."""


class Patch:
    """One version-gated, reversible fix of a third-party library. See the README's "Adding a patch".

    Class attributes:
      name: key of this patch in `kd_compat.status()`.
      breaks: one sentence, what fails without the patch.
      affected: which versions need it, e.g. "etils >=1.14.0,<1.15.0 with JAX installed".
      opt_in: True for a patch that changes what a library accepts rather than repairing it: `apply()`
        leaves it alone, `kd_compat.enable(name)` installs it.

    Attributes:
      partial: set by `install()` when it applied only part of the fix: what it left alone and why
        (`apply()` / `enable()` warn with it).
    """

    name: str = ""
    breaks: str = ""
    affected: str = ""
    opt_in: bool = False
    partial: str = ""

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
      opt_in: whether only `kd_compat.enable(name)` installs it (never `apply()`).
      enabled_by: for an opt-in patch, who has enabled it and not disabled it since (`enable(owner=...)`).
    """

    __slots__ = (
        "affected",
        "applied",
        "breaks",
        "checked",
        "enabled_by",
        "name",
        "needed",
        "opt_in",
        "reason",
    )

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
        opt_in: bool = False,
        enabled_by: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.breaks = breaks
        self.affected = affected
        self.needed = needed
        self.applied = applied
        self.checked = checked
        self.reason = reason
        self.opt_in = opt_in
        self.enabled_by = enabled_by

    def __repr__(self) -> str:
        return (
            f"PatchStatus(name={self.name!r}, needed={self.needed}, applied={self.applied}, "
            f"checked={self.checked}, reason={self.reason!r}"
            + (f", opt_in=True, enabled_by={self.enabled_by!r})" if self.opt_in else ")")
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PatchStatus):
            return NotImplemented
        return all(getattr(self, field) == getattr(other, field) for field in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # Compared by value, but not meant as a key.
