"""Opt-in: `jax.random` and flax's `init`/`apply` take key objects (`kd.random.PRNGKey`) as Kauldron's do.

    kd_compat.enable("prng_key_wrappers")     # or kd.kauldron_alias.install(), which enables it
    jax.random.uniform(kd.random.PRNGKey(0), (5,))
    kd_compat.disable("prng_key_wrappers")    # the originals are back

What breaks
    `kd.random.PRNGKey` (Kauldron's `kauldron.random.PRNGKey` under the alias) is a pytree object holding a
    key array in `.rng`. JAX 0.10 no longer converts such an object through `__jax_array__` when it is a
    primitive's operand, so `jax.random.uniform(key, (5,))` raises `ValueError: Triggering __jax_array__()
    during abstractification is no longer supported`, and flax linen's `model.init(key, x)` (or
    `init({"params": key}, x)`) raises `InvalidRngError: RNGs should be of shape (2,) or PRNGKey`. Kauldron
    code does both: Kauldron makes it work by patching the same two functions, always, when it is imported.

The protocol
    An object is a key wrapper when its class defines `__kd_prng_key__(self)`, returning its key array (raw
    uint32 key data or a typed key array). It is looked up on the class, as Python looks up dunder methods,
    so kd_compat never imports the class (kd-compat does not import kd). `kd.random.PRNGKey` defines it.

What the patch does
    Replaces `jax._src.random.core._check_prng_key`, through which every `jax.random` function taking a key
    validates it, and `flax.core.scope._is_valid_rng`, flax's check of the rngs given to `init`/`apply`, with
    wrappers that hand the original the key array when given a key wrapper, and anything else unchanged.
    Inside flax the object itself travels on (as in Kauldron) and reaches `jax.random`, whose check unwraps
    it. There is no public hook for either: these are private functions, so the patch is version-gated,
    verifies each target before replacing it, and is opt-in rather than applied by `apply()`.

Which versions
    jax >=0.10.2,<0.11 and flax >=0.12.8,<0.13: verified on jax 0.10.2 and flax 0.12.8. Outside the jax range
    nothing is patched (`enable()` warns why). flax is optional: when it is not installed only jax is
    patched; when it is outside its range, only jax is patched and `enable()` warns about flax.

How it is detected
    `check()` reads the jax and flax versions from package metadata. `install()` imports nothing: a module
    already imported is wrapped at once, one not imported yet right after its import (`_after_import`), as
    kd-train enables the patch at start-up, before it knows whether the run imports JAX (over a second with
    flax). Each target is first checked to be the library's own function: that name and module, defined in
    that file, taking the expected arguments, its code reading the names it is known to read. One that is
    missing or different is left alone: `enable()` returns why and warns (`PatchSkippedWarning`), or, found
    at the library's import, a `PatchSkippedWarning` says so then (never failing that import).

How it is undone
    `remove()` stops waiting for imports and puts each original back, where kd_compat's wrapper is still in
    place.
"""

import _thread
import sys

from .._after_import import AfterImport
from .._patch import Patch, PatchSkippedWarning
from .._versions import in_range, installed_version

TYPE_CHECKING = False
if TYPE_CHECKING:  # `import kd_compat` loads no typing/functools: it stays standard-library-light.
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any

PROTOCOL = "__kd_prng_key__"

_JAX_RANGE = ((0, 10, 2), (0, 11))
_FLAX_RANGE = ((0, 12, 8), (0, 13))


def unwrap_prng_key(key: "Any") -> "Any":
    """The key array of a key wrapper (an object whose class defines `__kd_prng_key__`); anything else as is.

    Example:
        unwrap_prng_key(kd.random.PRNGKey(0))  # its key array, `.rng`
    """
    unwrap = getattr(type(key), PROTOCOL, None)
    return key if unwrap is None else unwrap(key)


def _unwrapping_check_prng_key(original: "Callable[..., Any]") -> "Callable[..., Any]":
    import functools

    @functools.wraps(original)
    def check_prng_key(name: str, key: "Any", *args: "Any", **kwargs: "Any") -> "Any":
        return original(name, unwrap_prng_key(key), *args, **kwargs)

    return check_prng_key


def _unwrapping_is_valid_rng(original: "Callable[..., Any]") -> "Callable[..., Any]":
    import functools

    @functools.wraps(original)
    def is_valid_rng(rng: "Any") -> "Any":
        return original(unwrap_prng_key(rng))

    return is_valid_rng


