"""Writes to the catalog. Views, commands and tasks call these; nothing else writes here.

`check_*` validate and never write; `do_*` write (atomically) and report what changed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from django.conf import settings
from django.db import IntegrityError, connection, transaction

from evalhub.catalog.models import (
    Benchmark,
    Criterion,
    DataImport,
    Judgment,
    LanguageModel,
    Prompt,
    Response,
    TaskType,
    Verdict,
)
from evalhub.catalog.tallying import battle_key, do_count_imported, do_count_new_labels
from evalhub.core.files.benchmarks import (
    PROMPT_TEXT_ATTRIBUTES,
    ParsedFile,
    PromptRecord,
    ResponseRecord,
    RowError,
    detect_format,
    parse_benchmark_file,
    unit_of,
    unpacked,
)
from evalhub.core.files.judgments import (
    AUTO,
    BOTH_BAD,
    DEFAULT_CRITERION,
    UNREADABLE,
    JudgmentRecord,
    ParsedJudgments,
    parse_judgment_file,
)
from evalhub.core.files.scores import ParsedScores, ScoreRecord, parse_score_file, parse_score_rows
from evalhub.core.files.slugs import is_slug
from evalhub.core.prompts.criteria import check_levels, levels_for_scale
from evalhub.core.prompts.criteria_variants import ORIGINAL as ORIGINAL_PROMPT
from evalhub.system.bounded_queries import in_slices, where_in
from evalhub.system.bulk_insert import RowWriter, reserve_ids
from evalhub.tallies.actions import do_mark_stale, note_change

PROMPT_FIELDS = (*PROMPT_TEXT_ATTRIBUTES, "privileged", "metadata")  # the Prompt columns an import writes
CATEGORY = PROMPT_FIELDS.index("category")


class ImportRejected(Exception):
    """The file was not imported; `errors` says why, row by row."""

    def __init__(self, errors: list[RowError]) -> None:
        super().__init__(f"{len(errors)} problem(s); nothing was imported.")
        self.errors = errors


@dataclass
class ImportSummary:
    benchmark: Benchmark
    rows: int
    counts: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        c = self.counts
        return (
            f"{self.rows} rows: prompts {c['prompts_created']} new, {c['prompts_updated']} updated"
            f"{_described_fields(c)}, {c['prompts_unchanged']} unchanged; responses {c['responses_created']} new, "
            f"{c['responses_updated']} updated, {c['responses_unchanged']} unchanged; "
            f"{c['models_created']} new model(s)."
        )


def check_import_file(filename: str, data: bytes, *, allow_new_models: bool = False) -> ParsedFile:
    """Check size, type and every row of a file. Raises ImportRejected listing all problems."""
    check_import_size(len(data))
    fmt, data = _format_and_data(filename, data)
    known = set(LanguageModel.objects.values_list("slug", flat=True))
    parsed = parse_benchmark_file(data, fmt, known_models=known, allow_new_models=allow_new_models)
    if not parsed.ok:
        raise ImportRejected(parsed.errors)
    return parsed


def check_import_size(size: int) -> None:
    """Reject a file by its size alone, before reading it."""
    limit = settings.EVALHUB_MAX_IMPORT_BYTES
    if size > limit:
        raise ImportRejected([RowError(None, _too_large(size, limit))])


def _format_and_data(filename: str, data: bytes) -> tuple[str, bytes]:
    """The file's format by its name and its bytes, unpacked first when gzipped (within the import limit)."""
    try:
        filename, data = unpacked(filename, data, settings.EVALHUB_MAX_IMPORT_BYTES)
        return detect_format(filename), data
    except ValueError as error:
        raise ImportRejected([RowError(None, str(error))]) from None


def _too_large(size: int, limit: int) -> str:
    return (
        f"the file is {size / 1e6:.1f} MB, over the import limit of {limit / 1e6:.1f} MB "
        "(EVALHUB_MAX_IMPORT_BYTES); split it or raise the limit."
    )


