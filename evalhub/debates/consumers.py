from __future__ import annotations

from django.template.loader import render_to_string

from evalhub.accounts.roles import READERS, has_role
from evalhub.debates import live
from evalhub.debates.models import Debate
from evalhub.live import FragmentConsumer


class DebateConsumer(FragmentConsumer):
    """The live transcript of one debate, at /ws/debates/<id>/."""

    def group_for_user(self, user) -> str | None:
        debate_id = self.scope["url_route"]["kwargs"]["debate_id"]
        if not has_role(user, *READERS) or not Debate.objects.filter(pk=debate_id).exists():
            return None
        return f"debate.{debate_id}"

    def current_html(self) -> str:
        debate = (
            Debate.objects.select_related("run")
            .prefetch_related("turns")
            .get(pk=self.scope["url_route"]["kwargs"]["debate_id"])
        )
        return render_to_string(
            "debates/_live.html", {"debate": debate, "transcript": live.transcript(debate), "oob": True}
        )


class DebateRunsConsumer(FragmentConsumer):
    """Live run summaries: all runs at /ws/debate-runs/, one run at /ws/debate-runs/<id>/."""

    def group_for_user(self, user) -> str | None:
        if not has_role(user, *READERS):
            return None
        run_id = self.scope["url_route"]["kwargs"].get("run_id")
        return live.run_group(run_id) if run_id else live.RUNS_GROUP
