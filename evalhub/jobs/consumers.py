from __future__ import annotations

from evalhub.accounts.roles import READERS, has_role
from evalhub.jobs.live import job_group, job_status
from evalhub.jobs.models import Job
from evalhub.live import FragmentConsumer


class JobConsumer(FragmentConsumer):
    """Live status of one job, at /ws/jobs/<id>/ (`?embedded=1` for a page that embeds the card)."""

    def group_for_user(self, user) -> str | None:
        job_id = self.scope["url_route"]["kwargs"]["job_id"]
        if not has_role(user, *READERS) or not Job.objects.filter(pk=job_id).exists():
            return None
        return job_group(job_id, self.embedded)

    @property
    def embedded(self) -> bool:
        return self.query("embedded") == "1"

    def current_html(self) -> str:
        return job_status(Job.objects.get(pk=self.scope["url_route"]["kwargs"]["job_id"]), self.embedded)
