"""The base of the commands that move data in and out (imports, exports, reports)."""

from __future__ import annotations

from django.core.checks import Tags
from django.core.management.base import BaseCommand


class DataCommand(BaseCommand):
    """A command that reads or writes data: Django's start-up checks are limited to the models. The
    others import every view to check the URLs (2.8 of 4.3 s of `manage.py check` here), which says
    nothing about a file and was the largest part of a small import's time."""

    requires_system_checks = [Tags.models]
