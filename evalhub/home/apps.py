from __future__ import annotations

from django.apps import AppConfig


class HomeConfig(AppConfig):
    """The top of the app: the home page, the health check and the quickstart. It reads every other
    app; none reads it."""

    name = "evalhub.home"
    label = "home"
