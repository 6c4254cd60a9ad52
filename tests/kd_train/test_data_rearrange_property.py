"""kd.data.Rearrange agrees with NumPy reshapes and transposes worked out independently (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kd.data import _map_transforms

NAMES = "abcdef"


@st.composite
def _cases(draw):
    """(pattern, axes_lengths, input array, expected output) for a random permute-then-merge/split pattern."""
    sizes = draw(st.lists(st.integers(1, 3), min_size=1, max_size=5))
    names = list(NAMES[: len(sizes)])
    batch = draw(st.lists(st.integers(1, 3), max_size=2))  # dims under the ellipsis (if any)
    ellipsis = draw(st.booleans())
    if not ellipsis:
        batch = []

    # Input axes: some adjacent runs of names merged into (x y), which the pattern splits.
    in_groups: list[list[str]] = []
    i = 0
    while i < len(names):
        width = draw(st.integers(1, min(2, len(names) - i)))
        in_groups.append(names[i : i + width])
        i += width
    in_shape = [math.prod(sizes[names.index(n)] for n in g) for g in in_groups]

    # Output: a permutation of the names, with adjacent runs merged.
    order = draw(st.permutations(names))
    out_groups: list[list[str]] = []
    i = 0
    while i < len(order):
        width = draw(st.integers(1, min(3, len(order) - i)))
        out_groups.append(list(order[i : i + width]))
        i += width

    def side(groups):
        parts = [g[0] if len(g) == 1 else "(" + " ".join(g) + ")" for g in groups]
        return " ".join((["..."] if ellipsis else []) + parts)

    pattern = f"{side(in_groups)} -> {side(out_groups)}"
    # Lengths for every split name but the last of each input group (einops infers that one).
    axes_lengths = {n: sizes[names.index(n)] for g in in_groups if len(g) > 1 for n in g[:-1]}

    x = np.arange(math.prod(batch) * math.prod(in_shape)).reshape(*batch, *in_shape)
    # Expected, in NumPy: split every axis into its names, transpose to `order`, merge the output groups.
    nb = len(batch)
    split = x.reshape(*batch, *sizes)
    perm = list(range(nb)) + [nb + names.index(n) for n in order]
    moved = split.transpose(perm)
    out_shape = [math.prod(sizes[names.index(n)] for n in g) for g in out_groups]
    expected = moved.reshape(*batch, *out_shape)
    return pattern, axes_lengths, x, expected


@settings(max_examples=200, deadline=None)
@given(_cases())
def test_rearrange_equals_numpy_reshape_and_transpose(case):
    pattern, axes_lengths, x, expected = case
    tr = _map_transforms.Rearrange(key="x", pattern=pattern, axes_lengths=axes_lengths)
    out = tr.map({"x": x, "other": 1})
    assert out["other"] == 1
    assert out["x"].shape == expected.shape
    np.testing.assert_array_equal(out["x"], expected)
