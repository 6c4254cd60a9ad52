"""Safe mode: resolve(cfg, allowed=[...]) refuses untrusted targets up front."""

import sys

import konfig
import pytest

with konfig.imports():
    import fake_lib as fl


def test_allowed_targets_resolve():
    assert konfig.resolve(fl.add(1, 2), allowed=["fake_lib"]) == 3


def test_disallowed_targets_are_all_listed():
    cfg = konfig.ConfigDict(
        {
            "a": {"__qualname__": "os:system", "0": "echo hi"},
            "b": {"__const__": "subprocess:run"},
            "c": fl.add(1),
        }
    )
    with pytest.raises(konfig.DisallowedTargetError) as info:
        konfig.resolve(cfg, allowed=["fake_lib"])
    message = str(info.value)
    assert "os:system  (at cfg.a)" in message
    assert "subprocess:run  (at cfg.b)" in message
    assert "fake_lib" not in message.split("\n", 1)[1]


def test_nothing_is_imported_before_refusing():
    cfg = konfig.ConfigDict({"x": {"__qualname__": "konfig_never_imported_mod:Thing"}})
    with pytest.raises(konfig.DisallowedTargetError):
        konfig.resolve(cfg, allowed=["fake_lib"])
    assert "konfig_never_imported_mod" not in sys.modules


def test_nothing_is_called_before_refusing():
    import fake_lib

    before = fake_lib.Recorder.builds
    cfg = konfig.ConfigDict(first=fl.Recorder(value=1), bad={"__qualname__": "os:getcwd"})
    with pytest.raises(konfig.DisallowedTargetError):
        konfig.resolve(cfg, allowed=["fake_lib"])
    assert fake_lib.Recorder.builds == before


def test_glob_pattern_allows_submodules():
    cfg = konfig.ConfigDict(m={"__const__": "email.mime.text:MIMEText"})
    assert konfig.resolve(cfg, allowed=["email.*"]).m.__name__ == "MIMEText"


def test_module_name_does_not_allow_a_longer_module_name():
    cfg = konfig.ConfigDict(m={"__const__": "fake_lib_evil:x"})
    with pytest.raises(konfig.DisallowedTargetError, match="fake_lib_evil:x"):
        konfig.resolve(cfg, allowed=["fake_lib"])


def test_exact_qualname_allows_only_that_target():
    assert konfig.resolve(fl.add(2), allowed=["fake_lib:add"]) == 2
    with pytest.raises(konfig.DisallowedTargetError, match="fake_lib:Dense"):
        konfig.resolve(fl.Dense(1), allowed=["fake_lib:add"])


def test_targets_reached_through_references_are_checked():
    other = konfig.ConfigDict(evil={"__qualname__": "os:getcwd"})
    cfg = konfig.ConfigDict(x=other.ref.evil)
    with pytest.raises(konfig.DisallowedTargetError, match="os:getcwd"):
        konfig.resolve(cfg, allowed=["fake_lib"])


def test_ref_fn_function_outside_the_list_is_refused():
    cfg = konfig.ConfigDict(a=1)
    cfg.b = konfig.ref_fn(print, cfg.ref.a)
    with pytest.raises(konfig.DisallowedTargetError, match="builtins:print"):
        konfig.resolve(cfg, allowed=["fake_lib"])


def test_safe_mode_error_is_a_resolve_error():
    with pytest.raises(konfig.ResolveError):
        konfig.resolve(konfig.ConfigDict(a={"__const__": "os:sep"}), allowed=[])


def test_reference_to_a_dunder_attribute_is_refused():
    from konfig._refs import OpRef, PathRef

    cfg = konfig.ConfigDict(fn=fl.add)
    cfg.escape = PathRef(cfg, ("fn", "__globals__"))
    cfg.escape2 = OpRef("getattr", (cfg.ref.fn, "__globals__"))
    with pytest.raises(
        konfig.DisallowedTargetError,
        match=r"reference attribute '__globals__'  \(at cfg\.escape, cfg\.escape2\)",
    ):
        konfig.resolve(cfg, allowed=["fake_lib"])


def test_reference_to_frame_attributes_is_refused():
    from konfig._refs import PathRef

    cfg = konfig.ConfigDict(fn=fl.add)
    cfg.frame = PathRef(cfg, ("fn", "gi_frame", "f_globals"))
    with pytest.raises(konfig.DisallowedTargetError, match="gi_frame"):
        konfig.resolve(cfg, allowed=["fake_lib"])


def test_module_reached_through_reference_attributes_is_refused():
    cfg = konfig.ConfigDict({"lib": {"__const__": "fake_lib"}})
    cfg.cwd = cfg.ref.lib.dataclasses.sys.modules["os"].getcwd()
    with pytest.raises(konfig.DisallowedTargetError, match=r"^In cfg\.cwd .*refused 'dataclasses'"):
        konfig.resolve(cfg, allowed=["fake_lib"])


def test_class_of_another_module_reached_through_a_reference_is_refused():
    cfg = konfig.ConfigDict({"lib": {"__const__": "fake_lib"}})
    cfg.anything = cfg.ref.lib.Any
    with pytest.raises(konfig.DisallowedTargetError, match=r"refused 'typing:Any'"):
        konfig.resolve(cfg, allowed=["fake_lib"])


def test_methods_of_plain_values_and_allowed_objects_work_through_references():
    cfg = konfig.ConfigDict(name="abc", trainer_cls={"__const__": "fake_lib:Trainer"})
    cfg.upper = cfg.ref.name.upper()
    cfg.trainer = cfg.ref.trainer_cls.eval_only(model=1)
    resolved = konfig.resolve(cfg, allowed=["fake_lib"])
    assert resolved.upper == "ABC" and resolved.trainer.steps == 1


def test_dunder_attribute_named_by_a_reference_is_refused():
    from konfig._refs import OpRef

    cfg = konfig.ConfigDict(fn=fl.add, name="__glob" + "als__")
    cfg.escape = OpRef("getattr", (cfg.ref.fn, cfg.ref.name))
    with pytest.raises(konfig.DisallowedTargetError, match=r"refused reference attribute '__globals__'"):
        konfig.resolve(cfg, allowed=["fake_lib"])
