"""The maps of the layers: a package's modules bottom to top, and what each layer is for.

One source: each `tests/<package>/test_layering.py` holds its package's `LayerMap`s (its tests check the
import graph against them), CONTRIBUTING.md shows them as this module renders them, between the marker
comments `<!-- layer-map:NAME ... -->` and `<!-- /layer-map:NAME -->`, and docs/architecture.md includes
those sections of CONTRIBUTING.md.

    python tests/layer_map.py            # every map, as CONTRIBUTING.md shows it
    python tests/layer_map.py --write    # CONTRIBUTING.md's maps rewritten from the layering tests
    python tests/layer_map.py --check    # exit 1, naming each map CONTRIBUTING.md shows out of date

Standard library only: the light packages' isolated environments run their layering tests with it.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
WRITE_COMMAND = "python tests/layer_map.py --write"
# Where each map lives, by the name CONTRIBUTING.md's markers give it, in the order the file shows them.
SOURCES = {
    "konfig": "tests/konfig/test_layering.py",
    "kontext": "tests/kontext/test_layering.py",
    "ktyping": "tests/ktyping/test_layering.py",
    "kd": "tests/kd_train/test_layering.py",
    "kd.train": "tests/kd_train/test_layering.py",
    "kd.cli": "tests/kd_train/test_layering.py",
}
WIDTH = 110  # a rendered line's most columns: a docs page's code block shows about 120 at 1280 px
NAMES_ON_ONE_LINE = 48  # the most columns of names a purpose may start after


@dataclasses.dataclass(frozen=True)
class Layer:
    """Modules of one layer, by their names inside the package (`""` is its `__init__`), and their purpose.

    Layer(("_refs", "_ref_value"), "references (cfg.ref.a.b), their operators, ref_fn; a reference's value")
    """

    modules: tuple[str, ...]
    purpose: str = ""


@dataclasses.dataclass(frozen=True)
class LayerMap:
    """A package's layers, bottom to top; `lazy` names the modules `import <package>` leaves unloaded.

    LayerMap("kontext", (Layer(("_errors",), "the exceptions"), Layer(("",), "the public API")))
    """

    package: str  # the modules' dotted prefix, also the map's name in CONTRIBUTING.md: "konfig", "kd.train"
    layers: tuple[Layer, ...]
    lazy: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        listed = [name for layer in self.layers for name in layer.modules]
        twice = sorted({name for name in listed if listed.count(name) > 1})
        if twice:
            raise ValueError(f"{self.package}: listed in more than one place: {twice}")
        if not self.lazy <= set(listed):
            raise ValueError(f"{self.package}: lazy but in no layer: {sorted(self.lazy - set(listed))}")

    def dotted(self, name: str) -> str:
        """`"_refs"` -> `"konfig._refs"`; `""` -> `"konfig"`."""
        return f"{self.package}.{name}" if name else self.package

    def order(self) -> list[str]:
        """Every listed module's dotted name, bottom to top."""
        return [self.dotted(name) for layer in self.layers for name in layer.modules]

    def lazy_modules(self) -> set[str]:
        """The dotted names of the modules `import <package>` does not load."""
        return {self.dotted(name) for name in self.lazy}

    def layer_of(self, name: str) -> int:
        """The index of the layer that lists `name` (a name inside the package)."""
        for index, layer in enumerate(self.layers):
            if name in layer.modules:
                return index
        raise LookupError(f"{self.dotted(name)} is in no layer of {self.package}'s map: place it")


# ---------------------------------------------------------------------------------------------- rendering


def render(layer_map: LayerMap) -> str:
    """The map as a text block: one numbered layer a line (0 is the bottom), its purpose beside or below.

    The purposes start in one column; a layer whose names reach past it has its purpose on the lines below
    them. The column is the one that makes the block shortest (of those, the one farthest right).
    """
    names = [_names(layer_map, layer) for layer in layer_map.layers]
    widths = sorted({len(text) for text in names if len(text) <= NAMES_ON_ONE_LINE})
    blocks = [_layout(layer_map, names, width) for width in widths or [0]]
    lines = min(reversed(blocks), key=len)
    if layer_map.lazy:
        lines.append(f"* loaded on first use: import {layer_map.package} leaves it unloaded")
    return "\n".join(line.rstrip() for line in lines)


def _layout(layer_map: LayerMap, names: list[str], names_width: int) -> list[str]:
    """The lines of the map with the purposes in the column after `names_width` columns of names."""
    number_width = len(str(len(layer_map.layers) - 1))
    indent = number_width + 2
    column = indent + names_width + 2
    lines: list[str] = []
    for number, (layer, text) in enumerate(zip(layer_map.layers, names)):
        head = f"{number:<{number_width}}  "
        if len(text) <= names_width:
            lines += _wrap(layer.purpose, first=(head + text).ljust(column), rest=" " * column)
        else:
            lines += _pack(text.split("  "), first=head, rest=" " * indent)
            lines += _wrap(layer.purpose, first=" " * indent, rest=" " * indent) if layer.purpose else []
    return lines


