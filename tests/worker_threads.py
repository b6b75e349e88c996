"""Work run in threads of their own, as workers run it, for tests of what happens at the same moment."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from django.db import connections

T = TypeVar("T")


def in_a_thread_of_its_own(work: Callable[[], T]) -> T:
    """`work()` in a new thread, its result or error brought back, its database connections closed as it
    ends: Playwright's event loop owns a browser test's thread (Django refuses ORM calls there), and a
    thread that ends holding a pooled connection keeps it from the pool for good (ten such and every
    later test waited 30 s for a connection, then failed)."""

    def run() -> T:
        try:
            return work()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()


class WorkerThreads:
    """Each thread's error is kept and raised in the test's own thread by `join`, and each thread's
    database connections are closed when it ends (PostgreSQL refuses to drop the test database beside
    them)."""

    def __init__(self) -> None:
        self.errors: list[BaseException] = []
        self.threads: list[threading.Thread] = []

    def start(self, work: Callable[..., Any], *args: Any) -> threading.Thread:
        def run() -> None:
            try:
                work(*args)
            except BaseException as error:  # surfaced in the test's thread
                self.errors.append(error)
            finally:
                connections.close_all()

        thread = threading.Thread(target=run)
        self.threads.append(thread)
        thread.start()
        return thread

    def join(self, timeout: float = 60) -> None:
        for thread in self.threads:
            thread.join(timeout)
        assert not self.errors, self.errors
