"""Digests of what a checkpoint holds: one per array (over its dtype, shape and bytes) and one per JSON item.

    leaves = host_leaves(state)                       # on the training thread: host views, no hashing
    record = digest_record(leaves, {"data": data_state}, algorithm="crc32")   # in orbax's save thread
    check(record, restored_state, {"data": data_state}, step=100, where="/run/checkpoints/ckpt_100")

orbax keeps no checksums: a flipped bit in an array file restores silently as a wrong parameter, and an
edited data position restores as another place in the data. The record is saved as one more orbax item of
the checkpoint, so it is committed (or not) with the rest of it. A checkpoint without a record (written
by an older kd, or with `digest_algorithm=None`) restores unverified; one whose record differs from what
was read is damaged (`CheckpointDigestError`).
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

from kd.ckpts import _errors, _structure

FORMAT = 1
ALGORITHMS = ("sha256", "blake2b", "crc32")
"""`crc32` (the Checkpointer's default: ~2 GB/s; it catches every single-bit flip and burst up to 32 bits,
and other damage with probability 1 - 2^-32, which is what the digests guard against), `sha256`
(cryptographic, ~1 GB/s with SHA-NI), `blake2b` (128-bit, ~0.9 GB/s). An unkeyed digest saved beside the
data cannot stop someone who can rewrite both; a cryptographic one only makes an accidental match rarer."""


class _Crc32:
    """hashlib's interface over zlib.crc32 (which, like hashlib, releases the GIL on large buffers)."""

    def __init__(self) -> None:
        self._value = 0

    def update(self, data: Any) -> None:
        self._value = zlib.crc32(data, self._value)

    def hexdigest(self) -> str:
        return f"{self._value:08x}"


def _hasher(algorithm: str) -> Any:
    if algorithm == "sha256":
        return hashlib.sha256()
    if algorithm == "blake2b":
        return hashlib.blake2b(digest_size=16)
    if algorithm == "crc32":
        return _Crc32()
    raise ValueError(f"unknown digest algorithm {algorithm!r}: expected one of {', '.join(ALGORITHMS)}")


def check_algorithm(owner: str, algorithm: Any) -> None:
    if algorithm is not None and algorithm not in ALGORITHMS:
        expected = ", ".join(repr(a) for a in ALGORITHMS)
        raise ValueError(f"{owner}.digest_algorithm: expected one of {expected} or None, got {algorithm!r}.")


def _to_host(leaf: Any) -> Any:
    """A host (numpy) view of a leaf, or None for an array this process does not hold whole (multi-host)."""
    if isinstance(leaf, jax.Array):
        if not leaf.is_fully_addressable:
            return None
        return np.asarray(leaf)
    return np.asarray(leaf)


class _Pieces:
    """An array as host views of its distinct shards: put together (a copy) only in the save thread."""

    def __init__(self, leaf: jax.Array) -> None:
        self.shape, self.dtype = tuple(leaf.shape), np.dtype(leaf.dtype)
        self.pieces, seen = [], set()
        for shard in leaf.addressable_shards:
            where = tuple((s.start, s.stop, s.step) for s in shard.index)
            if where not in seen:  # a replicated shard once
                seen.add(where)
                self.pieces.append((shard.index, np.asarray(shard.data)))

    def assemble(self) -> np.ndarray:
        if len(self.pieces) == 1 and self.pieces[0][1].shape == self.shape:
            return self.pieces[0][1]
        whole = np.empty(self.shape, self.dtype)
        for index, piece in self.pieces:
            whole[index] = piece
        return whole


def _host_view(leaf: Any) -> Any:
    if isinstance(leaf, jax.Array):
        return _Pieces(leaf) if leaf.is_fully_addressable else None
    return np.asarray(leaf)


def host_leaves(state: Any) -> list[tuple[tuple[str, ...], str, Any]]:
    """`[(keys, display path, host view or None)]` of `state`, taken before the train step may donate it.

    Runs on the training thread, in the blocking part of a save: it starts the device-to-host copies and
    waits for them, and copies nothing on the host (on the CPU backend the shards are host memory already:
    their views are taken as they are; a sharded array is put together in the save thread).
    """
    flat = jax.tree_util.tree_flatten_with_path(state)[0]
    for _, leaf in flat:
        if isinstance(leaf, jax.Array) and leaf.is_fully_addressable:
            leaf.copy_to_host_async()
    out = []
    for keys, leaf in flat:
        parts = tuple(_structure._key_part(k) for k in keys)
        out.append((tuple(str(p) for p in parts), _structure._path_str(parts), _host_view(leaf)))
    return out


