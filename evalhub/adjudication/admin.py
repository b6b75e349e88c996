from __future__ import annotations

from django.contrib import admin

from evalhub.adjudication.models import AdjudicationItem


@admin.register(AdjudicationItem)
class AdjudicationItemAdmin(admin.ModelAdmin):
    list_display = ("id", "debate", "status", "created_at")
    list_filter = ("status",)
    raw_id_fields = ("debate",)
