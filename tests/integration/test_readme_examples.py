"""Every ```python block of every package README runs as written and shows what it claims.

Each block runs in a fresh module, statement by statement, from the repository root (where a
reader with a checkout runs it). A comment at the end of a top-level statement is a claim:

- `expr  # -> expected` (or `# some words -> expected`): `expr == expected`, both evaluated in
  the block's namespace (floats compare to a relative 1e-6: float32 results vs decimal text);
  on `x = ...` the claim is about `x`;
- `stmt  # raises Name: text`: `stmt` raises an exception of class `Name` (or a subclass)
  whose message contains `text` (`...` in `text` stands for anything);
- `print(...)  # prints:` followed by comment lines: those lines are exactly what is printed.

A block directly preceded by `<!-- not-run: why -->` is skipped (it needs a command line,
say); `test_skipped_blocks_say_why` keeps that honest.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import io
import math
import pathlib
import re
import sys
import tokenize
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
READMES = sorted(ROOT.glob("packages/*/README.md"))
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(?P<why>.*?)\s*-->")
RESULT = re.compile(r"->\s*(?P<expected>.+?)\s*$")
RAISES = re.compile(r"#\s*raises\s+(?P<name>\w+)(?::\s*(?P<text>.*?))?\s*$")
PRINTS = re.compile(r"#\s*prints:\s*$")


@dataclasses.dataclass(frozen=True)
class Block:
    readme: pathlib.Path
    line: int  # 1-based line of the first code line
    code: str
    skip_reason: str | None

    @property
    def id(self) -> str:
        return f"{self.readme.parent.name}:L{self.line}"


def python_blocks(readme: pathlib.Path) -> list[Block]:
    """The fenced ```python blocks of `readme`, dedented (blocks may sit inside list items)."""
    lines = readme.read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("```"):
            indent = len(lines[i]) - len(lines[i].lstrip())
            start = i + 1
            end = next(j for j in range(start, len(lines)) if lines[j].strip() == "```")
            if stripped == "```python":
                before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
                match = NOT_RUN.search(before)
                code = "\n".join(line[indent:] for line in lines[start:end]) + "\n"
                blocks.append(Block(readme, start + 1, code, match and match["why"]))
            i = end + 1
        else:
            i += 1
    return blocks


BLOCKS = [block for readme in READMES for block in python_blocks(readme)]
RUNNABLE = [block for block in BLOCKS if block.skip_reason is None]


