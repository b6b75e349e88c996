from __future__ import annotations

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "evalhub.catalog"
    label = "catalog"
    verbose_name = "Catalog"
