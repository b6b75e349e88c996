"""SVG charts drawn from the geometry in evalhub.core.charts. Built in Python rather than in a
template: a board holds dozens of them, and every text is escaped by format_html."""

from __future__ import annotations

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from evalhub.core.charts import label_chars

register = template.Library()


def _svg(label: str, width: object, height: object, parts: list) -> SafeString:
    """Every chart's frame: an SVG image with its accessible name, around its escaped parts."""
    return format_html(
        '<svg role="img" aria-label="{}" width="{}" height="{}" class="chart">{}</svg>',
        label,
        width,
        height,
        SafeString("".join(parts)),
    )


@register.simple_tag
def interval_chart(chart: dict, label: str, digits: int = 3) -> SafeString | str:
    """Dot-and-whisker rows (a square for a baseline, so it reads without colour), a zero line and ticks."""
    if not chart.get("rows"):
        return ""
    parts = []
    if chart.get("zero") is not None:
        parts.append(
            format_html('<line x1="{0}" x2="{0}" y1="8" y2="{1}" class="zero"/>', chart["zero"], chart["axis_y"])
        )
    parts.append(
        format_html_join(
            "",
            '<text x="{}" y="{}" text-anchor="middle" class="tick">{}</text>',
            ((tick["x"], chart["height"] - 4, tick["label"]) for tick in chart["ticks"]),
        )
    )
    for row in chart["rows"]:
        y, x = row["y"], row["x"]
        fits = label_chars(chart["label_width"])
        name = row["label"] if len(row["label"]) <= fits else row["label"][: fits - 1] + "…"
        tip = f"{row['label']}: {row['mean']:.{digits}f}"
        parts.append(
            format_html(
                '<g><text x="{}" y="{}" text-anchor="end">{}<title>{}</title></text>',
                chart["label_width"] - 8,
                y + 4,
                name,
                row["label"],
            )
        )
        if row.get("x_low") is not None:
            low, high = row["x_low"], row["x_high"]
            parts.append(
                format_html(
                    '<line x1="{0}" x2="{1}" y1="{2}" y2="{2}" class="whisker"/>'
                    '<line x1="{0}" x2="{0}" y1="{3}" y2="{4}" class="whisker"/>'
                    '<line x1="{1}" x2="{1}" y1="{3}" y2="{4}" class="whisker"/>',
                    low,
                    high,
                    y,
                    y - 5,
                    y + 5,
                )
            )
        if row.get("baseline"):
            marker = '<rect x="{}" y="{}" width="10" height="10" class="marker baseline"><title>{}</title></rect></g>'
            parts.append(format_html(marker, x - 5, y - 5, tip))
        else:
            parts.append(
                format_html('<circle cx="{}" cy="{}" r="5" class="marker"><title>{}</title></circle></g>', x, y, tip)
            )
    return _svg(label, chart["width"], chart["height"], parts)


@register.simple_tag
def reliability_diagram(chart: dict | None, label: str) -> SafeString | str:
    """Dots of (mean confidence, share of wins) per bin over the diagonal of perfect calibration."""
    if not chart or not chart["points"]:
        return ""
    low, high, size = chart["low"], chart["high"], chart["size"]
    parts = [
        format_html('<rect x="{0}" y="{0}" width="{1}" height="{1}" class="frame"/>', low, high - low),
        format_html('<line x1="{0}" y1="{1}" x2="{1}" y2="{0}" class="zero"/>', low, high),
        format_html_join(
            "",
            '<text x="{}" y="{}" text-anchor="middle" class="tick">{}</text>'
            '<text x="{}" y="{}" text-anchor="end" class="tick">{}</text>',
            ((t["x"], high + 14, t["value"], low - 4, t["y"] + 4, t["value"]) for t in chart["ticks"]),
        ),
        format_html(
            '<text x="{}" y="{}" text-anchor="middle" class="tick">confidence (P response 1 better)</text>',
            (low + high) / 2,
            size - 4,
        ),
        format_html(
            '<text x="12" y="{0}" text-anchor="middle" class="tick" transform="rotate(-90 12 {0})">'
            "share won by response 1</text>",
            (low + high) / 2,
        ),
    ]
    for point in chart["points"]:
        tip = f"{point['n']} verdicts: confidence {point['confidence']:.2f}, response 1 won {point['accuracy']:.2f}"
        parts.append(
            format_html(
                '<circle cx="{}" cy="{}" r="{}" class="marker bin"><title>{}</title></circle>',
                point["x"],
                point["y"],
                point["r"],
                tip,
            )
        )
    return _svg(label, size, size, parts)


@register.simple_tag
def bar_chart(chart: dict, label: str) -> SafeString | str:
    """Horizontal bars with their values, the D = 1 line, and a tick on the bars that reach it (so it
    reads without colour)."""
    if not chart.get("bars"):
        return ""
    parts = [
        format_html(
            '<line x1="{0}" x2="{0}" y1="0" y2="{1}" class="zero"><title>D = 1 (p = 0.05)</title></line>',
            chart["x1"],
            chart["height"],
        )
    ]
    for bar in chart["bars"]:
        mark = " ✓" if bar["discerns"] else ""
        parts.append(
            format_html(
                '<text x="{}" y="{}" text-anchor="end">{}</text>'
                '<rect x="{}" y="{}" width="{}" height="16" class="marker{}"><title>D = {}</title></rect>'
                '<text x="{}" y="{}">{}{}</text>',
                chart["x0"] - 6,
                bar["y"] + 12,
                bar["label"],
                chart["x0"],
                bar["y"],
                bar["width"],
                "" if bar["discerns"] else " baseline",
                f"{bar['value']:.2f}",
                bar["x_end"] + 4,
                bar["y"] + 12,
                f"{bar['value']:.2f}",
                mark,
            )
        )
    return _svg(label, chart["width"], chart["height"], parts)


@register.simple_tag
def rating_chart(chart: dict, label: str) -> SafeString | str:
    """Grouped columns of mean ratings (1–5) with a grid, each column tagged under it (B, S, E)."""
    if not chart.get("columns"):
        return ""
    parts = [
        format_html(
            '<line x1="30" x2="{0}" y1="{1}" y2="{1}" class="zero"/>'
            '<text x="24" y="{2}" text-anchor="end" class="tick">{3}</text>',
            chart["width"],
            line["y"],
            line["y"] + 4,
            line["label"],
        )
        for line in chart["grid"]
    ]
    for column in chart["columns"]:
        parts.append(
            format_html(
                '<rect x="{}" y="{}" width="14" height="{}" class="marker{}"><title>{}, {}: {}</title></rect>'
                '<text x="{}" y="{}" text-anchor="middle" class="tick">{}</text>',
                column["x"],
                column["y"],
                column["height"],
                "" if column["tag"] == "B" else " baseline",
                column["rubric"],
                column["variant"],
                f"{column['mean']:.2f}",
                column["x"] + 7,
                chart["base"] + 12,
                column["tag"],
            )
        )
    parts += [
        format_html(
            '<text x="{}" y="{}" text-anchor="middle" class="tick">{}</text>',
            text["x"],
            chart["base"] + 26,
            text["text"],
        )
        for text in chart["labels"]
    ]
    return _svg(label, chart["width"], chart["height"], parts)
