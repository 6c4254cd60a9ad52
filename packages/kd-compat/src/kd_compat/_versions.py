"""Installed-distribution versions, read from package metadata without importing the package.

Example:
    installed_version("etils")  # "1.14.0", or None when etils is not installed
    in_range("1.14.0", (1, 14), (1, 15))  # True
"""


def installed_version(distribution: str) -> str | None:
    """The installed version of `distribution` (a PyPI name), or None when it is not installed.

    Reads `*.dist-info` metadata only: the distribution's modules are not imported.
    """
    from importlib import metadata  # Deferred: ~40 ms cold, and `import kd_compat` must stay light.

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def release(version: str) -> tuple[int, ...]:
    """The numeric release segment of a PEP 440 version string.

    Example:
        release("1.14.0") == (1, 14, 0)
        release("1.15.0rc1") == (1, 15, 0)
        release("2!1.2.3+local") == (1, 2, 3)
    """
    numbers = []
    for piece in version.rpartition("!")[2].split("."):
        digits = piece
        for i, char in enumerate(piece):
            if not char.isdigit():
                digits = piece[:i]
                break
        if not digits:
            break
        numbers.append(int(digits))
        if len(digits) != len(piece):
            break
    return tuple(numbers)


def in_range(version: str, lower: tuple[int, ...], upper: tuple[int, ...]) -> bool:
    """Whether `lower <= release(version) < upper`, treating missing trailing parts as zeros.

    Example:
        in_range("1.14", (1, 14, 0), (1, 15))  # True
    """
    return _trimmed(lower) <= _trimmed(release(version)) < _trimmed(upper)


def _trimmed(numbers: tuple[int, ...]) -> tuple[int, ...]:
    # (1, 14) and (1, 14, 0) are the same release; tuple comparison would call the first smaller.
    end = len(numbers)
    while end and numbers[end - 1] == 0:
        end -= 1
    return numbers[:end]
