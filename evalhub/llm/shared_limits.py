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
handed in (evalhub.system.model_access does it when REDIS_URL is set). While Redis does not answer,
each process keeps its own limits (LocalLimits) and says so in its log, and asks Redis again a few
seconds later: a call is never failed, nor blamed on its provider, for a limit that could not be
shared.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from evalhub.llm.limits import TOKEN_BURST_S, LocalLimits
from evalhub.llm.process_loop import on_process_loop

logger = logging.getLogger(__name__)

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

# KEYS[1]: holders scored by expiry, KEYS[2]: the pause. ARGV: limit, holder, hold seconds. -1 if
# not taken, else the pause's milliseconds left (0: none): a call reads the pause it must wait out
# in the round trip that takes its slot, not in one of its own.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
  redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[3])) + 60)
  return math.max(redis.call('PTTL', KEYS[2]), 0)
end
return -1
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

POLL_S = 0.05  # how soon a call waiting for another process's in-flight slot first asks again
MAX_POLL_S = 0.8  # and how seldom at most, as it waits on
HOLD_S = 10.0  # a slot's hold, renewed every third of it while its call runs: a dead worker's returns soon
RETRY_REDIS_S = 5.0  # after Redis did not answer, the local limits hold this long before it is asked again
REDIS_TIMEOUT_S = 2.0  # a Redis that hangs counts as one that does not answer


# Connections to Redis for every limit of the process together, on the process's shared loop: a
# check waits for a free one (a limit check is one round trip), up to POOL_WAIT_S.
MAX_CONNECTIONS = 10
POOL_WAIT_S = 10.0
_clients: dict[str, Any] = {}


