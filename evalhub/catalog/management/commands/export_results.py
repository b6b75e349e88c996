from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from evalhub.catalog.exports import EXPORT_FORMATS, TABLES
from evalhub.catalog.models import Benchmark
from evalhub.core.files.tables import write_csv, write_jsonl
from evalhub.system.commands import DataCommand


class Command(DataCommand):
    help = "Export every table of every benchmark (or the chosen ones) as JSONL or CSV files."

    def add_arguments(self, parser):
        parser.add_argument("--out", type=Path, required=True, help="Folder to write into (created).")
        parser.add_argument("--format", default="jsonl", choices=EXPORT_FORMATS)
        parser.add_argument("--benchmark", action="append", default=[], help="Slug; repeat for several.")
        parser.add_argument("--table", action="append", default=[], choices=sorted(TABLES))

    def handle(self, *args, **options):
        benchmarks = Benchmark.objects.order_by("slug")
        if options["benchmark"]:
            benchmarks = benchmarks.filter(slug__in=options["benchmark"])
            missing = set(options["benchmark"]) - set(benchmarks.values_list("slug", flat=True))
            if missing:
                raise CommandError(f"unknown benchmark(s): {', '.join(sorted(missing))}")
        out: Path = options["out"]
        out.mkdir(parents=True, exist_ok=True)
        fmt = options["format"]
        for benchmark in benchmarks:
            for table in options["table"] or sorted(TABLES):
                rows = list(TABLES[table](benchmark))
                path = out / f"{benchmark.slug}.{table}.{fmt}"
                with path.open("w", encoding="utf-8", newline="") as handle:
                    (write_jsonl if fmt == "jsonl" else write_csv)(rows, handle)
                self.stdout.write(f"{path}: {len(rows)} rows")