def do_import_benchmark(
    *,
    filename: str,
    data: bytes,
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
    _check_benchmark_slug(benchmark_slug)
    parsed = check_import_file(filename, data, allow_new_models=allow_new_models)
    with transaction.atomic():
        benchmark, _ = Benchmark.objects.get_or_create(
            slug=benchmark_slug,
            defaults={"name": benchmark_name or benchmark_slug, "task_type": task_type, "created_by": _real(user)},
        )
        counts = {"models_created": _create_models(parsed.new_models)}
        prompts = _upsert_prompts(benchmark, parsed, counts)
        _upsert_responses(prompts, parsed, counts)
        _record_import(benchmark, filename, data, parsed.rows, counts, user)
    return ImportSummary(benchmark=benchmark, rows=parsed.rows, counts=counts)


def _check_benchmark_slug(slug: str) -> None:
    if not is_slug(slug):
        raise ImportRejected([RowError(None, f"benchmark {slug!r} is not a slug (letters, digits, '-' and '_' only).")])


def _record_import(benchmark: Benchmark, filename: str, data: bytes, rows: int, counts: dict, user: Any) -> None:
    digest = hashlib.sha256(data).hexdigest()
    changed = any(value for key, value in counts.items() if not key.endswith("_unchanged"))
    # The audit trail records what changed data; the same file again is not news.
    if changed or not benchmark.imports.filter(sha256=digest).exists():
        DataImport.objects.create(
            benchmark=benchmark,
            filename=filename[:300],
            sha256=digest,
            rows=rows,
            counts=counts,
            imported_by=_real(user),
        )


def _real(user: Any) -> Any:
    return user if getattr(user, "is_authenticated", False) else None


def _create_models(slugs: set[str], names: dict[str, str] | None = None, ids: Mapping[str, int] | None = None) -> int:
    """New candidate models; `names` gives a display name where the file named a model otherwise than its
    slug, `ids` the key reserved for one (`reserve_ids`) that rows already written point to."""
    names, ids = names or {}, ids or {}
    created = [
        LanguageModel(
            id=ids.get(slug), slug=slug, display_name=names.get(slug, slug)[:200], is_human=slug.startswith("human")
        )
        for slug in sorted(slugs)
    ]
    # ignore_conflicts: another import may have created the same model a moment ago.
    LanguageModel.objects.bulk_create(created, ignore_conflicts=True)
    return len(created)


class StoredPrompt(NamedTuple):
    """What an import's later steps need of a prompt it stored: its key, and its category (the boards
    count battles per scenario)."""

    id: int
    category: str
    created: bool = False  # by this import: no response of it is stored yet


def _json(value: Any) -> str:
    return json.dumps(value)  # as Django's JSONField writes it; PostgreSQL reads the text as jsonb


def _upsert_prompts(benchmark: Benchmark, parsed: ParsedFile, counts: dict[str, Any]) -> dict[str, StoredPrompt]:
    """The file's prompts created or brought up to date, each by its id in the file. A slice of the
    file's prompts at a time is compared with what is stored (memory stays bounded however large the
    benchmark); new ones go in one RowWriter stream with keys reserved first, so nothing is read back
    (bulk_create spent half of a 200,000-prompt import building a model instance per prompt).

    Imports add; they never blank: a stored prompt takes only the fields the file carried
    (`PromptRecord.given`, and the privileged and metadata keys it names), so a labels file or another
    model's responses leave its reference answer, guidelines and metadata as they are. The fields that
    changed are named in `counts["prompt_fields_updated"]`."""
    stored_prompts: dict[str, StoredPrompt] = {}
    changed, stale = 0, False
    fields: set[str] = set()
    untitled: list[RowError] = []
    held = benchmark.prompts.exists()  # a new benchmark's first file has nothing to compare with
    with RowWriter(Prompt, ("id", "external_id", *PROMPT_FIELDS), benchmark_id=benchmark.pk) as new:
        for part in in_slices(parsed.prompts):
            new.pause()  # the queries below run between the stream's COPYs (PostgreSQL)
            existing = {
                external_id: (pk, values)
                for external_id, pk, *values in (benchmark.prompts if held else Prompt.objects.none())
                .filter(external_id__in=[record.external_id for record in part])
                .order_by()
                .values_list("external_id", "pk", *PROMPT_FIELDS)
            }
            fresh = sum(record.external_id not in existing for record in part)
            spare = reserve_ids(Prompt, fresh)[::-1] if fresh else []
            edited = []
            for record in part:
                stored = existing.get(record.external_id)
                if stored is None:
                    pk = spare.pop()
                    if "text" not in record.given:
                        untitled.append(_untitled(record, parsed.unit))
                        continue
                    values = [getattr(record, name) for name in PROMPT_TEXT_ATTRIBUTES]
                    new.write((pk, record.external_id, *values, _json(record.privileged), _json(record.metadata)))
                    stored_prompts[record.external_id] = StoredPrompt(pk, record.category, created=True)
                    continue
                values, named = _merged_prompt(stored[1], record)
                if named:
                    fields.update(named)
                    stale = stale or values[CATEGORY] != stored[1][CATEGORY]
                    edited.append(Prompt(pk=stored[0], **dict(zip(PROMPT_FIELDS, values, strict=True))))
                stored_prompts[record.external_id] = StoredPrompt(stored[0], values[CATEGORY])
            new.pause()
            Prompt.objects.bulk_update(edited, PROMPT_FIELDS, batch_size=500)
            changed += len(edited)
    if untitled:  # the import's transaction undoes what was written
        raise ImportRejected(untitled)
    if stale:
        do_mark_stale()  # the boards count battles per scenario: a prompt's category names it
    if changed:
        note_change()  # the win rates read a prompt's metadata (instruction_difficulty): cached boards must see it
    counts.update(
        prompts_created=new.written,
        prompts_updated=changed,
        prompts_unchanged=len(parsed.prompts) - new.written - changed,
    )
    if fields:
        counts["prompt_fields_updated"] = sorted(fields)
    return stored_prompts


def _merged_prompt(stored: list[Any], record: PromptRecord) -> tuple[list[Any], list[str]]:
    """A stored prompt's values with what the file carried laid over them, and the names of the fields
    (`privileged.NAME`, `metadata.NAME` for keys) that this changes."""
    values = list(stored)
    named = []
    for index, name in enumerate(PROMPT_TEXT_ATTRIBUTES):
        if name in record.given and values[index] != getattr(record, name):
            values[index] = getattr(record, name)
            named.append("prompt" if name == "text" else name)
    for index, prefix, given in ((-2, "privileged", record.privileged), (-1, "metadata", record.metadata)):
        merged = {**values[index], **given}
        for key in record.cleared:
            if key.startswith(f"{prefix}."):
                merged.pop(key.split(".", 1)[1], None)
        if merged != values[index]:
            keys = set(merged) | set(values[index])
            named += [f"{prefix}.{key}" for key in sorted(keys) if merged.get(key) != values[index].get(key)]
            values[index] = merged
    return values, named


def _untitled(record: PromptRecord, unit: str) -> RowError:
    return RowError(
        record.line, f"missing required field 'prompt' (first row of prompt_id {record.external_id!r}, new here).", unit
    )


def _described_fields(counts: Mapping[str, Any]) -> str:
    """': category, reference_answer' after "N updated" when prompts were changed by name."""
    names = counts.get("prompt_fields_updated") or []
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return f" ({shown})" if shown else ""


def _upsert_responses(
    prompts: Mapping[str, StoredPrompt],
    parsed: ParsedFile,
    counts: dict[str, Any],
    ids: Mapping[tuple[str, str], int] | None = None,
) -> None:
    """The file's responses created or brought up to date, a slice of them at a time as the prompts
    are; `ids` gives the key reserved for a new one (prompt id, model slug) that rows already written
    point to. New ones go in one RowWriter stream, each with a key: the one reserved, or one reserved here."""
    ids = ids or {}
    models = dict(LanguageModel.objects.values_list("slug", "id"))

    def reserved(record: ResponseRecord) -> int | None:
        return None if record.variant else ids.get((record.prompt_id, record.model))

    changed = 0
    with RowWriter(Response, ("id", "prompt_id", "model_id", "variant", "text", "metadata")) as new:
        for part in in_slices(parsed.responses):
            new.pause()
            keyed = [((prompts[record.prompt_id].id, models[record.model], record.variant), record) for record in part]
            held = {prompts[record.prompt_id].id for record in part if not prompts[record.prompt_id].created}
            existing = {
                (prompt_id, model_id, variant): (pk, text, metadata)
                for pk, prompt_id, model_id, variant, text, metadata in (
                    Response.objects if held else Response.objects.none()
                )
                .filter(parent__isnull=True, prompt_id__in=held)
                .order_by()
                .values_list("pk", "prompt_id", "model_id", "variant", "text", "metadata")
            }
            fresh = [(key, record) for key, record in keyed if key not in existing]
            unreserved = sum(reserved(record) is None for _, record in fresh)
            spare = reserve_ids(Response, unreserved)[::-1] if unreserved else []
            for key, record in fresh:
                pk = reserved(record)
                new.write((spare.pop() if pk is None else pk, *key, record.text, _json(record.metadata)))
            edited = []
            for key, record in keyed:
                stored = existing.get(key)
                if stored is None:
                    continue
                if reserved(record) is not None:
                    raise _made_meanwhile(f"the response of {record.model!r} to prompt {record.prompt_id!r}")
                if stored[1] != record.text or any(stored[2].get(k) != v for k, v in record.metadata.items()):
                    # The file's metadata keys are set; others (a generation run's, say) stay as they are.
                    edited.append(Response(pk=stored[0], text=record.text, metadata={**stored[2], **record.metadata}))
            new.pause()
            Response.objects.bulk_update(edited, ["text", "metadata"], batch_size=500)
            changed += len(edited)
    counts.update(
        responses_created=new.written,
        responses_updated=changed,
        responses_unchanged=len(parsed.responses) - new.written - changed,
    )


def do_add_model(model: LanguageModel) -> LanguageModel:
    """A new model (e.g. a generation candidate named by a provider spec), with a slug made from its
    display name, numbered when taken."""
    base = "-".join(part for part in re.split(r"[^a-z0-9]+", model.display_name.rsplit("/", 1)[-1].lower()) if part)
    slug = base[:80] or model.provider
    n = 2
    while LanguageModel.objects.filter(slug=slug).exists():
        slug, n = f"{base[:80]}-{n}", n + 1
    model.slug = slug
    model.save()
    return model


def do_add_generated_responses(responses: Sequence[Response]) -> list[Response]:
    """Generated responses stored once: one whose (prompt, model, variant) is stored already (by
    another attempt of the chunk or another run) is kept as it is. Returns the ones stored now."""
    keys = [(r.prompt_id, r.model_id, r.variant) for r in responses]
    already = set(
        Response.objects.filter(
            prompt_id__in={k[0] for k in keys},
            model_id__in={k[1] for k in keys},
            parent__isnull=True,
            variant__in={k[2] for k in keys},
        ).values_list("prompt_id", "model_id", "variant")
    )
    fresh = [r for r in responses if (r.prompt_id, r.model_id, r.variant) not in already]
    Response.objects.bulk_create(fresh, ignore_conflicts=True)
    return fresh


def do_derive_response(
    parent: Response, *, perturbation: str, severity: str, seed: int, text: str, level: str = "", params: dict
) -> Response:
    """`parent` changed by a perturbation (DHP) or a validation strategy (GEM), stored once: its natural
    key is a constraint, so a retried chunk or a later run gets the stored copy, never a second one."""
    response, _ = Response.objects.get_or_create(
        parent=parent,
        perturbation=perturbation,
        perturbation_severity=severity,
        perturbation_seed=seed,
        defaults={
            "prompt_id": parent.prompt_id,
            "model_id": parent.model_id,
            "variant": parent.variant,
            "text": text,
            "perturbation_level": level,
            "perturbation_params": params,
        },
    )
    return response


def do_ensure_criterion(slug: str, name: str, definition: str, levels: dict, *, scenario: str = "") -> Criterion:
    """Create a built-in criterion, or bring an existing built-in one up to date."""
    checked = {str(score): text for score, text in check_levels(levels).items()}
    criterion, _ = Criterion.objects.update_or_create(
        slug=slug,
        defaults={"name": name, "definition": definition, "levels": checked, "scenario": scenario, "builtin": True},
    )
    return criterion


# --- pairwise judgments from files (human labels and judges' verdicts) ---------------------------

VERDICT_OF_WINNER: dict[str, int | None] = {
    "a": Verdict.FIRST,
    "b": Verdict.SECOND,
    "tie": Verdict.NEITHER,
    BOTH_BAD: Verdict.NEITHER,
    UNREADABLE: None,  # answered, unreadable: no battle, a miss in the judge lab
}
IMPORTED_JUDGMENT_SOURCE = "import"
ARENA_WINNER = "arena_winner"  # a label's metadata key for Arena's winner where it says more than the verdict
BOTH_BAD_METADATA = {False: "{}", True: json.dumps({ARENA_WINNER: BOTH_BAD})}  # as the writer takes JSON
PERSON_SCORE_SOURCE = "human"  # a score a person gave on the rating screen


@dataclass
class JudgmentImportSummary:
    benchmark: Benchmark
    layout: str
    rows: int
    counts: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        c = self.counts
        return (
            f"{self.rows} rows ({self.layout}): judgments {c['judgments_created']} new, "
            f"{c['judgments_replaced']} changed, {c['judgments_unchanged']} unchanged; "
            f"prompts {c['prompts_created']} new, {c['prompts_updated']} updated{_described_fields(c)}; "
            f"responses {c['responses_created']} new; "
            f"{c['models_created']} new model(s), {c['judges_created']} new judge(s)."
        )


def _kind_clash(role: str, slug: str, is_human: bool, known: dict[str, bool]) -> str:
    """Why a judge or rater the file calls a person (or a model) cannot be one: evalhub holds it as the other."""
    known_human = known.get(slug)
    if known_human is None or known_human == is_human:
        return ""
    what = "a person" if known_human else "a model"
    return f"{role} {slug!r} is {what} in evalhub; {role}_kind says otherwise."


def _create_judges(
    kinds: dict[str, bool], names: dict[str, str] | None = None, ids: Mapping[str, int] | None = None
) -> int:
    """The judges or raters (slug → is a person) evalhub does not hold yet, as models or human authors
    (with the key reserved for one in `ids`, as `_create_models`)."""
    existing = set(where_in(LanguageModel.objects.values_list("slug", flat=True), "slug", kinds))
    new = [
        LanguageModel(
            id=(ids or {}).get(slug), slug=slug, display_name=(names or {}).get(slug, slug)[:200], is_human=human
        )
        for slug, human in sorted(kinds.items())
        if slug not in existing
    ]
    LanguageModel.objects.bulk_create(new, ignore_conflicts=True)
    return len(new)


def check_judgment_file(
    filename: str,
    data: bytes,
    *,
    layout: str = "auto",
    allow_new_models: bool = False,
    judges_are: str = AUTO,
    on_judgment: Callable[[JudgmentRecord], object] | None = None,
) -> ParsedJudgments:
    """Check size, type and every row of a judgment file. Raises ImportRejected listing all problems.
    `on_judgment` gets each judgment as its row is read (`parse_judgment_file`); `judges_are` says
    whether judges the file does not classify are people or models."""
    check_import_size(len(data))
    fmt, data = _format_and_data(filename, data)
    models = dict(LanguageModel.objects.values_list("slug", "is_human"))
    # Read before the rows: `on_judgment` may be writing them to the database as they come.
    criteria = set(Criterion.objects.values_list("slug", flat=True)) | {DEFAULT_CRITERION}
    parsed = parse_judgment_file(
        data,
        fmt,
        layout=layout,
        known_models=models,
        allow_new_models=allow_new_models,
        judges_are=judges_are,
        on_judgment=on_judgment,
    )
    unit = unit_of(fmt)
    for record in parsed.judgments:
        if record.criterion not in criteria:
            parsed.errors.append(RowError(record.line, f"unknown criterion {record.criterion!r}.", unit))
        if clash := _kind_clash("judge", record.judge, record.judge_is_human, models):
            parsed.errors.append(RowError(record.line, clash, unit))
    if not parsed.ok:
        raise ImportRejected(sorted(parsed.errors, key=lambda error: error.line or 0))
    return parsed


def do_import_judgments(
    *,
    filename: str,
    data: bytes,
    benchmark_slug: str,
    layout: str = "auto",
    task_type: str = TaskType.OTHER,
    allow_new_models: bool = False,
    judges_are: str = AUTO,
    user: Any = None,
) -> JudgmentImportSummary:
    """Import a whole judgment file, or nothing at all.

    Prompts, responses and candidate models are created or matched as by `do_import_benchmark`;
    judges are created as models (people as human authors). A judgment's natural key is (criterion,
    judge, the pair in the order shown): the same file again changes nothing, and a judgment whose
    verdict or probability changed is updated in place (its counts taken away and added again, which
    raises the counts' version, so every cached board sees the change).
    """
    _check_benchmark_slug(benchmark_slug)
    # On PostgreSQL each judgment goes to the server as its row is read, in the import's transaction:
    # the server stores a million while the file is read (15 s each on the developer machine, side by
    # side rather than one after the other). SQLite is this process: there the file is read first, so
    # that the database's write lock is held only while writing.
    as_read = connection.vendor == "postgresql"
    checking: dict[str, Any] = {"layout": layout, "allow_new_models": allow_new_models, "judges_are": judges_are}
    checked = None if as_read else check_judgment_file(filename, data, **checking)
    with transaction.atomic():
        benchmark, _ = Benchmark.objects.get_or_create(
            slug=benchmark_slug,
            defaults={"name": benchmark_slug, "task_type": task_type, "created_by": _real(user)},
        )
        with _JudgmentImport(benchmark) as judgments:
            if checked is None:
                parsed = check_judgment_file(filename, data, **checking, on_judgment=judgments.add)
            else:
                parsed = checked
                for record in parsed.judgments:
                    judgments.add(record)
            counts = judgments.store(parsed)
        _record_import(benchmark, filename, data, parsed.rows, counts, user)
    return JudgmentImportSummary(benchmark=benchmark, layout=parsed.layout, rows=parsed.rows, counts=counts)


def _made_meanwhile(what: str) -> ImportRejected:
    return ImportRejected(
        [RowError(None, f"{what} was added by someone else during this import; import the file again.")]
    )


class _JudgmentImport:
    """A judgment file's labels, each written as it comes (`add`), then what they point to (`store`).

    A label is written at once, before the rows it points to may exist: a new judge, the default
    criterion and a new response get their key reserved (`reserve_ids`) when first met, and are
    created with it by `store`. A label's natural key is (criterion, judge, the pair in the order
    shown): one already stored is left as it is, or updated in place where its verdict, probability
    or grade changed. The stored labels are read per judge, when the file first names one evalhub
    holds. Use it as a context manager, inside the import's transaction: leaving it writes the last
    labels and checks what every one points to; a refused file is undone by that transaction."""

    KEY = ("criterion_id", "judge_model_id", "response_id", "response_2_id")
    COLUMNS = (*KEY, "verdict", "probability", "grade", "metadata")
    FIRST_RESERVED, MOST_RESERVED = 64, 4096  # response keys reserved at a time, doubling: few unused

    def __init__(self, benchmark: Benchmark) -> None:
        self.benchmark = benchmark
        self.writer = RowWriter(Judgment, self.COLUMNS, source=IMPORTED_JUDGMENT_SOURCE)
        self.models = dict(LanguageModel.objects.values_list("slug", "id"))
        self.criteria = dict(Criterion.objects.values_list("slug", "id"))
        self.responses: dict[tuple[str, str], int] = {
            (prompt, model): response
            for response, prompt, model in Response.objects.filter(
                prompt__benchmark=benchmark, parent__isnull=True, variant=""
            ).values_list("id", "prompt__external_id", "model__slug")
        }
        # key → (pk, verdict, probability, grade, whether Arena called it a tie where neither is good)
        self.stored: dict[tuple[int, int, int, int], tuple[int, int | None, float | None, float | None, bool]] = {}
        self.judges_read: set[str] = set()
        # What this import creates with a key it reserved: models and judges, criteria, responses.
        self.new_models: dict[str, int] = {}
        self.new_criteria: dict[str, int] = {}
        self.new_responses: dict[tuple[str, str], int] = {}
        self.spare: list[int] = []  # response keys reserved and not given yet
        self.new: list[JudgmentRecord] = []
        self.changed: list[Judgment] = []
        self.unchanged = 0

    def __enter__(self) -> _JudgmentImport:
        self.writer.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: Any) -> None:
        self.writer.__exit__(kind, error, trace)

    def add(self, record: JudgmentRecord) -> None:
        if record.criterion not in self.criteria and record.criterion != DEFAULT_CRITERION:
            return  # an unknown criterion: the file is refused once read
        # A million labels name a few judges, criteria and thousands of responses: a dict lookup each, as a rule.
        responses = self.responses
        key = (
            self.criteria.get(record.criterion) or self._criterion(record.criterion),
            self.models[record.judge] if record.judge in self.judges_read else self._judge(record.judge),
            responses.get((record.prompt_id, record.model_a)) or self._response(record.prompt_id, record.model_a),
            responses.get((record.prompt_id, record.model_b)) or self._response(record.prompt_id, record.model_b),
        )
        verdict = VERDICT_OF_WINNER[record.winner]
        stored = self.stored.get(key)
        both_bad = record.winner == BOTH_BAD
        if stored is None:
            self.writer.write((*key, verdict, record.probability_a, record.grade, BOTH_BAD_METADATA[both_bad]))
            self.new.append(record)
        elif stored[1:] != (verdict, record.probability_a, record.grade, both_bad):
            # Updated in place: the row keeps its place among the judge's labels of the pair, so the
            # order it was first shown in (the earlier label) does not swap when one verdict is edited.
            self.changed.append(
                Judgment(
                    pk=stored[0],
                    verdict=verdict,
                    probability=record.probability_a,
                    grade=record.grade,
                    metadata=json.loads(BOTH_BAD_METADATA[both_bad]),
                )
            )
        else:
            self.unchanged += 1

    def _criterion(self, slug: str) -> int:
        if slug not in self.criteria:
            self.writer.pause()
            self.criteria[slug] = self.new_criteria[slug] = reserve_ids(Criterion, 1)[0]
        return self.criteria[slug]

    def _judge(self, slug: str) -> int:
        if slug not in self.models:
            self.writer.pause()
            self.models[slug] = self.new_models[slug] = reserve_ids(LanguageModel, 1)[0]
        elif slug not in self.judges_read and slug not in self.new_models:
            self.writer.pause()
            self.stored.update(
                ((c, j, r1, r2), (pk, verdict, probability, grade, arena_winner == BOTH_BAD))
                for pk, c, j, r1, r2, verdict, probability, grade, arena_winner in Judgment.objects.filter(
                    judge_model_id=self.models[slug],
                    response_2__isnull=False,
                    prompt_variant=ORIGINAL_PROMPT,
                    response__prompt__benchmark=self.benchmark,
                )
                .values_list("pk", *self.KEY, "verdict", "probability", "grade", f"metadata__{ARENA_WINNER}")
                .iterator(chunk_size=5000)
            )
        self.judges_read.add(slug)
        return self.models[slug]

    def _response(self, prompt: str, model: str) -> int:
        key = (prompt, model)
        if key not in self.responses:
            if not self.spare:
                self.writer.pause()
                wanted = min(self.MOST_RESERVED, max(self.FIRST_RESERVED, 2 * len(self.new_responses)))
                self.spare = reserve_ids(Response, wanted)[::-1]
            self.responses[key] = self.new_responses[key] = self.spare.pop()
        return self.responses[key]

    def store(self, parsed: ParsedJudgments) -> dict[str, int]:
        """Create what the labels point to, update the changed ones, count them all; the import's counts."""
        self.writer.pause()
        counts = {"models_created": _create_models(parsed.benchmark.new_models, parsed.names, self.new_models)}
        counts["judges_created"] = _create_judges(parsed.judges, parsed.names, self.new_models)
        for slug, id_ in where_in(LanguageModel.objects.values_list("slug", "id"), "slug", self.new_models):
            if id_ != self.new_models[slug]:  # its creation was skipped: another import made it first
                raise _made_meanwhile(f"model {slug!r}")
        if DEFAULT_CRITERION in self.new_criteria:
            criterion, created = Criterion.objects.get_or_create(
                slug=DEFAULT_CRITERION,
                defaults={
                    "id": self.new_criteria[DEFAULT_CRITERION],
                    "name": "Overall preference",
                    "definition": "Which response is better overall (imported labels that name no criterion).",
                    "levels": {
                        str(i): f"{word} overall"
                        for i, word in enumerate(("Very poor", "Poor", "Acceptable", "Good", "Excellent"), start=1)
                    },
                },
            )
            if not created:
                raise _made_meanwhile(f"criterion {DEFAULT_CRITERION!r}")
        prompts = _upsert_prompts(self.benchmark, parsed.benchmark, counts)
        _upsert_responses(prompts, parsed.benchmark, counts, self.new_responses)
        stale = [judgment.pk for judgment in self.changed]
        do_count_imported(stale, -1)
        Judgment.objects.bulk_update(self.changed, ["verdict", "probability", "grade", "metadata"], batch_size=500)
        do_count_imported(stale, 1)
        if self.changed:
            note_change()  # a probability alone changes no count, but the win rates and the judge lab read it
        # The new labels' battles come from what the import holds, not from reading a million rows back.
        do_count_new_labels(
            (
                battle_key(
                    record.model_a,
                    record.model_b,
                    record.judge_is_human,
                    record.criterion,
                    prompts[record.prompt_id].category,
                    self.benchmark.slug,
                ),
                VERDICT_OF_WINNER[record.winner],
            )
            for record in self.new
        )
        counts.update(
            judgments_created=len(self.new), judgments_replaced=len(stale), judgments_unchanged=self.unchanged
        )
        return counts


def _ids_of(
    prompts: Mapping[str, StoredPrompt],
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
            f"{c['prompts_updated']} updated{_described_fields(c)}; responses "
            f"{c['responses_created']} new; {c['models_created']} new model(s), {c['raters_created']} new rater(s), "
            f"{c['criteria_created']} new {'criterion' if c['criteria_created'] == 1 else 'criteria'}{left_out}."
        )


def check_score_rows(parsed: ParsedScores) -> ParsedScores:
    """The checks a score file needs against what evalhub holds: a rater known as a person stays one."""
    models = dict(LanguageModel.objects.values_list("slug", "is_human"))
    for record in parsed.scores:
        if clash := _kind_clash("rater", record.rater, record.rater_is_human, models):
            parsed.errors.append(RowError(record.line, clash, parsed.unit))
    if not parsed.ok:
        raise ImportRejected(sorted(parsed.errors, key=lambda error: error.line or 0))
    return parsed


def check_score_file(filename: str, data: bytes, *, allow_new_models: bool = False) -> ParsedScores:
    """Check size, type and every row of a score file. Raises ImportRejected listing all problems."""
    check_import_size(len(data))
    fmt, data = _format_and_data(filename, data)
    known = set(LanguageModel.objects.values_list("slug", flat=True))
    return check_score_rows(parse_score_file(data, fmt, known_models=known, allow_new_models=allow_new_models))


def check_inspect_logs(path: Path, *, allow_new_models: bool = False) -> tuple[ParsedScores, bytes]:
    """An Inspect AI log, or a folder of them, checked as score rows (evalhub.catalog.inspect_logs), and
    the logs' bytes for the import's record. Problems name the file and sample id. Raises ImportRejected,
    or InspectMissing without inspect-ai."""
    from evalhub.catalog import inspect_logs

    files = inspect_logs.log_files(path)
    check_import_size(sum(file.stat().st_size for file in files))
    known = set(LanguageModel.objects.values_list("slug", flat=True))
    logs = inspect_logs.LogRows(path)
    parsed = parse_score_rows(list(logs), inspect_logs.UNIT, known_models=known, allow_new_models=allow_new_models)
    parsed.left_out = logs.samples - logs.scored
    if logs.samples and not logs.scored:
        parsed.errors = [e for e in parsed.errors if e.line is not None]
        parsed.errors.append(RowError(None, f"{logs.samples} sample(s), none scored: nothing to import."))
    parsed.errors = [replace(e, place=logs.places.get(e.line or 0, "")) for e in parsed.errors]
    return check_score_rows(parsed), b"".join(file.read_bytes() for file in files)


def check_uploaded_scores(filename: str, data: bytes, *, allow_new_models: bool = False) -> ParsedScores:
    """An uploaded score file, or Inspect logs (a `.eval`, a log `.json`, or a `.zip` of a log folder),
    checked. Raises ImportRejected, or InspectMissing without inspect-ai."""
    import tempfile

    from evalhub.catalog import inspect_logs

    check_import_size(len(data))
    if not inspect_logs.is_uploaded_log(filename, data[:4096]):
        return check_score_file(filename, data, allow_new_models=allow_new_models)
    with tempfile.TemporaryDirectory(prefix="evalhub-inspect-") as folder:
        try:
            path = inspect_logs.unpack_upload(filename, data, Path(folder), settings.EVALHUB_MAX_IMPORT_BYTES)
        except ValueError as error:
            raise ImportRejected([RowError(None, str(error))]) from None
        parsed, _ = check_inspect_logs(path, allow_new_models=allow_new_models)
    return parsed


