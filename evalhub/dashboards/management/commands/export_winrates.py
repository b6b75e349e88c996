from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError
from django.db.models import Q

from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.core.files.judgments import DEFAULT_CRITERION
from evalhub.core.files.tables import to_text
from evalhub.core.statistics.estimators import Correction
from evalhub.core.statistics.estimators import choices as estimator_choices
from evalhub.dashboards.baseline_win_rates import Selection, export_rows, is_run_judge, labelled_by_people
from evalhub.dashboards.win_rate_boards import board
from evalhub.system.commands import DataCommand


class Command(DataCommand):
    help = (
        "Write one judge's win rates against a baseline in AlpacaEval's leaderboard columns (percent), one row "
        "per model, named as its imported file named it: diff it against AlpacaEval's leaderboard CSV."
    )

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True, help="Benchmark slug.")
        parser.add_argument(
            "--judge",
            required=True,
            help="The judge: a model's slug or its name in the file, or run:SPEC for evalhub's judge runs of SPEC.",
        )
        parser.add_argument("--baseline", required=True, help="The baseline model: slug or name.")
        parser.add_argument("--criterion", default=DEFAULT_CRITERION, help="Criterion slug (default: overall).")
        parser.add_argument("--out", type=Path, required=True, help="The CSV file to write.")
        parser.add_argument(
            "--corrected-by",
            choices=["people"],
            help="Add the judge's win rate corrected by people's labels on the same pairs (PPI++), people's own, "
            "and n_human: corrected_win_rate, corrected_ci_low/high, human_only_win_rate, human_only_ci_low/high, "
            "with the estimator that gave them and why.",
        )
        parser.add_argument(
            "--estimator",
            choices=[value for value, _ in estimator_choices()],
            default="auto",
            help="The corrected estimator (default: chosen by evalhub's rule; docs/boards.md).",
        )
        parser.add_argument(
            "--anytime", action="store_true", help="Intervals valid at every look (confidence sequences)."
        )

    def handle(self, *args, **options) -> None:
        if not Benchmark.objects.filter(slug=options["benchmark"]).exists():
            raise CommandError(f"no benchmark {options['benchmark']!r}.")
        if not Criterion.objects.filter(slug=options["criterion"]).exists():
            raise CommandError(f"no criterion {options['criterion']!r}.")
        selection = Selection(
            benchmark=options["benchmark"],
            judge=_model(options["judge"], "judge"),
            baseline=_model(options["baseline"], "baseline"),
            criterion=options["criterion"],
        )
        rows = board(selection, correction=Correction(options["estimator"], options["anytime"]))
        if not rows:
            raise CommandError(
                f"{selection.judge} judged no pair with {selection.baseline} on {selection.benchmark} "
                f"under {selection.criterion}; nothing written."
            )
        options["out"].parent.mkdir(parents=True, exist_ok=True)
        corrected = options["corrected_by"] == "people"
        if corrected and not labelled_by_people(rows):
            self.stderr.write(f"people labelled no pair of {selection.judge}'s: the corrected columns are empty.")
        options["out"].write_text(to_text(export_rows(rows, corrected=corrected), "csv"), encoding="utf-8")
        self.stdout.write(self.style.SUCCESS(f"{len(rows)} model(s) against {selection.baseline} → {options['out']}"))


def _model(name: str, role: str) -> str:
    if role == "judge" and is_run_judge(name):  # evalhub's own judge runs of a spec: no model row to find
        return name
    found = list(LanguageModel.objects.filter(Q(slug=name) | Q(display_name=name)).values_list("slug", flat=True)[:2])
    if len(found) != 1:
        raise CommandError(f"{role} {name!r}: {'no such model' if not found else 'more than one model has this name'}.")
    return found[0]
