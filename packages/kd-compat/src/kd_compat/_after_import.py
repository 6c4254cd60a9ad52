"""Run a function on a module as soon as it is imported, without importing it.

    hook = AfterImport("flax.core.scope", patch_flax)
    hook.start()  # patch_flax(module) now if flax.core.scope is imported already, else right after its import
    hook.stop()   # stop waiting (does not undo what patch_flax did)

For opt-in patches, whose `enable()` must not import the library: kd-train enables one at start-up, before
it knows whether the run imports JAX at all (importing JAX and flax takes over a second).

While waiting, the hook is a finder at the front of `sys.meta_path` that answers only for its module: it
asks the finders behind it for the module's spec and wraps that spec's loader's `exec_module` for this one
import (an attribute on the loader instance, deleted again right after), so the module keeps its own loader.
It leaves `sys.meta_path` once the module has been imported.
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType
    from typing import Any


class AfterImport:
    """Calls `then(module)` once: now if `module` is imported already, else right after it is imported.

    `then` runs inside the import of the module: it must not raise (an exception would fail the import; the
    hook catches it and reports it through `on_error`).
    """

    def __init__(
        self,
        module: str,
        then: "Callable[[ModuleType], None]",
        on_error: "Callable[[BaseException], None] | None" = None,
    ) -> None:
        self.module = module
        self._then = then
        self._on_error = on_error

    def start(self) -> None:
        module = sys.modules.get(self.module)
        if module is not None:
            self._then(module)
        elif self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def stop(self) -> None:
        while self in sys.meta_path:
            sys.meta_path.remove(self)

    def waiting(self) -> bool:
        return self in sys.meta_path

    def find_spec(self, fullname: str, path: "Sequence[str] | None", target: "Any" = None) -> "Any":
        if fullname != self.module:
            return None
        spec = _spec_from_the_other_finders(self, fullname, path, target)
        loader = getattr(spec, "loader", None)
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return None  # not loadable as expected: the import proceeds without us, unpatched

        def exec_then(module: "ModuleType") -> None:
            try:
                exec_module(module)
            finally:
                del loader.exec_module
            self.stop()
            try:
                self._then(module)
            except Exception as error:  # never fail the library's import because of a patch
                if self._on_error is not None:
                    self._on_error(error)

        try:
            loader.exec_module = exec_then
        except (AttributeError, TypeError):
            return None
        return spec


def _spec_from_the_other_finders(hook: AfterImport, fullname: str, path: "Any", target: "Any") -> "Any":
    for finder in list(sys.meta_path):
        find_spec = getattr(finder, "find_spec", None)
        if finder is hook or isinstance(finder, AfterImport) or find_spec is None:
            continue
        spec = find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None
