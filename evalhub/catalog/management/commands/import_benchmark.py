from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.importing import ImportRejected, check_import_size
from evalhub.catalog.models import TaskType
from evalhub.system.commands import DataCommand


class Command(DataCommand):
    help = "Import prompts and responses from a JSONL, CSV, Parquet or JSON file, gzipped or not (all rows or none)."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--benchmark", required=True, help="Benchmark slug; created when missing.")
        parser.add_argument("--name", default="", help="Name of a new benchmark (default: the slug).")
        parser.add_argument("--task-type", default=TaskType.OTHER, choices=TaskType.values)
        parser.add_argument(
            "--create-models", action="store_true", help="Create models named in the file that do not exist yet."
        )

    def handle(self, *args, **options):
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file.")
        try:
            check_import_size(path.stat().st_size)
            # Read as a stream, a row at a time: the responses wait on disk.
            with path.open("rb") as file, self.reading(file, path.stat().st_size, path.name):
                summary = do_import_benchmark(
                    filename=path.name,
                    data=file,
                    benchmark_slug=options["benchmark"],
                    benchmark_name=options["name"],
                    task_type=options["task_type"],
                    allow_new_models=options["create_models"],
                )
        except ImportRejected as rejected:
            for error in rejected.errors:
                self.stderr.write(f"{path.name}: {error}")
            raise CommandError(f"{len(rejected.errors)} problem(s); nothing was imported.") from None
        self.stdout.write(self.style.SUCCESS(f"{summary.benchmark.slug}: {summary.describe()}"))
