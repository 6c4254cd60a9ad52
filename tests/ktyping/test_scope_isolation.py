# ruff: noqa: F821 - single-name shape specs like Float["n"] are not forward references
"""Every checked call has its own dims: recursion, threads, exceptions, generators, coroutines."""

import asyncio
import threading

import ktyping
import pytest
from ktyping import Float, KTypeCheckError
from ktyping._scope import stack

from .arrays import f32


@ktyping.typechecked
def shrink(x: Float["n"], depth: int) -> Float["n"]:
    if depth:
        shrink(f32(x.shape[0] + 1), depth - 1)
        ktyping.check_type(x, Float["n"])  # still this call's n after the recursive call
    return x


def test_recursive_calls_with_other_shapes_do_not_share_bindings() -> None:
    assert shrink(f32(2), 3).shape == (2,)


def test_recursive_call_binds_its_own_dims() -> None:
    @ktyping.typechecked
    def outer(x: Float["n"], depth: int) -> int:
        inner = outer(f32(7), depth - 1) if depth else None
        return ktyping.dim["n"] if inner is None else inner * 10 + ktyping.dim["n"]

    assert outer(f32(3), 1) == 73


def test_exception_inside_a_checked_function_closes_its_scope() -> None:
    @ktyping.typechecked
    def fails(x: Float["n"]) -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails(f32(2))
    assert stack() == []


def test_exception_inside_a_manual_scope_closes_it() -> None:
    with pytest.raises(ValueError), ktyping.typechecked():
        ktyping.check_type(f32(2), Float["n"])
        raise ValueError
    assert stack() == []


def test_failed_argument_check_opens_no_scope() -> None:
    @ktyping.typechecked
    def f(x: Float["n"], y: Float["n"]) -> None:
        pass

    with pytest.raises(KTypeCheckError):
        f(f32(2), f32(3))
    assert stack() == []


def test_bindings_are_per_thread() -> None:
    inside, release = threading.Event(), threading.Event()
    seen = {}

    @ktyping.typechecked
    def hold(x: Float["n"], key: str, wait: bool) -> None:
        if wait:
            inside.set()
            release.wait(10)
        seen[key] = ktyping.dim["n"]

    worker = threading.Thread(target=hold, args=(f32(2), "worker", True))
    worker.start()
    inside.wait(10)  # the worker's call is open while this thread checks its own call
    hold(f32(5), "main", False)
    release.set()
    worker.join()
    assert seen == {"worker": 2, "main": 5}


def test_a_thread_does_not_see_another_threads_scope() -> None:
    errors = []
    with ktyping.typechecked():
        ktyping.check_type(f32(2), Float["n"])
        worker = threading.Thread(target=lambda: errors.append(_try_dim("n")))
        worker.start()
        worker.join()
    assert errors == ["NoActiveScopeError"]


def _try_dim(name: str) -> str:
    try:
        ktyping.dim[name]
    except Exception as e:
        return type(e).__name__
    return "no error"


@ktyping.typechecked
def rows(x: Float["b n"]):
    for row in x:
        yield ktyping.dim["n"], row


def test_suspended_generator_leaves_no_scope_open() -> None:
    gen = rows(f32(3, 2))
    next(gen)
    assert stack() == []
    gen.close()
    assert stack() == []


def test_generator_resumed_in_another_thread_sees_its_own_scope() -> None:
    gen = rows(f32(3, 2))
    assert next(gen)[0] == 2
    out = []
    worker = threading.Thread(target=lambda: out.append(next(gen)[0]))
    worker.start()
    worker.join()
    assert out == [2]


def test_interleaved_generators_keep_their_own_dims() -> None:
    a, b = rows(f32(2, 4)), rows(f32(2, 6))
    assert [next(a)[0], next(b)[0], next(a)[0], next(b)[0]] == [4, 6, 4, 6]


def test_concurrent_coroutines_see_their_own_dims() -> None:
    @ktyping.typechecked
    async def work(x: Float["n"], delay: float) -> int:
        await asyncio.sleep(delay)
        return ktyping.dim["n"]

    async def both() -> list[int]:
        # The first call resumes while the second one is suspended inside its own scope.
        return list(await asyncio.gather(work(f32(2), 0.0), work(f32(5), 0.05)))

    assert asyncio.run(both()) == [2, 5]


def test_coroutine_leaves_no_scope_open_while_suspended() -> None:
    @ktyping.typechecked
    async def work(x: Float["n"]) -> None:
        await asyncio.sleep(0)

    async def main() -> list:
        task = asyncio.ensure_future(work(f32(2)))
        await asyncio.sleep(0)  # the task is now suspended in its sleep
        open_scopes = list(stack())
        await task
        return open_scopes

    assert asyncio.run(main()) == []
