"""Retries with exponential backoff and jitter, and a requests-per-minute limiter."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    jitter: float = 0.25  # ± this fraction of the delay, so many clients don't retry in lockstep

    def delay(self, attempt: int, retry_after_s: float | None = None, rng: random.Random | None = None) -> float:
        """Seconds to wait before attempt `attempt + 1` (attempt counts from 0)."""
        if retry_after_s is not None:
            return float(min(max(retry_after_s, 0.0), self.max_delay_s))
        backoff = min(self.base_delay_s * (2**attempt), self.max_delay_s)
        spread = (rng or random).uniform(-self.jitter, self.jitter)
        return float(max(0.0, backoff * (1 + spread)))


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After is either seconds or an HTTP date."""
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class RateLimiter:
    """Spaces calls evenly so that at most `per_minute` start in any minute (per event loop)."""

    def __init__(self, per_minute: float | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next_slot = 0.0
        self._locks: dict[int, asyncio.Lock] = {}

    async def acquire(self) -> None:
        if not self.interval:
            return
        lock = self._locks.setdefault(id(asyncio.get_running_loop()), asyncio.Lock())
        async with lock:
            now = time.monotonic()
            wait = self._next_slot - now
            self._next_slot = max(now, self._next_slot) + self.interval
        if wait > 0:
            await asyncio.sleep(wait)
