from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

from django.core.management.base import CommandError
from django.urls import NoReverseMatch

from evalhub.catalog.actions.importing import ImportRejected, check_import_size
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.imported_pages import pages_showing
from evalhub.catalog.models import TaskType
from evalhub.core.files.judgments import AUTO, JUDGES_ARE, LAYOUTS
from evalhub.core.files.study import STUDY_FILE
from evalhub.system.commands import DataCommand


class Command(DataCommand):
    help = (
        "Import pairwise judgments (people's labels, judges' verdicts) from a JSONL, CSV or Parquet file: "
        "generic, MT-Bench or AlpacaEval records; or a study in its published files, read through its study.json "
        "(a .zip, or a folder holding study.json). All rows or none."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", dest="layout", default="auto", choices=["auto", *LAYOUTS])
        parser.add_argument(
            "--benchmark", default="", help="Benchmark slug; created when missing (default: imported-judgments)."
        )
        parser.add_argument("--task-type", default=TaskType.OTHER, choices=TaskType.values)
        parser.add_argument(
            "--create-models",
            action="store_true",
            help="Create candidate models named in the file that do not exist yet.",
        )
        parser.add_argument(
            "--judges-are",
            default=AUTO,
            choices=JUDGES_ARE,
            help="Who the file's judges are where it does not say (auto: people are named expert_, author_, "
            "human or arena_user_; a generic file's judge_kind column wins).",
        )

    def handle(self, *args, **options):
        path: Path = options["path"]
        if path.is_dir() and (path / STUDY_FILE).is_file():
            with tempfile.TemporaryDirectory(prefix="evalhub-study-") as folder:
                return self._import(_zipped_study(path, Path(folder)), options)
        if not path.is_file():
            raise CommandError(f"{path}: no such file (or folder holding {STUDY_FILE}).")
        return self._import(path, options)

    def _import(self, path: Path, options: dict) -> None:
        try:
            check_import_size(path.stat().st_size)
            # Read as a stream: a file of ten million rows is never in memory whole.
            with path.open("rb") as file, self.reading(file, path.stat().st_size, path.name):
                summary = do_import_judgments(
                    filename=path.name,
                    data=file,
                    benchmark_slug=options["benchmark"] or "imported-judgments",
                    layout=options["layout"],
                    task_type=options["task_type"],
                    allow_new_models=options["create_models"],
                    judges_are=options["judges_are"],
                )
        except ImportRejected as rejected:
            for error in rejected.errors:
                self.stderr.write(f"{path.name}: {error}")
            raise CommandError(f"{len(rejected.errors)} problem(s); nothing was imported.") from None
        self.stdout.write(self.style.SUCCESS(f"{summary.benchmark.slug}: {summary.describe()}"))
        try:
            pages = pages_showing(summary.benchmark.slug)
        except (ImportError, NoReverseMatch):  # an import runs without the site's URLs too: the summary is enough
            return
        self.stdout.write("See it on " + ", ".join(f"{label} ({path})" for label, path in pages) + ".")


def _zipped_study(folder: Path, into: Path) -> Path:
    """A study's folder as the zip the upload page takes, in `into` (stored, not compressed: it is read
    once, here)."""
    target = into / f"{folder.resolve().name}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(folder).as_posix())
    return target
