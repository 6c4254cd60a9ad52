"""`with konfig.imports():` captures imports and calls as config nodes."""

import builtins
import threading
import types

import konfig
import pytest


def test_call_becomes_a_qualname_node_with_positional_and_keyword_args():
    with konfig.imports():
        import fake_lib
    node = fake_lib.add(1, b=2)
    assert node.to_dict() == {"__qualname__": "fake_lib:add", "0": 1, "b": 2}


def test_name_imported_from_a_module_is_captured():
    with konfig.imports():
        from fake_lib import Dense
    assert Dense(features=3).__qualname__ == "fake_lib:Dense"


def test_aliased_import_of_a_submodule_keeps_the_module_path():
    with konfig.imports():
        import email.mime.text as text_mod
        from email import mime as mime_pkg
    assert text_mod.MIMEText("hi").__qualname__ == "email.mime.text:MIMEText"
    assert mime_pkg.text.MIMEText("hi").__qualname__ == "email.mime.text:MIMEText"


def test_attribute_chain_through_submodules():
    with konfig.imports():
        import email
    assert email.mime.text.MIMEText("x").__qualname__ == "email.mime.text:MIMEText"


def test_classmethod_call_is_captured():
    with konfig.imports():
        from fake_lib import Trainer
    node = Trainer.eval_only(model=1, steps=3)
    assert node.__qualname__ == "fake_lib:Trainer.eval_only"
    trainer = konfig.resolve(node)
    assert (trainer.model, trainer.steps) == (1, 3)


def test_enum_member_without_call_is_a_constant():
    with konfig.imports():
        import fake_lib
    cfg = konfig.ConfigDict(color=fake_lib.Color.BLUE, limit=fake_lib.MAX_STEPS)
    assert cfg.color.to_dict() == {"__const__": "fake_lib:Color.BLUE"}
    resolved = konfig.resolve(cfg)
    assert resolved.color.value == "blue" and resolved.limit == 1000


def test_uncalled_function_is_a_constant_that_resolves_to_it():
    import fake_lib as real

    with konfig.imports():
        import fake_lib
    cfg = konfig.ConfigDict(fn=fake_lib.add)
    assert konfig.resolve(cfg).fn is real.add


def test_pep604_union_of_captured_classes_resolves_to_a_union():
    import fake_lib as real

    with konfig.imports():
        import fake_lib
    cfg = konfig.ConfigDict(kind=fake_lib.Dense | fake_lib.Model | None)
    assert konfig.resolve(cfg).kind == (real.Dense | real.Model | None)


def test_import_typo_fails_at_once_with_a_suggestion():
    with pytest.raises(konfig.TargetNotFoundError, match="did you mean 'fake_lib'"):
        with konfig.imports():
            import fake_lbi  # noqa: F401


def test_attribute_typo_fails_at_once_with_a_suggestion():
    with konfig.imports():
        import fake_lib
    with pytest.raises(konfig.TargetNotFoundError, match="did you mean 'Dense'"):
        _ = fake_lib.Dens


def test_from_import_typo_fails_inside_the_block():
    with pytest.raises(ImportError, match="did you mean 'Trainer'"):
        with konfig.imports():
            from fake_lib import Trainr  # noqa: F401


def test_lazy_block_defers_import_to_resolve():
    with konfig.imports(lazy=True):
        import not_installed_pkg.models as models
    node = models.Net(width=2)
    assert node.__qualname__ == "not_installed_pkg.models:Net"
    with pytest.raises(konfig.ResolveError, match="not_installed_pkg"):
        konfig.resolve(node)


def test_set_lazy_imported_modules_defers_chosen_prefixes():
    with konfig.set_lazy_imported_modules(["xmanager_absent"]):
        with konfig.imports():
            from xmanager_absent.launch import Job
    assert Job(cpu=1).__qualname__ == "xmanager_absent.launch:Job"


def test_set_lazy_imported_modules_as_a_call_stays_in_effect():
    restore = konfig.set_lazy_imported_modules(["absent_a"])
    try:
        with konfig.imports():
            import absent_a
    finally:
        restore.__exit__(None, None, None)
    with pytest.raises(konfig.TargetNotFoundError):
        with konfig.imports():
            import absent_a  # noqa: F401


def test_lazy_module_keeps_real_imports_for_other_modules():
    with konfig.set_lazy_imported_modules(["absent_b"]):
        with pytest.raises(konfig.TargetNotFoundError):
            with konfig.imports():
                import absent_c  # noqa: F401


