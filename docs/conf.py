"""Sphinx configuration of the kd documentation site: `hatch run docs` builds it into docs/_build/html."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent / "_ext"))

project = "kd"
author = "the kd authors"
copyright = "the kd authors"
release = "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "kd_apigen",  # docs/_ext/kd_apigen.py: the API pages, from every namespace's __all__
    "kd_docstrings",  # docs/_ext/kd_docstrings.py: indented code in docstrings as literal blocks
    "kd_readmes",  # docs/_ext/kd_readmes.py: README sections included in a page, their file links as text
]
# No intersphinx: the build runs offline (CI and this repository's machines reach only package
# registries), and intersphinx would fetch python/jax/numpy inventories over the network.

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_ext", "_templates", "_tools", "_screenshots"]
root_doc = "index"

# The docstrings write code in single backticks, as Markdown does.
default_role = "code"

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
autodoc_class_signature = "mixed"
# A signature longer than this shows one parameter a line (a Trainer has thirty).
python_maximum_signature_line_length = 100
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # `Attributes:` as a field list: no second description of a dataclass field
napoleon_use_rtype = False

nitpicky = True
# Types that live outside kd's packages: without intersphinx (offline build) Sphinx cannot link them,
# so they are named in signatures as plain text instead of failing the build.
nitpick_ignore_regex = [
    (
        r"py:.*",
        r"(jax|jaxlib|jnp|checkify|numpy|np|flax|nnx|nn|optax|orbax|etils|epath|grain|tensorboardX|chex|"
        r"ml_dtypes|wandb|mlflow)"
        r"(\..*)?",
    ),
    (
        r"py:.*",
        r"(typing|typing_extensions|collections|collections\.abc|abc|os|pathlib|types|enum|dataclasses|"
        r"contextlib|argparse|subprocess|threading|concurrent|io|json|datetime|functools|logging|re)(\..*)?",
    ),
    # One word: a builtin (`int`) or a bare name in a string annotation; kd's own types arrive by their dotted
    # paths (`kd.losses._base.Loss`, linked by docs/_ext/kd_apigen.py), so this hides none of them.
    (r"py:.*", r"[A-Za-z_][A-Za-z_0-9]*"),
    # napoleon reads the words before the colon of a `Returns:` line as a type ("The rows this process
    # takes: ..."), and splits a generic type of a field list at its commas (`dict[str`, `Callable[...`).
    (r"py:class", r".*[ \[\]].*"),
]

# "more than one target found": ktyping's names are also kd.typing's (the same objects, a page each), and a
# short annotation (`Float`) matches both; Sphinx links the first, which is the right page either way.
suppress_warnings = ["ref.python"]

html_theme = "sphinx_book_theme"
html_title = f"kd {release}"
html_theme_options = {
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "max_navbar_depth": 2,
}
# The sidebar lists the guides and the namespaces; a name's page is one click further, from its
# namespace's table (docs/_templates/kd-sidebar-nav.html says why).
templates_path = ["_templates"]
html_sidebars = {"**": ["navbar-logo.html", "kd-sidebar-nav.html"]}  # the search field is in the header
html_static_path = ["_static"]
# Room for 110-column code at a 1280 px window (docs/_tools/layout_check.py measures it).
html_css_files = ["kd.css"]
html_js_files = ["kd.js"]  # the article header's table-of-contents button, wired to the theme's drawer
html_last_updated_fmt = None
