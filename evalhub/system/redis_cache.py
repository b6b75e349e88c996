"""Django's Redis cache with one bounded connection pool per process.

Django makes a cache object per thread and per async context, and RedisCache gives each its own
client and pool: a web process serving 100 pages at once, or a worker whose debates save their
text through `cache.aset` (a thread per call), opened hundreds of connections (392 in
benchmarks/connection_load.py). Here every cache object of a process shares one client, so
the pool's `max_connections` bounds the process.
"""

from __future__ import annotations

import os
import threading
from typing import Any, ClassVar

from django.core.cache.backends.redis import RedisCache
from django.utils.functional import cached_property


class ProcessRedisCache(RedisCache):
    _clients: ClassVar[dict[tuple[Any, ...], Any]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()
    _servers: list[str]  # RedisCache's own, set by its __init__ (its stubs do not declare them)
    _options: dict[str, Any]
    _class: Any

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
                self._clients[key] = client
        return client
