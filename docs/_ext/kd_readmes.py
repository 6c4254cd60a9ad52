"""The packages' READMEs, included in a page (`{include}`), with their links made to work from the site.

A README links to files beside it (`src/kd/xm/README.md`, `../../benchmarks/ecosystem/gemma.py`) and to its
own sections (`#checkpoints-resume-evaluation`); from a page of the site those are not documents, and the
strict build would fail on them. Such links keep their text; links with a scheme (`https:`) stay links.
"""

from __future__ import annotations

import pathlib
import re
from typing import Any

_LINK = re.compile(r"\[(?P<text>[^\]]+)\]\((?P<target>[^)\s]+)\)")
_EXTERNAL = re.compile(r"[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def local_links_as_text(text: str) -> str:
    """`[words](relative/path)` -> `words`; links with a scheme (`https:`) are kept."""

    def replace(match: re.Match[str]) -> str:
        if _EXTERNAL.match(match["target"]):
            return match.group(0)
        return match["text"]

    return _LINK.sub(replace, text)


def _rewrite(app: Any, relative_path: pathlib.Path, parent_docname: str, content: list[str]) -> None:
    if pathlib.Path(relative_path).name == "README.md":
        content[0] = local_links_as_text(content[0])


def setup(app: Any) -> dict[str, Any]:
    app.connect("include-read", _rewrite)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
