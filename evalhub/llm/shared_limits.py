"""Provider limits held across every worker process on every machine, in Redis.

A limit of 500 requests a minute kept in each client object becomes 2,000 with four workers, and
the provider answers with 429s that retries multiply. Here each (provider, model, key) has:

- a request spacing shared by all (GCRA: every call reserves the next free instant, at most
  `per_minute` a minute, on Redis's clock so that machines' clocks do not matter);
- an in-flight cap shared by all: a sorted set of holders scored by when their hold expires; a
  live call renews its hold, so a killed worker's slot comes back within one hold (10 s);
- a pause shared by all: a 429 with a Retry-After makes every worker wait it out, not only the
  one that was told.

Redis is reached through redis-py's asyncio client; evalhub.llm imports no Django, so the URL is
handed in (evalhub.system.model_access does it when REDIS_URL is set).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

# KEYS[1]: the next free instant (seconds, float). ARGV[1]: seconds between requests.
# Returns how long the caller waits for the instant it reserved.
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval = tonumber(ARGV[1])
local free = tonumber(redis.call('GET', KEYS[1]) or '0')
local slot = math.max(now, free)
redis.call('SET', KEYS[1], tostring(slot + interval), 'PX', math.ceil((slot + interval - now) * 1000) + 60000)
return tostring(slot - now)
"""

# KEYS[1]: holders scored by expiry. ARGV: limit, holder, hold seconds. 1 if taken, else 0.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
  redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[3])) + 60)
  return 1
end
return 0
"""

# KEYS[1]: holders. ARGV: holder, hold seconds. Pushes the holder's expiry out (a live call renews).
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
return redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
"""

POLL_S = 0.05  # how often a call waiting for an in-flight slot asks again
HOLD_S = 10.0  # a slot's hold, renewed every third of it while its call runs: a dead worker's returns soon


class SharedLimits:
    """The limits of one (provider, model, key) in Redis; one object per client."""

    def __init__(self, redis_url: str, provider: str, model: str, key: str = "", *, hold_s: float = HOLD_S) -> None:
        self._url = redis_url
        self._clients: dict[int, Any] = {}
        # The key is hashed: a name in Redis must never show it.
        digest = hashlib.sha256(f"{provider}|{model}|{key}".encode()).hexdigest()[:16]
        self._prefix = f"evalhub:limits:{digest}"
        self.hold_s = hold_s

    @property
    def _redis(self) -> Any:
        # One client per event loop, as the chat clients keep one semaphore per loop: each Celery
        # task runs its own loop, and a connection belongs to the loop that opened it.
        import redis.asyncio  # imported where a deployment has Redis

        loop = id(asyncio.get_running_loop())
        if loop not in self._clients:
            self._clients[loop] = redis.asyncio.from_url(self._url)
        return self._clients[loop]

    async def wait_for_rate(self, per_minute: float | None) -> None:
        """Wait for this call's instant: at most `per_minute` calls start a minute, across workers."""
        await self._wait_for_pause()
        if not per_minute:
            return
        wait = float(await self._redis.eval(_RESERVE, 1, f"{self._prefix}:next", 60.0 / per_minute))
        if wait > 0:
            await asyncio.sleep(wait)

    @asynccontextmanager
    async def slot(self, limit: int) -> AsyncIterator[None]:
        """Hold one of `limit` in-flight slots for the call; released after, or expired if the worker dies."""
        holder = secrets.token_hex(8)
        key = f"{self._prefix}:inflight"
        while not int(await self._redis.eval(_TAKE, 1, key, limit, holder, self.hold_s)):
            await asyncio.sleep(POLL_S)
        renewing = asyncio.create_task(self._renew(key, holder))
        try:
            yield
        finally:
            renewing.cancel()
            await self._redis.zrem(key, holder)

    async def _renew(self, key: str, holder: str) -> None:
        """Keep a live call's hold from running out; a killed worker stops renewing, and its slot returns."""
        while True:
            await asyncio.sleep(self.hold_s / 3)
            await self._redis.eval(_RENEW, 1, key, holder, self.hold_s)

    async def pause(self, seconds: float) -> None:
        """Every worker waits `seconds` before its next call (a provider's Retry-After)."""
        if seconds > 0:
            await self._redis.set(f"{self._prefix}:pause", "1", px=int(seconds * 1000))

    async def _wait_for_pause(self) -> None:
        left_ms = int(await self._redis.pttl(f"{self._prefix}:pause"))
        if left_ms > 0:
            await asyncio.sleep(left_ms / 1000)

    async def aclose(self) -> None:
        client = self._clients.pop(id(asyncio.get_running_loop()), None)
        if client is not None:
            await client.aclose()
