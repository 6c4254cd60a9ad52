"""The README opens with a runnable example of at most ten lines."""

from __future__ import annotations

import pathlib

README = pathlib.Path(__file__).resolve().parents[2] / "packages" / "kontext" / "README.md"


def _first_python_block() -> str:
    text = README.read_text()
    return text.split("```python\n", 1)[1].split("```", 1)[0]


def test_readme_starts_with_the_example() -> None:
    assert README.read_text().split("\n\n", 1)[1].startswith("```python\n")


def test_readme_example_has_at_most_ten_lines_and_runs() -> None:
    block = _first_python_block()
    assert len(block.strip().splitlines()) <= 10
    exec(compile(block, str(README), "exec"), {})
