"""Safe mode's second line: while a safe resolve runs, a PEP 578 audit hook refuses what no config may do.

The policy (`allowed=`) decides what a config may build; this hook does not depend on that list being
perfect. In the thread or context of a safe resolve (a context variable: other threads and the rest of
the program are not affected), it refuses, by raising `konfig.DisallowedTargetError`:

* starting programs (`subprocess`, `os.system`, `os.exec*`, `os.spawn*`, `os.posix_spawn`, `os.fork`,
  `pty.spawn`), sending signals, starting threads, loading C libraries (`ctypes`);
* sockets (every `socket.*` event), `urllib` requests, `webbrowser`, `sqlite3` connections;
* opening a file for writing, removing, renaming, creating or changing files and folders (`os.remove`,
  `os.rename`, `os.mkdir`, `shutil.*`, `tempfile.*`), setting the environment or the working folder;
* reading or listing a file outside the installed code (the standard library, site-packages and the
  folders on `sys.path` when the resolve began): `open("/etc/passwd")`, `os.listdir("/root")`;
* compiling or executing code (`compile`, `exec`, `eval`, `code.__new__`, `marshal.loads`, unpickling
  globals) except while a module is being imported;
* importing a module that is neither in the standard library nor an installed distribution, nor
  already imported (code from a folder a config chose);
* installing audit hooks, tracers or profilers.

One exception is declared by the program, not by a config: a library cache (`_library_caches`), a folder
that only the named library code may read, write and list in, such as JAX's persistent compilation cache,
which stores a compiled program when a resolve compiles one (`jax.random.key(0)` in a config).

The first refusal is kept, so that a resolve whose code caught the error still fails
(`take_refusal`). Environment reads (`os.environ`) raise no audit event: only the policy guards them.

Usage: `token = enter(); try: ... finally: leave(token)`; `install()` once, when safe mode loads;
`allow_library_cache("/home/me/.cache/kd/jax", code=[".../jax/_src/lru_cache.py"])`.
"""

from __future__ import annotations

import contextvars
import os
import platform
import sys
import sysconfig

from ._errors import DisallowedTargetError
from ._library_caches import LIBRARY_CACHES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.startfile",
        "os.kill",
        "os.killpg",
        "signal.pthread_kill",
        "pty.spawn",
        "_thread.start_new_thread",
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.call_function",
        "ctypes.cdata",
        "ctypes.addressof",
        "ctypes.create_string_buffer",
        "ctypes.string_at",
        "ctypes.wstring_at",
        "webbrowser.open",
        "urllib.Request",
        "sqlite3.connect",
        "sqlite3.connect/handle",
        "sys.addaudithook",
        "sys.settrace",
        "sys.setprofile",
        "sys._current_frames",
        "os.chdir",
        "os.chroot",
        "os.setuid",
        "mmap.__new__",
        "winreg.OpenKey",
    }
)
_WRITE_EVENTS = frozenset(
    {
        "os.remove",
        "os.rename",
        "os.rmdir",
        "os.mkdir",
        "os.chmod",
        "os.chown",
        "os.chflags",
        "os.lchflags",
        "os.lchmod",
        "os.lchown",
        "os.link",
        "os.symlink",
        "os.truncate",
        "os.utime",
        "os.mkfifo",
        "os.mknod",
        "os.setxattr",
        "os.removexattr",
        "shutil.copyfile",
        "shutil.copymode",
        "shutil.copystat",
        "shutil.copytree",
        "shutil.rmtree",
        "shutil.move",
        "shutil.chown",
        "shutil.make_archive",
        "shutil.unpack_archive",
        "tempfile.mkstemp",
        "tempfile.mkdtemp",
    }
)
# Allowed while a module is being imported (libraries set their environment variables at import).
_ENV_EVENTS = frozenset({"os.putenv", "os.unsetenv"})
_CODE_EVENTS = frozenset(
    {"compile", "exec", "code.__new__", "marshal.loads", "marshal.load", "pickle.find_class", "function.__new__"}
)
_LIST_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob", "glob.glob/2", "os.listxattr"})
# File events allowed inside the temporary and cache folders while a module is being imported.
_CACHE_EVENTS = frozenset({"tempfile.mkdtemp", "tempfile.mkstemp", "os.mkdir"})
_WATCHED = frozenset(
    {"open", "import", *_PROCESS_EVENTS, *_WRITE_EVENTS, *_ENV_EVENTS, *_CODE_EVENTS, *_LIST_EVENTS}
)
_WATCHED_PREFIXES = ("socket.", "ctypes.")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_ALWAYS_READABLE = frozenset(
    {os.devnull, "/dev/urandom", "/dev/random", "/proc/stat", "/proc/cpuinfo", "/proc/meminfo", "/proc/self/cgroup"}
)
# The machine's hardware, CPU and memory limits, which numerical libraries read to find accelerators and
# size their thread pools (no secrets there, unlike /proc/<pid>/environ).
_SYSTEM_INFO_FOLDERS = ("/sys/",)


