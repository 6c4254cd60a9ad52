"""`write_text_atomic` / `write_bytes_atomic`: a file is replaced whole or not at all, even when the process is killed mid-write.

write_text_atomic(epath.Path(workdir) / "config.json", config_json)
"""

from __future__ import annotations

import os

from etils import epath


def write_text_atomic(path: epath.PathLike, text: str) -> None:
    """Writes `text` to a temporary file beside `path`, syncs it, then renames it over `path` (one step).

    Readers see the old content or the new, never a part. Cloud paths (`gs://...`) are written directly:
    their stores replace an object whole already.
    """
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: epath.PathLike, data: bytes) -> None:
    """`write_text_atomic` for bytes (an `.npz`, an image): replaced whole or not at all."""
    path = epath.Path(path)
    if "://" in str(path):
        path.write_bytes(data)
        return
    partial = f"{os.fspath(path)}.tmp-{os.getpid()}"
    try:
        with open(partial, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, os.fspath(path))
    finally:
        if os.path.exists(partial):
            os.remove(partial)
