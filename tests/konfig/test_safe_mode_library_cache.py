"""`konfig.allow_library_cache(folder, code=[...])`: the one file exception safe mode's audit hook makes, declared
by the program (kd-train declares JAX's compilation cache). Only the named code may read, write, list, rename and
remove under the folder while a safe resolve runs; any other code, and the named code outside the folder, is still
refused. `leaky_lib` plays the library here: its functions write wherever they are told."""

from __future__ import annotations

import os

import konfig
import leaky_lib
import pytest

konfig.declare_surface("leaky_lib", ["leaky_lib:*"])


def resolve(name: str, *args: object) -> object:
    node = {"__qualname__": f"leaky_lib:{name}", **{str(i): a for i, a in enumerate(args)}}
    return konfig.resolve({"x": node}, allowed=["leaky_lib"])["x"]


def test_the_named_code_reads_writes_lists_renames_and_removes_in_its_cache_folder(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    konfig.allow_library_cache(str(cache), code=[leaky_lib.__file__])

    resolve("write", str(cache / "entry"))
    assert (cache / "entry").read_text()
    assert resolve("read", str(cache / "entry")) == (cache / "entry").read_text()
    assert resolve("listing", str(cache)) == ["entry"]
    resolve("rename", str(cache / "entry"), str(cache / "moved"))
    resolve("make_folder", str(cache / "sub"))
    resolve("remove", str(cache / "moved"))
    assert sorted(os.listdir(cache)) == ["sub"]


def test_the_named_code_is_still_refused_outside_its_folder(tmp_path):
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    cache.mkdir()
    konfig.allow_library_cache(str(cache), code=[leaky_lib.__file__])

    with pytest.raises(konfig.DisallowedTargetError, match="for writing"):
        resolve("write", str(elsewhere))
    with pytest.raises(konfig.DisallowedTargetError, match=r"os\.rename"):  # moving a file out of the cache
        (cache / "entry").write_text("x")
        resolve("rename", str(cache / "entry"), str(elsewhere))
    with pytest.raises(konfig.DisallowedTargetError, match="for writing"):  # `cache/../elsewhere` is outside
        resolve("write", str(cache / ".." / "elsewhere"))
    assert not elsewhere.exists()


def test_code_the_cache_was_not_declared_for_is_refused_in_it(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    konfig.allow_library_cache(str(cache), code=[os.path.join(os.path.dirname(leaky_lib.__file__), "other_lib.py")])

    with pytest.raises(konfig.DisallowedTargetError, match="for writing"):
        resolve("write", str(cache / "entry"))
    assert not (cache / "entry").exists()


@pytest.mark.parametrize("folder", ["/", "~"])
def test_the_root_or_home_folder_is_no_cache(folder):
    with pytest.raises(ValueError, match="not a cache folder"):
        konfig.allow_library_cache(os.path.expanduser(folder), code=[leaky_lib.__file__])


def test_a_cache_needs_the_code_that_may_use_it(tmp_path):
    with pytest.raises(ValueError, match="names no source file"):
        konfig.allow_library_cache(str(tmp_path), code=[])
