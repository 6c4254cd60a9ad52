"""Properties of the core data model over generated config trees."""

from __future__ import annotations

import copy
import pickle

import konfig
from hypothesis import example, given, settings
from hypothesis import strategies as st
from konfig import _config_dict, _paths

from .strategies import configs

examples = settings(max_examples=20)


@examples
@given(configs())
def test_deepcopy_gives_an_equal_config(cfg):
    assert copy.deepcopy(cfg) == cfg


@examples
@given(configs())
def test_pickle_gives_an_equal_config_with_sharing_kept(cfg):
    new = pickle.loads(pickle.dumps(cfg))
    assert new == cfg
    assert new.shared_a is new.holder.shared_b is new.holder["items"][0]


@examples
@given(configs())
def test_copy_resolves_to_equal_objects(cfg):
    assert konfig.resolve(copy.deepcopy(cfg)) == konfig.resolve(cfg)


@examples
@given(configs())
def test_copy_follows_its_own_refs(cfg):
    new = copy.deepcopy(cfg)
    new.n = cfg.n + 1
    assert konfig.resolve(new).ref_plain == cfg.n + 1
    assert konfig.resolve(cfg).ref_plain == cfg.n


@examples
@given(configs())
def test_repr_is_deterministic_across_copies(cfg):
    assert repr(copy.deepcopy(cfg)) == repr(cfg)


@examples
@given(configs())
def test_every_leaf_path_leads_back_to_its_value(cfg):
    for path, value in _config_dict.iter_leaves(cfg):
        assert konfig.get_by_path(cfg, path) is value


@examples
@given(configs())
def test_shared_node_resolves_to_one_object(cfg):
    resolved = konfig.resolve(cfg)
    assert resolved.shared_a is resolved.holder.shared_b is resolved.holder["items"][0]
    assert resolved.holder.ref_to_shared is resolved.shared_a


@examples
@given(
    st.lists(
        st.one_of(st.text(), st.integers(min_value=0, max_value=10**6)),
        max_size=5,
    )
)
@example(["layers", 0, "a\"b'c]"])
def test_parse_path_reads_back_format_path(keys):
    path = tuple(keys)
    if path and path[0] == "cfg":
        path = ("x", *path)  # A leading `cfg` is the root name.
    assert _paths.parse_path(_paths.format_path(path)) == path
