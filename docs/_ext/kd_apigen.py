"""Writes the API reference's pages: one per namespace, one per public name of it (from its `__all__`).

Each page is autodoc directives (the signature and docstring of the name); a namespace's page is its module
docstring and a table of its names, each with its docstring's first sentence (written here rather than by
autosummary, whose first-sentence cut falls inside inline code such as `... H W C`).

The namespaces are the five packages and kd's namespaces (`NAMESPACES`). A name's page documents it with
autodoc under the namespace that lists it; an object that several namespaces list (`kd.typing.Float` is
`ktyping.Float`) is documented in full under each and says where else it lives. `resolve_private_paths`
links an annotation that names an object by its defining module (`kd.losses._base.Loss`) to the page of
the public name it is.

The pages go to docs/api/generated/ (ignored by git): rewritten only when their text changes, so a rebuild
reads only what changed.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pathlib
import re
import typing
from typing import Any

import kd_docstrings

NAMESPACES = (
    "konfig",
    "kontext",
    "ktyping",
    "kd_compat",
    "kd",
    "kd.train",
    "kd.runtime",
    "kd.data",
    "kd.data.py",
    "kd.losses",
    "kd.metrics",
    "kd.summaries",
    "kd.ckpts",
    "kd.evals",
    "kd.optim",
    "kd.nn",
    "kd.sharding",
    "kd.writers",
    "kd.random",
    "kd.typing",
    "kd.inspect",
    "kd.export",
    "kd.xm",
    "kd.utils",
    "kd.kdash",
    "kd.testing",
    "kd.kauldron_alias",
    "kd.contrib",
    "kd.contrib.metrics",
    "kd.contrib.summaries",
    "kd.contrib.train",
    "kd.contrib.nn",
    "kd.cli",
)


@dataclasses.dataclass(frozen=True)
class Name:
    namespace: str
    name: str
    obj: Any

    @property
    def full(self) -> str:
        return f"{self.namespace}.{self.name}"

    @property
    def kind(self) -> str:
        if inspect.ismodule(self.obj):
            return "module"
        if inspect.isclass(self.obj):
            return "class"
        if inspect.isroutine(self.obj) or (callable(self.obj) and not _is_typing_construct(self.obj)):
            return "function"
        return "data"


def _is_typing_construct(obj: Any) -> bool:
    """A type alias (`Annotated[Any, ...]`, `Callable[..., X]`) or a TypeVar: documented as data."""
    return isinstance(obj, typing.TypeVar) or type(obj).__module__ == "typing"


def public_names(namespace: str) -> list[Name]:
    """The names in `namespace.__all__`, in that order."""
    module = importlib.import_module(namespace)
    return [Name(namespace, name, getattr(module, name)) for name in module.__all__]


def all_names() -> list[Name]:
    return [name for namespace in NAMESPACES for name in public_names(namespace)]


def canonical_names() -> dict[int, str]:
    """id(object) -> the first public name it has (in `NAMESPACES` order): classes, functions, type aliases."""
    found: dict[int, str] = {}
    for name in all_names():
        if id(name.obj) in _TYPING_OWN:  # `kontext.Context = Any`: `Any` elsewhere is not a link to it
            continue
        if name.kind in ("class", "function") or _is_typing_construct(name.obj):
            found.setdefault(id(name.obj), name.full)
    return found


_TYPING_OWN = frozenset(id(getattr(typing, name)) for name in typing.__all__ if hasattr(typing, name))


def _first_line(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


def summary(obj: Any) -> str:
    """The first sentence of `obj`'s docstring, for a namespace's table (a constant: none of its own).

    Cut at the first ". " outside inline code (autosummary's cut falls inside `... H W C`).
    """
    if not (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj) or callable(obj)):
        return ""
    text = kd_docstrings.joined_suffixes(_first_line(obj))
    in_code = False
    for i, char in enumerate(text):
        if char == "`":
            in_code = not in_code
        elif not in_code and text.startswith(". ", i):
            return text[: i + 1]
    return text


def _title(text: str) -> str:
    return f"{text}\n{'=' * len(text)}\n"


def _name_page(name: Name, canonical: dict[int, str], everywhere: dict[int, list[str]]) -> str:
    lines = [_title(name.full), f".. currentmodule:: {name.namespace}\n"]
    others = [full for full in everywhere.get(id(name.obj), []) if full != name.full]
    if name.kind == "module":
        module = name.obj.__name__
        if module in NAMESPACES:  # documented as a namespace of its own
            lines.append(f"``{name.full}`` is the namespace :py:mod:`{module}`.\n")
        else:
            # Members public under a namespace are documented there; here they are links.
            elsewhere = {
                attr: canonical[id(value)]
                for attr, value in vars(name.obj).items()
                if not attr.startswith("_")
                and id(value) in canonical
                and canonical[id(value)] != f"{module}.{attr}"
            }
            exclude = f"\n   :exclude-members: {', '.join(sorted(elsewhere))}" if elsewhere else ""
            lines.append(f".. automodule:: {module}\n   :members:{exclude}\n")
            if elsewhere:
                links = ", ".join(f":py:obj:`{attr} <{full}>`" for attr, full in sorted(elsewhere.items()))
                lines.append(f"Also here, documented under their public names: {links}.\n")
        return "\n".join(lines)
    directive = {"class": "autoclass", "function": "autofunction", "data": "autodata"}[name.kind]
    options = {"class": ["   :members:", "   :show-inheritance:"], "data": ["   :no-value:"]}.get(
        name.kind, []
    )
    if name.kind == "class" and name.obj.__bases__ == (object,):
        options = ["   :members:"]  # no "Bases: object"
    if name.kind == "class":
        options = [*options, *_private_base_members(name.obj, canonical)]
    first = canonical.get(id(name.obj), name.full)
    if first != name.full:
        # Documented in full under its first public name; here a target of its own (so links to this
        # name work) and the same docs unindexed (autodoc would describe the defining path twice).
        kind = {"function": "function", "class": "class"}.get(name.kind, "data")
        lines.append(f".. py:{kind}:: {name.name}\n   :no-contents-entry:\n")
        lines.append(f"   The same object as :py:obj:`{first}`, documented there in full.\n")
        options = [*options, "   :no-index:"]
    elif others:
        links = ", ".join(f":py:obj:`{full}`" for full in others)
        lines.append(f"The same object is also public as {links}.\n")
    lines.append("\n".join([f".. {directive}:: {name.name}", *options]) + "\n")
    return "\n".join(lines)


def _private_base_members(cls: type, canonical: dict[int, str]) -> list[str]:
    """`:inherited-members: <first public base>` when bases of kd's private modules come first (a mixin such as
    `kd.ckpts._kauldron.KauldronCheckpointer`): their methods are the class's own for a reader."""
    private = 0
    stop = "object"
    for base in cls.__mro__[1:]:
        if id(base) in canonical or not base.__module__.startswith("kd.") or base is object:
            stop = base.__name__
            break
        private += 1
    return [f"   :inherited-members: {stop}"] if private else []


