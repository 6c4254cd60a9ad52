"""The library caches safe mode lets alone: folders that only the named library code may read, write, list and
remove files in while a safe resolve runs (its audit hook, `_audit`, reads this list). The program declares them,
never a config: kd-train declares JAX's persistent compilation cache, which stores a compiled program when a
resolve compiles one (`jax.random.key(0)` in a config).

    konfig.allow_library_cache(cache_dir, code=[lru_cache.__file__, compilation_cache.__file__])
"""

from __future__ import annotations

import os

# (folder, code files): file events under `folder` are allowed while one of the files' code is on the stack.
LIBRARY_CACHES: list[tuple[str, frozenset[str]]] = []


def allow_library_cache(folder: str, *, code: list[str] | tuple[str, ...]) -> None:
    """Lets the library whose source files are `code` read, write, list and remove files under `folder` during
    a safe resolve (its own cache); a config's code, or any other function, still may not touch it.

        allow_library_cache(cache_dir, code=[lru_cache.__file__, compilation_cache.__file__])
    """
    full = os.path.realpath(os.path.abspath(os.fspath(folder)))
    if full in (os.sep, os.path.realpath(os.path.expanduser("~"))):
        raise ValueError(f"allow_library_cache: {folder!r} is not a cache folder of its own (the root or home folder)")
    given = [os.path.abspath(os.fspath(f)) for f in code]
    files = frozenset([*given, *(os.path.realpath(f) for f in given)])  # as a frame may name it
    if not files:
        raise ValueError("allow_library_cache: `code` names no source file that may use the cache")
    entry = (full, files)
    if entry not in LIBRARY_CACHES:
        LIBRARY_CACHES.append(entry)
