"""Walks over a resolved config whose nodes share nodes (`{x: b, y: b}`, 30 levels: 2**30 paths).

Resolving builds each shared node once, so the resolved tree is as small as the config; the walks that
list every path stop at their limit with their own error, and kd's tracker flattens the config's JSON,
whose repeats konfig writes out only up to a limit.
"""

from __future__ import annotations

import konfig
import kontext
import pytest
from konfig._json_encode import EXPANSION_LIMIT


def shared_levels(levels: int) -> konfig.ConfigDict:
    node = konfig.ConfigDict(v=1)
    for _ in range(levels):
        node = konfig.ConfigDict(x=node, y=node)
    return node


def test_flattening_a_resolved_config_with_2_to_the_30_paths_stops_at_the_repeat_limit():
    resolved = konfig.resolve(shared_levels(30))
    with pytest.raises(ValueError, match="shared containers repeat more than 100,000 leaves"):
        kontext.flatten_with_path(resolved)
    with pytest.raises(kontext.GlobPathError, match="shared containers repeat more than 100,000 children"):
        kontext.GlobPath.from_str("**.v").match(resolved)


def test_the_trackers_flattening_of_such_a_config_is_bounded_by_its_json():
    from kd.writers._tracker import flatten_config

    flat = flatten_config(shared_levels(30).to_json())
    assert 0 < len(flat) < EXPANSION_LIMIT
