"""Tokens, cost and latency per call, summed per run or job."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from evalhub.core.usage import Usage
from evalhub.llm.types import Completion


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input_per_million: float
    output_per_million: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_million + output_tokens * self.output_per_million) / 1e6


def price_for(prices: Mapping[str, Price], provider: str, model: str) -> Price | None:
    """Look up "provider:model" first, then "model"."""
    return prices.get(f"{provider}:{model}") or prices.get(model)


@dataclass
class UsageMeter:
    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    calls_without_price: int = 0
    latency_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, completion: Completion) -> None:
        with self._lock:
            self.calls += 1
            if completion.cached:
                self.cached_calls += 1
                return
            self.input_tokens += completion.input_tokens
            self.output_tokens += completion.output_tokens
            self.latency_s += completion.latency_s
            if completion.cost_usd is None:
                self.calls_without_price += 1
            else:
                self.cost_usd += completion.cost_usd

    def usage(self) -> Usage:
        """The calls, tokens and cost so far, as the value runs and jobs add up."""
        with self._lock:
            return Usage(
                calls=self.calls,
                cached_calls=self.cached_calls,
                input_tokens=self.input_tokens,
                output_tokens=self.output_tokens,
                cost_usd=round(self.cost_usd, 6),
                calls_without_price=self.calls_without_price,
            )

    def as_dict(self) -> dict[str, float | int]:
        return {
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "calls_without_price": self.calls_without_price,
            "latency_s": round(self.latency_s, 3),
        }
