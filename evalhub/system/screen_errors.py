"""A refused keyboard screen's reason, shown on the screen (htmx swaps it in, out of band)."""

from __future__ import annotations

from django.http import HttpResponse
from django.template.loader import render_to_string


def screen_error(message: str, status: int = 400) -> HttpResponse:
    """The reason alone, for the screen's `#screen-error`; the screen itself stays as it was (`HX-Reswap:
    none`). htmx swaps a 4xx only where base.html's responseHandling says so: 400, 409, 410 and 422."""
    reason = render_to_string("_screen_error.html", {"message": message})
    return HttpResponse(reason, status=status, headers={"HX-Reswap": "none"})
