"""etils 1.14.0's `enp.ArraySpec` reaches into `jax._src.prng`, which current JAX no longer has.

What breaks
    etils 1.14.0 added `etils.enp.array_spec._is_jax_random_dtype`, which `ArraySpec.__init__` calls for
    every dtype. It reads `jax._src.prng.KeyTy`; JAX 0.10.2 moved that private module (to
    `jax._src.random.prng`). So once JAX is imported, every `enp.ArraySpec(...)` -- and with it
    `etree.spec_like`, which a trainer uses at start-up to describe its batches -- raises
    `AttributeError: module 'jax._src' has no attribute 'prng'`, even for a plain float32 spec.

Which versions
    etils >=1.14.0,<1.15.0 with JAX installed. Earlier etils has no such check; etils 1.15.0 asks the
    public `jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)`, which is what the replacement does.
    The JAX version is deliberately not consulted: probing `jax._src` to see whether the module is
    still there would repeat the mistake, and the public predicate gives the same answer on every JAX
    that has `jax.dtypes.prng_key` (all versions kd supports), so patching an older JAX is harmless.

How it is detected
    `check()` reads the etils and jax versions from package metadata; nothing is imported. Only when
    the patch is needed does `install()` import `etils.enp.array_spec` (numpy + etils.enp, never JAX)
    and verify that `_is_jax_random_dtype` there is etils's own function: named so, defined in that
    module's file, and reading `_src.prng.KeyTy`. Anything else is left alone and reported.

    The module is imported at apply() time rather than patched later by an import hook: apply() runs
    when kd is imported, kd builds ArraySpecs anyway, and an import hook would watch every import of
    the process for the rest of its life. The cost is paid only where etils 1.14.0 and JAX are installed.

How it is undone
    `remove()` puts the original function back into `etils.enp.array_spec`, if ours is still there.
"""

import sys
from types import ModuleType

from .._patch import Patch
from .._versions import in_range, installed_version

_MODULE = "etils.enp.array_spec"
_FUNCTION = "_is_jax_random_dtype"
_AFFECTED_FROM = (1, 14, 0)
_FIXED_IN = (1, 15, 0)
# Names the broken function's code loads: `lazy.jax._src.prng.KeyTy`.
_PRIVATE_REACH = frozenset({"_src", "prng", "KeyTy"})


def is_jax_prng_key_dtype(dtype: object) -> bool:
    """Whether `dtype` is a JAX PRNG key dtype, asked through JAX's public API. Never imports JAX.

    Example:
        is_jax_prng_key_dtype(jax.random.key(0).dtype)  # True
    """
    jax = sys.modules.get("jax")
    if jax is None:  # As in etils: JAX dtypes cannot exist before JAX is imported.
        return False
    return bool(jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key))


class EtilsJaxPrng(Patch):
    """Replaces `etils.enp.array_spec._is_jax_random_dtype` with `is_jax_prng_key_dtype`."""

    name = "etils_jax_prng"
    breaks = "every etils.enp.ArraySpec (and etree.spec_like) raises AttributeError once JAX is imported"
    affected = "etils >=1.14.0,<1.15.0 with JAX installed"

    def __init__(self) -> None:
        self._original: object = None

    def check(self) -> tuple[bool, str]:
        etils = installed_version("etils")
        if etils is None:
            return False, "etils is not installed"
        if not in_range(etils, _AFFECTED_FROM, _FIXED_IN):
            return False, f"etils {etils} is not affected: only etils >=1.14.0,<1.15.0 reads jax._src.prng"
        jax = installed_version("jax")
        if jax is None:
            return (
                False,
                f"etils {etils} is affected, but JAX is not installed, so etils never reaches into it",
            )
        return True, (
            f"etils {etils} reads the private jax._src.prng, which JAX moved in 0.10.2 (installed: jax {jax})"
        )

    def install(self) -> tuple[bool, str]:
        import importlib

        try:
            module = importlib.import_module(_MODULE)
        except ImportError as error:
            return False, f"{_MODULE} cannot be imported ({error}), so there is nothing to patch"
        current = getattr(module, _FUNCTION, None)
        if current is is_jax_prng_key_dtype:
            return True, f"{_MODULE}.{_FUNCTION} already uses jax.dtypes.prng_key"
        mismatch = _mismatch(current, module)
        if mismatch:
            return False, f"left {_MODULE}.{_FUNCTION} alone: expected etils's own function, but {mismatch}"
        self._original = current
        setattr(module, _FUNCTION, is_jax_prng_key_dtype)
        return True, (
            f"replaced {_MODULE}.{_FUNCTION} (reads jax._src.prng) with "
            "kd_compat's jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)"
        )

    def remove(self) -> None:
        module = sys.modules.get(_MODULE)
        if module is not None and self._original is not None and self.installed():
            setattr(module, _FUNCTION, self._original)
        self._original = None

    def installed(self) -> bool:
        module = sys.modules.get(_MODULE)
        return module is not None and getattr(module, _FUNCTION, None) is is_jax_prng_key_dtype


def _mismatch(function: object, module: ModuleType) -> str:
    """Why `function` is not etils 1.14's `_is_jax_random_dtype` ('' when it is)."""
    code = getattr(function, "__code__", None)
    if code is None:
        return f"found {function!r}, which is not a Python function"
    where = f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', '?')}"
    if where != f"{_MODULE}.{_FUNCTION}":
        return f"found {where}"
    if code.co_filename != getattr(module, "__file__", None):
        return f"found one defined in {code.co_filename}, not in {module.__file__}"
    missing = _PRIVATE_REACH - set(code.co_names)
    if missing:
        return f"its code does not read jax._src.prng.KeyTy (missing names: {', '.join(sorted(missing))})"
    return ""