class _Scope:
    """One safe resolve's state: the folders it may read, and the first event refused."""

    __slots__ = ("busy", "caches", "refused", "roots")

    def __init__(self, roots: tuple[str, ...], caches: tuple[str, ...]) -> None:
        self.roots = roots
        self.caches = caches
        self.refused: str | None = None
        self.busy = False


_FILE_EVENTS = frozenset({"open", *_WRITE_EVENTS, *_LIST_EVENTS})

_SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("konfig_audit_scope", default=None)
_INSTALLED = False
_KNOWN_TOP_LEVEL: frozenset[str] | None = None


def install() -> None:
    """Adds the audit hook, once per interpreter (an audit hook cannot be removed; outside a safe resolve
    it returns at once)."""
    global _INSTALLED
    if not _INSTALLED:
        sys.addaudithook(_hook)
        _INSTALLED = True


def enter() -> contextvars.Token[_Scope | None]:
    """Turns the hook on for this context (a safe resolve's whole run); nested calls keep the outer scope."""
    install()
    current = _SCOPE.get()
    if current is not None:
        return _SCOPE.set(current)
    _known_top_level()  # read installed distributions now, not from inside the hook
    platform.uname().processor  # noqa: B018 (cached now: it runs `uname -p` once, which the hook refuses)
    return _SCOPE.set(_Scope(_readable_roots(), _cache_folders()))


def _library_cache_use(event: str, args: tuple[Any, ...]) -> bool:
    """Is this file event on a library cache's folder, from that library's code (on the stack)?"""
    paths = [a for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))] if event != "open" else args[:1]
    folders = []
    for path in paths:
        try:
            full = os.path.realpath(os.path.abspath(os.fsdecode(os.fspath(path))))
        except TypeError:
            return False
        matching = [c for c in LIBRARY_CACHES if full == c[0] or full.startswith(c[0] + os.sep)]
        if not matching:
            return False
        folders.append(matching)
    if not folders:
        return False
    writers = frozenset().union(*(files for matching in folders for _, files in matching))
    frame = sys._getframe(3)
    depth = 0
    while frame is not None and depth < 200:
        if frame.f_code.co_filename in writers:
            return True
        frame = frame.f_back
        depth += 1
    return False


def leave(token: contextvars.Token[_Scope | None]) -> None:
    _SCOPE.reset(token)


def take_refusal() -> str | None:
    """The first event refused in this context's scope since the last call (then forgotten), or None."""
    scope = _SCOPE.get()
    if scope is None or scope.refused is None:
        return None
    refused, scope.refused = scope.refused, None
    return refused


def _hook(event: str, args: tuple[Any, ...], _current: Any = _SCOPE.get) -> None:
    # `_current` is bound now: at interpreter exit this module's globals are cleared while events still come.
    scope = _current()
    if scope is None or scope.busy or (event not in _WATCHED and not event.startswith(_WATCHED_PREFIXES)):
        return
    scope.busy = True
    try:
        reason = _judge(event, args, scope)
    except Exception:  # an argument the hook cannot read: refuse rather than guess
        reason = f"the event {event!r}"
    finally:
        scope.busy = False
    if reason is not None:
        if scope.refused is None:
            scope.refused = reason
        raise DisallowedTargetError(f"safe mode refused {reason} while resolving")


def _judge(event: str, args: tuple[Any, ...], scope: _Scope) -> str | None:
    if LIBRARY_CACHES and event in _FILE_EVENTS and _library_cache_use(event, args):
        return None
    if event == "open":
        return _judge_open(args, scope)
    if event == "import":
        return _judge_import(args, scope)
    if event == "exec" and args and _foreign_code(args[0], scope):
        return f"running {_show_path(args[0].co_filename)} (a module outside the installed code)"
    if event in _CODE_EVENTS:
        return None if _importing() else f"running code from data ({event})"
    if event in _ENV_EVENTS:
        return None if _importing() else f"{event} (safe mode changes no environment variable)"
    if event.startswith("ctypes.") and _importing():
        return None  # a library loading its C parts (numpy, jax) while it is imported
    if event in ("socket.__new__", "socket.bind") and _importing() and _loopback_only(event, args):
        return None  # urllib3 probes for IPv6 at import by binding a socket to ::1 (it sends nothing)
    if event in _PROCESS_EVENTS or event.startswith("socket."):
        return f"{event} (safe mode starts no program, thread or connection)"
    if event in _WRITE_EVENTS:
        if event in _CACHE_EVENTS and args and _importing() and _in_cache_folder(args[0], scope):
            return None  # a library making its cache folder while it is imported (wandb's media folder)
        return f"{event}({_show_path(args[0]) if args else ''}) (safe mode changes no file)"
    if event in _LIST_EVENTS:
        path = args[0] if args else "."
        if not _readable(path, scope) and not _importing():
            return f"listing {_show_path(path)} (outside the installed code safe mode reads)"
    return None


