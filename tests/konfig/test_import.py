"""`import konfig` stays light: standard library only."""

import subprocess
import sys


def test_import_konfig_loads_only_the_standard_library():
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import konfig\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "extra = sorted(m for m in new if m != 'konfig' and m not in sys.stdlib_module_names)\n"
        "print(extra)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]"


def test_public_names_are_listed_in_all():
    import konfig

    missing = [name for name in konfig.__all__ if not hasattr(konfig, name)]
    assert missing == []


KAULDRON_KONFIG_NAMES = [
    "ConfigDict",
    "ConfigDictLike",
    "WithRef",
    "imports",
    "placeholder",
    "ref_copy",
    "ref_fn",
    "register_aliases",
    "register_default_values",
    "required",
    "resolve",
    "set_lazy_imported_modules",
]


def test_kauldron_konfig_names_are_available():
    import konfig

    assert [name for name in KAULDRON_KONFIG_NAMES if not hasattr(konfig, name)] == []
