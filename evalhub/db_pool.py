"""Give a pooled PostgreSQL connection back between pieces of long work, and size a worker's pool.

Django returns a thread's connection to the pool when it closes it, which it does at the end of a
request or a task. A worker thread on a long chunk (its heartbeat, a runner's database thread)
would otherwise hold one connection for minutes while it mostly waits on model calls, and a
pool smaller than the threads would run dry. Without a pool (SQLite, EVALHUB_DB_POOL_MAX_SIZE=0)
closing would mean reconnecting for every call, so the connection is kept.

A worker's pool is sized from what the worker runs (`fit_pool_to_worker`, at `worker_init`): with
the shipped 16-thread worker and a pool of 10, threads waited past the pool's timeout and whole jobs
failed with "couldn't get a connection".
"""

from __future__ import annotations

from django.db import connections


def pooled(alias: str = "default") -> bool:
    return bool(connections.settings[alias].get("OPTIONS", {}).get("pool"))


def release_connection(alias: str = "default") -> None:
    """Return this thread's connection to the pool, unless a transaction is open on it."""
    if not pooled(alias):
        return
    connection = connections[alias]
    if connection.connection is not None and not connection.in_atomic_block:
        connection.close()


# What one task of a worker may hold at once: the task's own connection (claim, record), its chunk's
# heartbeat and its runner's database thread. Each gives its connection back between uses, but they
# may all hold one at the same moment, and a thread that waits past the pool's timeout fails its chunk.
CONNECTIONS_PER_TASK = 3
# The process's own: the stall watchdog and the worker's main thread (worker checks, signals).
CONNECTIONS_PER_PROCESS = 2
THREADED_POOLS = ("thread", "gevent", "eventlet")  # Celery pools that run many tasks in one process


def pool_name(pool_cls: object) -> str:
    """A Celery pool as the worker was given it (an alias such as "threads", or the class)."""
    if isinstance(pool_cls, str):
        return pool_cls
    return f"{getattr(pool_cls, '__module__', '')}.{getattr(pool_cls, '__qualname__', pool_cls)}"


def connections_needed(concurrency: int, pool_cls: object) -> int:
    """The pooled connections a worker process needs so that no thread of it ever waits for one: a
    threaded pool runs `concurrency` tasks in this process; prefork and solo run one per process."""
    threaded = any(word in pool_name(pool_cls).lower() for word in THREADED_POOLS)
    return (max(1, concurrency) if threaded else 1) * CONNECTIONS_PER_TASK + CONNECTIONS_PER_PROCESS


def fit_pool_to_worker(concurrency: int, pool_cls: object, *, explicit: bool, alias: str = "default") -> str:
    """Grow this process's connection pool to what its worker runs, before any connection is made;
    returns a warning when a configured size (`explicit`) was too small, "" otherwise. The pool is
    never shrunk: the configured size is a floor (the web processes' size)."""
    options = connections.settings[alias].get("OPTIONS", {}).get("pool")
    if not isinstance(options, dict):
        return ""
    needed = connections_needed(concurrency, pool_cls)
    configured = int(options.get("max_size", 0) or 0)
    if configured >= needed:
        return ""
    options["max_size"] = needed
    wrapper = connections[alias]
    if alias in getattr(type(wrapper), "_connection_pools", {}):  # made early (a check at start): made again
        wrapper.close_pool()  # type: ignore[attr-defined]  # the PostgreSQL backend's
    if not explicit:
        return ""
    return (
        f"EVALHUB_DB_POOL_MAX_SIZE={configured} cannot hold this worker's threads ({pool_name(pool_cls)} pool, "
        f"concurrency {concurrency}: {CONNECTIONS_PER_TASK} connections a task, {CONNECTIONS_PER_PROCESS} for the "
        f"process); its pool holds up to {needed} instead. Make sure PostgreSQL's max_connections allows every "
        "process's pool."
    )
