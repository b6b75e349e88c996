"""What a provider's rate-limit headers say about the next call: how long to wait before it fits.

Every answer (not only a 429) tells how much of each budget is left and when it is full again:

- OpenAI: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, the reset a duration ("1s",
  "6m0s", "20ms");
- Anthropic: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`,
  the reset an RFC 3339 instant.

Both budgets refill steadily and `reset` is when the budget is full again, so `limit − remaining`
units come back in `reset` seconds: a call needing `need` units when `remaining` are left waits
`(need − remaining) · reset / (limit − remaining)`; without a limit, the whole reset.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


@dataclass(frozen=True)
class Need:
    """What the next call will take from each budget: one request, its prompt and its max_tokens."""

    input_tokens: float
    output_tokens: float

    def of(self, budget: str) -> float:
        return {
            "requests": 1.0,
            "tokens": self.input_tokens + self.output_tokens,
            "input-tokens": self.input_tokens,
            "output-tokens": self.output_tokens,
        }[budget]


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def reset_seconds(value: str | None, now: float) -> float | None:
    """A reset as seconds from `now`: a duration ("6m0s", "20ms", "1.5"), or an instant (RFC 3339)."""
    if not value:
        return None
    value = value.strip()
    if (seconds := _number(value)) is not None:
        return max(0.0, seconds)
    parts = _DURATION_PART.findall(value)
    if parts and "".join(number + unit for number, unit in parts) == value:
        return sum(float(number) * _UNIT_S[unit] for number, unit in parts)
    try:
        return max(0.0, datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() - now)
    except ValueError:
        return None


# Each provider's header names for a budget's (limit, remaining, reset).
_HEADER_NAMES = {
    "x-ratelimit-{part}-{budget}": ("requests", "tokens"),
    "anthropic-ratelimit-{budget}-{part}": ("requests", "tokens", "input-tokens", "output-tokens"),
}


def _budgets(headers: Mapping[str, str]) -> dict[str, tuple[str | None, str | None, str | None]]:
    """Each budget the headers describe: its (limit, remaining, reset) values as sent."""
    lower = {name.lower(): value for name, value in headers.items()}
    found: dict[str, tuple[str | None, str | None, str | None]] = {}
    for pattern, budgets in _HEADER_NAMES.items():
        for budget in budgets:
            limit, remaining, reset = (
                lower.get(pattern.format(part=part, budget=budget)) for part in ("limit", "remaining", "reset")
            )
            if remaining is not None:
                found[budget] = (limit, remaining, reset)
    return found


def wait_for_budget(headers: Mapping[str, str], need: Need, now: float | None = None) -> float:
    """Seconds until the next call fits every budget the headers describe (0: it fits now)."""
    now = time.time() if now is None else now
    longest = 0.0
    for budget, (limit_text, remaining_text, reset_text) in _budgets(headers).items():
        remaining, wanted = _number(remaining_text), need.of(budget)
        reset = reset_seconds(reset_text, now)
        if remaining is None or reset is None or remaining >= wanted:
            continue
        limit = _number(limit_text)
        if limit is not None and limit > remaining:
            wait = (wanted - remaining) * reset / (limit - remaining)
        else:
            wait = reset
        longest = max(longest, min(wait, reset))
    return longest
