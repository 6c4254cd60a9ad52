# ruff: noqa: F821 - single-name shape specs like Shape["n"] are not forward references
"""Kauldron's module paths (`ktyping.frame_utils`, `config`, `utils`, `internal_typing`, `pytree`,
`errors`): each exposes ktyping's own objects under Kauldron's names, and what they add works."""

import json
import logging
import subprocess
import sys
import types

import ktyping
import pytest
from ktyping import Shape, config, errors, frame_utils, internal_typing, pytree, utils
from ktyping._config import REPORTING_POLICIES

KAULDRON_PATHS = ("frame_utils", "config", "utils", "internal_typing", "pytree", "errors")


def test_the_module_paths_import_only_the_standard_library() -> None:
    code = (
        "import json, sys; before = set(sys.modules); "
        + "; ".join(f"import ktyping.{name}" for name in KAULDRON_PATHS)
        + "; print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = {name.split(".")[0] for name in json.loads(out.stdout)}
    assert not loaded & {"numpy", "jax", "torch", "typeguard", "jaxtyping", "etils", "immutabledict"}
    assert all(
        name == "ktyping" or name in sys.stdlib_module_names or name.startswith("_") for name in loaded
    )


def test_the_modules_hand_out_ktypings_own_objects() -> None:
    assert config.Config is ktyping.Config and config.CONFIG is ktyping.CONFIG
    assert config.get_config is ktyping.get_config
    assert config.add_config_override is ktyping.add_config_override
    assert errors.AmbiguousDimensionError is ktyping.AmbiguousDimensionError
    assert errors.KTypeCheckError is ktyping.KTypeCheckError
    assert frame_utils.NoActiveScopeError is errors.NoActiveScopeError is ktyping.NoActiveScopeError
    assert pytree.PyTree is ktyping.PyTree
    assert utils.CodeLocation is type(ktyping.ShapeScope().source)


# ----------------------------------------------------------------------------- frame_utils


def test_get_caller_frame_skips_lambdas_and_comprehensions() -> None:
    here = sys._getframe()
    assert frame_utils.get_caller_frame() is here
    assert (lambda: frame_utils.get_caller_frame())() is here
    assert [frame_utils.get_caller_frame() for _ in range(1)] == [here]
    assert next(frame_utils.get_caller_frame() for _ in range(1)) is here


def test_get_caller_frame_stacklevel_counts_functions_not_lambdas() -> None:
    def inner(stacklevel: int) -> str:
        return frame_utils.get_caller_frame(stacklevel).f_code.co_name

    def outer(stacklevel: int) -> str:
        return (lambda: inner(stacklevel))()

    assert [outer(level) for level in range(3)] == [
        "inner",
        "outer",
        "test_get_caller_frame_stacklevel_counts_functions_not_lambdas",
    ]


def test_get_caller_frame_beyond_the_outermost_frame_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="stacklevel=100000"):
        frame_utils.get_caller_frame(100000)


def test_a_checked_function_has_an_active_scope_and_a_helper_it_calls_has_not() -> None:
    def helper() -> bool:
        return frame_utils.has_active_scope(frame_utils.get_caller_frame())

    @ktyping.typechecked
    def checked(x: Shape["n"]) -> tuple[bool, bool]:
        return frame_utils.has_active_scope(frame_utils.get_caller_frame()), helper()

    assert checked((3,)) == (True, False)
    assert not frame_utils.has_active_scope(sys._getframe())


def test_a_shape_scope_block_gives_its_frame_an_active_scope() -> None:
    with ktyping.ShapeScope():
        assert frame_utils.has_active_scope(sys._getframe())
        frame_utils.assert_caller_has_active_scope()


def test_assert_caller_has_active_scope_names_the_caller_in_a_stack_summary() -> None:
    def unchecked_helper() -> None:
        frame_utils.assert_caller_has_active_scope()

    with ktyping.ShapeScope(), pytest.raises(ktyping.NoActiveScopeError) as raised:
        unchecked_helper()
    message = str(raised.value)
    assert "No active scope for 'unchecked_helper'" in message
    assert ">> unchecked_helper: ---" in message
    assert (
        "   test_assert_caller_has_active_scope_names_the_caller_in_a_stack_summary: active scope" in message
    )


def test_kauldrons_marker_local_lets_a_nested_function_use_the_scope() -> None:
    def marked_helper() -> object:
        __ktyping_scope_counter__ = 1  # noqa: F841 - read from the frame
        frame_utils.assert_caller_has_active_scope()
        return ktyping.get_current_scope()

    with ktyping.ShapeScope() as scope:
        assert marked_helper() is scope


# ----------------------------------------------------------------------------- config


def test_reporting_policy_members_are_the_strings_config_accepts() -> None:
    assert tuple(config.ReportingPolicy) == REPORTING_POLICIES
    assert config.ReportingPolicy.WARN == "warn"
    assert config.Config(jaxtyping_annotations="warn") == config.Config(
        jaxtyping_annotations=config.ReportingPolicy.WARN
    )


def test_an_unknown_reporting_policy_is_refused() -> None:
    with pytest.raises(ValueError, match=r"one of \['ignore', 'log_info', 'warn', 'error'\], got 'loud'"):
        config.Config(jaxtyping_annotations="loud")
    cfg = config.Config()
    with pytest.raises(ValueError, match="got 'loud'"):
        cfg.jaxtyping_annotations = "loud"


