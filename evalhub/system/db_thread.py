"""A database thread of its own for an async runner (a batch of debates, a judge run).

Django's ORM is synchronous. asgiref's sync_to_async would send every runner's queries to
one process-wide thread (serialising all batches in a worker) and refuses to run under an
outer async-to-sync bridge; this gives each runner one thread and one connection instead,
closed when the runner ends. Context variables (e.g. the live outbox) travel with each call.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from django.db import connections

from evalhub.db_pool import release_connection

T = TypeVar("T")


class DatabaseThread:
    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalhub-db")

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        context = contextvars.copy_context()
        call = lambda: context.run(self._call, function, *args)  # noqa: E731
        return await asyncio.get_running_loop().run_in_executor(self.executor, call)

    @staticmethod
    def _call(function: Callable[..., T], *args: Any) -> T:
        try:
            return function(*args)
        finally:
            release_connection()  # a pooled connection is not held while the runner awaits its models

    def close(self) -> None:
        self.executor.submit(connections.close_all).result()
        self.executor.shutdown()

    async def __aenter__(self) -> DatabaseThread:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.close)


class GroupCommit:
    """Writes that arrive while the previous one runs go together in the next (a group commit).

    `await commit.add(item)` returns the item's result once `write_many(items)` (which returns
    one result per item, in order) has stored it, in the database thread. An idle writer starts
    at once, so a lone item is not delayed; under load, one transaction carries everything that
    queued up meanwhile. A failed write fails every item it carried.
    """

    def __init__(self, db: DatabaseThread, write_many: Callable[[list[Any]], Sequence[Any]]) -> None:
        self.db, self.write_many = db, write_many
        self.pending: list[tuple[Any, asyncio.Future]] = []
        self.writer: asyncio.Task | None = None

    async def add(self, item: Any) -> Any:
        done = asyncio.get_running_loop().create_future()
        self.pending.append((item, done))
        if self.writer is None or self.writer.done():
            self.writer = asyncio.ensure_future(self._drain())
        return await done

    async def _drain(self) -> None:
        while self.pending:
            batch, self.pending = self.pending, []
            try:
                results = list(await self.db.run(self.write_many, [item for item, _ in batch]))
                if len(results) != len(batch):  # a waiter left without its result would wait forever
                    raise ValueError(f"{self.write_many.__name__} returned {len(results)} results for {len(batch)}")
            except Exception as error:
                for _, done in batch:
                    if not done.done():
                        done.set_exception(error)
            else:
                for (_, done), result in zip(batch, results, strict=True):
                    if not done.done():
                        done.set_result(result)
