"""Geometry for server-rendered SVG charts (pure: the templates draw, this only places)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict


class IntervalRow(TypedDict):
    label: str
    y: int
    x: float
    x_low: float | None
    x_high: float | None
    baseline: bool
    mean: float


class Tick(TypedDict):
    x: float
    label: str


class IntervalChart(TypedDict, total=False):
    """A dot-and-whisker chart's geometry; an empty chart has rows, height and width only."""

    rows: list[IntervalRow]
    height: int
    width: int
    zero: float | None
    ticks: list[Tick]
    axis_y: int
    label_width: int


LABEL_CHAR_PX = 7  # a generous average glyph width at the charts' 12 px font: a label this wide fits
LABEL_MIN_PX, LABEL_MAX_PX = 120, 320


def label_chars(label_width: int) -> int:
    """How many characters of a row's label fit in `label_width` (the rest is cut, with an ellipsis)."""
    return max(4, (label_width - 16) // LABEL_CHAR_PX)


def interval_chart(
    entries: Sequence[Mapping[str, Any]], width: int = 640, row_height: int = 26, label_width: int | None = None
) -> IntervalChart:
    """Positions for a server-rendered SVG dot-and-whisker chart (GEM, Figure 4): one row per model,
    the mean as a marker (a square for the human baseline, so it reads without colour), the
    interval as a line with end caps. The label column is as wide as the longest label needs (within
    LABEL_MIN_PX and LABEL_MAX_PX): a fixed 220 px cut long model names at the chart's left edge."""
    points = [e for e in entries if e.get("mean") is not None]
    if label_width is None:
        longest = max((len(str(e["name"])) for e in points), default=0)
        label_width = min(LABEL_MAX_PX, max(LABEL_MIN_PX, 16 + LABEL_CHAR_PX * longest))
    values = [v for e in points for v in (e["mean"], e.get("low"), e.get("high")) if v is not None]
    if not values:
        return IntervalChart(rows=[], height=0, width=width)
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    low, high = low - 0.05 * span, high + 0.05 * span
    plot = width - label_width - 20

    def x(value: float) -> float:
        return round(float(label_width + (value - low) / (high - low) * plot), 1)

    rows = [
        IntervalRow(
            label=entry["name"],
            y=20 + index * row_height,
            x=x(entry["mean"]),
            x_low=x(entry["low"]) if entry.get("low") is not None else None,
            x_high=x(entry["high"]) if entry.get("high") is not None else None,
            baseline=entry.get("baseline", False),
            mean=entry["mean"],
        )
        for index, entry in enumerate(points)
    ]
    zero = x(0.0) if low <= 0 <= high else None
    ticks = [Tick(x=x(value), label=label) for value, label in nice_ticks(low, high)]
    return IntervalChart(
        rows=rows,
        height=40 + len(rows) * row_height,
        width=width,
        zero=zero,
        ticks=ticks,
        axis_y=30 + len(rows) * row_height - row_height // 2,
        label_width=label_width,
    )


def nice_ticks(low: float, high: float, target: int = 5) -> list[tuple[float, str]]:
    """Ticks at multiples of a round step (1, 2 or 5 × 10^k) inside [low, high], labelled with just
    the decimals that step needs: -0.005, 0, 0.005 rather than -0.00502, -0.00125, 0.00251."""
    span = high - low
    if span <= 0:
        return [(low, format(low, ".3g"))]
    power = 10 ** math.floor(math.log10(span / target))

    def count(step: float) -> int:
        return math.floor(high / step) - math.ceil(low / step) + 1

    # The finest round step that leaves at most `target` ticks.
    step = next(m * power for m in (1, 2, 5, 10, 20, 50, 100) if count(m * power) <= target)
    decimals = max(0, -math.floor(math.log10(step)))
    values = [k * step for k in range(math.ceil(low / step), math.floor(high / step) + 1)]
    return [(value, f"{0.0 if abs(value) < step / 2 else value:.{decimals}f}") for value in values]


def reliability_chart(calibration: Any, size: int = 260, margin: int = 36) -> dict[str, Any] | None:
    """Positions for a reliability diagram: each bin's mean confidence against its share of
    reference wins for response 1, a dot whose area follows its count, and the diagonal of a
    perfectly calibrated judge."""
    if calibration is None:
        return None
    plot = size - 2 * margin
    largest = max(b["n"] for b in calibration.bins) or 1

    def at(value: float) -> float:
        return round(margin + value * plot, 1)

    points = [
        {
            "x": at(b["confidence"]),
            "y": round(size - margin - b["accuracy"] * plot, 1),
            "r": round(3 + 9 * (b["n"] / largest) ** 0.5, 1),
            "n": b["n"],
            "confidence": b["confidence"],
            "accuracy": b["accuracy"],
        }
        for b in calibration.bins
        if b["n"]
    ]
    ticks = [{"value": f"{v:.1f}", "x": at(v), "y": round(size - margin - v * plot, 1)} for v in (0, 0.5, 1)]
    return {"size": size, "low": margin, "high": size - margin, "points": points, "ticks": ticks}


def bias_chart(report: Any) -> IntervalChart:
    """One row per headline figure of a judge report, each with its interval where it has one."""
    entries = [
        {
            "name": "Agreement",
            "mean": report.agreement.value,
            "low": report.agreement.low,
            "high": report.agreement.high,
        },
        {"name": "Cohen's κ", "mean": report.kappa.value, "low": report.kappa.low, "high": report.kappa.high},
        {
            "name": "Flips with the order",
            "mean": report.position.value,
            "low": report.position.low,
            "high": report.position.high,
        },
        {"name": "Picks the longer", "mean": report.longer_share},
        {"name": "People pick the longer", "mean": report.people_longer_share, "baseline": True},
    ]
    return interval_chart(entries, label_width=180)


class Bar(TypedDict):
    label: str
    value: float
    y: int
    x_end: float
    width: float
    discerns: bool


class BarChart(TypedDict):
    """D per perturbation as bars, with the D = 1 line (p = 0.05) at x1."""

    bars: list[Bar]
    height: int
    width: int
    x0: int
    x1: float


class RatingColumn(TypedDict):
    x: int
    y: float
    height: float
    tag: str  # B, S or E: the column reads without colour
    variant: str
    mean: float
    rubric: str


class RatingChart(TypedDict):
    """Mean rating per rubric on benign, subtle and extreme answers, as grouped columns."""

    columns: list[RatingColumn]
    labels: list[dict[str, Any]]  # {x, text} under each group
    grid: list[dict[str, Any]]  # {y, label} for ratings 1..5
    width: int
    height: int
    base: int


def bar_chart(values: list[tuple[str, float]], width: int = 560, label_width: int = 230, row: int = 22) -> BarChart:
    """Bars of DHP's D per perturbation, with the D = 1 line (p = 0.05) at x1 (DHP, Section 2.3)."""
    top = max([1.5, *(v for _, v in values)])
    plot = width - label_width - 60

    def x(value: float) -> float:
        return round(label_width + min(value, top) / top * plot, 1)

    bars = [
        Bar(
            label=label,
            value=value,
            y=8 + i * row,
            x_end=x(value),
            width=max(0.0, round(x(value) - label_width, 1)),
            discerns=value >= 1,
        )
        for i, (label, value) in enumerate(values)
    ]
    return BarChart(bars=bars, height=16 + len(bars) * row, width=width, x0=label_width, x1=x(1.0))


def rating_columns(rows: Sequence[Mapping[str, Any]], width: int = 640, group: int = 62) -> RatingChart:
    """Mean rating per rubric on benign, subtle and extreme answers (1–5), as grouped columns.
    Each column is labelled B, S or E under it, so the chart reads without colour."""
    height, base, top = 170, 140, 20

    def y(rating: float) -> float:
        return round(base - (rating - 1) / 4 * (base - top), 1)

    # Each group is as wide as its longest rubric name (about 6.5 px a character at the tick size),
    # so a name is written whole ("informativeness"), never cut to fit.
    group = max(group, round(6.5 * max((len(row["rubric"]) for row in rows), default=0)) + 10)
    columns: list[RatingColumn] = []
    labels: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        cell = row["subtle"] or row["extreme"]
        x0 = 40 + index * group
        labels.append({"x": x0 + 24, "text": row["rubric"]})
        for offset, (tag, variant, mean) in enumerate(
            [
                ("B", "benign", cell["mean_benign"] if cell else None),
                ("S", "subtle", row["subtle"]["mean_adversarial"] if row["subtle"] else None),
                ("E", "extreme", row["extreme"]["mean_adversarial"] if row["extreme"] else None),
            ]
        ):
            if mean is None:
                continue
            x = x0 + offset * 16
            columns.append(
                RatingColumn(
                    x=x,
                    y=y(mean),
                    height=round(base - y(mean), 1),
                    tag=tag,
                    variant=variant,
                    mean=mean,
                    rubric=row["rubric"],
                )
            )
    grid = [{"y": y(r), "label": r} for r in (1, 2, 3, 4, 5)]
    return RatingChart(
        columns=columns, labels=labels, grid=grid, width=max(width, 60 + len(rows) * group), height=height, base=base
    )
