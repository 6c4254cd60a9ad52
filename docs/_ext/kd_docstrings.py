"""Reads kd's docstrings, written as in the READMEs (Markdown habits), as reStructuredText.

kd's docstrings are Google style (`Args:`, `Attributes:`, `Returns:`, read by napoleon) with code shown
as an indented block, after a blank line or a line ending in `:` (`Usage:`), as Markdown and Python's own
docs do. reStructuredText reads such a block as a block quote (and a nested indent in it as an error), so
before napoleon reads a docstring this turns each such block into a literal block (`::`), and separates a
paragraph from the indented lines it follows (a list item's continuation) by a blank line; an indented
list stays a list. Nothing
changes inside napoleon's sections, nor for text that is already reStructuredText.
"""

from __future__ import annotations

import re
from typing import Any

_SECTION = re.compile(
    r"(Args|Arguments|Attributes|Example|Examples|Keyword Args|Keyword Arguments|Methods|Note|Notes|"
    r"Other Parameters|Parameters|Raises|References|Return|Returns|See Also|Todo|Warning|Warnings|"
    r"Warns|Yield|Yields):"
)
_LIST_ITEM = re.compile(r"([-*+]|\d+\.) ")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _continues_list_item(item: str, indent: int) -> bool:
    """`indent` is where the text of the list item `item` starts: a continuation line, not a block."""
    match = _LIST_ITEM.match(item.lstrip())
    return match is not None and indent == _indent(item) + len(match.group(0))


def literal_blocks(lines: list[str]) -> list[str]:
    """`lines` with indented code blocks made literal blocks (see the module docstring)."""
    out: list[str] = []
    last: int | None = None  # index in `out` of the last line of running text
    section: int | None = None  # the indent of the napoleon section header we are in
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            out.append(line)
            i += 1
            continue
        indent = _indent(line)
        if section is not None:
            if indent > section:
                out.append(line)
                i += 1
                continue
            section = None
        if _SECTION.fullmatch(line.strip()):
            section = indent
            out.append(line)
            last = len(out) - 1
            i += 1
            continue
        if last is not None and indent > _indent(out[last]) and not _continues_list_item(out[last], indent):
            text = out[last].rstrip()
            base = _indent(text)
            if _LIST_ITEM.match(line.lstrip()):
                pass  # an indented list: a block quote holding it, once a blank line separates them
            elif not text.endswith("::"):
                if text.endswith(":") and out[-1].strip():
                    out[last] = text + ":"  # "Usage:" -> "Usage::", shown as "Usage:"
                else:
                    if out[-1].strip():
                        out.append("")
                    out.append(" " * base + "::")
            if out[-1].strip():
                out.append("")
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
                out.append(lines[i])
                i += 1
            if out[-1].strip():
                out.append("")
            last = None
            continue
        if (
            last is not None
            and indent < _indent(out[last])
            and out[-1].strip()
            and not _LIST_ITEM.match(line.lstrip())
        ):
            out.append("")  # the paragraph after a list item's continuation lines
        out.append(line)
        last = len(out) - 1
        i += 1
    return out


_INLINE_CODE = re.compile(r"``[^`]+``|`[^`\n]+`")


def joined_suffixes(line: str) -> str:
    """`Change`s -> `Change`\\ s: reStructuredText wants no letter right after inline code ("\\ " joins)."""

    def join(match: re.Match[str]) -> str:
        after = line[match.end() : match.end() + 1]
        return match.group(0) + ("\\ " if after.isalnum() else "")

    return _INLINE_CODE.sub(join, line)


def process_docstring(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    if what in ("data", "attribute") and _is_its_types_docstring(obj, lines):
        lines[:] = []  # a constant without a doc of its own: not `dict`'s docstring
        return
    lines[:] = [joined_suffixes(line) for line in literal_blocks(lines)]


def _is_its_types_docstring(obj: Any, lines: list[str]) -> bool:
    import inspect

    doc = type(obj).__doc__
    own = inspect.cleandoc(doc).strip() if isinstance(doc, str) else ""
    return bool(own) and "\n".join(lines).strip() == own


def setup(app: Any) -> dict[str, Any]:
    app.setup_extension("sphinx.ext.autodoc")
    app.connect("autodoc-process-docstring", process_docstring, priority=400)  # before napoleon (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
