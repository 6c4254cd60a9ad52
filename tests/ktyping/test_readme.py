"""The README's opening example runs and fails where it says it fails."""

import re
from pathlib import Path

import ktyping
import pytest

README = Path(__file__).resolve().parents[2] / "packages" / "ktyping" / "README.md"


def first_python_block() -> list[str]:
    match = re.search(r"```python\n(.*?)```", README.read_text(), re.S)
    assert match, "README has no python block"
    return match.group(1).rstrip("\n").splitlines()


def test_readme_starts_with_an_example_of_at_most_ten_lines() -> None:
    assert README.read_text().split("\n", 2)[2].startswith("```python\n")
    assert len(first_python_block()) <= 10


def test_readme_example_fails_on_its_last_line_and_passes_with_matching_shapes() -> None:
    *body, last = first_python_block()
    namespace: dict = {}
    exec("\n".join(body), namespace)
    with pytest.raises(ktyping.KTypeCheckError, match=r"argument idx .* but b = 2"):
        exec(last, namespace)
    np = namespace["np"]
    assert namespace["gather"](np.zeros((2, 5, 3)), np.zeros((2, 4), int)).shape == (2, 4, 3)