def do_import_scores(
    *,
    parsed: ParsedScores,
    filename: str,
    data: bytes,
    benchmark_slug: str,
    task_type: str = TaskType.OTHER,
    user: Any = None,
) -> ScoreImportSummary:
    """Store a checked score file (check_score_file, or an Inspect log's rows), or nothing at all. A score's
    natural key is (criterion, rater, response): the same file again changes nothing, and a changed score
    or rationale is updated in place. Criteria the file names that evalhub lacks are created."""
    _check_benchmark_slug(benchmark_slug)
    with transaction.atomic():
        benchmark, _ = Benchmark.objects.get_or_create(
            slug=benchmark_slug, defaults={"name": benchmark_slug, "task_type": task_type, "created_by": _real(user)}
        )
        counts = {"models_created": _create_models(parsed.benchmark.new_models), "left_out": parsed.left_out}
        counts["raters_created"] = _create_judges(parsed.raters)
        counts["criteria_created"] = _create_criteria({record.criterion for record in parsed.scores}, parsed.scales)
        prompts = _upsert_prompts(benchmark, parsed.benchmark, counts)
        _upsert_responses(prompts, parsed.benchmark, counts)
        _upsert_scores(prompts, parsed.scores, counts)
        _record_import(benchmark, filename, data, parsed.rows, counts, user)
    return ScoreImportSummary(benchmark=benchmark, rows=parsed.rows, counts=counts)


