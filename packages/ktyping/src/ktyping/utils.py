"""Kauldron's `ktyping.utils`: only its `CodeLocation`, which is our scope `Source`.

    location = utils.CodeLocation(description="f", file="f.py", line=1, module_name="mylib.f")
    ktyping.get_config(location)     # the config for code in mylib.f

Kauldron's other helpers here (type names, value and dtype formatting, cached type hints) are the
internals of its error messages; ours are `_describe` and `_format`, and are not part of this path.
"""

from __future__ import annotations

from ._scope import Source as CodeLocation

__all__ = ["CodeLocation"]
