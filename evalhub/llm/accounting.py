"""Tokens, cost and latency per call, summed per run or job."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from evalhub.core.runs.usage import Usage
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


class UsageMeter:
    """Counts the calls of one or more clients as they finish (thread-safe); `usage()` is the total."""

    def __init__(self) -> None:
        self._usage = Usage()
        self.latency_s = 0.0
        self._lock = threading.Lock()

    def record(self, completion: Completion) -> None:
        call = Usage.of_call(
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            cached=completion.cached,
            cost_usd=completion.cost_usd,
            reasoning_tokens=completion.reasoning_tokens,
        )
        with self._lock:
            self._usage = self._usage + call
            if not completion.cached:
                self.latency_s += completion.latency_s

    def usage(self) -> Usage:
        """The calls, tokens and cost so far, as the value runs and jobs add up."""
        with self._lock:
            return self._usage

    @property
    def calls(self) -> int:
        return self.usage().calls

    @property
    def cached_calls(self) -> int:
        return self.usage().cached_calls

    def as_dict(self) -> dict[str, float | int]:
        return {**self.usage().as_dict(), "latency_s": round(self.latency_s, 3)}


_counting: ContextVar[UsageMeter | None] = ContextVar("evalhub_counting_meter", default=None)


@contextmanager
def counting_calls() -> Iterator[UsageMeter]:
    """Every call any client makes within the block (and the asyncio tasks it starts) is also counted
    on the meter this yields: a job chunk's whole usage, whichever code made the calls."""
    meter = UsageMeter()
    token = _counting.set(meter)
    try:
        yield meter
    finally:
        _counting.reset(token)


def record_everywhere(meter: UsageMeter, completion: Completion) -> None:
    """Count a finished call on the client's meter and on the block's (counting_calls), if any."""
    meter.record(completion)
    block = _counting.get()
    if block is not None and block is not meter:
        block.record(completion)
