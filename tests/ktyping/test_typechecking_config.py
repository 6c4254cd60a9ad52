# ruff: noqa: F821 - single-name shape specs like Float["n"] are not forward references
"""Switching checks off globally, per block and per module (Kauldron's names)."""

import ktyping
import numpy as np
import pytest
from ktyping import Float, KTypeCheckError


@ktyping.typechecked
def needs_vector(x: Float["n"]) -> Float["n"]:
    return x


def test_checks_run_by_default() -> None:
    with pytest.raises(KTypeCheckError):
        needs_vector(np.zeros((2, 2)))


def test_config_context_manager_disables_checks_inside_the_block_only() -> None:
    with ktyping.Config(typechecking_enabled=False):
        assert needs_vector(np.zeros((2, 2))).shape == (2, 2)
    with pytest.raises(KTypeCheckError):
        needs_vector(np.zeros((2, 2)))


def test_global_config_switch() -> None:
    ktyping.CONFIG.typechecking_enabled = False
    try:
        assert needs_vector(np.zeros((2, 2))).shape == (2, 2)
    finally:
        ktyping.CONFIG.typechecking_enabled = True
    with pytest.raises(KTypeCheckError):
        needs_vector(np.zeros((2, 2)))


def test_module_override_matches_the_function_module() -> None:
    override = ktyping.add_config_override(
        __name__.replace(".", r"\."), ktyping.Config(typechecking_enabled=False)
    )
    try:
        assert needs_vector(np.zeros((2, 2))).shape == (2, 2)
    finally:
        ktyping.remove_config_override(override)
    with pytest.raises(KTypeCheckError):
        needs_vector(np.zeros((2, 2)))


def test_override_for_another_module_leaves_this_one_checked() -> None:
    override = ktyping.add_config_override(r"mylib\..*", ktyping.Config(typechecking_enabled=False))
    try:
        with pytest.raises(KTypeCheckError):
            needs_vector(np.zeros((2, 2)))
        assert ktyping.get_config("mylib.layers").typechecking_enabled is False
        assert ktyping.get_config(__name__).typechecking_enabled is True
    finally:
        ktyping.remove_config_override(override)


def test_disabled_check_type_returns_the_value_unchecked() -> None:
    with ktyping.Config(typechecking_enabled=False):
        assert ktyping.check_type("not an array", Float["n"]) == "not an array"


def test_disabled_dataclass_is_not_checked() -> None:
    import dataclasses

    @ktyping.typechecked
    @dataclasses.dataclass
    class Pair:
        a: Float["n"]
        b: Float["n"]

    with ktyping.Config(typechecking_enabled=False):
        Pair(np.zeros(2), np.zeros(3))
    with pytest.raises(KTypeCheckError):
        Pair(np.zeros(2), np.zeros(3))


def test_removing_an_unknown_override_raises_unless_missing_ok() -> None:
    with pytest.raises(KeyError):
        ktyping.remove_config_override(-1)
    ktyping.remove_config_override(-1, missing_ok=True)


def test_config_update_prefers_set_fields() -> None:
    merged = ktyping.Config(typechecking_enabled=True).update(ktyping.Config())
    assert merged.typechecking_enabled is True
    assert ktyping.Config().update(ktyping.Config(typechecking_enabled=False)).typechecking_enabled is False


def test_module_override_applies_to_check_type_by_calling_module() -> None:
    override = ktyping.add_config_override(
        __name__.replace(".", r"\."), ktyping.Config(typechecking_enabled=False)
    )
    try:
        assert ktyping.check_type("unchecked", Float["n"]) == "unchecked"
    finally:
        ktyping.remove_config_override(override)


def test_resolving_the_config_does_not_invalidate_cached_configs() -> None:
    from ktyping import _config

    override = ktyping.add_config_override(r".*", ktyping.Config(typechecking_enabled=True))
    try:
        version = _config.VERSION[0]
        needs_vector(np.zeros(2))
        ktyping.get_config(__name__)
        assert _config.VERSION[0] == version  # so decorated functions keep their cached config
    finally:
        ktyping.remove_config_override(override)


def test_changing_a_registered_override_takes_effect() -> None:
    config = ktyping.Config(typechecking_enabled=True)
    override = ktyping.add_config_override(__name__.replace(".", r"\."), config)
    try:
        needs_vector(np.zeros(2))
        config.typechecking_enabled = False
        assert needs_vector(np.zeros((2, 2))).shape == (2, 2)
    finally:
        ktyping.remove_config_override(override)
