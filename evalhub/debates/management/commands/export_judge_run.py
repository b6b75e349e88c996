from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from evalhub.debates.inspect_export import write_judge_run_log
from evalhub.debates.models import JudgeRun
from evalhub.system.commands import DataCommand


class Command(DataCommand):
    help = "Write a judge run's verdicts as an Inspect AI eval log (.eval), which `inspect view` opens."

    def add_arguments(self, parser):
        parser.add_argument("run", type=int, help="The judge run's number.")
        parser.add_argument("--out", type=Path, required=True, help="The .eval file to write.")

    def handle(self, *args, **options):
        run = (
            JudgeRun.objects.select_related("reference__benchmark", "reference__criterion", "job")
            .filter(pk=options["run"])
            .first()
        )
        if run is None:
            raise CommandError(f"no judge run {options['run']}.")
        path = write_judge_run_log(run, options["out"])
        self.stdout.write(self.style.SUCCESS(f"{path}: {run.verdicts.count()} samples; `inspect view` opens it."))
