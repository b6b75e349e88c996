"""Django's Redis cache with one bounded connection pool per process.

Django makes a cache object per thread and per async context, and RedisCache gives each its own
client and pool: a web process serving 100 pages at once, or a worker whose debates save their
text through `cache.aset` (a thread per call), opened hundreds of connections (392 in
benchmarks/connection_load.py). Here every cache object of a process shares one client, so
the pool's `max_connections` bounds the process. And every call of a process uses one `redis.Redis`
per server, made with its pool: Django's client made a new one per call.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any, ClassVar

import redis
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.utils.functional import cached_property

logger = logging.getLogger(__name__)


class SharedRedisClient(RedisCacheClient):
    """Django's client whose calls share one `redis.Redis` per server (safe across threads): Django
    made one per call, and its constructor fills a table of some 170 reply handlers each time,
    0.11 ms, more than the round trip of a cache read on loopback; a counter's `incr` made two."""

    _redis: dict[int, Any]
    _get_connection_pool_index: Any  # Django's own (its stubs do not declare it): which server a call uses

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        return self._redis[self._get_connection_pool_index(write)]


class ProcessRedisCache(RedisCache):
    _clients: ClassVar[dict[tuple[Any, ...], Any]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()
    _servers: list[str]  # RedisCache's own, set by its __init__ (its stubs do not declare them)
    _options: dict[str, Any]
    _class: Any

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedRedisClient

    @cached_property
    def _cache(self) -> Any:
        # The process id is in the key: a forked child must not share its parent's sockets.
        key = (os.getpid(), tuple(self._servers), repr(sorted(self._options.items())))
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = self._class(self._servers, **self._options)
                # Each server's pool made now, under this lock: Django's client makes it on first use
                # without one, and threads arriving together each made (and kept using) a pool of
                # their own, past the bound.
                for index, server in enumerate(self._servers):
                    client._pools[index] = client._pool_class.from_url(server, **client._pool_options)
                client._redis = {index: client._client(connection_pool=pool) for index, pool in client._pools.items()}
                self._clients[key] = client
        return client


class FailOpenRedisCache(ProcessRedisCache):
    """The process's Redis cache that fails open: while Redis cannot be reached (a restart, a network
    fault), a read is a miss and a write is skipped, so pages compute from the database instead of
    answering 500; each such call is counted and logged (once a second at most). What the cache
    coordinates (the counts' version, job limits) is read through callers that treat a miss as "not
    known": evalhub.tallies.actions.tally_version then changes every request, so no stale board is
    served while the cache is away."""

    failures = 0
    _logged_at = 0.0


def _fail_open(name: str, missing: Any) -> Any:
    original = getattr(ProcessRedisCache, name)

    def call(self: FailOpenRedisCache, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(self, *args, **kwargs)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as error:
            _note_failure(name, error)
            if callable(missing):
                return missing(*args, **kwargs)
            return missing

    call.__name__ = name
    return call


def _note_failure(name: str, error: BaseException) -> None:
    FailOpenRedisCache.failures += 1
    now = time.monotonic()
    if now - FailOpenRedisCache._logged_at >= 1.0:
        FailOpenRedisCache._logged_at = now
        logger.warning(
            "the cache is unreachable (%s on %s): served from the database; %d call(s) so far",
            type(error).__name__,
            name,
            FailOpenRedisCache.failures,
        )


def _default(key: Any, default: Any = None, *args: Any, **kwargs: Any) -> Any:
    return default


# What each call gives while Redis is away: a read misses, a write is skipped (an `add` or `touch`
# did not happen), a count is not known.
for _name, _missing in {
    "get": _default,
    "get_many": {},
    "has_key": False,
    "set": None,
    "add": False,
    "touch": False,
    "delete": False,
    "set_many": [],
    "delete_many": None,
    "incr": None,
}.items():
    setattr(FailOpenRedisCache, _name, _fail_open(_name, _missing))
