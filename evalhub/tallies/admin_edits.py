"""An edit in Django's admin goes through no action: the boards must see it all the same.

The actions keep the boards' counts in the transaction of each write and raise the boards' version
after its commit (evalhub.tallies.actions). A row added or changed in the admin did neither: a
debate's verdict changed there, or an imported label's, left the counts saying the old verdict for
as long as they were kept, and an edited response or prompt text left every cached board on its
old lengths. An admin of a row the boards count or read takes this mixin: the row's counts are
taken back before the edit and counted again after it (`take_back` / `count`, for the models that
have counts of their own), and every edit raises the version after its commit. Deletions are
followed by evalhub.tallies.signals already; the rows these admins show inline are never edited there
(evalhub.system.admin_inlines).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from evalhub.tallies.actions import note_change


class EditsSeenByBoards(admin.ModelAdmin):
    def take_back(self, obj: Any) -> None:
        """Take the row's part of the counts away, as stored before the edit (nothing by default)."""

    def count(self, obj: Any) -> None:
        """Count the row as it now is (nothing by default: the boards only read such rows)."""

    def save_model(self, request: Any, obj: Any, form: Any, change: bool) -> None:
        edited = not change or form.has_changed()
        if change and edited:
            self.take_back(obj)
        super().save_model(request, obj, form, change)
        if edited:
            self.count(obj)
            note_change()
