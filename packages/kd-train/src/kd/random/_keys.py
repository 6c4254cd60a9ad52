"""Deterministic keys from strings, and integer seeds from keys (Kauldron's `kd.random` helpers).

Usage:

    key = kd.random.fold_in_str(jax.random.PRNGKey(0), "shuffle")
    seed = kd.random.random_seed(key)  # an int in [0, 2**32): for numpy, grain, ...
"""

from __future__ import annotations

import functools
import hashlib

import jax


@functools.lru_cache(maxsize=1024)
def _str_to_uint32(data: str) -> int:
    """The first four bytes of the string's SHA-1, big-endian: the same number on every machine."""
    return int.from_bytes(hashlib.sha1(data.encode("utf-8")).digest()[:4], "big")


def fold_in_str(key: jax.Array, data: str) -> jax.Array:
    """`jax.random.fold_in` of a string: a new key for `data`, the same for the same key and string."""
    if not isinstance(data, str):
        raise TypeError(f"fold_in_str: data must be a str; got {type(data).__name__} {data!r}")
    return jax.random.fold_in(key, _str_to_uint32(data))


def random_seed(key: jax.Array) -> int:
    """An integer seed in [0, 2**32) drawn from `key` (its random bits), for libraries seeded by ints."""
    return int(jax.random.bits(key)) % (2**32)
