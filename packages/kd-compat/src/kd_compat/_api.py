"""`apply()`, `status()` and `undo()` over every patch in `kd_compat._patches`, under one lock.

Example:
    import kd_compat
    kd_compat.apply()  # installs what the installed versions need; a no-op after the first call
"""

import _thread  # threading's Lock, without its ~3 ms import: `import kd_compat` stays light.

from ._patch import PatchStatus
from ._patches import PATCHES

# Serialises apply/undo/status: two threads importing kd at once must not both save an "original".
_LOCK = _thread.allocate_lock()
# What apply() decided per patch name, (needed, reason); cleared by undo().
_decisions: dict[str, tuple[bool, str]] = {}


class PatchSkippedWarning(RuntimeWarning):
    """A patch was needed but not applied, e.g. its target is not the function it expects."""


def apply() -> dict[str, PatchStatus]:
    """Install every patch the installed library versions need, once; returns `status()`.

        kd_compat.apply()["etils_jax_prng"].applied  # True under etils 1.14.0 with JAX

    Decides from package metadata, so nothing is imported when nothing is needed. Idempotent and
    thread-safe: later calls return the recorded status. A needed patch whose target is not the one
    it expects is left alone, reported in `status()` and warned about with `PatchSkippedWarning`.
    """
    skipped = []
    with _LOCK:
        for patch in PATCHES:
            if patch.name in _decisions:
                continue
            needed, reason = patch.check()
            if needed:
                applied, reason = patch.install()
                if not applied:
                    skipped.append(f"kd_compat patch {patch.name!r} is needed but was not applied: {reason}")
            _decisions[patch.name] = (needed, reason)
        result = _status()
    if skipped:
        import warnings

        for message in skipped:
            warnings.warn(message, PatchSkippedWarning, stacklevel=2)
    return result


def status() -> dict[str, PatchStatus]:
    """Every patch that exists, keyed by name: whether it is needed (and why not) and whether applied.

        print(kd_compat.status()["etils_jax_prng"].reason)

    Before `apply()` has run, `needed` is computed from package metadata and `checked` is False.
    """
    with _LOCK:
        return _status()


def undo() -> None:
    """Restore every original that `apply()` replaced and forget its decisions (for tests).

    Example:
        kd_compat.undo()  # a later apply() decides and installs afresh
    """
    with _LOCK:
        for patch in reversed(PATCHES):
            patch.remove()
        _decisions.clear()


def _status() -> dict[str, PatchStatus]:
    result = {}
    for patch in PATCHES:
        decision = _decisions.get(patch.name)
        checked = decision is not None
        if decision is None:
            needed, reason = patch.check()
            if needed:
                reason = f"{reason}; apply() has not run yet"
        else:
            needed, reason = decision
        result[patch.name] = PatchStatus(
            name=patch.name,
            breaks=patch.breaks,
            affected=patch.affected,
            needed=needed,
            applied=patch.installed(),
            checked=checked,
            reason=reason,
        )
    return result
