from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError
from django.urls import NoReverseMatch

from evalhub.catalog.actions.importing import ImportRejected, check_import_size
from evalhub.catalog.actions.scores import check_inspect_logs, check_score_file, do_import_scores
from evalhub.catalog.imported_pages import pages_showing_scores
from evalhub.catalog.models import TaskType
from evalhub.system.commands import DataCommand


class Command(DataCommand):
    help = (
        "Import scores of single responses (people's ratings, a metric's or a judge's scores) from a JSONL, CSV "
        "or Parquet file in evalhub's score layout, or from Inspect AI eval logs (.eval, .json or a folder of "
        "them); all rows or none."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", default="auto", choices=["auto", "scores", "inspect"])
        parser.add_argument(
            "--benchmark", default="", help="Benchmark slug; created when missing (default: imported-scores)."
        )
        parser.add_argument("--task-type", default=TaskType.OTHER, choices=TaskType.values)
        parser.add_argument(
            "--create-models",
            action="store_true",
            help="Create the models that wrote the responses if they do not exist.",
        )

    @staticmethod
    def _store(parsed, filename, data, options):
        return do_import_scores(
            parsed=parsed,
            filename=filename,
            data=data,
            benchmark_slug=_benchmark(options),
            task_type=options["task_type"],
        )

    def handle(self, *args, **options):
        from evalhub.catalog import inspect_logs

        path: Path = options["path"]
        if not path.exists():
            raise CommandError(f"{path}: no such file or folder.")
        inspect = options["format"] == "inspect" or (options["format"] == "auto" and inspect_logs.is_inspect_log(path))
        try:
            if inspect:
                parsed = check_inspect_logs(path, allow_new_models=options["create_models"])
                with inspect_logs.log_bytes(path) as logs_bytes:  # read again for the import's digest
                    summary = self._store(parsed, path.name, logs_bytes, options)
            else:
                check_import_size(path.stat().st_size)
                # Read as a stream: a file of ten million rows is never in memory whole.
                with path.open("rb") as file, self.reading(file, path.stat().st_size, path.name):
                    parsed = check_score_file(
                        path.name, file, allow_new_models=options["create_models"], benchmark_slug=_benchmark(options)
                    )
                    summary = self._store(parsed, path.name, file, options)
        except inspect_logs.InspectMissing as missing:
            raise CommandError(str(missing)) from None
        except ImportRejected as rejected:
            for error in rejected.errors:
                self.stderr.write(f"{path.name}: {error}")
            raise CommandError(f"{len(rejected.errors)} problem(s); nothing was imported.") from None
        self.stdout.write(self.style.SUCCESS(f"{summary.benchmark.slug}: {summary.describe()}"))
        try:
            pages = pages_showing_scores(summary.benchmark.slug)
        except NoReverseMatch:  # an import runs without the site's URLs too: the summary is enough
            return
        self.stdout.write("See it on " + ", ".join(f"{label} ({path})" for label, path in pages) + ".")


def _benchmark(options: dict) -> str:
    return options["benchmark"] or "imported-scores"
