"""`_targets`, the one walk from `"module:qualname"` to an object: importing, or finding without running code."""

from __future__ import annotations

import sys
import types

import konfig
import pytest
from konfig._targets import (
    NOT_IMPORTED,
    NoAttribute,
    find_imported,
    import_target,
    load_target,
    plain_attribute,
    static_attribute,
)


class _Recording:
    """A class whose property records each read: finding must never run it."""

    reads: list[str] = []

    @property
    def value(self):
        self.reads.append("value")
        return 1

    @staticmethod
    def make():
        return "made"


@pytest.fixture
def fake_module():
    module = types.ModuleType("konfig_targets_fake")
    module.Recording = _Recording
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


def test_without_a_colon_the_last_name_is_an_attribute_when_no_module_has_the_whole_name():
    assert import_target("os.path.join") is sys.modules["os"].path.join
    assert load_target("os.path") is sys.modules["os.path"]


def test_a_module_part_that_is_a_class_shifts_into_the_attributes():
    # the command line's `py::json.JSONDecoder.decode(...)` writes `json.JSONDecoder:decode`
    import json

    assert load_target("json.JSONDecoder:decode") is json.JSONDecoder.decode
    assert load_target("os.path.sep") == sys.modules["os"].path.sep
    with pytest.raises(
        konfig.TargetNotFoundError, match=r"json has no attribute 'JSONDecodr'.*'JSONDecoder'"
    ):
        load_target("json.JSONDecodr:decode")
    with pytest.raises(konfig.TargetNotFoundError, match=r"Cannot import module 'no_such_top\.part'"):
        load_target("no_such_top.part:x")


def test_a_missing_attribute_names_the_closest_public_one():
    with pytest.raises(konfig.TargetNotFoundError, match=r"os\.path has no attribute 'jion'.*'join'"):
        load_target("os.path:jion")


def test_admit_sees_the_module_and_each_object_on_the_way():
    seen: list[object] = []
    record = seen.append
    found = load_target("os:path.join", lambda m: record(m) or m, lambda o: record(o) or o)
    assert seen == [sys.modules["os"], sys.modules["os.path"], found]


def test_finding_never_imports_a_module():
    assert "konfig_targets_never_imported" not in sys.modules
    assert find_imported("konfig_targets_never_imported:x") is NOT_IMPORTED
    assert "konfig_targets_never_imported" not in sys.modules


def test_finding_stops_at_a_lazy_module_attribute(fake_module):
    fake_module.__getattr__ = lambda name: pytest.fail("a module __getattr__ ran")
    assert find_imported("konfig_targets_fake:lazy") is NOT_IMPORTED


def test_finding_a_missing_attribute_says_which_object_lacks_it(fake_module):
    with pytest.raises(NoAttribute) as info:
        find_imported("konfig_targets_fake:Recording.nope")
    assert (info.value.owner, info.value.name) == (_Recording, "nope")


def test_static_reads_return_descriptors_without_running_them(fake_module):
    _Recording.reads.clear()
    assert isinstance(find_imported("konfig_targets_fake:Recording.value"), property)
    assert isinstance(static_attribute(_Recording(), "value"), property)
    assert _Recording.reads == []


def test_plain_reads_give_usable_functions_and_refuse_descriptors_and_private_names(fake_module):
    assert find_imported("konfig_targets_fake:Recording.make", plain_attribute)() == "made"
    for name in ("konfig_targets_fake:Recording.value", "konfig_targets_fake:Recording.__init__"):
        with pytest.raises(NoAttribute):
            find_imported(name, plain_attribute)
    assert _Recording.reads == []


@pytest.fixture
def refusing_module():
    """A module whose own `__getattr__` explains why a name is gone (kd.data.tf does so)."""
    module = types.ModuleType("konfig_targets_refusing")
    module.Kept = _Recording

    def __getattr__(name):
        raise AttributeError(f"{name} was removed; use Kept instead")

    module.__getattr__ = __getattr__
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


def test_resolving_a_name_a_module_refuses_gives_the_modules_own_explanation(refusing_module):
    with pytest.raises(
        konfig.TargetNotFoundError, match=r"konfig_targets_refusing\.Gone: Gone was removed; use Kept"
    ):
        import_target("konfig_targets_refusing:Gone")


def test_capturing_a_name_a_module_refuses_gives_the_modules_own_explanation(refusing_module):
    with pytest.raises(konfig.TargetNotFoundError, match=r"Gone was removed; use Kept instead"):
        with konfig.imports():
            import konfig_targets_refusing

            konfig_targets_refusing.Gone()


def test_a_missing_name_is_never_suggested_for_itself(fake_module):
    with pytest.raises(konfig.TargetNotFoundError) as info:
        import_target(f"{fake_module.__name__}:Recordin")
    assert "did you mean 'Recording'" in str(info.value)


def test_a_class_with_its_own_getattr_still_gets_the_near_miss(fake_module):
    class Box:
        value = 1

        def __getattr__(self, name):
            raise AttributeError(name)

    fake_module.Box = Box
    with pytest.raises(konfig.TargetNotFoundError, match=r"did you mean 'value'"):
        import_target(f"{fake_module.__name__}:Box.valeu")
