"""What this process compiled: seconds per program (tracing, lowering and XLA compiling, a read from the
persistent compilation cache included), reported by JAX through `jax.monitoring`.

    compiles = CompileLog()          # counts from now on
    ...                              # train
    compiles.seconds()               # 2.31: every program's, together
    compiles.programs()              # {"init_state": 0.72, "train_step": 0.31, "fused_steps": 1.2, ...}
    compiles.summary()               # "3 programs in 2.3s: fused_steps 1.2s, init_state 0.72s, train_step 0.31s"

A program is named after the function jitted (`jit(train_step)` -> `train_step`); JAX's small eager
operations (an `x[i]` outside a compiled function) are programs too, each named after its operation.
"""

from __future__ import annotations

import threading

import jax

# JAX's compile phases, reported through `jax.monitoring` with the function's name.
_COMPILE_EVENTS = frozenset(
    {
        "/jax/core/compile/jaxpr_trace_duration",
        "/jax/core/compile/jaxpr_to_mlir_module_duration",
        "/jax/core/compile/backend_compile_duration",
    }
)
_BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"
# Programs taking less than this are counted together in `summary()`.
SMALL_SECONDS = 0.05

_lock = threading.Lock()
_seconds: dict[str, float] = {}  # this process's, by program, since the first CompileLog
_compiled: dict[str, int] = {}  # XLA compiles (or cache reads) by program
_listening = [False]


def program_name(fun_name: object) -> str:
    """`"jit(_fused_steps)"` -> `"fused_steps"`: the jitted function's name, without `jit(...)` and leading
    underscores."""
    name = str(fun_name or "?")
    while name.startswith(("jit(", "pjit(")) and name.endswith(")"):
        name = name[name.index("(") + 1 : -1]
    return name.lstrip("_") or name


def _on_duration(event: str, seconds: float, *, fun_name: object = None, **_: object) -> None:
    if event not in _COMPILE_EVENTS:
        return
    name = program_name(fun_name)
    with _lock:
        _seconds[name] = _seconds.get(name, 0.0) + seconds
        if event == _BACKEND_COMPILE:
            _compiled[name] = _compiled.get(name, 0) + 1


class CompileLog:
    """Compile seconds of this process since this log was made (tracing, lowering and XLA compiling, a read
    from the persistent compilation cache included), in all and per program, as JAX reports them.

    Usage: `compiles = CompileLog(); trainer.train(); compiles.summary()  # "3 programs in 2.3s: ..."`.
    """

    def __init__(self) -> None:
        with _lock:
            if not _listening[0]:  # one listener for the process, registered once
                jax.monitoring.register_event_duration_secs_listener(_on_duration)
                _listening[0] = True
            self._seconds_at_start = dict(_seconds)
            self._compiled_at_start = dict(_compiled)

    def seconds(self) -> float:
        """Every program's compile seconds together."""
        return sum(self.programs().values())

    def programs(self) -> dict[str, float]:
        """Compile seconds by program, the longest first; only programs that compiled since the log was made
        (a function traced but not compiled again, e.g. an abstract evaluation, is left out)."""
        with _lock:
            seconds, compiled = dict(_seconds), dict(_compiled)
        found = {
            name: total - self._seconds_at_start.get(name, 0.0)
            for name, total in seconds.items()
            if compiled.get(name, 0) > self._compiled_at_start.get(name, 0)
        }
        return dict(sorted(found.items(), key=lambda item: -item[1]))

    def summary(self, limit: int = 5, width: int = 90) -> str:
        """`"3 programs in 2.3s: fused_steps 1.2s, init_state 0.72s, train_step 0.31s"`, in at most `width`
        characters; programs under `SMALL_SECONDS`, past `limit` or past the width are counted together
        (`+ 2 more 0.04s`)."""
        programs = list(self.programs().items())
        count = len(programs)
        head = f"{count} program{'s' if count != 1 else ''} in {_secs(sum(s for _, s in programs))}"
        candidates = [(n, s) for n, s in programs if s >= SMALL_SECONDS][:limit]
        for shown in range(len(candidates), -1, -1):
            parts = [f"{name} {_secs(s)}" for name, s in candidates[:shown]]
            rest = [s for n, s in programs if (n, s) not in candidates[:shown]]
            if rest:
                parts.append(f"+ {len(rest)} more {_secs(sum(rest))}")
            line = head + (": " + ", ".join(parts) if parts else "")
            if len(line) <= width or shown == 0:
                return line
        return head


def _secs(seconds: float) -> str:
    return f"{seconds:.2g}s" if seconds < 1 else f"{seconds:.1f}s"
