"""Every code block of the documentation site (docs/**/*.md) runs as written and shows what it claims.

Python blocks: the blocks of one page run in order in one fresh module (a page is one session, as a reader
types it), statement by statement, with the README runner's claims checked
(tests/integration/test_readme_examples.py): `expr  # -> value`, `stmt  # raises Name: text`,
`print(...)  # prints:` and the comment lines after it. `tempfile.mkdtemp()` makes its folder under the
test's temporary folder; the working directory is the repository root.

Shell blocks (```console): each `$ command` line runs through bash in a temporary folder holding the
repository's `examples/` (the commands' relative paths, `runs/...` workdirs included, stay in there), with
this environment's commands (`kd-train`, `python`) first on PATH; a continued line (ending in `\\`) joins
the next. The lines after a command, up to the next `$`, are its output as the page shows it: each must be
a line of what the command printed (stdout then stderr), in that order, `...` standing for anything.
A command must exit 0 unless its output ends with `[exit N]`.

A block directly after `<!-- not-run: why -->` is not run; `test_not_run_blocks_say_why` keeps each
reason a sentence, and `test_blocks_counted` reports how many run.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib.util
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(
    page for page in DOCS.rglob("*.md") if not {"_build", "generated"} & set(page.relative_to(DOCS).parts)
)
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)(?P<lang>[\w{}-]*)\s*$")
EXIT = re.compile(r"^\[exit (?P<code>\d+)\]$")


def _readme_runner() -> types.ModuleType:
    """tests/integration/test_readme_examples.py: its block parser's patterns and its claim checker."""
    path = ROOT / "tests" / "integration" / "test_readme_examples.py"
    spec = importlib.util.spec_from_file_location("_kd_docs_readme_claims", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their class's module up
    spec.loader.exec_module(module)
    return module


RUNNER = _readme_runner()


@dataclasses.dataclass(frozen=True)
class Block:
    """One fenced block of a page; `readme` is the page (the README runner's name for it)."""

    readme: pathlib.Path
    line: int  # 1-based line of the first code line
    lang: str
    code: str
    skip_reason: str | None

    @property
    def id(self) -> str:
        return f"{self.readme.relative_to(DOCS)}:L{self.line}"


def page_blocks(page: pathlib.Path) -> list[Block]:
    """The fenced python and console blocks of `page`, dedented, each with its not-run reason if any."""
    lines = page.read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        indent, fence, lang = len(match["indent"]), match["fence"], match["lang"]
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == fence)
        if lang in ("python", "console"):
            before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            reason = RUNNER.NOT_RUN.search(before)
            code = "\n".join(line[indent:] for line in lines[i + 1 : end]) + "\n"
            blocks.append(Block(page, i + 2, lang, code, reason and reason["why"]))
        i = end + 1
    return blocks


BLOCKS = [block for page in PAGES for block in page_blocks(page)]
PYTHON_PAGES = [
    page for page in PAGES if any(b.lang == "python" and b.skip_reason is None for b in page_blocks(page))
]
CONSOLE = [block for block in BLOCKS if block.lang == "console" and block.skip_reason is None]


# ---------------------------------------------------------------------------------------------- python


