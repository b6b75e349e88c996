"""Sign-in throttling (django-axes): which address a failed sign-in counts against."""

from __future__ import annotations

from django.http import HttpRequest


def client_address(request: HttpRequest) -> str | None:
    # Never X-Forwarded-For read here: any client can send one. The ASGI server sets REMOTE_ADDR from
    # it only for trusted proxies.
    return request.META.get("REMOTE_ADDR")
