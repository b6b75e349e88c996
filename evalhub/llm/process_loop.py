"""One event loop per process, in a thread of its own, for connections that every other loop shares.

A redis.asyncio connection belongs to the loop that opened it, and each Celery task runs a loop of
its own, so pools per loop multiply with threads: one worker of 40 threads held 1,238 connections
to Redis (benchmarks/connection_load.py). Redis commands handed to this loop share one bounded pool
per process, whatever the number of threads; a hand-over costs one thread switch per command.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_owner_pid = 0


def process_loop() -> asyncio.AbstractEventLoop:
    """This process's shared loop, started on first use (again in a forked child)."""
    global _loop, _owner_pid
    with _lock:
        if _loop is None or _owner_pid != os.getpid() or _loop.is_closed():
            _loop, _owner_pid = asyncio.new_event_loop(), os.getpid()
            threading.Thread(target=_loop.run_forever, name="evalhub-process-loop", daemon=True).start()
        return _loop


async def on_process_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """Await `coroutine` on the process's shared loop (cancelling the caller cancels it there too)."""
    loop = process_loop()
    if asyncio.get_running_loop() is loop:
        return await coroutine
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, loop))
