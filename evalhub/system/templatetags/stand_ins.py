from __future__ import annotations

from django import template

from evalhub.llm.stand_ins import stand_ins

register = template.Library()


@register.inclusion_tag("_stand_in_notice.html")
def stand_in_notice(*specs: object) -> dict[str, object]:
    """A notice when a page's numbers come from the offline heuristic judges, the calculator or a tiny model."""
    found = [spec for group in specs for spec in stand_ins(group)]
    return {"stand_ins": list(dict.fromkeys(found))}