def _namespace_page(namespace: str, names: list[Name]) -> str:
    module = importlib.import_module(namespace)
    lines = [
        _title(namespace),
        f".. automodule:: {namespace}\n   :no-members:\n",
        f".. currentmodule:: {namespace}\n",
    ]
    modules = [name for name in names if name.kind == "module"]
    objects = [name for name in names if name.kind != "module"]
    if modules:
        lines.append(".. list-table:: Modules\n   :widths: 30 70\n")
        for name in modules:
            target = name.obj.__name__
            link = f":py:mod:`{name.full} <{target}>`" if target in NAMESPACES else f":doc:`{name.full}`"
            lines.append(f"   * - {link}\n     - {summary(name.obj) or ' '}")
        lines.append("")
    if objects:
        lines.append(".. list-table::\n   :widths: 30 70\n")
        for name in objects:
            lines.append(f"   * - :py:obj:`{name.name} <{name.full}>`\n     - {summary(name.obj) or ' '}")
        lines.append("")
    pages = [name.full for name in names if not (name.kind == "module" and name.obj.__name__ in NAMESPACES)]
    if pages:
        lines.append(".. toctree::\n   :hidden:\n")
        lines.extend(f"   {page}" for page in pages)
        lines.append("")
    del module
    return "\n".join(lines)


