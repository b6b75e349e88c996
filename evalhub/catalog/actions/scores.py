"""Importing pointwise scores (score files, Inspect logs): prompts and responses they name, raters, criteria
and the scores, whole or not at all."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

from evalhub.catalog.actions.importing import (
    ImportRejected,
    ImportSummary,
    StoredPrompt,
    check_benchmark_slug,
    check_import_size,
    described_fields,
    do_create_judges,
    do_create_models,
    do_record_import,
    do_upsert_prompts,
    do_upsert_responses,
    format_and_data,
    held_responses,
    import_transaction,
    kind_clash,
    real_user,
    size_of,
)
from evalhub.catalog.actions.judgment_import_state import StoredLabels
from evalhub.catalog.models import (
    Benchmark,
    Criterion,
    Judgment,
    LanguageModel,
    Response,
    TaskType,
)
from evalhub.core.files.disk_map import DiskMap
from evalhub.core.files.rows import RowError, Source, unpacked
from evalhub.core.files.scores import ParsedScores, ScoreRecord, parse_score_file, parse_score_rows
from evalhub.core.prompts.criteria import levels_for_scale
from evalhub.core.prompts.criteria_variants import ORIGINAL as ORIGINAL_PROMPT
from evalhub.system.bounded_queries import in_slices, where_in
from evalhub.system.bulk_insert import RowWriter
from evalhub.tallies.actions import note_change


def _ids_of(
    prompts: DiskMap[StoredPrompt],
) -> tuple[dict[str, int], dict[str, int], dict[tuple[int, int, str], int]]:
    """The ids a score import's rows point to: models and criteria by slug, these prompts' imported
    responses by (prompt id, model id, variant)."""
    models = dict(LanguageModel.objects.values_list("slug", "id"))
    criteria = dict(Criterion.objects.values_list("slug", "id"))
    responses = {
        (prompt_id, model_id, variant): response_id
        for response_id, prompt_id, model_id, variant in where_in(
            Response.objects.filter(parent__isnull=True).values_list("id", "prompt_id", "model_id", "variant"),
            "prompt_id",
            (prompt.id for prompt in prompts.values()),
        )
    }
    return models, criteria, responses


class ScoreImportSummary(ImportSummary):
    def describe(self) -> str:
        c = self.counts
        left_out = f"; {c['left_out']} sample(s) with no output or no score left out" if c.get("left_out") else ""
        return (
            f"{self.rows} rows: scores {c['scores_created']} new, {c['scores_changed']} changed, "
            f"{c['scores_unchanged']} unchanged; prompts {c['prompts_created']} new, "
            f"{c['prompts_updated']} updated{described_fields(c)}; responses "
            f"{c['responses_created']} new; {c['models_created']} new model(s), {c['raters_created']} new rater(s), "
            f"{c['criteria_created']} new {'criterion' if c['criteria_created'] == 1 else 'criteria'}{left_out}."
        )


def rater_kind_clash(models: dict[str, bool]) -> Callable[[ScoreRecord], str]:
    """Why a score cannot be imported against what evalhub holds: a rater known as a person stays one."""

    def refuse(record: ScoreRecord) -> str:
        return kind_clash("rater", record.rater, record.rater_is_human, models)

    return refuse


def rejected_unless_ok(parsed: ParsedScores) -> ParsedScores:
    if not parsed.ok:
        parsed.close()
        raise ImportRejected(sorted(parsed.errors, key=lambda error: error.line or 0))
    return parsed


def check_score_file(
    filename: str, data: Source, *, allow_new_models: bool = False, benchmark_slug: str | None = None
) -> ParsedScores:
    """Check size, type and every row of a score file, given as bytes or a stream (read a row at a time,
    its scores kept on disk). Raises ImportRejected listing all problems. A response named without its
    text must be one `benchmark_slug` holds."""
    check_import_size(size_of(data))
    fmt, data = format_and_data(filename, data)
    models = dict(LanguageModel.objects.values_list("slug", "is_human"))
    parsed = parse_score_file(
        data,
        fmt,
        known_models=set(models),
        allow_new_models=allow_new_models,
        refuse=rater_kind_clash(models),
        held=held_responses(benchmark_slug),
    )
    return rejected_unless_ok(parsed)


def check_inspect_logs(path: Path, *, allow_new_models: bool = False) -> ParsedScores:
    """An Inspect AI log, or a folder of them, checked as score rows (evalhub.catalog.inspect_logs); the
    import's record reads their bytes from `inspect_logs.log_bytes`. Problems name the file and sample
    id. Raises ImportRejected, or InspectMissing without inspect-ai."""
    from evalhub.catalog import inspect_logs

    files = inspect_logs.log_files(path)
    check_import_size(sum(file.stat().st_size for file in files))
    models = dict(LanguageModel.objects.values_list("slug", "is_human"))
    with contextlib.closing(inspect_logs.LogRows(path)) as logs:
        parsed = parse_score_rows(  # a row at a time, as the logs are read
            logs,
            inspect_logs.UNIT,
            known_models=set(models),
            allow_new_models=allow_new_models,
            refuse=rater_kind_clash(models),
        )
        parsed.left_out = logs.samples - logs.scored
        if logs.samples and not logs.scored:
            parsed.errors = [e for e in parsed.errors if e.line is not None]
            parsed.errors.append(RowError(None, f"{logs.samples} sample(s), none scored: nothing to import."))
        places = logs.places_of(e.line for e in parsed.errors if e.line)
    parsed.errors = [replace(e, place=places.get(e.line or 0, "")) for e in parsed.errors]
    return rejected_unless_ok(parsed)


def check_uploaded_scores(
    filename: str, data: Source, *, allow_new_models: bool = False, benchmark_slug: str | None = None
) -> ParsedScores:
    """An uploaded score file (bytes, or a stream read a row at a time), or Inspect logs (a `.eval`, a
    log `.json`, or a `.zip` of a log folder, read whole), checked. Raises ImportRejected, or
    InspectMissing without inspect-ai."""
    check_import_size(size_of(data))
    with uploaded_logs(filename, data) as logs:
        if logs is None:
            return check_score_file(filename, data, allow_new_models=allow_new_models, benchmark_slug=benchmark_slug)
        return check_inspect_logs(logs, allow_new_models=allow_new_models)


@contextlib.contextmanager
def uploaded_logs(filename: str, data: Source) -> Iterator[Path | None]:
    """Where an upload's Inspect logs lie for the time of the block (unpacked into a temporary folder), or
    None when the upload is a score file (its stream left at its start). Raises ImportRejected."""
    import tempfile

    from evalhub.catalog import inspect_logs

    if isinstance(data, bytes):
        head = data[:4096]
    else:
        head = data.read(4096)
        data.seek(0)
    name = filename
    if gzipped := inspect_logs.gzipped_log_head(filename, data):  # a `.eval.gz`, or a `.json.gz` log
        name, head = gzipped
    if not inspect_logs.is_uploaded_log(name, head):
        yield None
        return
    if not isinstance(data, bytes):
        data = data.read()
    if name != filename:
        try:
            filename, data = unpacked(filename, data, settings.EVALHUB_MAX_IMPORT_BYTES)
        except ValueError as error:
            raise ImportRejected([RowError(None, str(error))]) from None
    with tempfile.TemporaryDirectory(prefix="evalhub-inspect-") as folder:
        try:
            path = inspect_logs.unpack_upload(filename, data, Path(folder), settings.EVALHUB_MAX_IMPORT_BYTES)
        except ValueError as error:
            raise ImportRejected([RowError(None, str(error))]) from None
        yield path


def do_import_scores(
    *,
    parsed: ParsedScores,
    filename: str,
    data: Source,
    benchmark_slug: str,
    task_type: str = TaskType.OTHER,
    user: Any = None,
) -> ScoreImportSummary:
    """Store a checked score file (check_score_file, or an Inspect log's rows), or nothing at all. A score's
    natural key is (criterion, rater, response): the same file again changes nothing, and a changed score
    or rationale is updated in place. Criteria the file names that evalhub lacks are created."""
    check_benchmark_slug(benchmark_slug)
    with import_transaction(), contextlib.closing(parsed):  # its records on disk go once stored (or refused)
        benchmark, _ = Benchmark.objects.get_or_create(
            slug=benchmark_slug,
            defaults={"name": benchmark_slug, "task_type": task_type, "created_by": real_user(user)},
        )
        counts = {"models_created": do_create_models(parsed.benchmark.new_models), "left_out": parsed.left_out}
        counts["raters_created"] = do_create_judges(parsed.raters)
        counts["criteria_created"] = _create_criteria(parsed.criteria, parsed.scales)
        with do_upsert_prompts(benchmark, parsed.benchmark, counts) as prompts, parsed.scores:  # on disk, then gone
            do_upsert_responses(prompts, parsed.benchmark, counts)
            _upsert_scores(prompts, parsed.scores, counts)
        do_record_import(benchmark, filename, data, parsed.rows, counts, user)
    return ScoreImportSummary(benchmark=benchmark, rows=parsed.rows, counts=counts)


IMPORTED_SCORE_SOURCE = "import-scores"
LOOKUP_BATCH = 4096  # scores looked up among the stored ones together
CHANGED_BATCH = 5000  # changed scores held before they are written


def _create_criteria(named: set[str], scales: Mapping[str, tuple[float, float]]) -> int:
    """The criteria a score file names that evalhub lacks, with levels from the file's `scale` (a 1-5 scale:
    five levels a person can rate on); a stored criterion without levels gets them the same way (an
    import adds, it never blanks). Returns how many were created."""
    stored = dict(where_in(Criterion.objects.values_list("slug", "levels"), "slug", named))
    Criterion.objects.bulk_create(
        [
            Criterion(
                slug=slug,
                name=slug,
                definition="Named by an imported score file.",
                levels=levels_for_scale(*scales[slug]) if slug in scales else {},
            )
            for slug in sorted(named - set(stored))
        ]
    )
    for slug, levels in stored.items():
        if not levels and slug in scales and (given := levels_for_scale(*scales[slug])):
            Criterion.objects.filter(slug=slug).update(levels=given)
    return len(named - set(stored))


def _upsert_scores(prompts: DiskMap[StoredPrompt], records: Iterable[ScoreRecord], counts: dict[str, Any]) -> None:
    """New scores written, changed ones updated in place (the parser refused a file that scores one
    response twice under one criterion and rater, so each record is its own key), the rest left as
    they are. On PostgreSQL a file whose benchmark holds some of its prompts already is staged and
    merged by the server (`_merged_by_server`); elsewhere it is compared here (`_compared_here`)."""
    models, criteria, responses = _ids_of(prompts)
    keyed = _keyed(prompts, records, models, criteria, responses)
    held = counts["prompts_created"] < len(prompts)  # else none of its responses has a score stored
    if held and connection.vendor == "postgresql":
        changed, created, total = _merged_by_server(keyed)
    else:
        changed, created, total = _compared_here(keyed, responses.values() if held else ())
    if changed:
        note_change()  # an edited score keeps its row (no new id): cached reports must see it anyway
    counts.update(scores_created=created, scores_changed=changed, scores_unchanged=total - created - changed)


Keyed = tuple[tuple[int, int, int], ScoreRecord]  # (criterion, rater, response) and the file's score


def _keyed(
    prompts: DiskMap[StoredPrompt],
    records: Iterable[ScoreRecord],
    models: Mapping[str, int],
    criteria: Mapping[str, int],
    responses: Mapping[tuple[int, int, str], int],
) -> Iterator[list[Keyed]]:
    """The file's scores LOOKUP_BATCH at a time, each with the keys it points to."""
    for batch in in_slices(records, LOOKUP_BATCH):
        placed = prompts.get_many({record.prompt_id for record in batch})
        yield [
            (
                (
                    criteria[r.criterion],
                    models[r.rater],
                    responses[(placed[r.prompt_id].id, models[r.model], r.variant)],
                ),
                r,
            )
            for r in batch
        ]


# Rows straight to the database, as a judgments import's: bulk_create spent 90 % of a 200,000-score
# import building a model instance per score and its SQL field by field.
SCORE_COLUMNS = ("criterion_id", "judge_model_id", "response_id", "score", "rationale")


def _compared_here(keyed: Iterable[list[Keyed]], responses: Iterable[int]) -> tuple[int, int, int]:
    """(changed, created, total): the stored scores of the file's responses read once, a few numbers
    each (pair key, row key, hash of the values), and the file's looked up among them a batch at a
    time (a query per batch scanned the table each time): memory holds a batch of the file, not the file."""
    stored = StoredLabels()
    stored.load_all(
        (judge, criterion, response, 0, pk, hash((score, rationale)))
        for pk, judge, criterion, response, score, rationale in where_in(
            Judgment.objects.filter(
                judge_model__isnull=False, response_2__isnull=True, prompt_variant=ORIGINAL_PROMPT
            ).values_list("pk", "judge_model_id", "criterion_id", "response_id", "score", "rationale"),
            "response_id",
            responses,
            chunk_size=5000,  # a response has a score per rater: a part's rows are many
        )
    )
    changed: list[Judgment] = []
    total = changed_count = 0
    with RowWriter(Judgment, SCORE_COLUMNS, source=IMPORTED_SCORE_SOURCE) as new:
        for batch in keyed:
            total += len(batch)
            found = stored.find_all([(c, j, response, 0) for (c, j, response), _ in batch])
            for (key, record), before in zip(batch, found, strict=True):
                if before is None:
                    new.write((*key, record.score, record.rationale))
                elif before[1] != hash((record.score, record.rationale)):
                    changed.append(Judgment(pk=before[0], score=record.score, rationale=record.rationale))
            if len(changed) >= CHANGED_BATCH:
                changed_count += len(changed)
                Judgment.objects.bulk_update(changed, ["score", "rationale"], batch_size=500)
                changed.clear()
    changed_count += len(changed)
    Judgment.objects.bulk_update(changed, ["score", "rationale"], batch_size=500)
    return changed_count, new.written, total