def _names(layer_map: LayerMap, layer: Layer) -> str:
    return "  ".join((name or "__init__") + ("*" if name in layer_map.lazy else "") for name in layer.modules)


def _wrap(text: str, first: str, rest: str) -> list[str]:
    if not text:
        return [first]
    return textwrap.wrap(
        text,
        WIDTH,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _pack(words: list[str], first: str, rest: str) -> list[str]:
    """`words` two spaces apart, as many a line as fit in WIDTH."""
    lines = [first + words[0]]
    for word in words[1:]:
        if len(lines[-1]) + 2 + len(word) <= WIDTH:
            lines[-1] += "  " + word
        else:
            lines.append(rest + word)
    return lines


# -------------------------------------------------------------------------------------- CONTRIBUTING.md

_BLOCK = re.compile(
    r"<!-- layer-map:(?P<name>[\w.]+)\b[^\n]*-->\n.*?<!-- /layer-map:(?P=name) -->\n", re.DOTALL
)


def block(layer_map: LayerMap) -> str:
    """The map as CONTRIBUTING.md holds it: a fenced block between its two marker comments."""
    name = layer_map.package
    opening = f"<!-- layer-map:{name} from {SOURCES.get(name, 'its layering test')} ({WRITE_COMMAND}) -->"
    return f"{opening}\n```\n{render(layer_map)}\n```\n<!-- /layer-map:{name} -->\n"


def shown_blocks(text: str) -> dict[str, str]:
    """The maps a Markdown text shows, by name, each with its markers."""
    return {match["name"]: match.group(0) for match in _BLOCK.finditer(text)}


def stale_in_contributing(*maps: LayerMap) -> list[str]:
    """A sentence for each of `maps` that CONTRIBUTING.md does not show as rendered now."""
    return stale_blocks(CONTRIBUTING.read_text(encoding="utf-8"), maps)


def stale_blocks(text: str, maps: tuple[LayerMap, ...] | list[LayerMap]) -> list[str]:
    """A sentence for each of `maps` that the Markdown `text` does not show as rendered now."""
    shown = shown_blocks(text)
    stale = []
    for layer_map in maps:
        name = layer_map.package
        if name not in shown:
            stale.append(f"CONTRIBUTING.md has no block marked <!-- layer-map:{name} -->")
        elif shown[name] != block(layer_map):
            source = SOURCES.get(name, "its test")
            stale.append(f"CONTRIBUTING.md's map of {name} differs from {source}: run `{WRITE_COMMAND}`")
    return stale


def rewritten(text: str, maps: list[LayerMap]) -> str:
    """`text` with each map's block replaced by its rendering; every map must have its markers in `text`."""
    by_name = {layer_map.package: layer_map for layer_map in maps}
    missing = sorted(set(by_name) - set(shown_blocks(text)))
    if missing:
        raise LookupError(f"no <!-- layer-map:NAME --> ... <!-- /layer-map:NAME --> markers for {missing}")
    return _BLOCK.sub(
        lambda match: block(by_name[match["name"]]) if match["name"] in by_name else match[0], text
    )


def all_maps() -> list[LayerMap]:
    """Every map of SOURCES, read from its layering test module."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    maps = []
    for name, source in SOURCES.items():
        module = importlib.import_module(source.removesuffix(".py").replace("/", "."))
        found = [
            value for value in vars(module).values() if isinstance(value, LayerMap) and value.package == name
        ]
        if len(found) != 1:
            raise LookupError(f"{source} holds {len(found)} LayerMap of {name!r}, not one")
        maps += found
    return maps


def main(argv: list[str]) -> int:
    """The command line (this module's docstring); returns the exit code."""
    maps = all_maps()
    if argv == ["--write"]:
        text = CONTRIBUTING.read_text(encoding="utf-8")
        new = rewritten(text, maps)
        if new != text:
            CONTRIBUTING.write_text(new, encoding="utf-8")
        print("CONTRIBUTING.md: " + ("maps rewritten" if new != text else "maps already up to date"))
        return 0
    if argv == ["--check"]:
        stale = stale_in_contributing(*maps)
        print("\n".join(stale) or "CONTRIBUTING.md shows every map as rendered")
        return 1 if stale else 0
    if argv:
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    print("\n\n".join(f"{layer_map.package}\n{render(layer_map)}" for layer_map in maps))
    return 0


if __name__ == "__main__":
    # Run as a script, this file is `__main__`: the tests' `LayerMap` must be the class of `tests.layer_map`.
    sys.path.insert(0, str(ROOT))
    from tests import layer_map

    sys.exit(layer_map.main(sys.argv[1:]))
