"""Every name the shipped surfaces admit (kd's, and those kd declares for optax, flax and jax; konfig's
functools.partial), called under safe mode's audit hook with fuzzed arguments, never launches a program,
writes or removes a file, opens a socket, reads outside the installed code or imports from outside it: the
audit hook records no refusal. What the calls return or raise otherwise does not matter here."""

from __future__ import annotations

import importlib

import hypothesis.strategies as st
import jax
import konfig
import pytest
from hypothesis import HealthCheck, given, settings
from konfig import _audit
from konfig._admission import _named_objects

SHIPPED = ("kd", "optax", "flax", "jax", "functools")


def admitted_names() -> dict[str, object]:
    """`{"module:name": object}` for every callable a shipped surface admits (negated entries taken out)."""
    named: dict[str, object] = {}
    refused: set[int] = set()
    for package in SHIPPED:
        for entry in konfig.declared_surface(package):
            module_name, _, name = entry.lstrip("!").partition(":")
            module = importlib.import_module(module_name)
            for obj in _named_objects(module, name):
                if entry.startswith("!"):
                    refused.add(id(obj))
                elif callable(obj):
                    label = f"{module_name}:{getattr(obj, '__name__', name) if '*' in name else name}"
                    named.setdefault(label, obj)
    return {label: obj for label, obj in sorted(named.items()) if id(obj) not in refused}


NAMES = admitted_names()
ARGUMENT = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from(["", "x", "batch.x", "params.**", "/tmp/kd_surface_probe", "relu", "adam", "S/16"]),
    st.lists(st.integers(0, 3), max_size=3),
)


def test_the_shipped_surfaces_admit_hundreds_of_names_and_none_of_the_dangerous_ones():
    assert len(NAMES) > 500, len(NAMES)
    dangerous = ("kd.xm", "kd.cli", "kd._atomic", "kd.export", "kd.inspect", "kd.kauldron_alias", "flax.io")
    assert not [n for n in NAMES if n.startswith(dangerous)]
    assert "kd.evals:evaluate_checkpoints" not in NAMES and "jax.numpy:load" not in NAMES


@pytest.fixture(scope="module", autouse=True)
def _backend_started():
    jax.devices()  # the backend starts once, outside the test, as it does before a run's resolve


# The names in groups (a hypothesis test per group, each example drawing arguments for every name of it): one
# parametrized case per name would stack hypothesis' settings once per case under the CI profile.
GROUP = 40
GROUPS = [sorted(NAMES)[i : i + GROUP] for i in range(0, len(NAMES), GROUP)]


@pytest.mark.parametrize("group", GROUPS, ids=[f"{g[0]}..{g[-1]}" for g in GROUPS])
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_no_admitted_name_launches_writes_connects_or_imports_from_outside(group, data):
    refusals = []
    for name in group:
        args = data.draw(st.lists(ARGUMENT, max_size=2), label=f"{name} args")
        kwargs = data.draw(st.dictionaries(st.sampled_from(["name", "x"]), ARGUMENT, max_size=1), label=f"{name} kwargs")
        token = _audit.enter()
        try:
            try:
                NAMES[name](*args, **kwargs)
            except konfig.DisallowedTargetError:
                pass  # recorded below, with what it was
            except Exception:
                pass
            refusal = _audit.take_refusal()
        finally:
            _audit.leave(token)
        if refusal is not None:
            refusals.append(f"{name}(*{args!r}, **{kwargs!r}): {refusal}")
    assert refusals == []