class _Target:
    """One private function this patch wraps, what identifies it as the library's own, and its wrapper.

    `start()` wraps it now if its module is imported, else when it is; `remove()` restores the original.
    """

    def __init__(
        self,
        module: str,
        function: str,
        *,
        arguments: tuple[str, ...],
        reads: frozenset[str],
        wrap: "Callable[[Callable[..., Any]], Callable[..., Any]]",
        lock: "Any",
    ) -> None:
        self.module = module
        self.function = function
        self.arguments = arguments
        self.reads = reads
        self.failure = ""  # why the function was left alone, once it was looked at
        self._wrap = wrap
        self._lock = lock
        self._hook = AfterImport(module, self._wrap_in, on_error=self._report)
        self._original: Callable[..., Any] | None = None
        self._replacement: Callable[..., Any] | None = None
        self._deferred = False

    @property
    def path(self) -> str:
        return f"{self.module}.{self.function}"

    def start(self) -> None:
        self.failure = ""
        self._deferred = False
        self._hook.start()
        self._deferred = True  # from now on `_wrap_in` runs inside the module's import

    def _wrap_in(self, module: "ModuleType") -> None:
        with self._lock:
            current = getattr(module, self.function, None)
            mismatch = f"{self.path} does not exist" if current is None else _mismatch(current, module, self)
            if not mismatch:
                self._original, self._replacement = current, self._wrap(current)
                setattr(module, self.function, self._replacement)
                return
            self.failure = mismatch
        if self._deferred:  # nobody to return it to: say it now
            self._report(mismatch)

    def _report(self, problem: "BaseException | str") -> None:
        import warnings

        self.failure = self.failure or str(problem)
        try:
            warnings.warn(
                f"kd_compat patch 'prng_key_wrappers': {problem}", PatchSkippedWarning, stacklevel=2
            )
        except Exception:  # a filter set to "error" must not fail the library's import
            pass

    def remove(self) -> None:
        self._hook.stop()
        with self._lock:
            module = sys.modules.get(self.module)
            if self.installed():
                setattr(module, self.function, self._original)
            self._original = self._replacement = None
            self.failure = ""

    def installed(self) -> bool:
        module = sys.modules.get(self.module)
        return (
            module is not None
            and self._replacement is not None
            and getattr(module, self.function, None) is self._replacement
        )

    def waiting(self) -> bool:
        return self._hook.waiting()


def _mismatch(function: "Any", module: "ModuleType", target: _Target) -> str:
    """Why `function` is not the target ('' when it is)."""
    where = f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', '?')}"
    code = getattr(function, "__code__", None)
    if code is None:
        return f"left {target.path} alone: found {function!r}, which is not a Python function"
    if where != target.path:
        return f"left {target.path} alone: found {where}"
    if code.co_filename != getattr(module, "__file__", None):
        return f"left {target.path} alone: found one defined in {code.co_filename}, not in {module.__file__}"
    if code.co_varnames[: len(target.arguments)] != target.arguments:
        found = code.co_varnames[: code.co_argcount]
        return f"left {target.path} alone: its arguments are {found}, not {target.arguments}"
    missing = target.reads - set(code.co_names)
    if missing:
        return f"left {target.path} alone: its code does not read {', '.join(sorted(missing))}"
    return ""


class PrngKeyWrappers(Patch):
    """jax.random's key check and flax's rng check take objects defining `__kd_prng_key__`. Opt-in."""

    name = "prng_key_wrappers"
    breaks = (
        "jax.random functions and flax's init/apply refuse key objects such as kd.random.PRNGKey "
        "(Kauldron code passes them; Kauldron patches JAX and flax to take them)"
    )
    affected = "jax >=0.10.2,<0.11 (and flax >=0.12.8,<0.13 when installed); opt-in"
    opt_in = True

    def __init__(self) -> None:
        lock = _thread.allocate_lock()
        self._jax = _Target(
            "jax._src.random.core",
            "_check_prng_key",
            arguments=("name", "key"),
            reads=frozenset({"random_wrap", "prng_key"}),
            wrap=_unwrapping_check_prng_key,
            lock=lock,
        )
        self._flax = _Target(
            "flax.core.scope",
            "_is_valid_rng",
            arguments=("rng",),
            reads=frozenset({"LazyRng", "prng_key"}),
            wrap=_unwrapping_is_valid_rng,
            lock=lock,
        )

    @property
    def partial(self) -> str:  # type: ignore[override]
        """What was left alone, and why: flax's check (now or at its import), or JAX's at its import."""
        return "; ".join(target.failure for target in (self._jax, self._flax) if target.failure)

    def check(self) -> tuple[bool, str]:
        jax = installed_version("jax")
        if jax is None:
            return False, "jax is not installed"
        if not in_range(jax, *_JAX_RANGE):
            return False, (
                f"jax {jax} is not a version this patch was verified on (jax >=0.10.2,<0.11): "
                "jax.random is left alone"
            )
        flax = installed_version("flax")
        flax_part = "; flax is not installed" if flax is None else f", flax {flax} refuses them in init/apply"
        return True, f"jax {jax} refuses key objects in jax.random{flax_part}"

    def install(self) -> tuple[bool, str]:
        self._jax.start()
        failure = self._jax.failure
        if failure:
            self._jax.remove()
            return False, f"nothing patched: {failure}"
        reason = f"{self._jax.path} unwraps objects defining {PROTOCOL} ({self._when(self._jax)})"
        flax = installed_version("flax")
        if flax is None:
            return True, f"{reason}; flax is not installed"
        if not in_range(flax, *_FLAX_RANGE):
            self._flax.failure = (
                f"flax {flax} is not a version this patch was verified on (flax >=0.12.8,<0.13): "
                "its init/apply still refuse key objects"
            )
            return True, f"{reason}; {self._flax.failure}"
        self._flax.start()
        if self._flax.failure:
            return True, f"{reason}; {self._flax.failure}"
        return True, f"{reason}, and so does {self._flax.path} ({self._when(self._flax)})"

    @staticmethod
    def _when(target: _Target) -> str:
        return (
            "imported already: wrapped at once"
            if target.installed()
            else "not imported yet: wrapped on import"
        )

    def remove(self) -> None:
        self._flax.remove()
        self._jax.remove()

    def installed(self) -> bool:
        """Whether jax.random takes key wrappers now, or will as soon as JAX is imported."""
        return self._jax.installed() or self._jax.waiting()

    def flax_installed(self) -> bool:
        """Whether flax's rng check is wrapped now (sys.modules only)."""
        return self._flax.installed()
