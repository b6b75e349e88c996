"""Tokens, cost and calls of a run: one value, summed the same way for every kind of work."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class Usage:
    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    calls_without_price: int = 0  # cost_usd then undercounts: the page says so

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            cached_calls=self.cached_calls + other.cached_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=round(self.cost_usd + other.cost_usd, 6),
            calls_without_price=self.calls_without_price + other.calls_without_price,
        )

    @classmethod
    def of_call(cls, *, input_tokens: int, output_tokens: int, cached: bool, cost_usd: float | None) -> Usage:
        """One call's usage; a cached call costs nothing and counts no tokens."""
        if cached:
            return cls(calls=1, cached_calls=1)
        return cls(
            calls=1,
            input_tokens=int(input_tokens),
            output_tokens=int(output_tokens),
            cost_usd=float(cost_usd or 0.0),
            calls_without_price=int(cost_usd is None),
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
        known = {f.name: f.type for f in fields(cls)}
        values = {}
        for name in known:
            if name in stored and stored[name] is not None:
                values[name] = float(stored[name]) if name == "cost_usd" else int(stored[name])  # type: ignore[arg-type]
        return cls(**values)

    def as_dict(self) -> dict[str, int | float]:
        return asdict(self)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens
