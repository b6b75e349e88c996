from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from evalhub.catalog.exports import EXPORT_FORMATS, TABLES
from evalhub.catalog.models import Benchmark
from evalhub.core.files.tables import write_csv, write_jsonl
from evalhub.system.commands import DataCommand
from evalhub.system.hf_datasets import dataset_files, zipped
from evalhub.system.hub import HubPushFailed, push_dataset


class Command(DataCommand):
    help = (
        "Export every table of every benchmark (or the chosen ones) as JSONL, CSV or Hugging Face dataset files, "
        "and push one dataset to a hub (--push-to-hub)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--out", type=Path, required=True, help="Folder to write into (created).")
        parser.add_argument("--format", default="jsonl", choices=EXPORT_FORMATS)
        parser.add_argument("--benchmark", action="append", default=[], help="Slug; repeat for several.")
        parser.add_argument("--table", action="append", default=[], choices=sorted(TABLES))
        parser.add_argument(
            "--push-to-hub",
            metavar="NAMESPACE/NAME",
            help="With --format hf, one benchmark and one table: also push the dataset to a Hugging Face hub.",
        )
        parser.add_argument(
            "--hub-token-env", default="HF_TOKEN", help="The variable holding the hub token (default: HF_TOKEN)."
        )
        parser.add_argument("--public", action="store_true", help="Make a new hub dataset public (default: private).")

    def handle(self, *args, **options):
        benchmarks = Benchmark.objects.order_by("slug")
        if options["benchmark"]:
            benchmarks = benchmarks.filter(slug__in=options["benchmark"])
            missing = set(options["benchmark"]) - set(benchmarks.values_list("slug", flat=True))
            if missing:
                raise CommandError(f"unknown benchmark(s): {', '.join(sorted(missing))}")
        out: Path = options["out"]
        fmt, repo = options["format"], options["push_to_hub"]
        tables = options["table"] or sorted(TABLES)
        if repo and (fmt != "hf" or len(benchmarks) != 1 or len(tables) != 1):
            raise CommandError("--push-to-hub pushes one dataset: give --format hf, one --benchmark and one --table.")
        out.mkdir(parents=True, exist_ok=True)
        for benchmark in benchmarks:
            for table in tables:
                rows = list(self.counting(TABLES[table](benchmark), f"{benchmark.slug}.{table}"))
                files: dict[str, bytes] = {}
                if fmt == "hf":  # a Hugging Face dataset: its Parquet file and card, zipped (and pushed as they are)
                    files = dataset_files(rows, f"{benchmark.slug}.{table}", f"benchmark {benchmark.slug}")
                    path = out / f"{benchmark.slug}.{table}.hf.zip"
                    path.write_bytes(zipped(files))
                else:
                    path = out / f"{benchmark.slug}.{table}.{fmt}"
                    with path.open("w", encoding="utf-8", newline="") as handle:
                        (write_jsonl if fmt == "jsonl" else write_csv)(rows, handle)
                self.stdout.write(f"{path}: {len(rows)} rows")
                if repo:
                    self._push(files, repo, options)

    def _push(self, files, repo: str, options) -> None:
        try:
            url = push_dataset(files, repo, token_variable=options["hub_token_env"], private=not options["public"])
        except HubPushFailed as failed:
            raise CommandError(str(failed)) from None
        self.stdout.write(self.style.SUCCESS(f"pushed to {repo}: {url}"))
