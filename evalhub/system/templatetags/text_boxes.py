from __future__ import annotations

from django import template
from django.utils.safestring import mark_safe

from evalhub.core.text.markdown import render_markdown

register = template.Library()


@register.inclusion_tag("_text_box.html")
def text_box(text: str | None) -> dict[str, object]:
    """A model-written or uploaded text, rendered as Markdown, with its raw text one click away."""
    text = text or ""
    # render_markdown's output has been through the allow-list sanitiser.
    return {"text": text, "html": mark_safe(render_markdown(text))}  # noqa: S308
