"""A provider's limits as one process holds them: calls in flight, requests and tokens a minute, and
a pause that every call waits out (a 429's Retry-After, or rate-limit headers saying the budget is
spent). evalhub.llm.shared_limits holds the same limits in Redis for a whole deployment; both have
this interface, and a ChatClient uses one or the other.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

# How far ahead of now the tokens already promised may run before a call waits: a sixth of a
# minute's budget, so several calls start at once yet any minute sees at most the limit, this
# burst, and the one call that went over.
TOKEN_BURST_S = 10.0


class TokenBudget:
    """Tokens a minute as a GCRA, a token bucket kept as one instant (`promised`): the time by which
    every token charged so far would have been earned. A call starts while `promised` is at most
    `burst_s` ahead of now and moves it on by its tokens; before the call it is charged an estimate
    (what providers count it as: its prompt and its max_tokens), after it what it used."""

    def __init__(self, burst_s: float = TOKEN_BURST_S) -> None:
        self.burst_s = burst_s
        self.promised = 0.0

    def take(self, tokens: float, per_minute: float, now: float) -> float:
        """Charge `tokens` and return 0, or return how long to wait before asking again."""
        promised = max(self.promised, now)
        if promised - now > self.burst_s:
            return promised - now - self.burst_s
        self.promised = promised + tokens * 60.0 / per_minute
        return 0.0

    def settle(self, tokens: float, per_minute: float, now: float) -> None:
        """Charge `tokens` more (or give back, when negative) once a call says what it used; a
        budget never holds more than full."""
        self.promised = max(now, max(self.promised, now) + tokens * 60.0 / per_minute)


class LocalLimits:
    """The limits of one client in this process (embedded mode, or no Redis)."""

    POLL_S = 1.0  # a call waiting for tokens looks again this often: a settled call may give some back

    def __init__(self, token_burst_s: float = TOKEN_BURST_S) -> None:
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        self._next_request = 0.0
        self._tokens = TokenBudget(token_burst_s)
        self._paused_until = 0.0

    @asynccontextmanager
    async def slot(self, limit: int) -> AsyncIterator[None]:
        # One semaphore per event loop: Celery tasks each run their own loop, and a semaphore binds to one.
        loop = id(asyncio.get_running_loop())
        if loop not in self._semaphores:
            self._semaphores[loop] = asyncio.Semaphore(limit)
        async with self._semaphores[loop]:
            yield

    @asynccontextmanager
    async def turn(self, limit: int, per_minute: float | None) -> AsyncIterator[None]:
        """A call's place: one of `limit` in-flight slots, then its instant."""
        async with self.slot(limit):
            await self.wait_for_rate(per_minute)
            yield

    async def wait_for_rate(self, per_minute: float | None) -> None:
        """Wait for this call's instant: calls are spaced evenly, at most `per_minute` a minute."""
        await self.wait_for_pause()
        if not per_minute:
            return
        now = time.monotonic()
        instant = max(now, self._next_request)
        self._next_request = instant + 60.0 / per_minute
        if instant > now:
            await asyncio.sleep(instant - now)

    async def take_tokens(self, per_minute: float | None, tokens: float) -> None:
        while per_minute and (wait := self._tokens.take(tokens, per_minute, time.monotonic())) > 0:
            await asyncio.sleep(min(wait, self.POLL_S))

    async def settle_tokens(self, per_minute: float | None, tokens: float) -> None:
        if per_minute and tokens:
            self._tokens.settle(tokens, per_minute, time.monotonic())

    async def pause(self, seconds: float) -> None:
        """Every call of this client waits until `seconds` from now (a longer pause already set stays)."""
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    async def wait_for_pause(self) -> None:
        while (left := self._paused_until - time.monotonic()) > 0:
            await asyncio.sleep(left)

    async def aclose(self) -> None:
        return None