def array_digest(array: np.ndarray, algorithm: str) -> str:
    """The digest of an array: its dtype, its shape, then its bytes in C order."""
    hasher = _hasher(algorithm)
    hasher.update(f"{array.dtype.str}{array.shape}".encode())
    contiguous = np.ascontiguousarray(array)
    hasher.update(memoryview(contiguous.reshape(-1).view(np.uint8)) if contiguous.size else b"")
    return hasher.hexdigest()


def json_digest(value: Any, algorithm: str) -> str:
    """The digest of a JSON item (keys sorted, so it is the same before saving and after reading back)."""
    hasher = _hasher(algorithm)
    hasher.update(json.dumps(value, sort_keys=True).encode())
    return hasher.hexdigest()


def digest_record(
    leaves: list[tuple[tuple[str, ...], str, Any]], json_items: Mapping[str, Any], *, algorithm: str
) -> dict[str, Any]:
    """What is saved beside the checkpoint: `{"format", "algorithm", "arrays": [...], "json": {...}}`."""
    arrays = []
    for keys, path, view in leaves:
        entry: dict[str, Any] = {"path": path, "keys": list(keys)}
        host = view.assemble() if isinstance(view, _Pieces) else view
        if host is not None:
            entry.update(dtype=host.dtype.str, shape=list(host.shape), digest=array_digest(host, algorithm))
        arrays.append(entry)
    return {
        "format": FORMAT,
        "algorithm": algorithm,
        "arrays": arrays,
        "json": {name: json_digest(value, algorithm) for name, value in json_items.items()},
    }


_JSON_WHAT = {"data": "the data iterator state (the data position)", "info": "the run info and metrics"}


def check(record: Any, state: Any, json_items: Mapping[str, Any], *, step: int, where: str) -> None:
    """Raise CheckpointDigestError for the first array or JSON item whose digest differs from `record`.

    `json_items` maps each JSON item name to what was read, or None when it was not found.
    `state` is the restored tree (the template's types, or orbax's raw dicts and lists: paths are compared
    by their key names). An array restored with another dtype than it was saved with (orbax casts to the
    template's) cannot be compared and is left unchecked; so are arrays the record has no digest for.
    """
    try:
        algorithm = record["algorithm"]
        arrays = {tuple(e["keys"]): e for e in record["arrays"]}
        json_digests = dict(record["json"])
        _hasher(algorithm)
    except (TypeError, KeyError, ValueError) as e:
        raise _errors.CheckpointDigestError(
            f"The checkpoint {where} cannot be read: its digest file is not one kd wrote "
            f"({type(e).__name__}: {e}).",
            step=step,
            path="digests",
        ) from None
    restored = _structure._flatten(state)
    for keys, entry in arrays.items():
        if keys not in restored:
            raise _errors.CheckpointDigestError(
                f"The checkpoint {where} cannot be read: its array '{entry.get('path')}' is in the digest file "
                "saved with it but not in what was read.",
                step=step,
                path=str(entry.get("path")),
            )
    for keys, (parts, leaf) in restored.items():
        path = _structure._path_str(parts)
        entry = arrays.get(keys)
        if entry is None:
            raise _errors.CheckpointDigestError(
                f"The checkpoint {where} cannot be read: its array '{path}' has no digest in the digest "
                "file saved with it.",
                step=step,
                path=path,
            )
        host = _to_host(leaf)
        if host is None or "digest" not in entry or host.dtype.str != entry["dtype"]:
            continue
        if list(host.shape) != entry["shape"] or array_digest(host, algorithm) != entry["digest"]:
            raise _errors.CheckpointDigestError(
                f"The checkpoint {where} cannot be read: the digest ({algorithm}) of its array '{path}' "
                "differs from the one saved with it.",
                step=step,
                path=path,
            )
    for name, value in json_items.items():
        if name not in json_digests:
            continue
        if value is None:
            raise _errors.CheckpointDigestError(
                f"The checkpoint {where} cannot be read: {_JSON_WHAT.get(name, name)} ('{name}') was saved "
                "with it but is missing.",
                step=step,
                path=name,
            )
        if json_digest(value, algorithm) != json_digests[name]:
            raise _errors.CheckpointDigestError(
                f"The checkpoint {where} cannot be read: the digest ({algorithm}) of "
                f"{_JSON_WHAT.get(name, name)} ('{name}') differs from the one saved with it.",
                step=step,
                path=name,
            )
