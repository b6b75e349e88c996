"""A database thread of its own for an async runner (a batch of debates, a judge run).

Django's ORM is synchronous. asgiref's sync_to_async would send every runner's queries to
one process-wide thread (serialising all batches in a worker) and refuses to run under an
outer async-to-sync bridge; this gives each runner one thread and one connection instead,
closed when the runner ends. Context variables (e.g. the live outbox) travel with each call.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from django.db import connections

T = TypeVar("T")


class DatabaseThread:
    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalhub-db")

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        context = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(self.executor, lambda: context.run(function, *args))

    def close(self) -> None:
        self.executor.submit(connections.close_all).result()
        self.executor.shutdown()

    async def __aenter__(self) -> DatabaseThread:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.close)
