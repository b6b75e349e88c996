"""Tokens, cost and calls of a run: one value, summed the same way for every kind of work."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True)
class CallStats:
    """What one model call reported, carried from the client to the row that stores it (a debate
    turn, a judge's verdict): typed, where it was once a dict read with .get("input_tokens", 0)."""

    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    cost_usd: float | None = None  # None: the provider reported no price
    reasoning_tokens: int = 0  # of output_tokens, those spent reasoning (a debate's usage counted none)

    def usage(self) -> Usage:
        return Usage.of_call(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cached=self.cached,
            cost_usd=self.cost_usd,
            reasoning_tokens=self.reasoning_tokens,
        )


@dataclass(frozen=True)
class Usage:
    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    calls_without_price: int = 0  # cost_usd then undercounts: the page says so
    reasoning_tokens: int = 0  # of output_tokens, those a reasoning model spent reasoning (billed as output)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            cached_calls=self.cached_calls + other.cached_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=round(self.cost_usd + other.cost_usd, 6),
            calls_without_price=self.calls_without_price + other.calls_without_price,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )

    @classmethod
    def of_call(
        cls, *, input_tokens: int, output_tokens: int, cached: bool, cost_usd: float | None, reasoning_tokens: int = 0
    ) -> Usage:
        """One call's usage; a cached call costs nothing and counts no tokens."""
        if cached:
            return cls(calls=1, cached_calls=1)
        return cls(
            calls=1,
            input_tokens=int(input_tokens),
            output_tokens=int(output_tokens),
            cost_usd=float(cost_usd or 0.0),
            calls_without_price=int(cost_usd is None),
            reasoning_tokens=int(reasoning_tokens),
        )

    @classmethod
    def total(cls, usages: Iterable[Usage]) -> Usage:
        result = cls()
        for usage in usages:
            result = result + usage
        return result

    @classmethod
    def from_dict(cls, stored: Mapping[str, object] | None) -> Usage:
        """Read a stored value; unknown keys (older rows) are ignored, missing ones are zero."""
        stored = stored or {}
        values: dict[str, Any] = {}
        for name in (f.name for f in fields(cls)):
            value = stored.get(name)
            if isinstance(value, int | float | str):  # JSON gives numbers; an old row may hold "12"
                values[name] = float(value) if name == "cost_usd" else int(value)
        return cls(**values)

    def as_dict(self) -> dict[str, int | float]:
        return asdict(self)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens
