"""Safe mode's audit hook: even where a declared surface admits a function that launches, writes, reads
outside the installed code, opens a socket, runs code from data or imports from a folder a config chose,
the act is refused while a safe resolve runs, as a konfig error naming the config path (`leaky_lib`'s
surface is wrong on purpose). Outside a safe resolve, and in other threads, nothing is refused."""

from __future__ import annotations

import os
import socket
import threading

import konfig
import leaky_lib
import pytest

konfig.declare_surface("leaky_lib", ["leaky_lib:*"])


def resolve(node: dict) -> object:
    return konfig.resolve({"x": {"inner": node}}, allowed=["leaky_lib"])


def refused(node: dict, *words: str) -> str:
    with pytest.raises(konfig.DisallowedTargetError) as info:
        resolve(node)
    message = str(info.value)
    assert "cfg.x.inner" in message, message  # the config path of the node that tried it
    for word in words:
        assert word in message, message
    return message


def call(name: str, *args: object) -> dict:
    return {"__qualname__": f"leaky_lib:{name}", **{str(i): a for i, a in enumerate(args)}}


def test_a_harmless_function_of_the_surface_runs():
    assert resolve(call("harmless", 1)) == {"x": {"inner": 2}}


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("launch", ("subprocess.Popen",)),
        ("system", ("os.system",)),
        ("write", ("for writing",)),
        ("append", ("for writing",)),
        ("raw_write", ("for writing",)),
    ],
)
def test_launching_and_writing_are_refused(name, words, tmp_path):
    target = tmp_path / "canary"
    refused(call(name, str(target)), *words)
    assert not target.exists()


def test_removing_renaming_and_making_folders_are_refused(tmp_path):
    keep = tmp_path / "keep"
    keep.write_text("mine")
    refused(call("remove", str(keep)), "os.remove")
    refused(call("rename", str(keep), str(tmp_path / "moved")), "os.rename")
    refused(call("make_folder", str(tmp_path / "new")), "os.mkdir")
    assert keep.read_text() == "mine" and not (tmp_path / "new").exists()


@pytest.mark.parametrize("path", ["/etc/passwd", "/etc/hostname", os.path.expanduser("~/.netrc")])
def test_reading_outside_the_installed_code_is_refused(path):
    refused(call("read", path), "reading", "outside the installed code")


def test_listing_a_folder_outside_the_installed_code_is_refused():
    refused(call("listing", "/root"), "listing")
    refused(call("listing", "/etc"), "listing")


def test_reading_installed_code_is_allowed():
    assert "def harmless" in resolve(call("read", leaky_lib.__file__))["x"]["inner"]


def test_a_socket_is_refused():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        refused(call("connect", server.getsockname()[1]), "socket")
    finally:
        server.close()


@pytest.mark.parametrize("name", ["evaluate", "execute", "compile_it"])
def test_code_from_data_is_refused(name, tmp_path):
    target = tmp_path / "canary"
    refused(call(name, f"open({str(target)!r}, 'w').close()" if name != "evaluate" else "1 + 1"), "code")
    assert not target.exists()


def test_importing_from_a_folder_a_config_chose_is_refused(tmp_path):
    canary = tmp_path / "canary"
    (tmp_path / "planted_module_zz.py").write_text(f"open({str(canary)!r}, 'w').close()\n")
    refused(call("import_from", str(tmp_path), "planted_module_zz"), "planted_module_zz")
    assert not canary.exists()


def test_setting_the_environment_is_refused():
    refused(call("set_env", "KONFIG_AUDIT_CANARY"), "os.putenv")
    os.environ.pop("KONFIG_AUDIT_CANARY", None)  # os.environ's dict changed before putenv was refused


def test_a_refusal_the_library_caught_still_fails_the_resolve(tmp_path):
    target = tmp_path / "canary"
    refused(call("swallowed_write", str(target)), "for writing")
    assert not target.exists()


def test_outside_a_safe_resolve_nothing_is_refused(tmp_path):
    leaky_lib.write(str(tmp_path / "mine"))  # the hook is installed, but not in force
    assert (tmp_path / "mine").read_text() == "x"
    assert konfig.resolve(call("write", str(tmp_path / "trusted"))) is None  # no allowed=: trusted config
    assert (tmp_path / "trusted").exists()


def test_another_thread_is_not_affected_while_a_safe_resolve_runs(tmp_path):
    written = []

    def other() -> None:
        leaky_lib.write(str(tmp_path / "other"))
        written.append(True)

    thread = threading.Thread(target=other)
    resolve(call("harmless", 1))
    thread.start()
    thread.join()
    assert written == [True]


def test_a_path_through_an_always_readable_folder_is_judged_where_it_leads():
    # `/sys/../etc/hostname` is /etc/hostname: the readable system folders are checked after resolving `..`.
    refused(call("read", "/sys/../etc/hostname"), "reading")
    refused(call("listing", "/sys/../root"), "listing")
