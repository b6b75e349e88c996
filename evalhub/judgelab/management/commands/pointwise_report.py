from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import CommandError

from evalhub.core.statistics.pointwise import ScoresError, meta_evaluation, read_scores
from evalhub.judgelab.pointwise import stored_scores
from evalhub.system.commands import DataCommand


class Command(DataCommand):
    help = (
        "Pointwise judges and metrics against people's scores of the same responses: item- and system-level "
        "Spearman and Kendall with bootstrap intervals over prompts, Krippendorff's alpha among people, and "
        "each judge's correlation with each person beside the people's with each other."
    )

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument(
            "--scores", type=Path, help="CSV: prompt_id,system,rater,rater_kind (person|judge),score[,criterion]"
        )
        source.add_argument(
            "--benchmark", help="Or the scores stored for this benchmark (import_scores: people's, judges', Inspect's)."
        )
        parser.add_argument("--out", type=Path, required=True, help="The JSON report to write.")
        parser.add_argument("--resamples", type=int, default=1000, help="Bootstrap resamples (default 1000).")

    def handle(self, *args, **options):
        try:
            if options["benchmark"]:
                scores = stored_scores(options["benchmark"])
            else:
                scores = read_scores(options["scores"].read_text(encoding="utf-8"))
        except FileNotFoundError as error:
            raise CommandError(f"{error.filename}: no such file.") from None
        except UnicodeDecodeError:
            raise CommandError("the scores file is not UTF-8.") from None
        except ScoresError as error:
            raise CommandError(str(error)) from None
        report = meta_evaluation(scores, resamples=options["resamples"])
        options["out"].parent.mkdir(parents=True, exist_ok=True)
        options["out"].write_text(json.dumps(report, indent=2), encoding="utf-8")
        for criterion, entry in report["criteria"].items():
            for judge, found in entry["judges"].items():
                item, system = found["item_spearman"], found["system_spearman"]
                self.stdout.write(
                    f"{criterion} · {judge}: item-level ρ {_shown(item)}, system-level ρ {_shown(system)}"
                )


def _shown(estimate: dict) -> str:
    if estimate["value"] is None:
        return "—"
    interval = (
        f" [{estimate['ci'][0]:.2f}, {estimate['ci'][1]:.2f}]" if estimate["ci"] else " (too few for an interval)"
    )
    return f"{estimate['value']:.3f}{interval} over {estimate['n']} prompts"
