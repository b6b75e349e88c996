from __future__ import annotations

from django.contrib import admin

from evalhub.debates.models import Debate, DebateRun, DebateTurn
from evalhub.debates.verdict_counts import do_recount_debates
from evalhub.debates.visibility import withheld_from
from evalhub.system.admin_inlines import ShownInline
from evalhub.tallies.admin_edits import EditsSeenByBoards


@admin.register(DebateRun)
class DebateRunAdmin(EditsSeenByBoards):
    list_display = ("id", "name", "benchmark", "criterion", "job", "rounds", "consensus_rule", "created_at")
    list_filter = ("job__status",)
    # A run's configuration is stored once, checked by its form (agents' specs name secrets, never carry
    # them) and is what its debates ran with: shown here, not edited. Its name is a person's to change.
    readonly_fields = [field.name for field in DebateRun._meta.concrete_fields if field.name not in ("id", "name")]


class TurnInline(ShownInline):  # the transcript is the runner's to write
    model = DebateTurn
    fields = ("round", "agent", "verdict", "reasked", "output_tokens", "latency_s")
    readonly_fields = fields


@admin.register(Debate)
class DebateAdmin(EditsSeenByBoards):
    list_display = ("id", "run", "prompt", "status", "verdict", "winner", "rounds_used", "swapped")
    list_filter = ("status", "run")
    raw_id_fields = ("prompt", "response_a", "response_b")
    inlines = [TurnInline]

    def has_view_permission(self, request, obj=None) -> bool:
        # An admin holding the debate's item on a blind-first screen reads it after their blind verdict.
        if obj is not None and obj.pk in withheld_from(request):
            return False
        return super().has_view_permission(request, obj)

    has_change_permission = has_view_permission

    # Who won follows from the verdict and the order shown, as do_settle_debate sets it: a form that took
    # both could store a verdict for B and a win for A, and the counts read the winner.
    readonly_fields = ("winner",)

    def save_model(self, request, obj: Debate, form, change: bool) -> None:
        obj.winner = obj.winner_of(obj.verdict) if obj.verdict is not None else ""
        super().save_model(request, obj, form, change)

    def count(self, obj: Debate) -> None:  # compared with what the counts hold for it: the difference added
        do_recount_debates([obj.pk])