def test_update_keeps_the_fields_the_other_config_leaves_missing() -> None:
    base = config.Config(typechecking_enabled=True, jaxtyping_annotations=config.ReportingPolicy.ERROR)
    merged = base.update(config.Config(typechecking_enabled=False))
    assert merged == config.Config(typechecking_enabled=False, jaxtyping_annotations="error")
    assert merged != base
    assert config.CONFIG.jaxtyping_annotations == config.ReportingPolicy.ERROR


def test_get_config_takes_a_code_location_and_matches_its_module_name() -> None:
    override = config.add_config_override(r"mylib\.", config.Config(typechecking_enabled=False))
    try:
        inside = utils.CodeLocation(description="f", file="f.py", line=1, module_name="mylib.layers")
        outside = utils.CodeLocation(description="g", file="g.py", line=1, module_name="other")
        assert config.get_config(inside).typechecking_enabled is False
        assert config.get_config(outside) == config.CONFIG
        assert config.get_config() == config.CONFIG
    finally:
        config.remove_config_override(override)


# ----------------------------------------------------------------------------- jaxtyping annotations


class _JaxtypingArray:
    """Stands in for a jaxtyping annotation (jaxtyping is not a test dependency of ktyping)."""


@pytest.fixture
def jaxtyping_imported(monkeypatch: pytest.MonkeyPatch) -> type:
    stand_in = types.ModuleType("jaxtyping")
    stand_in.AbstractArray = _JaxtypingArray  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "jaxtyping", stand_in)
    return _JaxtypingArray


def test_a_jaxtyping_annotation_is_an_error_on_every_call_by_default(jaxtyping_imported: type) -> None:
    @ktyping.typechecked
    def mixed(x: Shape["n"], y: list[jaxtyping_imported]) -> int:  # type: ignore[valid-type]
        return 0

    for _ in range(2):
        with pytest.raises(errors.JaxtypingAnnotationError, match=r"mixes jaxtyping annotations \(y\)"):
            mixed((2,), [])


def test_the_jaxtyping_policy_can_warn_log_or_ignore(
    jaxtyping_imported: type, caplog: pytest.LogCaptureFixture
) -> None:
    @ktyping.typechecked
    def mixed(x: jaxtyping_imported) -> None:  # type: ignore[valid-type]
        return None

    x = jaxtyping_imported()
    with config.Config(jaxtyping_annotations=config.ReportingPolicy.WARN):
        with pytest.warns(UserWarning, match=r"mixes jaxtyping annotations \(x\)"):
            mixed(x)
    with config.Config(jaxtyping_annotations="log_info"), caplog.at_level(logging.INFO, logger="ktyping"):
        mixed(x)
    assert "mixes jaxtyping annotations (x)" in caplog.text
    with config.Config(jaxtyping_annotations="ignore"):
        assert mixed(x) is None
    with config.Config(typechecking_enabled=False):
        assert mixed(x) is None


def test_other_annotations_are_not_reported(jaxtyping_imported: type) -> None:
    @ktyping.typechecked
    def plain(x: Shape["n"], y: list[int]) -> int:
        return len(y)

    assert plain((2,), [1]) == 1


def test_without_jaxtyping_imported_annotations_are_not_inspected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "jaxtyping", raising=False)

    @ktyping.typechecked
    def unseen(x: _JaxtypingArray) -> None:
        return None

    assert unseen(_JaxtypingArray()) is None


# ----------------------------------------------------------------------------- utils, internal_typing


def test_a_scopes_source_is_a_code_location_with_the_module_name() -> None:
    @ktyping.typechecked
    def checked(x: Shape["n"]) -> utils.CodeLocation:
        return ktyping.get_current_scope().source

    source = checked((3,))
    assert isinstance(source, utils.CodeLocation)
    assert source.module_name == __name__ and source.description == "function 'checked'"
    with ktyping.ShapeScope() as scope:
        assert scope.source.module_name == __name__
    assert utils.CodeLocation.unknown().module_name == "<unknown>"
    location = utils.CodeLocation(description="f", file="f.py", line=3, module_name="m")
    assert location.to_str() == "f at f.py:3"
    assert location == utils.CodeLocation("f", "f.py", 3, "m") and hash(location) == hash(
        utils.CodeLocation("f", "f.py", 3, "m")
    )


def test_missing_is_one_falsy_sentinel_for_config_and_pytree() -> None:
    assert internal_typing.MISSING is config.MISSING is pytree.MISSING
    assert not internal_typing.MISSING and repr(internal_typing.MISSING) == "MISSING"
    assert isinstance(internal_typing.MISSING, internal_typing.Missing)
    assert config.Config().typechecking_enabled is internal_typing.MISSING


# ----------------------------------------------------------------------------- pytree


def test_a_pytree_types_name_is_its_repr() -> None:
    tree = pytree.PyTree[int]
    assert tree.__name__ == repr(tree) == "PyTree[int]"
    assert pytree.PyTree[int, "$S"].__name__ == "PyTree[int, '$S']"
    assert pytree.PyTree.leaf_type is internal_typing.MISSING
    assert pytree.PyTree.structure_spec is internal_typing.MISSING


def test_is_pytree_type_recognises_pytree_annotations_only() -> None:
    assert pytree.is_pytree_type(pytree.PyTree)
    assert pytree.is_pytree_type(pytree.PyTree[int, "$S"])
    assert not pytree.is_pytree_type(int)
    assert not pytree.is_pytree_type(Shape["n"])
    assert not pytree.is_pytree_type(list[int])