def _merged_by_server(keyed: Iterable[list[Keyed]]) -> tuple[int, int, int]:
    """(changed, created, total): the file's scores staged in a temporary table shaped as the
    judgments', then merged by the server (`merge_staged_scores`). Reading every stored score back to
    compare it here cost a re-import more CPU than the first import, and twice its wall time, at ten
    million scores."""
    with RowWriter(Judgment, SCORE_COLUMNS, staged=True, source=IMPORTED_SCORE_SOURCE) as staged:
        for batch in keyed:
            for key, record in batch:
                staged.write((*key, record.score, record.rationale))
        staged.pause()
        return merge_staged_scores(staged.staged_table)


def merge_staged_scores(staged: str) -> tuple[int, int, int]:
    """(changed, created, total): a stored score of the same natural key (criterion, rater, response, the
    original prompt: the staged rows' default) updated in place where its score or rationale differs,
    the new ones inserted in the file's order, the rest left as they are. A score another import stores
    meanwhile is found (and left) if it committed before these statements, and breaks the scores'
    natural key (the import refused) if during them."""
    quote = connection.ops.quote_name
    judgments = quote(Judgment._meta.db_table)
    key_columns = (*SCORE_COLUMNS[:3], "prompt_variant")  # the unique key of a score: one row at most
    key = " AND ".join(f"j.{quote(c)} = s.{quote(c)}" for c in key_columns) + " AND j.response_2_id IS NULL"
    score, rationale = quote("score"), quote("rationale")
    columns = ", ".join(quote(f.column) for f in Judgment._meta.concrete_fields if not f.primary_key)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {staged}")
        total = cursor.fetchone()[0]
        cursor.execute(
            f"UPDATE {judgments} j SET {score} = s.{score}, {rationale} = s.{rationale} FROM {staged} s "
            f"WHERE {key} AND (j.{score}, j.{rationale}) IS DISTINCT FROM (s.{score}, s.{rationale})"
        )
        changed = cursor.rowcount
        cursor.execute(
            f"INSERT INTO {judgments} ({columns}) SELECT {columns} FROM {staged} s "
            f"WHERE NOT EXISTS (SELECT 1 FROM {judgments} j WHERE {key}) ORDER BY s.id"
        )
        return changed, cursor.rowcount, total
