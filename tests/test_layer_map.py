"""`tests/layer_map.py`: the layer maps rendered as CONTRIBUTING.md shows them, its blocks kept current."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .layer_map import (
    CONTRIBUTING,
    ROOT,
    SOURCES,
    WIDTH,
    Layer,
    LayerMap,
    all_maps,
    block,
    render,
    rewritten,
    shown_blocks,
    stale_blocks,
)

TOY = LayerMap(
    "toy",
    (
        Layer(("_errors",), "the exceptions"),
        Layer(("_parse", "_walk"), "text -> parts; " + "a purpose long enough to wrap " * 5),
        Layer(("",), "the public API"),
    ),
    lazy=frozenset({"_walk"}),
)


def test_a_map_numbers_its_layers_from_the_bottom_with_each_purpose_beside_its_names() -> None:
    lines = render(TOY).splitlines()
    assert lines[0] == "0  _errors         the exceptions"
    assert lines[1].startswith("1  _parse  _walk*  text -> parts; a purpose long enough to wrap")
    assert lines[2] == " " * len("1  _parse  _walk*  ") + lines[2].lstrip()  # wrapped under the purpose
    assert lines[-2] == "2  __init__        the public API"
    assert lines[-1] == "* loaded on first use: import toy leaves it unloaded"
    assert max(len(line) for line in lines) <= WIDTH


def test_the_order_is_every_module_bottom_to_top_by_its_dotted_name() -> None:
    assert TOY.order() == ["toy._errors", "toy._parse", "toy._walk", "toy"]
    assert TOY.lazy_modules() == {"toy._walk"}
    assert TOY.layer_of("_walk") == 1


def test_a_module_listed_twice_is_refused() -> None:
    with pytest.raises(ValueError, match=r"toy: listed in more than one place: \['_errors'\]"):
        LayerMap("toy", (Layer(("_errors",)), Layer(("_errors", ""))))


def test_writing_replaces_only_the_marked_block_and_a_changed_map_is_stale() -> None:
    text = "# Notes\n\n" + block(TOY) + "\nAfter the map.\n"
    changed = LayerMap("toy", (*TOY.layers, Layer(("cli",), "the command line")), lazy=TOY.lazy)
    assert stale_blocks(text, [TOY]) == []
    assert stale_blocks(text, [changed]) == [
        "CONTRIBUTING.md's map of toy differs from its test: run `python tests/layer_map.py --write`"
    ]
    written = rewritten(text, [changed])
    assert written == "# Notes\n\n" + block(changed) + "\nAfter the map.\n"
    assert stale_blocks(written, [changed]) == []


def test_contributing_shows_exactly_the_maps_of_the_layering_tests() -> None:
    maps = all_maps()
    assert [layer_map.package for layer_map in maps] == list(SOURCES)
    assert list(shown_blocks(CONTRIBUTING.read_text(encoding="utf-8"))) == list(SOURCES)
    assert stale_blocks(CONTRIBUTING.read_text(encoding="utf-8"), maps) == []


def test_the_check_command_says_the_maps_are_current() -> None:
    proc = subprocess.run(
        [sys.executable, "tests/layer_map.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert (proc.returncode, proc.stdout) == (0, "CONTRIBUTING.md shows every map as rendered\n")
