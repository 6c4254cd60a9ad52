"""Straight-line matching code for plain specs (names, numbers and `_`: the common case).

    >>> from ktyping._spec_cache import parse_spec
    >>> match = generate_function(parse_spec("b n 3"), "match(shape, cands, scope)", (), {})
    >>> match((2, 4, 3), [{"n": 4}], None)
    [{'n': 4, 'b': 2}]

`Spec.matcher` is such a function; `_array_types` generates one per array annotation
(`Spec.generate`), with a prelude that reads `.dtype` and `.shape` in the same function.
"""

from __future__ import annotations

from ._spec_tree import PENDING, dedup

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._spec import Spec

__all__ = ["MAX_GENERATED_DIMS", "generate_function"]

# Generated code grows with the spec (and takes ~1 ms per dim to compile): a spec of
# more dims is matched by the general algorithm instead.
MAX_GENERATED_DIMS = 64


def generate_function(spec: Spec, signature: str, prelude: tuple[str, ...], namespace: dict[str, Any]) -> Any:
    """Straight-line matching code for a plain spec (names, numbers and `_`: the common case).

    For `"b n 3"` the code unpacks the shape into locals, compares the fixed sizes, then
    looks each name up once in the candidate (one candidate is the usual case and gets
    its own branch). `prelude` lines run first and must bind `shape` (the array checks
    use it to read `.dtype` and `.shape` in the same function). Equivalent to
    `Spec.match`, about twice as fast.
    """
    assert spec.straight_line
    n = spec.ndim
    axes = ", ".join(f"s{i}" for i in range(n)) + ("," if n == 1 else "")
    lines = [f"def {signature}:", *prelude, f"    if len(shape) != {n}:", "        return _NO"]
    if n:
        lines.append(f"    {axes} = shape")
    for i, c in spec.fixed:
        lines += [f"    if s{i} != {c}:", "        return _NO"]
    first: dict[str, int] = {}
    for i, name in spec.named:
        if name in first:  # repeated name: the axes must agree with each other
            lines += [f"    if s{i} != s{first[name]}:", "        return _NO"]
        else:
            first[name] = i

    def bind(indent: str, on_conflict: str) -> list[str]:
        out = [f"{indent}new = None"]
        for name, i in first.items():
            out += [
                f"{indent}got = a.get({name!r})",
                f"{indent}if got is None:",
                f"{indent}    if new is None:",
                f"{indent}        new = {{{name!r}: s{i}}}",
                f"{indent}    else:",
                f"{indent}        new[{name!r}] = s{i}",
                f"{indent}elif got != s{i}:",
                f"{indent}    {on_conflict}",
            ]
        return out

    if not first:
        lines.append("    return cands")
    else:
        lines += [
            "    if len(cands) == 1:",
            "        a = cands[0]",
            "        if PENDING not in a:",
            *bind("            ", "return _NO"),
            "            if new is None:",
            "                return cands",
            "            return [{**a, **new}] if a else [new]",
            "    out = []",
            "    for a in cands:",
            "        if PENDING in a:",
            "            general(0, tuple(shape), 0, a, scope, out)",
            "            continue",
            *bind("        ", "continue"),
            "        if new is None:",
            "            out.append(a)",
            "        else:",
            "            out.append({**a, **new} if a else new)",
            "    return out if len(out) < 2 else dedup(out)",
        ]
    namespace = {
        **namespace,
        "_NO": [],
        "PENDING": PENDING,
        "general": spec.search.match_from,
        "dedup": dedup,
    }
    exec("\n".join(lines), namespace)  # code built from validated dim names and ints only
    return namespace[signature.split("(")[0]]
