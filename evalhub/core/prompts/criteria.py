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


MAX_SCALE_LEVELS = 10  # a scale of more points is no Likert scale a person rates on by keyboard


def levels_for_scale(low: float, high: float) -> dict[str, str]:
    """Levels for a criterion known only by a file's `scale` (1-5: five levels, each named by its
    place on the scale); {} where the scale is no 1..n Likert scale (0-1, 0-100, 1.5-4), which
    leaves the criterion unrated on the rating screen, with the reason said there."""
    if low != 1 or high != int(high) or not 2 <= high <= MAX_SCALE_LEVELS:
        return {}
    top = int(high)
    names = {1: "the lowest", top: "the highest"}
    return {
        str(score): f"{score} of {top}" + (f": {names[score]}" if score in names else "") for score in range(1, top + 1)
    }
