"""Give a pooled PostgreSQL connection back between pieces of long work, and size a worker's pool.

Django returns a thread's connection to the pool when it closes it, which it does at the end of a
request or a task. A worker thread on a long chunk (its heartbeat, a runner's database thread)
would otherwise hold one connection for minutes while it mostly waits on model calls, and a
pool smaller than the threads would run dry. Without a pool (SQLite, EVALHUB_DB_POOL_MAX_SIZE=0)
closing would mean reconnecting for every call, so the connection is kept.

A worker's pool is sized from what the worker runs (`fit_pool_to_worker`, at `worker_init`): with
the shipped 16-thread worker and a pool of 10, threads waited past the pool's timeout and whole jobs
failed with "couldn't get a connection". A pool the server cannot hold fails the same way, later: once
the worker is up it asks PostgreSQL how many connections are left for it (`pool_room_on_server`) and
says so in its log when its pool may need more.
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


def pool_room_on_server(alias: str = "default") -> str:
    """A warning when this process's pool may open more connections than PostgreSQL has left for it
    (its max_connections, less the superusers' reserve for a role that is not one, less the connections
    other processes hold now); "" where they fit, or where there is no pool. The server refuses a
    connection past its limit ("too many clients"), and a thread that gets none within the pool's
    timeout fails its chunk."""
    options = connections.settings[alias].get("OPTIONS", {}).get("pool")
    if not isinstance(options, dict):
        return ""
    size = int(options.get("max_size", 0) or 0)
    with connections[alias].cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('max_connections')::int, current_setting('superuser_reserved_connections')::int,"
            " (SELECT rolsuper FROM pg_roles WHERE rolname = current_user),"
            " (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())"
        )
        limit, reserved, superuser, others = cursor.fetchone()
    release_connection(alias)
    left = limit - (0 if superuser else reserved) - others
    if size <= left:
        return ""
    return (
        f"this worker's PostgreSQL pool may open {size} connections, but the server has {left} left for it "
        f"(max_connections {limit}{'' if superuser else f', {reserved} reserved for superusers'}, {others} open "
        f"in other processes): raise max_connections to at least {limit + size - left}, or run fewer threads a "
        "worker. A thread that gets no connection within EVALHUB_DB_POOL_TIMEOUT fails its chunk."
    )
