from __future__ import annotations

from django.contrib import admin

from evalhub.adjudication.models import Adjudication, AdjudicationEvent, AdjudicationItem, Reservation
from evalhub.debates.visibility import withheld_from
from evalhub.system.admin_inlines import ShownInline


# People's verdicts and the audit trail are the adjudication's actions' to write: a verdict deleted by a
# form here left its item resolved by it.
class AdjudicationInline(ShownInline):
    model = Adjudication
    readonly_fields = (
        "user",
        "verdict",
        "swapped",
        "confidence",
        "notes",
        "seconds_spent",
        "flagged_fast",
        "created_at",
    )


class EventInline(ShownInline):
    model = AdjudicationEvent
    readonly_fields = ("user", "kind", "detail", "created_at")


@admin.register(AdjudicationItem)
class AdjudicationItemAdmin(admin.ModelAdmin):
    list_display = ("id", "debate", "status", "required_verdicts", "final_verdict", "final_source", "created_at")
    list_filter = ("status", "final_source")
    # An item's outcome is set by people's verdicts or an override with its reason (the review
    # screen), each kept in the audit trail and written to its debate: never by a form that does neither.
    readonly_fields = ("debate", "status", "required_verdicts", "final_verdict", "final_source", "resolved_at")
    inlines = [AdjudicationInline, EventInline]

    def has_view_permission(self, request, obj=None) -> bool:
        # The same rule as every other door: a held item's verdicts open after the blind verdict.
        if obj is not None and obj.debate_id in withheld_from(request):
            return False
        return super().has_view_permission(request, obj)

    has_change_permission = has_view_permission


@admin.register(Reservation)
class ReservationAdmin(admin.ModelAdmin):
    """A hold is the queue's to give (its person, its order shown and, blind first, its aid drawn at
    random and balanced per person): shown here, and deleted to free its item, never made or changed."""

    list_display = ("item", "user", "swapped", "started_at", "expires_at")
    readonly_fields = [field.name for field in Reservation._meta.concrete_fields if field.name != "id"]

    def has_add_permission(self, request) -> bool:
        return False
