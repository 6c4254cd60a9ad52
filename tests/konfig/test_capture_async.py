"""`konfig.imports()` captures the imports of its own block only: other asyncio tasks and
threads importing while the block waits get the real modules."""

from __future__ import annotations

import asyncio
import threading
import types

import konfig


def _import_json_statement() -> object:
    import json  # An import statement of this module, as the capturing block's are.

    return json


async def _capture_while_awaiting(inside: asyncio.Event, done: asyncio.Event) -> object:
    with konfig.imports():
        import json as captured

        inside.set()
        await done.wait()  # Another task runs (and imports) while this block is open.
    return captured


async def _import_during_the_other_tasks_block(inside: asyncio.Event, done: asyncio.Event) -> object:
    await inside.wait()
    try:
        return _import_json_statement()
    finally:
        done.set()


def test_task_importing_while_another_task_captures_gets_the_real_module():
    async def main() -> tuple[object, object]:
        inside, done = asyncio.Event(), asyncio.Event()
        return await asyncio.gather(
            _capture_while_awaiting(inside, done), _import_during_the_other_tasks_block(inside, done)
        )

    captured, imported = asyncio.run(main())
    assert isinstance(imported, types.ModuleType) and imported.__name__ == "json"
    assert not isinstance(captured, types.ModuleType)  # the capturing task got its proxy
    assert konfig.ConfigDict(loads=captured.loads).loads["__const__"] == "json:loads"


def test_capture_resumes_in_its_task_after_the_await():
    async def main() -> object:
        with konfig.imports():
            await asyncio.sleep(0)
            import json

        return json

    assert not isinstance(asyncio.run(main()), types.ModuleType)


def test_thread_importing_while_another_thread_captures_gets_the_real_module():
    inside, done = threading.Event(), threading.Event()
    imported: list[object] = []

    def other_thread() -> None:
        inside.wait()
        imported.append(_import_json_statement())
        done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with konfig.imports():
        inside.set()
        done.wait(timeout=60)
        import json as captured
    thread.join()
    assert isinstance(imported[0], types.ModuleType) and not isinstance(captured, types.ModuleType)
