"""Exception types of kontext; each refines the builtin that callers already catch."""

from __future__ import annotations


class PathSyntaxError(ValueError):
    """A path string that is not valid kontext syntax.

    Usage: ``kontext.Path.from_str("a..b")`` raises it, pointing at the offending character.
    """

    def __init__(self, path: str, position: int, expected: str, context: str = "") -> None:
        self.path = path
        self.position = position
        self.expected = expected
        self.context = context
        super().__init__(
            f"{context}Invalid path {path!r}: {expected} at position {position}.\n  {path}\n  {' ' * position}^"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.path, self.position, self.expected, self.context))


class PathNotFoundError(KeyError):
    """A path that does not exist in the tree it was looked up in.

    Usage: ``except kontext.PathNotFoundError as e: print(e.path, e.failed_part, e.suggestions)``.

    Attributes:
      path: the whole path that was looked up (canonical string).
      failed_part: the step (a path part) that could not be taken.
      parent: the canonical path of the node the failing step started from (``""`` for the root).
      available: what the node at ``parent`` offers (keys, indices or attribute names).
      suggestions: existing paths close to ``path``.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str = "",
        failed_part: object = None,
        parent: str = "",
        available: tuple[str, ...] = (),
        suggestions: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.failed_part = failed_part
        self.parent = parent
        self.available = available
        self.suggestions = suggestions

    def __str__(self) -> str:
        # KeyError would show repr(message): quotes and escaped newlines.
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        fields = {
            "path": self.path,
            "failed_part": self.failed_part,
            "parent": self.parent,
            "available": self.available,
            "suggestions": self.suggestions,
        }
        return (_rebuild, (type(self), self.message, fields))


def _rebuild(cls: type, message: str, fields: dict[str, object]) -> BaseException:
    return cls(message, **fields)


class PathIndexError(PathNotFoundError, IndexError):
    """A sequence index out of range while setting a path (caught as KeyError or IndexError)."""


class GlobPathError(ValueError):
    """A wildcard (``*``, ``**``) used where it cannot be: in a plain ``Path``, or last in a path to set; or
    a glob over containers that share sub-trees reaching more than ``REPEAT_LIMIT`` children again."""


class PathMutationError(ValueError):
    """``set_by_path`` asked to write into something that cannot be written into (a leaf, a tuple, a frozen object)."""


class RequiredKeyError(ValueError):
    """A ``Key`` still set to ``kontext.REQUIRED`` when its object is resolved."""


class KeySignatureError(TypeError):
    """The keys of an object do not match the signature of the function they feed."""


class UnresolvedKeysError(KeyError):
    """One or more keys whose paths are missing from the context; lists every one at once.

    Attributes:
      errors: key name -> the ``PathNotFoundError`` of its path.
    """

    def __init__(self, message: str, errors: dict[str, PathNotFoundError] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors or {}

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.message, self.errors))