def test_capture_does_not_affect_other_threads():
    entered, imported = threading.Event(), threading.Event()
    seen = {}

    def other_thread():
        entered.wait(5)
        import json

        seen["json"] = json
        imported.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with konfig.imports():
        entered.set()
        imported.wait(5)
        import json as captured_json
    thread.join()
    assert isinstance(seen["json"], types.ModuleType)
    assert not isinstance(captured_json, types.ModuleType)


def test_builtin_import_is_restored_after_the_block():
    original = builtins.__import__
    with konfig.imports():
        import fake_lib  # noqa: F401
    assert builtins.__import__ is original


def test_exception_inside_the_block_restores_imports():
    original = builtins.__import__
    with pytest.raises(ZeroDivisionError):
        with konfig.imports():
            _ = 1 / 0
    assert builtins.__import__ is original
    import json

    assert isinstance(json, types.ModuleType)


def test_nested_blocks_restore_on_the_outer_exit():
    original = builtins.__import__
    with konfig.imports():
        with konfig.imports(lazy=True):
            import absent_nested  # noqa: F401
        import fake_lib

        assert not isinstance(fake_lib, types.ModuleType)
    assert builtins.__import__ is original


def test_relative_import_is_refused_with_the_absolute_form():
    namespace = {"__name__": "mypkg.configs.base", "__package__": "mypkg.configs"}
    code = "import konfig\nwith konfig.imports():\n    from .models import Net\n"
    with pytest.raises(konfig.RelativeImportError, match=r"from mypkg\.configs\.models import Net"):
        exec(code, namespace)


def test_subclassing_a_captured_class_is_refused():
    with konfig.imports():
        from fake_lib import Model
    with pytest.raises(konfig.CapturedSubclassError, match=r"Cannot subclass 'fake_lib\.Model'"):

        class MyModel(Model):
            pass


def test_calling_a_captured_module_is_an_error():
    with konfig.imports():
        import fake_lib
    with pytest.raises(TypeError, match="not callable"):
        fake_lib()


def test_node_records_the_line_that_created_it():
    with konfig.imports():
        import fake_lib
    node = fake_lib.add(1)
    filename, lineno = node._origin
    assert filename == __file__
    assert lineno == test_node_records_the_line_that_created_it.__code__.co_firstlineno + 3


def test_two_threads_capturing_at_once_both_restore_imports():
    original = builtins.__import__
    both_inside = threading.Barrier(2, timeout=5)
    results = {}

    def capture(name):
        with konfig.imports():
            both_inside.wait()
            import fake_lib

            results[name] = fake_lib.add(1).__qualname__
            both_inside.wait()

    threads = [threading.Thread(target=capture, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {"a": "fake_lib:add", "b": "fake_lib:add"}
    assert builtins.__import__ is original


def test_except_modules_are_imported_even_under_a_lazy_prefix():
    with konfig.set_lazy_imported_modules(["email"], except_=["email.mime"]):
        with konfig.imports():
            import email.absent_lazy_module
        with pytest.raises(konfig.TargetNotFoundError):
            with konfig.imports():
                import email.mime.absent_module  # noqa: F401


def test_library_code_called_inside_the_block_imports_normally():
    import fake_lib as real

    with konfig.imports():
        text = real.dumps_with_lazy_import([1])
        import json as captured_json
    assert text == "[1]"
    assert not isinstance(captured_json, types.ModuleType)


def test_capture_inside_a_function_captures_its_imports():
    def get_config():
        with konfig.imports():
            import fake_lib
        return fake_lib.add(1)

    assert get_config().__qualname__ == "fake_lib:add"


def test_capture_entered_through_an_exit_stack():
    import contextlib

    with contextlib.ExitStack() as stack:
        stack.enter_context(konfig.imports())
        import fake_lib
    assert fake_lib.add(1).__qualname__ == "fake_lib:add"


def test_calling_a_captured_constant_that_is_not_callable_is_an_error():
    with konfig.imports():
        import fake_lib
    with pytest.raises(TypeError, match=r"fake_lib\.MAX_STEPS is not callable \(its type is int\)"):
        fake_lib.MAX_STEPS(1)


def test_node_markers_cannot_be_passed_as_keyword_arguments():
    with konfig.imports():
        import fake_lib
    with pytest.raises(konfig.ArgumentError, match="node markers"):
        fake_lib.anything(__qualname__="os:system")


def test_capture_inside_a_class_body():
    class Configs:
        with konfig.imports():
            from fake_lib import Dense, add

        layer = Dense(features=2)
        total = add(1, b=2)

    assert Configs.layer.__qualname__ == "fake_lib:Dense"
    assert konfig.resolve(Configs.total) == 3
