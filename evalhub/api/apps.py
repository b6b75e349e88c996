from __future__ import annotations

from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "evalhub.api"
    label = "api"
    verbose_name = "HTTP API (/api/v1/) for pipelines, with personal tokens"