def _write(path: pathlib.Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def write_pages(folder: pathlib.Path) -> int:
    """Writes the namespace and name pages into `folder`; returns how many pages it holds."""
    folder.mkdir(parents=True, exist_ok=True)
    names = all_names()
    canonical = canonical_names()
    everywhere: dict[int, list[str]] = {}
    for name in names:
        if name.kind in ("class", "function"):
            everywhere.setdefault(id(name.obj), []).append(name.full)
    wanted = set()
    for namespace in NAMESPACES:
        in_namespace = [name for name in names if name.namespace == namespace]
        _write(folder / f"{namespace}.rst", _namespace_page(namespace, in_namespace))
        wanted.add(f"{namespace}.rst")
        for name in in_namespace:
            if name.kind == "module" and name.obj.__name__ in NAMESPACES:
                continue
            _write(folder / f"{name.full}.rst", _name_page(name, canonical, everywhere))
            wanted.add(f"{name.full}.rst")
    _write(folder / "namespaces.rst.txt", _namespaces_table())
    for stale in folder.glob("*.rst"):
        if stale.name not in wanted:
            stale.unlink()
    return len(wanted)


def _namespaces_table() -> str:
    """The API index's table: each package and namespace, linked, with its docstring's first sentence."""
    lines = [
        ".. list-table::\n   :widths: 25 75\n   :header-rows: 1\n",
        "   * - namespace\n     - what it holds",
    ]
    for namespace in NAMESPACES:
        module = importlib.import_module(namespace)
        text = summary(module).removeprefix(f"{namespace}:").strip() or " "
        lines.append(f"   * - :doc:`{namespace} <generated/{namespace}>`\n     - {text}")  # from api/index
    return "\n".join(lines) + "\n"


def resolve_private_paths(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """`missing-reference`: a path in an annotation -> the page of the public name of that object.

    `kd.losses._base.Loss` (where the class is defined) links to `kd.losses.Loss`, `kontext.Key` (a type
    alias, documented as data) to its page. A TypeVar, or one of kd's private types (`kd._interfaces.Writer`)
    that no namespace lists, stays plain text: there is no page to link to.
    """
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"]
    obj = _import_path(target)
    if obj is None:
        return None
    canonical = _CANONICAL.get(id(obj))
    if canonical is None:
        private = target.split(".")[0] in _PACKAGES and any(
            part.startswith("_") for part in target.split(".")
        )
        return contnode if isinstance(obj, typing.TypeVar) or private else None
    domain = env.get_domain("py")
    return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", canonical, node, contnode)


_PACKAGES = frozenset({"konfig", "kontext", "ktyping", "kd_compat", "kd"})


def _import_path(path: str) -> Any:
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                obj = getattr(obj, part)
        except AttributeError:
            return None
        return obj
    return None


_CANONICAL: dict[int, str] = {}


def skip_aliased_members(app: Any, what: str, name: str, obj: Any, skip: bool, options: Any) -> bool | None:
    """A class attribute that is a class defined elsewhere (`Metric.State = State`) is that class's page."""
    if what == "class" and inspect.isclass(obj) and "." not in getattr(obj, "__qualname__", "."):
        return True
    return None


# Defaults shown by a name rather than by their value: a sentinel, or a value computed when the field is unset.
_NAMED_DEFAULTS = {
    "'__KEY_REQUIRED__'": "kontext.REQUIRED",
    "<a kd.ckpts.Checkpointer when workdir is set>": "kd.ckpts.default_checkpointer(...)",
}
# `~kd._interfaces.TrainingData` -> `TrainingData`: a private module's path in a signature is not for readers.
_PRIVATE_PATH = re.compile(r"~?\b(?:konfig|kontext|ktyping|kd_compat|kd)(?:\.\w+)*\._\w+(?:\.\w+)*\.(?=\w)")
# `collections.abc.Mapping[str, typing.Any]` in a field list -> `~...`: shown as `Mapping[str, Any]`, as in signatures.
_STDLIB_PATH = re.compile(r"(?<![\w.~])((?:collections\.abc|typing|typing_extensions)\.\w)")
# A module's path before a parenthesis (`~ktyping.(Float | Bool)`, how Sphinx names a class of that name): not Python.
_PATH_BEFORE_PARENTHESIS = re.compile(r"~?\b[\w.]*\w\.(?=\()")
# `~ktyping.(Bool | Float)['n k']` -> `~ktyping.Bool['n k'] | ~ktyping.Float['n k']`, the same type: Sphinx
# would show `Bool | Float['n k']`, without the parentheses.
_SUBSCRIPTED_UNION = re.compile(r"(~?\b[\w.]*\w\.)?\(([\w.~]+(?:\s*\|\s*[\w.~]+)+)\)(\[[^\[\]]*\])")


def _distribute(match: re.Match[str]) -> str:
    module, names, subscript = match.group(1) or "", match.group(2), match.group(3)
    return " | ".join(f"{module}{name.strip()}{subscript}" for name in names.split("|"))


_FACTORIES = {dict: "{}", list: "[]", tuple: "()", set: "set()", frozenset: "frozenset()"}


def _is_python(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return True


def _as_code(value: Any) -> str:
    """A default whose repr is not Python (`<class 'numpy.float32'>`, a sentinel), as code a reader writes."""
    if inspect.isclass(value) or inspect.isroutine(value):
        qualname = getattr(value, "__qualname__", getattr(value, "__name__", ""))
        module = getattr(value, "__module__", None) or ""
        if "<locals>" in qualname:  # `normal.<locals>.init`: what `normal(...)` returned
            qualname = qualname.split(".<locals>")[0] + "(...)"
        if not qualname.isidentifier() and not _is_python(qualname):
            return "..."
        if public := _CANONICAL.get(id(value)):
            return public
        bare = not module or module == "builtins" or "._" in f".{module}"  # no private module's path
        return qualname if bare else f"{module}.{qualname}"
    return "..."


def _factory_as_code(factory: Any) -> str:
    if factory in _FACTORIES:
        return _FACTORIES[factory]
    name = _as_code(factory)
    return "..." if name == "..." or name.endswith("(...)") else f"{name}()"


def _readable_defaults(obj: Any, signature: str) -> str:
    """Each default whose repr is not Python, replaced in `signature` by code: `<factory>` -> `{}`, ...

    Sphinx parses a signature as Python to render it; one such repr and the whole signature is shown as
    raw text (`~typing.Any`, no links).
    """
    try:
        parameters = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return signature
    fields = getattr(obj, "__dataclass_fields__", {}) if inspect.isclass(obj) else {}
    cursor = 0
    from sphinx.util.inspect import object_description  # here: tests/docs import this module without Sphinx

    for parameter in parameters:
        if parameter.default is inspect.Parameter.empty:
            continue
        shown = object_description(parameter.default)  # as autodoc wrote it (no ` at 0x7f...`)
        if shown in _NAMED_DEFAULTS or _is_python(shown):
            continue
        field = fields.get(parameter.name)
        if field is not None and field.default_factory is not dataclasses.MISSING:
            code = _factory_as_code(field.default_factory)
        else:
            code = _as_code(parameter.default)
        at = signature.find(f" = {shown}", cursor)
        if at < 0:
            continue
        signature = f"{signature[:at]} = {code}{signature[at + 3 + len(shown) :]}"
        cursor = at + 3 + len(code)
    return signature


def readable_signature(
    app: Any,
    what: str,
    name: str,
    obj: Any,
    options: Any,
    signature: str | None,
    return_annotation: str | None,
) -> tuple[str | None, str | None]:
    """Signatures as a reader writes them: defaults as code, sentinels by name, no private module paths."""

    def tidy(text: str | None) -> str | None:
        if not text:
            return text
        for value, named in _NAMED_DEFAULTS.items():
            text = text.replace(value, named)
        text = _PATH_BEFORE_PARENTHESIS.sub("", _SUBSCRIPTED_UNION.sub(_distribute, text))
        return _PRIVATE_PATH.sub("", text)

    if signature:
        signature = _readable_defaults(obj, signature)
    return tidy(signature), tidy(return_annotation)


def readable_field_types(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """The types napoleon writes into field lists from annotations: no private module paths, `Mapping` for
    `collections.abc.Mapping`.

    A property's docstring that starts "Why the last run stopped, or None: ..." is prose, not "type: text"
    as napoleon reads it: with a return annotation (shown in the signature) its first line is put back.
    """
    if (
        what == "property"
        and _annotated_property(obj)
        and len(lines) >= 2
        and lines[-1].startswith(":type: ")
    ):
        words = lines[-1].removeprefix(":type: ")
        body = lines[:-2] if lines[-2] == "" else lines[:-1]
        lines[:] = [f"{words}: {body[0]}" if body else words, *body[1:]]
    for index, line in enumerate(lines):
        if line.lstrip().startswith((":vartype", ":type", ":rtype")):
            lines[index] = _STDLIB_PATH.sub(r"~\1", _PRIVATE_PATH.sub("", line))


def _annotated_property(obj: Any) -> bool:
    getter = getattr(obj, "fget", None) or getattr(obj, "func", None)
    return "return" in getattr(getter, "__annotations__", {})


def setup(app: Any) -> dict[str, Any]:
    folder = pathlib.Path(app.srcdir) / "api" / "generated"

    def generate(app: Any) -> None:
        write_pages(folder)
        _CANONICAL.clear()
        _CANONICAL.update(canonical_names())

    app.connect("builder-inited", generate)
    app.connect("missing-reference", resolve_private_paths)
    app.connect("autodoc-skip-member", skip_aliased_members)
    app.connect("autodoc-process-signature", readable_signature)
    app.connect("autodoc-process-docstring", readable_field_types, priority=600)  # after napoleon (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
