"""Channel layers that can tell whether a group has members: in memory (the embedded mode, safe
to send to from worker threads) and on Redis (production).

The stock InMemoryChannelLayer keeps asyncio queues that belong to the server's event
loop; a Celery worker thread sending through async_to_sync runs on another loop and
would touch them unsafely (a waiting consumer may never wake). Here every operation
from a foreign loop is handed to the loop the consumers receive on.
"""

from __future__ import annotations

import asyncio
import functools
import time

import redis
import redis.asyncio as aioredis
from channels.layers import InMemoryChannelLayer
from channels_redis.core import RedisChannelLayer

from evalhub.llm.process_loop import on_process_loop, process_loop


class ThreadSafeInMemoryChannelLayer(InMemoryChannelLayer):
    # The stock layer sweeps every queue and group for expired entries on each send, group send and
    # receive: three sweeps per streamed chunk, 13 % of a 100-debate run's CPU. Expiry is counted in
    # seconds (a message lives 60 s, a membership a day), so one sweep a second keeps it.
    SWEEP_EVERY_S = 1.0

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._home_loop: asyncio.AbstractEventLoop | None = None
        self._swept_at = float("-inf")

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._swept_at >= self.SWEEP_EVERY_S:
            self._swept_at = now
            super()._clean_expired()

    async def _at_home(self, operation, *args):
        loop = asyncio.get_running_loop()
        home = self._home_loop
        if home is None or home is loop or home.is_closed() or not home.is_running():
            return await operation(*args)
        # Hand over without waiting: the home loop runs handed-over calls in the order they came,
        # and a sender (a debate streaming chunks) must not stall on another thread's loop.
        asyncio.run_coroutine_threadsafe(operation(*args), home)
        return None

    async def receive(self, channel):
        self._home_loop = asyncio.get_running_loop()
        return await super().receive(channel)

    async def send(self, channel, message):
        return await self._at_home(super().send, channel, message)

    def has_members(self, group) -> bool:
        # Read from any thread: a dict lookup, and a socket joining meanwhile gets the current
        # state when it connects, so a stale answer loses nothing.
        return bool(self.groups.get(group))

    async def group_send(self, group, message):
        if not self.has_members(group):
            # Nobody watches (most debates of a big run): skip the hand-over to the other loop (a
            # thread-safe call and a task there, for every streamed chunk). A socket that joins
            # just now gets the current state on connect, as it would a moment later.
            return None
        return await self._at_home(super().group_send, group, message)

    async def group_add(self, group, channel):
        return await self._at_home(super().group_add, group, channel)

    async def group_discard(self, group, channel):
        return await self._at_home(super().group_discard, group, channel)


@functools.cache
def cancel_honouring(connection_class: type[aioredis.Connection]) -> type[aioredis.Connection]:
    """The URL's connection class (plain, TLS or Unix socket), raising a cancellation that its
    write swallowed.

    redis-py writes each command under asyncio.wait_for, and Python 3.11's wait_for returns the
    write's result instead of raising when a cancel lands in the step the write finished (CPython
    gh-86296, fixed in 3.12). A closed socket's channel-layer receive then lost its cancel and
    popped on, every 5 s, for ever: the socket's ASGI task never ended and uvicorn waited on it at
    SIGTERM. The reply of a command cut off here is never read, so the connection is dropped."""

    class CancelHonouring(connection_class):  # type: ignore[valid-type,misc]
        async def send_packed_command(self, command, check_health: bool = True) -> None:
            await super().send_packed_command(command, check_health)
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                await self.disconnect(nowait=True)
                raise asyncio.CancelledError

    CancelHonouring.__name__ = CancelHonouring.__qualname__ = f"CancelHonouring{connection_class.__name__}"
    return CancelHonouring


class WatchedRedisChannelLayer(RedisChannelLayer):
    """channels-redis, plus has_members(): whether any socket is in a group, so a page nobody has
    open is not rendered and sent through Redis on every write (one ZCARD instead).

    Sends go through one bounded pool per process: channels-redis keeps a pool per event loop and
    opens a connection for every send that finds none free, so one worker with 200 debates streaming
    held over a thousand, and a worker's threads (a loop each) multiplied its bound. Here every send
    runs on the process's shared loop (evalhub.llm.process_loop) and waits for a free connection
    (`max_connections`, up to `pool_timeout` seconds). Receiving stays on the consumer's own loop."""

    # Streamed frames (a debate's turn, every 40 ms) ask whether anyone watches their group at most this
    # often: a thousand debates streaming on one worker, nearly all unwatched, sent every frame through
    # Redis and ran the send pool dry (1,087 sends failed in connection_load, and the provider limits'
    # calls waited behind them). A socket that joins sees the next frames within this long, and the
    # page it opened showed the text so far.
    MEMBERSHIP_KEPT_S = 0.5
    MEMBERSHIPS_KEPT = 10_000  # groups remembered at once (forgotten together past this)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._readers: dict[int, redis.Redis] = {}
        self._memberships: dict[str, tuple[float, bool]] = {}  # group: (asked at, anyone there)

    def create_pool(self, index: int) -> aioredis.ConnectionPool:
        options = dict(self.hosts[index])
        if "address" not in options or "max_connections" not in options:
            pool = super().create_pool(index)
        else:
            address = options.pop("address")
            options.setdefault("timeout", options.pop("pool_timeout", 20))
            pool = aioredis.BlockingConnectionPool.from_url(address, **options)
        pool.connection_class = cancel_honouring(pool.connection_class)
        return pool

    async def send(self, channel, message):
        return await on_process_loop(super().send(channel, message))

    async def group_send(self, group, message):
        return await on_process_loop(super().group_send(group, message))

    async def watched_lately(self, group: str) -> bool:
        """Whether a socket was in the group when last asked, asked again (one ZCARD on the process's
        pool) once MEMBERSHIP_KEPT_S has passed. For streamed frames only: a write's broadcast asks
        `has_members` at its commit, so a socket that joined just before gets it."""
        now = time.monotonic()
        kept = self._memberships.get(group)
        if kept is not None and now - kept[0] < self.MEMBERSHIP_KEPT_S:
            return kept[1]
        try:
            watched = bool(await on_process_loop(self._members(group)))
        except redis.RedisError:
            watched = True  # cannot tell: send, as a layer without this check would
        if len(self._memberships) >= self.MEMBERSHIPS_KEPT:
            self._memberships.clear()
        self._memberships[group] = (now, watched)
        return watched

    async def _members(self, group: str) -> int:
        return await self.connection(self.consistent_hash(group)).zcard(self._group_key(group))

    async def close_pools(self):
        """Each loop's pool is closed on its own loop: the sends' on the process loop (stock
        channels-redis closes every loop's from the caller's, which fails across loops)."""
        await self.wait_received()
        here, shared = asyncio.get_running_loop(), process_loop()
        for loop, layer in list(self._layers.items()):
            if loop is here:
                await layer.flush()
            elif loop is shared:
                await on_process_loop(layer.flush())

    def has_members(self, group: str) -> bool:
        index = self.consistent_hash(group)
        reader = self._readers.get(index)
        if reader is None:
            options = {k: v for k, v in self.hosts[index].items() if k not in ("max_connections", "pool_timeout")}
            reader = self._readers[index] = redis.Redis.from_url(options.pop("address"), **options)
        try:
            return bool(reader.zcard(self._group_key(group)))
        except redis.RedisError:
            return True  # cannot tell: send, as a layer without this check would
