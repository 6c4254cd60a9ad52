"""`apply()`, `enable()`, `disable()`, `status()` and `undo()` over the patches in `kd_compat._patches`, under one lock.

Example:
    import kd_compat
    kd_compat.apply()  # installs what the installed versions need; a no-op after the first call
    kd_compat.enable("prng_key_wrappers")  # an opt-in patch, until disable("prng_key_wrappers")
"""

import _thread  # threading's Lock, without its ~3 ms import: `import kd_compat` stays light.

from ._patch import Patch, PatchSkippedWarning, PatchStatus
from ._patches import PATCHES

# Serialises apply/undo/status: two threads importing kd at once must not both save an "original".
_LOCK = _thread.allocate_lock()
# What apply() or enable() decided per patch name, (needed, reason); cleared by undo().
_decisions: dict[str, tuple[bool, str]] = {}
# Who enabled each opt-in patch (and has not disabled it): it stays installed while anyone does.
_owners: dict[str, list[str]] = {}


def apply() -> dict[str, PatchStatus]:
    """Install every patch the installed library versions need, once; returns `status()`.

        kd_compat.apply()["etils_jax_prng"].applied  # True under etils 1.14.0 with JAX

    Decides from package metadata, so nothing is imported when nothing is needed. Idempotent and
    thread-safe: later calls return the recorded status. A needed patch whose target is not the one
    it expects is left alone, reported in `status()` and warned about with `PatchSkippedWarning`.
    """
    skipped: list[str] = []
    with _LOCK:
        for patch in PATCHES:
            if patch.name not in _decisions and not patch.opt_in:
                _decide(patch, skipped)
        result = _status()
    _warn(skipped)
    return result


def enable(name: str, *, owner: str = "user") -> PatchStatus:
    """Install the opt-in patch `name` and keep it until every owner that enabled it has disabled it.

        kd_compat.enable("prng_key_wrappers")  # jax.random and flax take kd.random.PRNGKey
        kd_compat.enable("prng_key_wrappers", owner="kd.kauldron_alias")  # what the kauldron alias does

    Idempotent per owner and thread-safe. Where the installed versions are not ones the patch was verified
    on, or its target is not what it expects, nothing is replaced: the returned status says why and a
    `PatchSkippedWarning` is raised (also when only part of it applied).

    Raises:
      KeyError: `name` is no patch.
      ValueError: `name` is not opt-in (`apply()` installs it where the versions need it).
    """
    patch = _opt_in(name)
    skipped: list[str] = []
    with _LOCK:
        owners = _owners.setdefault(name, [])
        if owner not in owners:
            owners.append(owner)
        if name not in _decisions or (_decisions[name][0] and not patch.installed()):
            _decide(patch, skipped, what="was enabled but")
        result = _status()[name]
    _warn(skipped)
    return result


def disable(name: str, *, owner: str = "user") -> PatchStatus:
    """Withdraw `owner`'s `enable(name)`; when no owner is left, put the originals back.

        kd_compat.disable("prng_key_wrappers")  # jax.random and flax refuse key objects again

    Idempotent: disabling for an owner that has not enabled it changes nothing.
    """
    patch = _opt_in(name)
    with _LOCK:
        owners = _owners.get(name, [])
        if owner in owners:
            owners.remove(owner)
            if not owners:
                patch.remove()
                _decisions.pop(name, None)
                _owners.pop(name, None)
        return _status()[name]


def status() -> dict[str, PatchStatus]:
    """Every patch that exists, keyed by name: whether it is needed (and why not) and whether applied.

        print(kd_compat.status()["etils_jax_prng"].reason)

    Before `apply()` has run, `needed` is computed from package metadata and `checked` is False.
    """
    with _LOCK:
        return _status()


def undo() -> None:
    """Restore every original that `apply()` or `enable()` replaced and forget its decisions (for tests).

    Example:
        kd_compat.undo()  # a later apply() decides and installs afresh; opt-in patches are disabled
    """
    with _LOCK:
        for patch in reversed(PATCHES):
            patch.remove()
        _decisions.clear()
        _owners.clear()


def _opt_in(name: str) -> Patch:
    for patch in PATCHES:
        if patch.name == name:
            if not patch.opt_in:
                raise ValueError(
                    f"kd_compat patch {name!r} is not opt-in: apply() installs it where the versions need it"
                )
            return patch
    opt_in = [patch.name for patch in PATCHES if patch.opt_in]
    raise KeyError(f"no kd_compat patch {name!r}; the opt-in patches are {opt_in}")


def _decide(patch: Patch, skipped: list[str], what: str = "is needed but") -> None:
    """Check and, when needed, install `patch`; record the decision and what to warn about (under _LOCK)."""
    needed, reason = patch.check()
    if needed:
        applied, reason = patch.install()
        if not applied:
            skipped.append(f"kd_compat patch {patch.name!r} {what} was not applied: {reason}")
        elif patch.partial:
            skipped.append(f"kd_compat patch {patch.name!r} was applied only in part: {patch.partial}")
    elif patch.opt_in:
        skipped.append(f"kd_compat patch {patch.name!r} {what} was not applied: {reason}")
    _decisions[patch.name] = (needed, reason)


def _warn(skipped: list[str]) -> None:
    # Outside the lock: a warnings filter set to "error" raises here, after the bookkeeping is done.
    if skipped:
        import warnings

        for message in skipped:
            warnings.warn(message, PatchSkippedWarning, stacklevel=3)


def _status() -> dict[str, PatchStatus]:
    result = {}
    for patch in PATCHES:
        decision = _decisions.get(patch.name)
        checked = decision is not None
        if decision is None:
            needed, reason = patch.check()
            if patch.opt_in:
                reason = f"{reason}; opt-in: kd_compat.enable({patch.name!r}) installs it"
            elif needed:
                reason = f"{reason}; apply() has not run yet"
        else:
            needed, reason = decision
            if patch.partial and patch.partial not in reason:  # found out later, at the library's import
                reason = f"{reason}; {patch.partial}"
        result[patch.name] = PatchStatus(
            name=patch.name,
            breaks=patch.breaks,
            affected=patch.affected,
            needed=needed,
            applied=patch.installed(),
            checked=checked,
            reason=reason,
            opt_in=patch.opt_in,
            enabled_by=tuple(_owners.get(patch.name, ())),
        )
    return result
