from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import CommandError

from evalhub.catalog.models import Benchmark, Criterion
from evalhub.core.statistics.alt_test import DEFAULT_EPSILON
from evalhub.core.statistics.estimators import AUTO, Correction, choices
from evalhub.judgelab.report import compute
from evalhub.reads.judged_pairs import Scope
from evalhub.system.commands import DataCommand


class Command(DataCommand):
    help = "Write every judge's report (agreement, kappa, calibration, biases, with intervals) as JSON."

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", default="", help="Only pairs of this benchmark (slug).")
        parser.add_argument("--criterion", default="", help="Only pairs judged under this criterion (slug).")
        parser.add_argument(
            "--estimator",
            default=AUTO,
            choices=[name for name, _ in choices()],
            help="The corrected boards' estimator (default: chosen by evalhub's rule, docs/corrected.md).",
        )
        parser.add_argument(
            "--epsilon",
            type=float,
            default=DEFAULT_EPSILON,
            help="The alternative annotator test's epsilon (0.2 experts, 0.15 skilled annotators, 0.1 crowd workers).",
        )
        parser.add_argument("--out", type=Path, required=True, help="The JSON file to write ('-' for standard output).")

    def handle(self, *args, **options):
        scope = Scope(benchmark=options["benchmark"], criterion=options["criterion"])
        if scope.benchmark and not Benchmark.objects.filter(slug=scope.benchmark).exists():
            raise CommandError(f"no benchmark {scope.benchmark!r}.")
        if scope.criterion and not Criterion.objects.filter(slug=scope.criterion).exists():
            raise CommandError(f"no criterion {scope.criterion!r}.")
        if not 0 <= options["epsilon"] <= 0.5:
            raise CommandError("--epsilon is between 0 and 0.5.")
        report = compute(scope, Correction(options["estimator"]))
        text = json.dumps(report.as_json(options["epsilon"]), indent=2)
        if str(options["out"]) == "-":
            self.stdout.write(text)
            return
        options["out"].write_text(text + "\n", encoding="utf-8")
        self.stdout.write(
            self.style.SUCCESS(f"{options['out']}: {len(report.judges)} judges, {report.people.people} people.")
        )
