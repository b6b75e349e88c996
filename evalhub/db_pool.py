"""Give a pooled PostgreSQL connection back between pieces of long work.

Django returns a thread's connection to the pool when it closes it, which it does at the end of a
request or a task. A worker thread on a long chunk (its heartbeat, a runner's database thread)
would otherwise hold one connection for minutes while it mostly waits on model calls, and a
pool smaller than the threads would run dry. Without a pool (SQLite, EVALHUB_DB_POOL_MAX_SIZE=0)
closing would mean reconnecting for every call, so the connection is kept.
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