def run_python_page(page: pathlib.Path) -> None:
    """Runs the page's python blocks in order in one fresh module, checking their claims."""
    module = types.ModuleType(f"docs_{page.stem.replace('-', '_')}")
    sys.modules[module.__name__] = module  # dataclasses and typing look classes' modules up there
    try:
        for block in page_blocks(page):
            if block.lang != "python" or block.skip_reason is not None:
                continue
            tree = ast.parse(block.code, str(page))
            ast.increment_lineno(tree, block.line - 1)
            lines = block.code.splitlines()
            for stmt in tree.body:
                RUNNER._run_statement(stmt, block, lines, module.__dict__)
    finally:
        del sys.modules[module.__name__]


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=[str(page.relative_to(DOCS)) for page in PYTHON_PAGES])
def test_page_python_blocks_run_and_show_what_they_claim(
    page: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    saved_path = list(sys.path)
    try:
        with contextlib.redirect_stdout(io.StringIO()) as out:  # the page's own prints, kept for a failure
            run_python_page(page)
    except BaseException:
        print(out.getvalue())
        raise
    finally:
        sys.path[:] = saved_path


# ---------------------------------------------------------------------------------------------- console


@dataclasses.dataclass(frozen=True)
class Command:
    line: int
    text: str
    shown: tuple[str, ...]  # output lines the page shows
    exit_code: int


def console_commands(block: Block) -> list[Command]:
    """The `$ ` commands of a console block (continuation lines joined) and the output shown after each."""
    commands: list[Command] = []
    lines = block.code.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        assert line.startswith("$ "), f"{block.id}: line {block.line + i} is output before any command"
        start, text = i, line[2:]
        while text.endswith("\\"):
            i += 1
            text = text[:-1] + " " + lines[i].strip()
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        exit_code = 0
        if shown and (m := EXIT.match(shown[-1].strip())):
            exit_code, shown = int(m["code"]), shown[:-1]
        commands.append(Command(block.line + start, text, tuple(s for s in shown if s.strip()), exit_code))
    return commands


def _line_matches(actual: str, shown: str) -> bool:
    parts = [re.escape(part) for part in shown.strip().split("...")]
    return re.fullmatch(".*".join(parts), actual.strip()) is not None


def shown_lines_missing(output: str, shown: tuple[str, ...]) -> list[str]:
    """The shown lines not found, in order, among the output's lines."""
    actual = output.splitlines()
    at, missing = 0, []
    for line in shown:
        found = next((k for k in range(at, len(actual)) if _line_matches(actual[k], line)), None)
        if found is None:
            missing.append(line)
        else:
            at = found + 1
    return missing


@pytest.fixture(scope="module")
def console_folder(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    folder = tmp_path_factory.mktemp("docs_console")
    shutil.copytree(ROOT / "examples", folder / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.mark.parametrize("block", CONSOLE, ids=[block.id for block in CONSOLE])
def test_console_block_runs_and_prints_what_it_shows(block: Block, console_folder: pathlib.Path) -> None:
    env = dict(os.environ, PATH=f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.update(JAX_PLATFORMS="cpu", PYTHONUNBUFFERED="1")
    env.pop("PYTHONPATH", None)
    for command in console_commands(block):
        where = f"{block.readme.relative_to(ROOT)}:{command.line}: $ {command.text}"
        done = subprocess.run(
            ["bash", "-c", command.text],
            cwd=console_folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        output = done.stdout + done.stderr
        assert done.returncode == command.exit_code, f"{where}\nexit {done.returncode}\n{output}"
        missing = shown_lines_missing(output, command.shown)
        assert not missing, f"{where}\ndoes not print {missing}; it printed:\n{output}"


# ---------------------------------------------------------------------------------------------- the rules


def test_not_run_blocks_say_why() -> None:
    for block in BLOCKS:
        if block.skip_reason is not None:
            assert len(block.skip_reason.split()) >= 4, f"{block.id}: say why it cannot run"


def test_error_comments_are_checked_claims() -> None:
    """`f()  # KeyError: ...` would go unchecked; it must read `# raises KeyError: ...`."""
    for block in BLOCKS:
        if block.lang != "python" or block.skip_reason is not None:
            continue
        for number, line in enumerate(block.code.splitlines(), block.line):
            comment = RUNNER._trailing_comment(line)
            if re.search(r"\b[A-Z]\w*Error\b", comment):
                assert RUNNER.RAISES.search(comment), (
                    f"{block.id}: line {number} names an error without `# raises`"
                )


def test_every_page_is_in_the_navigation() -> None:
    """Sphinx warns about a page no toctree lists (and the strict build fails); this says which, sooner."""
    listed = set()
    for page in PAGES:
        for toctree in re.findall(r"```\{toctree\}\n(.*?)```", page.read_text(), re.DOTALL):
            for entry in toctree.splitlines():
                if entry.strip() and not entry.startswith(":"):
                    listed.add((page.parent / entry.strip()).resolve().with_suffix(".md"))
    unlisted = [page for page in PAGES if page.name != "index.md" or page.parent != DOCS]
    assert [p for p in unlisted if p.resolve() not in listed] == []


def test_blocks_counted() -> None:
    """How many blocks run and how many are marked not-run (`pytest -s` prints it); the pages run some."""
    run = [block for block in BLOCKS if block.skip_reason is None]
    python = sum(block.lang == "python" for block in run)
    console = sum(len(console_commands(block)) for block in run if block.lang == "console")
    print(
        f"docs: {len(PAGES)} pages; {python} python blocks and {len(CONSOLE)} console blocks "
        f"({console} commands) run; {len(BLOCKS) - len(run)} blocks marked not-run"
    )
    assert python > 0 and console > 0


def test_shown_output_is_checked() -> None:
    """A shown line the command did not print fails: the console checker is not vacuous."""
    assert (
        shown_lines_missing("step 1 | l2 0.5\nstep 2 | l2 0.4\n", ("step ... | l2 ...", "step 2 ...")) == []
    )
    assert shown_lines_missing("step 2 | l2 0.4\nstep 1 | l2 0.5\n", ("step 2 ...", "step 3 ...")) == [
        "step 3 ..."
    ]
