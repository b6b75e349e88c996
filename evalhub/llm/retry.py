"""Retries with exponential backoff and jitter (the limits that space calls are in evalhub.llm.limits)."""

from __future__ import annotations

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
