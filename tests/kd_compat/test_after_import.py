"""AfterImport: a function runs on a module right after its import, without kd_compat importing it."""

import importlib
import sys

import pytest
from kd_compat._after_import import AfterImport


@pytest.fixture
def fresh_module(tmp_path, monkeypatch):
    """The name of a module on sys.path that nothing has imported yet (forgotten again afterwards)."""
    name = f"kd_compat_fresh_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text("def function():\n    return 'original'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield name
    sys.modules.pop(name, None)


def test_then_runs_at_once_on_an_imported_module():
    seen = []
    hook = AfterImport("json", seen.append)
    hook.start()
    assert seen == [sys.modules["json"]]
    assert not hook.waiting()


def test_then_runs_right_after_the_module_is_imported(fresh_module):
    seen = []
    hook = AfterImport(fresh_module, lambda module: seen.append(module.function()))
    hook.start()
    assert hook.waiting()
    assert fresh_module not in sys.modules
    importlib.import_module(fresh_module)
    assert seen == ["original"]
    assert not hook.waiting()  # it leaves sys.meta_path once done
    assert hook not in sys.meta_path


def test_the_module_keeps_its_own_loader(fresh_module):
    AfterImport(fresh_module, lambda module: None).start()
    module = importlib.import_module(fresh_module)
    assert type(module.__loader__).__name__ == "SourceFileLoader"
    assert module.__spec__.loader is module.__loader__
    assert "exec_module" not in vars(module.__loader__)


def test_a_failing_then_does_not_fail_the_import(fresh_module):
    errors = []

    def then(module):
        raise RuntimeError("patch broke")

    AfterImport(fresh_module, then, on_error=errors.append).start()
    module = importlib.import_module(fresh_module)
    assert module.function() == "original"
    assert [str(error) for error in errors] == ["patch broke"]


def test_a_failed_import_keeps_waiting(fresh_module, tmp_path):
    path = tmp_path / f"{fresh_module}.py"
    path.write_text("raise ImportError('not yet')\n")
    seen = []
    hook = AfterImport(fresh_module, seen.append)
    hook.start()
    with pytest.raises(ImportError, match="not yet"):
        importlib.import_module(fresh_module)
    assert hook.waiting() and seen == []
    path.write_text("VALUE = 1\n")
    importlib.invalidate_caches()
    sys.modules.pop(fresh_module, None)
    assert importlib.import_module(fresh_module).VALUE == 1
    assert [module.VALUE for module in seen] == [1]
    assert not hook.waiting()


def test_stop_stops_waiting(fresh_module):
    seen = []
    hook = AfterImport(fresh_module, seen.append)
    hook.start()
    hook.stop()
    importlib.import_module(fresh_module)
    assert seen == []


def test_other_modules_are_not_its_business(fresh_module):
    hook = AfterImport(fresh_module, lambda module: None)
    assert hook.find_spec("json", None) is None