def _trailing_comment(source_line: str) -> str:
    """The comment at the end of one source line ('' if none), found by tokenizing the line."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source_line).readline))
    except (tokenize.TokenError, SyntaxError):
        return ""
    return next((tok.string for tok in reversed(tokens) if tok.type == tokenize.COMMENT), "")


def _expected_output(lines: list[str], after: int) -> str:
    """The comment lines right after line index `after`, without their '# ' prefix."""
    out = []
    for line in lines[after + 1 :]:
        if not line.startswith("#"):
            break
        out.append(line[2:] if line.startswith("# ") else line[1:])
    return "\n".join(out)


def _equal(value: object, expected: object) -> bool:
    if isinstance(expected, float) and not isinstance(value, (str, bytes)) and hasattr(value, "__float__"):
        return math.isclose(float(value), expected, rel_tol=1e-6)  # float32 results vs decimal text
    return bool(value == expected)


def _message_matches(message: str, pattern: str) -> bool:
    parts = [re.escape(part.strip()) for part in pattern.split("...")]
    return re.search(".*".join(parts), message, re.DOTALL) is not None


def run_block(block: Block) -> None:
    """Executes `block` statement by statement in a fresh module, checking its claims.

    The module is in `sys.modules` while the block runs (dataclasses and typing look classes'
    modules up there) and is compiled without this file's `from __future__ import annotations`.
    """
    filename = str(block.readme)
    tree = ast.parse(block.code, filename)
    ast.increment_lineno(tree, block.line - 1)
    lines = block.code.splitlines()
    module = types.ModuleType("readme_example")
    namespace = module.__dict__
    previous = sys.modules.get(module.__name__)
    sys.modules[module.__name__] = module
    try:
        for stmt in tree.body:
            _run_statement(stmt, block, lines, namespace)
    finally:
        if previous is None:
            del sys.modules[module.__name__]
        else:
            sys.modules[module.__name__] = previous


def _compile(node: ast.AST, filename: str, mode: str) -> types.CodeType:
    return compile(node, filename, mode, dont_inherit=True)


def _run_statement(stmt: ast.stmt, block: Block, lines: list[str], namespace: dict[str, object]) -> None:
    filename = str(block.readme)
    comment = _trailing_comment(lines[stmt.end_lineno - block.line])
    where = f"{block.readme.parent.name}/README.md:{stmt.lineno}"
    code = _compile(ast.Module([stmt], type_ignores=[]), filename, "exec")
    if m := RAISES.search(comment):
        with pytest.raises(Exception) as info:
            exec(code, namespace)
        assert any(cls.__name__ == m["name"] for cls in type(info.value).__mro__), (
            f"{where}: raised {type(info.value).__name__}, the README says {m['name']}"
        )
        if m["text"]:
            assert _message_matches(str(info.value), m["text"]), (
                f"{where}: message {str(info.value)!r} does not match {m['text']!r}"
            )
    elif m := RESULT.search(comment):
        if isinstance(stmt, ast.Expr):
            value = eval(_compile(ast.Expression(stmt.value), filename, "eval"), namespace)
        else:  # `x = f()  # -> 3` claims the value of the one target after the assignment
            assert isinstance(stmt, ast.Assign) and len(stmt.targets) == 1, f"{where}: `->` on a statement"
            exec(code, namespace)
            value = eval(ast.unparse(stmt.targets[0]), namespace)
        expected = eval(m["expected"], namespace)
        assert _equal(value, expected), f"{where}: got {value!r}, the README says {m['expected']}"
    elif PRINTS.search(comment):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(code, namespace)
        expected = _expected_output(lines, stmt.end_lineno - block.line)
        assert out.getvalue().rstrip("\n") == expected, f"{where}: printed\n{out.getvalue()}"
    else:
        exec(code, namespace)


@pytest.mark.parametrize("block", RUNNABLE, ids=[block.id for block in RUNNABLE])
def test_readme_block_runs_and_shows_what_it_claims(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    run_block(block)


@pytest.mark.parametrize("readme", READMES, ids=[readme.parent.name for readme in READMES])
def test_readme_starts_with_a_short_runnable_example(readme: pathlib.Path) -> None:
    text = readme.read_text()
    head = text.split("\n## ", 1)[0]
    first = python_blocks(readme)[0]
    assert f"```python\n{first.code}```" in head, "the first block is not before the first section"
    assert first.skip_reason is None
    assert len(first.code.strip().splitlines()) <= 12


def test_error_comments_are_checked_claims() -> None:
    """`f()  # KeyError: ...` would go unchecked; it must read `# raises KeyError: ...`."""
    for block in RUNNABLE:
        for number, line in enumerate(block.code.splitlines(), block.line):
            comment = _trailing_comment(line)
            if re.search(r"\b[A-Z]\w*Error\b", comment):
                assert RAISES.search(comment), f"{block.id}: line {number} names an error without `# raises`"


def test_skipped_blocks_say_why() -> None:
    for block in BLOCKS:
        if block.skip_reason is not None:
            assert len(block.skip_reason.split()) >= 3, f"{block.id}: say why it cannot run"


def test_result_comments_are_checked() -> None:
    """A wrong `# ->` claim fails: the checker is not vacuous."""
    block = Block(ROOT / "packages" / "konfig" / "README.md", 1, "x = 1 + 1\nx  # -> 3\n", None)
    with pytest.raises(AssertionError, match="the README says 3"):
        run_block(block)


def test_raises_comments_are_checked() -> None:
    block = Block(ROOT / "packages" / "konfig" / "README.md", 1, "{}['a']  # raises KeyError: 'b'\n", None)
    with pytest.raises(AssertionError, match="does not match"):
        run_block(block)


def test_result_comments_on_assignments_are_checked() -> None:
    block = Block(ROOT / "packages" / "konfig" / "README.md", 1, "x = 1 + 1  # -> 3\n", None)
    with pytest.raises(AssertionError, match="the README says 3"):
        run_block(block)


def test_prints_comments_are_checked() -> None:
    block = Block(ROOT / "packages" / "konfig" / "README.md", 1, "print('a')  # prints:\n# b\n", None)
    with pytest.raises(AssertionError, match="printed"):
        run_block(block)
