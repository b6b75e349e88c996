"""Criteria: Likert levels and their checks."""

from __future__ import annotations

from collections.abc import Mapping


def check_levels(levels: object) -> dict[int, str]:
    """Return the levels as {score: description}, scores 1..n without gaps.

    Raises ValueError naming the first problem.
    """
    if not isinstance(levels, Mapping) or not levels:
        raise ValueError("levels must be a non-empty mapping of score to description.")
    checked: dict[int, str] = {}
    for key, text in levels.items():
        try:
            score = int(key)
        except (TypeError, ValueError):
            raise ValueError(f"level {key!r} is not an integer score.") from None
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"level {score} needs a description.")
        checked[score] = text.strip()
    expected = list(range(1, len(checked) + 1))
    if sorted(checked) != expected:
        raise ValueError(f"scores must run 1..{len(checked)} without gaps; got {sorted(checked)}.")
    return dict(sorted(checked.items()))
