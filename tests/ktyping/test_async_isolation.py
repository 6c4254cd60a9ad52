# ruff: noqa: F821 - single-name shape specs like Float["n"] are not forward references
"""`with typechecked():` scopes belong to the thread or asyncio task that opened them."""

import asyncio
import threading

import ktyping
from ktyping import Float
from ktyping._scope import stack

from .arrays import f32


def test_tasks_suspended_inside_blocks_keep_their_own_dims() -> None:
    async def main() -> list[int]:
        first_in, second_in, first_out = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def first() -> int:
            with ktyping.typechecked():
                ktyping.check_type(f32(2), Float["n"])
                first_in.set()
                await second_in.wait()  # resumes while the second task is inside its block
                ktyping.check_type(f32(2), Float["n"])
                n = ktyping.dim["n"]
            first_out.set()
            return n

        async def second() -> int:
            await first_in.wait()
            with ktyping.typechecked():
                ktyping.check_type(f32(5), Float["n"])
                second_in.set()
                await first_out.wait()
                ktyping.check_type(f32(5), Float["n"])
                return ktyping.dim["n"]

        return list(await asyncio.gather(first(), second()))

    assert asyncio.run(main()) == [2, 5]


def test_a_task_sees_no_scope_of_another_task() -> None:
    async def main() -> list[object]:
        opened, done = asyncio.Event(), asyncio.Event()

        async def holder() -> None:
            with ktyping.typechecked():
                opened.set()
                await done.wait()

        async def looker() -> list[object]:
            await opened.wait()
            seen = list(stack())
            done.set()
            return seen

        _, seen = await asyncio.gather(holder(), looker())
        return seen

    assert asyncio.run(main()) == []


def test_one_block_object_entered_by_two_threads_keeps_their_scopes_apart() -> None:
    block = ktyping.typechecked()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def first() -> None:
        with block:
            ktyping.check_type(f32(2), Float["n"])
            first_in.set()
            second_in.wait(10)
            seen["first"] = ktyping.dim["n"]
        seen["first after"] = stack()  # exits while the other thread is still inside
        first_out.set()

    def second() -> None:
        first_in.wait(10)
        with block:
            ktyping.check_type(f32(7), Float["n"])
            second_in.set()
            first_out.wait(10)
            seen["second"] = ktyping.dim["n"]
        seen["second after"] = stack()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"first": 2, "first after": [], "second": 7, "second after": []}


def test_one_block_object_nests_in_one_thread() -> None:
    block = ktyping.typechecked()
    with block:
        ktyping.check_type(f32(2), Float["n"])
        with block:
            ktyping.check_type(f32(4), Float["n"])
            inner = ktyping.dim["n"]
        outer = ktyping.dim["n"]
    assert (inner, outer, stack()) == (4, 2, [])


def test_a_block_inside_a_checked_function_sees_its_own_dims_then_the_functions() -> None:
    @ktyping.typechecked
    def f(x: Float["n"]) -> tuple[int, int]:
        with ktyping.typechecked():
            ktyping.check_type(f32(9), Float["n"])
            inner = ktyping.dim["n"]
        return inner, ktyping.dim["n"]

    assert f(f32(3)) == (9, 3)


def test_a_block_a_checked_coroutine_awaits_inside_stays_active_when_it_resumes() -> None:
    @ktyping.typechecked
    async def work(x: Float["n"]) -> tuple[int, int]:
        with ktyping.typechecked():
            ktyping.check_type(f32(8), Float["n"])
            await asyncio.sleep(0)
            inner = ktyping.dim["n"]
        return inner, ktyping.dim["n"]

    assert asyncio.run(work(f32(3))) == (8, 3)


def test_a_generator_suspended_in_its_block_leaves_no_stale_scope() -> None:
    def rows():
        with ktyping.typechecked():
            ktyping.check_type(f32(3), Float["n"])
            yield ktyping.dim["n"]
            yield ktyping.dim["n"]

    with ktyping.typechecked():  # exits while the generator's block is still open
        gen = rows()
        first = next(gen)
    second = next(gen)
    gen.close()
    assert (first, second, stack()) == (3, 3, [])
