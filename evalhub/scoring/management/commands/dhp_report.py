from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import CommandError

from evalhub.core.dhp.discernment import describe_summary
from evalhub.core.dhp.report import ReportError, build_report, read_scores
from evalhub.system.commands import DataCommand


class Command(DataCommand):
    help = "DHP discernment scores from a CSV of original/perturbed scores (and optional expert weights)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--scores",
            type=Path,
            required=True,
            help="CSV: judge,item_id,perturbation,level,metric,original_score,perturbed_score",
        )
        parser.add_argument("--weights", type=Path, help="JSON {perturbation: {metric: weight}}, e.g. a survey export.")
        parser.add_argument("--out", type=Path, required=True)
        parser.add_argument(
            "--paper-literal",
            action="store_true",
            help="Combine plain p-values as 1/Σ(1/p) as printed in the paper (not a valid p-value).",
        )

    def handle(self, *args, **options):
        try:
            text = options["scores"].read_text(encoding="utf-8")
            weights = json.loads(options["weights"].read_text(encoding="utf-8")) if options["weights"] else None
            report = build_report(read_scores(text), weights, paper_literal=options["paper_literal"])
        except FileNotFoundError as error:
            raise CommandError(f"{error.filename}: no such file.") from None
        except UnicodeDecodeError:
            raise CommandError("the scores file is not UTF-8.") from None
        except json.JSONDecodeError as error:
            raise CommandError(f"the weights file is not valid JSON ({error}).") from None
        except (ReportError, ValueError) as error:
            raise CommandError(str(error)) from None
        options["out"].write_text(json.dumps(report, indent=2), encoding="utf-8")
        for judge, entry in report["judges"].items():
            s = entry["summary"]
            self.stdout.write(f"{judge}: {describe_summary(s)}")
