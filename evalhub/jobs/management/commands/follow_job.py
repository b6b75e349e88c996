from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evalhub.jobs.cli import follow, report_state
from evalhub.jobs.models import Job


class Command(BaseCommand):
    help = "Follow a job started anywhere (a page, the API, another command) to its end, with its progress."

    def add_arguments(self, parser):
        parser.add_argument("job", type=int, help="The job's number (its page is /jobs/<number>/).")
        parser.add_argument("--poll", type=float, default=2.0, help="Seconds between reads of its state.")

    def handle(self, *args, **options):
        job = Job.objects.filter(pk=options["job"]).first()
        if job is None:
            raise CommandError(f"no job {options['job']}.")
        job = follow(job, poll=options["poll"])
        report_state(self, job, f"Job {job.pk} ({job.title})")
