"""`platform="h100=8"` read into an accelerator kind, a count per process and a TPU topology.

    kd.xm.parse_platform("h100=8")   # Platform(kind='h100', count=8, topology=None)
    kd.xm.parse_platform("jf=2x2")   # Platform(kind='jf', count=4, topology='2x2')
    kd.xm.parse_platform("cpu")      # Platform(kind='cpu', count=0, topology=None)

The kinds are XManager's lower-case names; a typo is a `PlatformError` naming the nearest ones.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re

from ._errors import PlatformError

CPU = "cpu"

# GPU kinds as XManager names them (lower case); a count of GPUs per process follows `=`.
GPU_KINDS = frozenset(
    {"p4", "p100", "t4", "l4", "v100", "a10", "a30", "a40", "a100", "a100_80gib", "h100", "h200", "b200"}
)
# TPU kinds: the public generations and the short names Kauldron's configs use (jf=v2, df=v3, pf=v4, ...);
# a topology (chips along each axis, `2x2`, `4x4x4`) follows `=`.
TPU_KINDS = frozenset({"v2", "v3", "v4", "v5e", "v5p", "v6e", "jf", "df", "pf", "vlp", "vf", "gl"})

_FAMILIES = {"gpu": GPU_KINDS, "tpu": TPU_KINDS}
_FAMILY_EXAMPLES = {"gpu": "a100=1", "tpu": "v4=2x2"}
_TOPOLOGY = re.compile(r"[1-9][0-9]*(x[1-9][0-9]*)+")


@dataclasses.dataclass(frozen=True)
class Platform:
    """What one process of a job runs on: `kind` (`"cpu"`, `"a100"`, `"jf"`), `count` accelerators (0 for
    `cpu`; for a TPU the chips of its `topology`)."""

    kind: str
    count: int
    topology: str | None = None

    @property
    def is_gpu(self) -> bool:
        return self.kind in GPU_KINDS

    @property
    def is_tpu(self) -> bool:
        return self.kind in TPU_KINDS

    def __str__(self) -> str:
        if self.kind == CPU:
            return CPU
        return f"{self.kind}={self.topology or self.count}"


def parse_platform(spec: str) -> Platform:
    """`"cpu"`, `"a100"` (one GPU), `"h100=8"` (GPUs per process), `"jf=2x2"` (a TPU topology) -> `Platform`.

    A malformed spec raises `PlatformError` naming the spec, what was expected and the nearest kind.
    Usage: `parse_platform("a100=2").count == 2`.
    """
    if not isinstance(spec, str):
        raise PlatformError(
            f"platform={spec!r}: expected a string such as 'cpu', 'a100=1' or 'jf=2x2' (got {type(spec).__name__})"
        )
    text = spec.strip().lower()
    kind, has_value, value = text.partition("=")
    kind, value = kind.strip(), value.strip()
    if kind == CPU:
        if has_value:
            raise PlatformError(f"platform={spec!r}: 'cpu' takes no count; write platform='cpu'")
        return Platform(CPU, 0)
    if kind in GPU_KINDS:
        if not has_value:
            return Platform(kind, 1)
        if not value.isdigit() or int(value) < 1:
            example = f"{kind}={_leading_count(value)}"
            raise PlatformError(
                f"platform={spec!r}: a GPU platform is KIND=COUNT with COUNT >= 1 GPUs per process, "
                f"e.g. {example!r}; got {value!r}"
            )
        return Platform(kind, int(value))
    if kind in TPU_KINDS:
        if not _TOPOLOGY.fullmatch(value):
            raise PlatformError(
                f"platform={spec!r}: a TPU platform is KIND=TOPOLOGY (chips along each axis), "
                f"e.g. '{kind}=2x2'; got {value!r}" + ("" if has_value else " (no topology)")
            )
        return Platform(kind, math.prod(int(n) for n in value.split("x")), value)
    if kind in _FAMILIES:  # "tpu=2x2", "gpu=4": the kind is the generation
        raise PlatformError(
            f"platform={spec!r}: name the {kind.upper()}'s kind, one of {', '.join(sorted(_FAMILIES[kind]))} "
            f"(e.g. {_FAMILY_EXAMPLES[kind]!r})"
        )
    raise PlatformError(f"platform={spec!r}: unknown accelerator {kind!r}{_did_you_mean(kind)}")


def _leading_count(value: str) -> int:
    """`"2x2"` -> 4, `"eight"` -> 1: the example count an error message proposes."""
    if _TOPOLOGY.fullmatch(value):
        return math.prod(int(n) for n in value.split("x"))
    return 1


def _did_you_mean(kind: str) -> str:
    known = sorted({CPU} | GPU_KINDS | TPU_KINDS)
    close = difflib.get_close_matches(kind, known, n=2, cutoff=0.5)
    hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ";"
    return f"{hint} Known: {', '.join(known)} (a GPU takes =COUNT, a TPU =TOPOLOGY such as 2x2)"
