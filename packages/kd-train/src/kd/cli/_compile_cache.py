"""JAX's persistent compilation cache, on by default for `kd-train`: a rerun, a resume, `kd-train eval` and
the items of a sweep reuse what an earlier process compiled instead of compiling it again.

The cache lives in the user's cache folder (`~/.cache/kd/jax`, or `$XDG_CACHE_HOME/kd/jax`);
`KD_COMPILATION_CACHE=/path` puts it elsewhere, `KD_COMPILATION_CACHE=off` turns it off. A setting of the
user's own (`JAX_COMPILATION_CACHE_DIR`, `jax.config`) is left as it is. Programs that compile in under 0.1 s
are not stored (reading them back would cost as much). Safe mode lets JAX's own cache code (only it) use the
folder while a config resolves, as a resolve may compile (`jax.random.key(0)`): see `konfig.allow_library_cache`.

    folder = enable_compilation_cache()  # before JAX compiles anything; None when off
"""

from __future__ import annotations

import importlib.util
import os
import sys

import konfig

CACHE_ENV = "KD_COMPILATION_CACHE"
_OFF = frozenset({"0", "off", "false", "no", "none"})
MIN_COMPILE_SECONDS = 0.1


def cache_folder() -> str | None:
    """Where the cache goes, or None when `KD_COMPILATION_CACHE` turns it off."""
    value = os.environ.get(CACHE_ENV, "").strip()
    if value.lower() in _OFF:
        return None
    if value:
        return os.path.abspath(os.path.expanduser(value))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kd", "jax")


def enable_compilation_cache() -> str | None:
    """Turns the cache on (by environment before JAX is imported, by `jax.config` after); returns its folder."""
    if os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return _allowed_in_safe_mode(os.environ["JAX_COMPILATION_CACHE_DIR"])  # the user's own choice
    folder = cache_folder()
    if folder is None:
        return None
    settings = {
        "jax_compilation_cache_dir": folder,
        "jax_persistent_cache_min_compile_time_secs": MIN_COMPILE_SECONDS,
        "jax_persistent_cache_min_entry_size_bytes": 0,
    }
    if "jax" in sys.modules:
        import jax

        if jax.config.jax_compilation_cache_dir:  # set in code by the user
            return _allowed_in_safe_mode(str(jax.config.jax_compilation_cache_dir))
        for name, value in settings.items():
            jax.config.update(name, value)
    else:
        for name, value in settings.items():
            os.environ.setdefault(name.upper(), str(value))
    return _allowed_in_safe_mode(folder)


# JAX's modules that open, write, list and evict the cache's files (the rest of the stack calls into them).
_JAX_CACHE_CODE = ("lru_cache.py", "compilation_cache.py")


def _allowed_in_safe_mode(folder: str) -> str:
    """Registers `folder` with safe mode as JAX's cache (a local folder only: a URL is left to JAX)."""
    spec = importlib.util.find_spec("jax")  # found, not imported
    if "://" in folder or spec is None or not spec.submodule_search_locations:
        return folder
    source = os.path.join(next(iter(spec.submodule_search_locations)), "_src")
    konfig.allow_library_cache(folder, code=[os.path.join(source, name) for name in _JAX_CACHE_CODE])
    return folder
