from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from evalhub.core.statistics.estimators import label_of

register = template.Library()


@register.filter
def name_of(slug: str, names: dict[str, str]) -> str:
    """A model's display name, or its slug when it has none (a judge spec, a deleted model)."""
    return names.get(slug, slug) if slug else ""


@register.filter
def get(mapping, key):
    return mapping.get(key) if mapping else None


@register.simple_tag
def rate(entry, digits: int = 3) -> str:
    """An agreement or flip rate with its counts, or a dash (a tag, not a template: the judges'
    layouts have a thousand of these cells)."""
    if not entry:
        return mark_safe('<span data-sort="-1">—</span>')  # noqa: S308 (a constant)
    return format_html(
        '<span data-sort="{}">{} <small class="muted">({}/{})</small></span>',
        entry["rate"],
        f"{entry['rate']:.{digits}f}",
        entry["hits"],
        entry["total"],
    )


@register.filter
def fixed(value, digits: int = 3) -> str:
    """A number with `digits` decimals, or "" for none: floatformat's Decimal rounding cost more than
    the rest of a board's cell (a board has a thousand)."""
    if value is None or value == "":
        return ""
    try:
        return f"{float(value):.{int(digits)}f}"
    except (TypeError, ValueError):
        return ""


@register.filter
def estimator_label(name: str) -> str:
    """A corrected estimator's name as a reader knows it (evalhub.core.statistics.estimators)."""
    return "active inference (least-sure draw)" if name == "active" else label_of(name)
