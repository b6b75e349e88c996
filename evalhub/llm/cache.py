"""A persistent cache of model responses, keyed by the request each call sends (`ChatClient._sent`).

Deterministic calls (temperature 0) are cached; sampled calls only when the caller names a
seed or a repeat index, so that asking for "the 3rd sample" twice gives the same sample
while fresh samples stay fresh.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

from evalhub.llm.types import Completion

logger = logging.getLogger(__name__)


def cache_key(provider: str, model: str, endpoint: str, request: dict[str, Any]) -> str:
    """The key of one call: where it goes and everything it asks (`ChatClient._sent`)."""
    payload = {"provider": provider, "model": model, "endpoint": endpoint, "request": request}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def is_cacheable(temperature: float, seed: int | None, repeat: int | None) -> bool:
    return temperature == 0 or seed is not None or repeat is not None


def encoded(completion: Completion) -> str:
    """A completion as the cache stores it (JSON text)."""
    # Its fields one level deep (asdict copies `raw` recursively first: a tenth of a millisecond per call).
    fields = {field.name: getattr(completion, field.name) for field in dataclass_fields(completion)}
    return json.dumps({**fields, "cached": False}, ensure_ascii=False, default=str)


def decoded(stored: str) -> Completion:
    """A stored completion, marked as served from the cache: no cost, no latency."""
    completion = Completion(**json.loads(stored))
    completion.cached, completion.cost_usd, completion.latency_s = True, 0.0, 0.0
    return completion


_thread: tuple[int, ThreadPoolExecutor] | None = None
_thread_made = threading.Lock()


def cache_thread() -> ThreadPoolExecutor:
    """The one thread of this process that reads and writes response caches, in the order asked: a
    caller need not wait for a write, since any read asked after it is made after it (awaiting a
    thread hop per write was about a seventh of a debate worker's CPU, measured). A forked worker
    makes its own: a child has none of its parent's threads."""
    global _thread
    made = _thread
    if made is not None and made[0] == os.getpid():
        return made[1]
    with _thread_made:
        if _thread is None or _thread[0] != os.getpid():
            _thread = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="response-cache"))
        return _thread[1]


class ResponseCache:
    """SQLite on disk (or in memory with path ':memory:'); safe to share between threads.

    Shared by every worker process of a machine. It only saves calls, so a cache that another
    process keeps locked (a worker killed mid-write, a slow disk) costs a miss, never the call."""

    def __init__(self, path: str | Path, busy_seconds: float = 5.0) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), timeout=busy_seconds, check_same_thread=False, isolation_level=None)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")  # kept in the file: usually set long ago
            # WAL without a sync on every commit: puts run on the event loop of a batch of debates,
            # and an fsync per call blocked it (the largest blocking frame in a profile of 100
            # debates). A power cut may lose the last few entries; those calls are simply made again.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, completion TEXT NOT NULL)")
        except sqlite3.OperationalError as error:  # reads and writes then miss until the lock is gone
            logger.warning("response cache %s unavailable at open (%s)", path, error)

    def get(self, key: str) -> Completion | None:
        try:
            with self._lock:
                row = self._db.execute("SELECT completion FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError as error:  # "database is locked": a miss, the call is made
            logger.warning("response cache unavailable for a read (%s)", error)
            return None
        return decoded(row[0]) if row is not None else None

    def put(self, key: str, completion: Completion) -> None:
        stored = encoded(completion)
        try:
            with self._lock:
                self._db.execute("INSERT OR REPLACE INTO responses (key, completion) VALUES (?, ?)", (key, stored))
        except sqlite3.OperationalError as error:  # the answer is returned anyway; only the saving is lost
            logger.warning("response cache unavailable for a write (%s)", error)

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def clear(self) -> None:
        """Forget every stored response (the tests start each from an empty cache)."""
        with self._lock:
            self._db.execute("DELETE FROM responses")


class PostgresResponseCache(ResponseCache):
    """The same cache in a PostgreSQL table (evalhub.system's CachedResponse makes it), shared by
    every worker on every machine: a call one worker paid for is a hit for all the others.

    Its own small pool of autocommit connections (at most MAX_CONNECTIONS per process, no lock
    around a query), so a put is visible at once, never waits for the caller's transaction, and
    callers in several threads ask at once. As on SQLite, a database that does not answer costs a
    miss, never the call."""

    MAX_CONNECTIONS = 4

    def __init__(self, dsn: str, table: str = "llm_response_cache") -> None:  # not super().__init__: it opens SQLite
        self._dsn, self._table = dsn, table
        self._lock = threading.Lock()  # guards only the making and closing of the pool, never a query
        self._pool: Any = None

    def _connections(self) -> Any:
        pool = self._pool
        if pool is not None:  # the hot path: no lock once the pool exists
            return pool
        with self._lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool  # imported only where this cache is

                self._pool = ConnectionPool(
                    self._dsn,
                    min_size=0,
                    max_size=self.MAX_CONNECTIONS,
                    kwargs={"autocommit": True, "connect_timeout": 5},
                    timeout=5,
                    open=True,
                    name="evalhub-response-cache",
                )
            return self._pool

    def _execute(self, sql: str, params: tuple[Any, ...]) -> Any:
        import psycopg  # the PostgreSQL driver Django uses

        for attempt in (1, 2):  # once more on another connection: the server may have closed the first
            try:
                with self._connections().connection() as connection:  # the pool drops a broken one
                    return connection.execute(sql, params).fetchone()
            except psycopg.OperationalError:
                if attempt == 2:
                    raise
        return None

    def get(self, key: str) -> Completion | None:
        try:
            row = self._execute(f"SELECT completion FROM {self._table} WHERE key = %s", (key,))  # noqa: S608
        except Exception as error:  # noqa: BLE001 (any database failure is a miss, the call is made)
            logger.warning("shared response cache unavailable for a read (%s)", type(error).__name__)
            return None
        return decoded(row[0]) if row is not None else None

    def put(self, key: str, completion: Completion) -> None:
        sql = (
            f"INSERT INTO {self._table} (key, completion, created_at) VALUES (%s, %s, now()) "  # noqa: S608
            "ON CONFLICT (key) DO UPDATE SET completion = EXCLUDED.completion, created_at = now() RETURNING key"
        )
        try:
            self._execute(sql, (key, encoded(completion)))
        except Exception as error:  # noqa: BLE001 (the answer is returned anyway; only the saving is lost)
            logger.warning("shared response cache unavailable for a write (%s)", type(error).__name__)

    def clear(self) -> None:
        with self._connections().connection() as connection:
            connection.execute(f"DELETE FROM {self._table}")  # noqa: S608 (our own table name)

    def close(self) -> None:
        """Close its connections (a later call opens new ones)."""
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def __len__(self) -> int:
        row = self._execute(f"SELECT COUNT(*) FROM {self._table}", ())  # noqa: S608
        return int(row[0]) if row else 0
