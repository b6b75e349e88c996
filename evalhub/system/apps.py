from __future__ import annotations

from django.apps import AppConfig


class SystemConfig(AppConfig):
    name = "evalhub.system"
    label = "system"

    def ready(self) -> None:
        # Make the Celery app current in every Django process, so shared tasks bind to it.
        from evalhub.celery import app  # noqa: F401
