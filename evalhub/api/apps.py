from __future__ import annotations

from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "evalhub.api"
    label = "api"
    verbose_name = "HTTP API (/api/v1/) for pipelines, with personal tokens"

    def ready(self) -> None:
        from evalhub.jobs import kinds

        kinds.register("upload", "evalhub.api.uploads:UploadRunner")  # large uploads, imported by a worker
