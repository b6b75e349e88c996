"""Rows an admin page shows beside the row it edits but that only the app's actions write: people's
verdicts, an audit trail, a debate's transcript. Shown, never added or deleted by a form."""

from __future__ import annotations

from typing import Any

from django.contrib import admin


class ShownInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False
