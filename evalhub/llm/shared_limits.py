"""Provider limits held across every worker process on every machine, in Redis.

A limit of 500 requests a minute kept in each client object becomes 2,000 with four workers, and
the provider answers with 429s that retries multiply. Here each (provider, model, key) has the
limits evalhub.llm.limits.LocalLimits keeps for one process, with the same interface:

- a request spacing shared by all (GCRA: every call reserves the next free instant, at most
  `per_minute` a minute, on Redis's clock so that machines' clocks do not matter);
- a tokens-a-minute budget shared by all (limits.TokenBudget's rule, in Lua on Redis's clock);
- an in-flight cap shared by all: a sorted set of holders scored by when their hold expires; a
  live call renews its hold, so a killed worker's slot comes back within one hold (10 s);
- a pause shared by all: a 429's Retry-After, or rate-limit headers saying the budget is spent,
  make every worker wait, not only the one that was told.

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

from evalhub.llm.limits import TOKEN_BURST_S, LocalLimits

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

# KEYS[1]: the instant by which every token charged so far is earned (limits.TokenBudget.take).
# ARGV: tokens, seconds per token, burst seconds. Returns 0 when charged, else how long to wait.
_TAKE_TOKENS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local promised = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
local burst = tonumber(ARGV[3])
if promised - now > burst then
  return tostring(promised - now - burst)
end
promised = promised + tonumber(ARGV[1]) * tonumber(ARGV[2])
redis.call('SET', KEYS[1], tostring(promised), 'PX', math.ceil((promised - now) * 1000) + 60000)
return '0'
"""

# KEYS[1]: as above. ARGV: tokens to charge more (negative: to give back), seconds per token.
_SETTLE_TOKENS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local promised = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
promised = math.max(now, promised + tonumber(ARGV[1]) * tonumber(ARGV[2]))
redis.call('SET', KEYS[1], tostring(promised), 'PX', math.ceil((promised - now) * 1000) + 60000)
return 1
"""

# KEYS[1]: the pause. ARGV[1]: milliseconds. A longer pause already set stays.
_PAUSE = """
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 1
"""

POLL_S = 0.05  # how often a call waiting for an in-flight slot asks again
HOLD_S = 10.0  # a slot's hold, renewed every third of it while its call runs: a dead worker's returns soon


class SharedLimits:
    """The limits of one (provider, model, key) in Redis; one object per client."""

    def __init__(
        self,
        redis_url: str,
        provider: str,
        model: str,
        key: str = "",
        *,
        hold_s: float = HOLD_S,
        token_burst_s: float = TOKEN_BURST_S,
    ) -> None:
        self._url = redis_url
        self.token_burst_s = token_burst_s
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

    async def take_tokens(self, per_minute: float | None, tokens: float) -> None:
        """Charge a call's tokens to the budget every worker shares, once it has room."""
        while per_minute:
            wait = float(
                await self._redis.eval(
                    _TAKE_TOKENS, 1, f"{self._prefix}:tokens", tokens, 60.0 / per_minute, self.token_burst_s
                )
            )
            if wait <= 0:
                return
            await asyncio.sleep(min(wait, LocalLimits.POLL_S))

    async def settle_tokens(self, per_minute: float | None, tokens: float) -> None:
        """Charge `tokens` more, or give them back, once a call says what it used."""
        if per_minute and tokens:
            await self._redis.eval(_SETTLE_TOKENS, 1, f"{self._prefix}:tokens", tokens, 60.0 / per_minute)

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
        """Every worker waits `seconds` before its next call (a longer pause already set stays)."""
        if seconds > 0:
            await self._redis.eval(_PAUSE, 1, f"{self._prefix}:pause", max(1, int(seconds * 1000)))

    async def _wait_for_pause(self) -> None:
        while (left_ms := int(await self._redis.pttl(f"{self._prefix}:pause"))) > 0:
            await asyncio.sleep(left_ms / 1000)

    async def aclose(self) -> None:
        client = self._clients.pop(id(asyncio.get_running_loop()), None)
        if client is not None:
            await client.aclose()