def _foreign_code(code: Any, scope: _Scope) -> bool:
    """Is `code` a module's code from a file outside the installed code (a folder a config put on the path)?"""
    filename = getattr(code, "co_filename", None)
    if not isinstance(filename, str) or not filename or filename.startswith("<"):
        return False  # code compiled from a string: judged as code from data
    return not _readable(filename, scope)


def _loopback_only(event: str, args: tuple[Any, ...]) -> bool:
    if event == "socket.__new__":
        return True  # a socket not yet bound or connected to anything
    address = args[1] if len(args) > 1 else None
    return isinstance(address, tuple) and bool(address) and address[0] in ("::1", "127.0.0.1", "localhost")


def _judge_open(args: tuple[Any, ...], scope: _Scope) -> str | None:
    path, mode, flags = (*args, None, None, None)[:3]
    writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
        isinstance(flags, int) and flags & _WRITE_FLAGS
    )
    if writing:
        if path == os.devnull or (_importing() and _in_cache_folder(path, scope)):
            return None  # a library writing its cache (or nothing) while it is imported
        return f"opening {_show_path(path)} for writing (safe mode changes no file)"
    if isinstance(path, int):
        return None  # an open file descriptor
    if not _readable(path, scope) and not _importing():  # what a module reads as it is imported is its own
        return f"reading {_show_path(path)} (outside the installed code safe mode reads)"
    return None


def _judge_import(args: tuple[Any, ...], scope: _Scope) -> str | None:
    name = args[0] if args else None
    if not isinstance(name, str):
        return None
    top = name.partition(".")[0]
    if top in sys.modules or top in sys.stdlib_module_names or top in _known_top_level():
        return None
    found = _found_outside_roots(top, scope)
    if found is None:
        return None  # not installed anywhere: the import fails by itself (an optional dependency probed)
    return f"importing {name!r} from {found} (neither installed nor in the standard library)"


def _found_outside_roots(top: str, scope: _Scope) -> str | None:
    """Where on `sys.path` a module `top` would be found outside the installed code, or None."""
    for entry in sys.path:
        if not isinstance(entry, str):
            continue
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        if any(n == top or n.partition(".")[0] == top for n in names) and not _readable(folder, scope):
            return folder
    return None


def _importing() -> bool:
    """Is a module being imported in this thread (the import system's frames on the stack)?"""
    frame = sys._getframe(2)
    depth = 0
    while frame is not None and depth < 400:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
        depth += 1
    return False


def _readable(path: Any, scope: _Scope) -> bool:
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        return False
    full = os.path.realpath(os.path.abspath(text))  # `/sys/../etc/passwd` is /etc/passwd
    if full in _ALWAYS_READABLE or full.startswith(_SYSTEM_INFO_FOLDERS):
        return True
    return any(full == root or full.startswith(root + os.sep) for root in scope.roots)


def _in_cache_folder(path: Any, scope: _Scope) -> bool:
    """Is `path` in the temporary folder or the user's cache folder (where libraries keep caches)?"""
    try:
        full = os.path.realpath(os.path.abspath(os.fsdecode(os.fspath(path))))
    except TypeError:
        return False
    return any(full.startswith(folder + os.sep) for folder in scope.caches)


def _cache_folders() -> tuple[str, ...]:
    """The temporary folder and the user's cache folder, found before the hook is on (`tempfile` holds a
    lock while it looks, so the hook must never ask it)."""
    import tempfile

    folders = (tempfile.gettempdir(), os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"))
    return tuple(os.path.realpath(folder) for folder in folders)


def _show_path(path: Any) -> str:
    text = repr(path)
    return text if len(text) <= 120 else text[:117] + "..."


def _readable_roots() -> tuple[str, ...]:
    """The installed code: the standard library, site-packages, and the folders on `sys.path` now
    (an editable install's source folder), but never `/`, the home folder or the working folder itself."""
    paths = sysconfig.get_paths()
    candidates = [paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    candidates += [sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path]
    refused = {os.sep, os.path.expanduser("~"), os.getcwd()}
    roots = []
    for candidate in candidates:
        if not isinstance(candidate, str) or not candidate:
            continue
        full = os.path.realpath(os.path.abspath(candidate))
        if full not in refused and os.path.isdir(full):
            roots.append(full)
    return tuple(dict.fromkeys(roots))


def _known_top_level() -> frozenset[str]:
    global _KNOWN_TOP_LEVEL
    if _KNOWN_TOP_LEVEL is None:
        from importlib.metadata import packages_distributions

        _KNOWN_TOP_LEVEL = frozenset(packages_distributions())
    return _KNOWN_TOP_LEVEL
