from __future__ import annotations

from django.template.loader import render_to_string

from evalhub.accounts.roles import READERS, has_role
from evalhub.debates import live
from evalhub.debates.actions import listed_runs, run_counts, run_debates_page
from evalhub.debates.models import Debate, DebateRun
from evalhub.debates.visibility import turns_withheld
from evalhub.live import FragmentConsumer


class DebateConsumer(FragmentConsumer):
    """The live transcript of one debate, at /ws/debates/<id>/."""

    def group_for_user(self, user) -> str | None:
        debate_id = self.scope["url_route"]["kwargs"]["debate_id"]
        if not has_role(user, *READERS) or not Debate.objects.filter(pk=debate_id).exists():
            return None
        if turns_withheld(user, int(debate_id)):
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

    def current_fragments(self) -> list[str]:
        """A run's page as it is now: its summary and the rows of the page it shows (the debates page:
        the summaries of the runs it lists). Debates may finish between the page's render and this
        socket joining the group (answers served from the response cache take milliseconds): without
        this the page stayed "running"."""
        run_id = self.scope["url_route"]["kwargs"].get("run_id")
        if not run_id:  # the debates page: the summaries of the runs it lists
            return ["".join(live.run_summary(run, counts) for run, counts in listed_runs())]
        run = DebateRun.objects.select_related("job").filter(pk=run_id).first()
        if run is None:
            return []
        page = run_debates_page(run, self.query("page"))
        for debate in page:
            debate.run = run  # the row's template reads the run's job
        return [live.run_summary(run, run_counts(run)), "".join(live.run_row(debate) for debate in page)]