def _redis_for(url: str) -> Any:
    """The process's Redis client for `url`, with a bounded pool; used on the process loop only."""
    import redis.asyncio  # imported where a deployment has Redis

    if url not in _clients:
        pool = redis.asyncio.BlockingConnectionPool.from_url(
            url,
            max_connections=MAX_CONNECTIONS,
            timeout=POOL_WAIT_S,
            socket_timeout=REDIS_TIMEOUT_S,
            socket_connect_timeout=REDIS_TIMEOUT_S,
            client_name="evalhub-limits",
        )
        _clients[url] = redis.asyncio.Redis(connection_pool=pool)
    return _clients[url]


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
        # The key is hashed: a name in Redis must never show it.
        digest = hashlib.sha256(f"{provider}|{model}|{key}".encode()).hexdigest()[:16]
        self._prefix = f"evalhub:limits:{digest}"
        self.hold_s = hold_s
        self.local = LocalLimits(token_burst_s)  # what holds while Redis does not answer
        self._unreachable_until = 0.0

    async def _on_redis(self, command: Callable[[Any], Awaitable[Any]]) -> Any:
        return await command(_redis_for(self._url))

    async def _ask(self, command: Callable[[Any], Awaitable[Any]]) -> Any | None:
        """Redis's answer, or None while it does not answer (the local limits hold meanwhile)."""
        if time.monotonic() < self._unreachable_until:
            return None
        try:
            answer = await on_process_loop(self._on_redis(command))
        except Exception as error:  # redis-py's errors, and the OS's under them
            if not self._unreachable_until:
                logger.warning(
                    "Redis did not answer (%s): this process keeps its own provider limits until it does", error
                )
            self._unreachable_until = time.monotonic() + RETRY_REDIS_S
            return None
        if self._unreachable_until:
            logger.warning("Redis answers again: the provider limits are shared again")
            self._unreachable_until = 0.0
        return answer

    async def _eval(self, script: str, *keys_then_args: Any, keys: int = 1) -> Any | None:
        names = [f"{self._prefix}:{key}" for key in keys_then_args[:keys]]
        return await self._ask(lambda redis: redis.eval(script, keys, *names, *keys_then_args[keys:]))

    async def wait_for_rate(self, per_minute: float | None) -> None:
        """Wait for this call's instant: at most `per_minute` calls start a minute, across workers."""
        await self._wait_for_pause()
        await self._reserve(per_minute)

    @asynccontextmanager
    async def turn(self, limit: int, per_minute: float | None) -> AsyncIterator[None]:
        """A call's place: one of `limit` in-flight slots, then its instant (`slot`, then
        `wait_for_rate`), the shared pause read in the round trip that takes the slot."""
        async with self._held(limit) as paused_ms:
            if paused_ms is None or paused_ms > 0:  # Redis did not answer, or every worker waits
                await self._wait_for_pause()
            else:
                await self.local.wait_for_pause()
            await self._reserve(per_minute)
            yield

    async def _reserve(self, per_minute: float | None) -> None:
        if not per_minute:
            return
        wait = await self._eval(_RESERVE, "next", 60.0 / per_minute)
        if wait is None:
            return await self.local.wait_for_rate(per_minute)
        if float(wait) > 0:
            await asyncio.sleep(float(wait))

    async def take_tokens(self, per_minute: float | None, tokens: float) -> None:
        """Charge a call's tokens to the budget every worker shares, once it has room."""
        while per_minute:
            wait = await self._eval(_TAKE_TOKENS, "tokens", tokens, 60.0 / per_minute, self.token_burst_s)
            if wait is None:
                return await self.local.take_tokens(per_minute, tokens)
            if float(wait) <= 0:
                return
            await asyncio.sleep(min(float(wait), LocalLimits.POLL_S))

    async def settle_tokens(self, per_minute: float | None, tokens: float) -> None:
        """Charge `tokens` more, or give them back, once a call says what it used."""
        if per_minute and tokens and await self._eval(_SETTLE_TOKENS, "tokens", tokens, 60.0 / per_minute) is None:
            await self.local.settle_tokens(per_minute, tokens)

    @asynccontextmanager
    async def slot(self, limit: int) -> AsyncIterator[None]:
        """Hold one of `limit` in-flight slots for the call; released after, or expired if the worker dies."""
        async with self._held(limit):
            yield

    @asynccontextmanager
    async def _held(self, limit: int) -> AsyncIterator[int | None]:
        """`slot`, giving the shared pause's milliseconds left when the slot was taken (None while
        Redis does not answer).

        A call first takes one of the client's own `limit` slots, and only then asks Redis: the calls
        queued behind them (hundreds, in a DHP chunk) wait without a round trip. When each asked every
        50 ms, they filled the process's connections to Redis, checks waited past the pool's bound, and
        the limits fell back to this process's own as if Redis were down. A call that waits on other
        processes' slots asks less often as it waits."""
        async with self.local.slot(limit):  # also the slots while Redis does not answer
            holder = secrets.token_hex(8)
            wait = POLL_S
            while True:
                taken = await self._eval(_TAKE, "inflight", "pause", limit, holder, self.hold_s, keys=2)
                if taken is None:  # Redis does not answer: this process's own slots, held already
                    yield None
                    return
                if int(taken) >= 0:
                    break
                await asyncio.sleep(wait)
                wait = min(2 * wait, MAX_POLL_S)
            renewing = asyncio.create_task(self._renew(holder))
            try:
                yield int(taken)
            finally:
                renewing.cancel()
                await self._ask(lambda redis: redis.zrem(f"{self._prefix}:inflight", holder))

    async def _renew(self, holder: str) -> None:
        """Keep a live call's hold from running out; a killed worker stops renewing, and its slot returns."""
        while True:
            await asyncio.sleep(self.hold_s / 3)
            await self._eval(_RENEW, "inflight", holder, self.hold_s)

    async def pause(self, seconds: float) -> None:
        """Every worker waits `seconds` before its next call (a longer pause already set stays)."""
        if seconds > 0 and await self._eval(_PAUSE, "pause", max(1, int(seconds * 1000))) is None:
            await self.local.pause(seconds)

    async def _wait_for_pause(self) -> None:
        while (left_ms := await self._ask(lambda redis: redis.pttl(f"{self._prefix}:pause"))) is not None:
            if int(left_ms) <= 0:
                break
            await asyncio.sleep(int(left_ms) / 1000)
        await self.local.wait_for_pause()  # one set while Redis did not answer holds after it answers again

    async def aclose(self) -> None:
        """Nothing to close: the connections are the process's, shared by every client."""
