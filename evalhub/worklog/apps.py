from __future__ import annotations

from django.apps import AppConfig


class WorklogConfig(AppConfig):
    name = "evalhub.worklog"
    label = "worklog"
    verbose_name = "Work log (rows a job could not score, stored LLM rewrites)"
