"""Importing a benchmark file: prompts (with their privileged fields and metadata) and responses, whole or
not at all, adding and never blanking (an import leaves a field the file does not carry as stored)."""

from __future__ import annotations

from typing import Any

from evalhub.catalog.actions.importing import (
    ImportRejected,
    ImportSummary,
    check_benchmark_slug,
    check_import_size,
    do_create_models,
    do_record_import,
    do_upsert_prompts,
    do_upsert_responses,
    format_and_data,
    import_transaction,
    real_user,
    size_of,
)
from evalhub.catalog.models import (
    Benchmark,
    LanguageModel,
    TaskType,
)
from evalhub.core.files.benchmarks import ParsedFile, parse_benchmark_file
from evalhub.core.files.rows import Source


def check_import_file(filename: str, data: Source, *, allow_new_models: bool = False) -> ParsedFile:
    """Check size, type and every row of a file, given as bytes or a stream (read a row at a time, its
    responses kept on disk). Raises ImportRejected listing all problems."""
    check_import_size(size_of(data))
    fmt, data = format_and_data(filename, data)
    known = set(LanguageModel.objects.values_list("slug", flat=True))
    parsed = parse_benchmark_file(data, fmt, known_models=known, allow_new_models=allow_new_models)
    if not parsed.ok:
        parsed.close()
        raise ImportRejected(parsed.errors)
    return parsed


def do_import_benchmark(
    *,
    filename: str,
    data: Source,
    benchmark_slug: str,
    benchmark_name: str = "",
    task_type: str = TaskType.OTHER,
    allow_new_models: bool = False,
    user: Any = None,
) -> ImportSummary:
    """Import a whole file into a benchmark, or nothing at all.

    The benchmark is created when missing. Re-importing the same file changes nothing
    (natural keys: prompt_id per benchmark; model + response_variant per prompt).
    """
    check_benchmark_slug(benchmark_slug)
    parsed = check_import_file(filename, data, allow_new_models=allow_new_models)
    with import_transaction():
        benchmark, _ = Benchmark.objects.get_or_create(
            slug=benchmark_slug,
            defaults={"name": benchmark_name or benchmark_slug, "task_type": task_type, "created_by": real_user(user)},
        )
        counts = {"models_created": do_create_models(parsed.new_models)}
        with parsed, do_upsert_prompts(benchmark, parsed, counts) as prompts:  # read back from disk, then gone
            do_upsert_responses(prompts, parsed, counts)
        do_record_import(benchmark, filename, data, parsed.rows, counts, user)
    return ImportSummary(benchmark=benchmark, rows=parsed.rows, counts=counts)
