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
THREADED_POOLS = ("threads", "thread", "gevent", "eventlet")  # pools that run many tasks in one process


def connections_needed(concurrency: int, pool: str) -> int:
    """The pooled connections a worker process needs so that no thread of it ever waits for one: a
    threads pool runs `concurrency` tasks in this process; prefork and solo run one per process."""
    tasks = max(1, concurrency) if pool.lower() in THREADED_POOLS else 1
    return tasks * CONNECTIONS_PER_TASK + CONNECTIONS_PER_PROCESS


def fit_pool_to_worker(concurrency: int, pool: str, *, explicit: bool, alias: str = "default") -> str:
    """Grow this process's connection pool to what its worker runs, before any connection is made;
    returns a warning when a configured size (`explicit`) was too small, "" otherwise. The pool is
    never shrunk: the configured size is a floor (the web processes' size)."""
    options = connections.settings[alias].get("OPTIONS", {}).get("pool")
    if not isinstance(options, dict):
        return ""
    needed = connections_needed(concurrency, pool)
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
        f"EVALHUB_DB_POOL_MAX_SIZE={configured} cannot hold this worker's threads ({pool} pool, concurrency "
        f"{concurrency}: {CONNECTIONS_PER_TASK} connections a task, {CONNECTIONS_PER_PROCESS} for the process); "
        f"its pool holds {needed} instead. Make sure PostgreSQL's max_connections allows every process's pool."
    )