IMPORTED_SCORE_SOURCE = "import-scores"


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


def _upsert_scores(prompts: Mapping[str, StoredPrompt], records: Sequence[ScoreRecord], counts: dict[str, Any]) -> None:
    """New scores written as they are matched, changed ones updated in place (the parser refused a file
    that scores one response twice under one criterion and rater, so each record is its own key)."""
    models, criteria, responses = _ids_of(prompts)

    def response_of(record: ScoreRecord) -> int:
        return responses[(prompts[record.prompt_id].id, models[record.model], record.variant)]

    existing = {
        (c, j, response): (pk, score, rationale)
        for pk, c, j, response, score, rationale in where_in(
            Judgment.objects.filter(judge_model__isnull=False, response_2__isnull=True).values_list(
                "pk", "criterion_id", "judge_model_id", "response_id", "score", "rationale"
            ),
            "response_id",
            (response_of(record) for record in records),
        )
    }
    changed = []
    # Rows straight to the database, as a judgments import's: bulk_create spent 90 % of a 200,000-score
    # import building a model instance per score and its SQL field by field.
    columns = ("criterion_id", "judge_model_id", "response_id", "score", "rationale")
    with RowWriter(Judgment, columns, source=IMPORTED_SCORE_SOURCE) as new:
        for record in records:
            key = (criteria[record.criterion], models[record.rater], response_of(record))
            stored = existing.get(key)
            if stored is None:
                new.write((*key, record.score, record.rationale))
            elif stored[1:] != (record.score, record.rationale):
                changed.append(Judgment(pk=stored[0], score=record.score, rationale=record.rationale))
    Judgment.objects.bulk_update(changed, ["score", "rationale"], batch_size=500)
    if changed:
        note_change()  # an edited score keeps its row (no new id): cached reports must see it anyway
    counts.update(
        scores_created=new.written,
        scores_changed=len(changed),
        scores_unchanged=len(records) - new.written - len(changed),
    )


class RatingRejected(ValueError):
    """A person's score that cannot be stored; the message says why."""


def do_rate_response(user: Any, response: Response, criterion: Criterion, score: int) -> Judgment:
    """Store (or change) a person's score of one response under a criterion, from the rating screen.
    The score must be one of the criterion's levels."""
    levels = {int(level) for level in criterion.levels}
    if score not in levels:
        raise RatingRejected(f"Choose a score from {min(levels)} to {max(levels)}.")
    if response.parent_id is not None:
        raise RatingRejected("Derived copies of a response are not rated by people.")
    try:
        with transaction.atomic():
            judgment, _ = Judgment.objects.update_or_create(
                criterion=criterion,
                judge_user=user,
                response=response,
                response_2=None,
                defaults={"score": float(score), "source": PERSON_SCORE_SOURCE},
            )
    except IntegrityError:  # the same person's other tab stored it first: change that one
        judgment = Judgment.objects.get(criterion=criterion, judge_user=user, response=response, response_2=None)
        judgment.score = float(score)
        judgment.save(update_fields=["score"])
    note_change()  # the pointwise pages read people's scores
    return judgment
