"""What every catalog import shares: the size and format checks, the refusal listing every problem,
the audit record, new models and judges, and prompts and responses upserted by their natural keys
(a field the file does not carry is left as stored: an import adds, it never blanks)."""

from __future__ import annotations

import hashlib
import io
import json
import operator
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple, overload

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import TextField
from django.db.models.functions import Cast

from evalhub.catalog.models import (
    Benchmark,
    DataImport,
    LanguageModel,
    Prompt,
    Response,
)
from evalhub.core.files.benchmarks import PROMPT_TEXT_ATTRIBUTES, ParsedFile, PromptRecord, ResponseRecord
from evalhub.core.files.disk_map import DiskMap
from evalhub.core.files.responses_seen import HeldResponses
from evalhub.core.files.rows import RowError, Source, detect_format, unpacked, unpacked_stream
from evalhub.core.files.slugs import is_slug
from evalhub.system import bounded_queries
from evalhub.system.bounded_queries import in_slices, where_in
from evalhub.system.bulk_insert import RowWriter, reserve_ids
from evalhub.tallies.actions import do_mark_stale, note_change

PROMPT_FIELDS = (*PROMPT_TEXT_ATTRIBUTES, "privileged", "metadata")  # the Prompt columns an import writes
# A stored prompt's privileged fields and metadata read as their JSON text, decoded only for a prompt
# whose row names some of their keys (decoding every stored prompt's was a fifth of a re-import).
_AS_TEXT = (Cast("privileged", TextField()), Cast("metadata", TextField()))


class _Compared(NamedTuple):
    """The stored prompt columns a slice of the file is compared with: the text fields its rows carry
    (the category always: the boards count battles by it), and the privileged fields and metadata
    where a row names some of their keys. A file that does not carry a paper's source does not read
    every stored one back."""

    texts: tuple[str, ...]
    nested: bool

    @classmethod
    def of(cls, part: Collection[PromptRecord]) -> _Compared:
        given = {"category"}.union(*{record.given for record in part})  # a few distinct sets
        nested = any(record.privileged or record.metadata or record.cleared for record in part)
        return cls(tuple(name for name in PROMPT_TEXT_ATTRIBUTES if name in given), nested)

    @property
    def fields(self) -> tuple[str, ...]:
        return (*self.texts, *(("privileged", "metadata") if self.nested else ()))

    def reader(self) -> Callable[[PromptRecord], tuple[Any, ...]] | None:
        """A record's compared text fields as one tuple, to hold against the stored row in one C-level
        comparison (a field at a time was most of a re-import's work): equal, the prompt is unchanged
        whichever of them its rows carried. None where the nested fields are compared too, or a single
        field (attrgetter gives it bare)."""
        return operator.attrgetter(*self.texts) if len(self.texts) > 1 and not self.nested else None


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
            f"{described_fields(c)}, {c['prompts_unchanged']} unchanged; responses {c['responses_created']} new, "
            f"{c['responses_updated']} updated, {c['responses_unchanged']} unchanged; "
            f"{c['models_created']} new model(s)."
        )


def check_import_size(size: int) -> None:
    """Reject a file by its size alone, before reading it."""
    limit = settings.EVALHUB_MAX_IMPORT_BYTES
    if size > limit:
        raise ImportRejected([RowError(None, _too_large(size, limit))])


@overload
def format_and_data(filename: str, data: bytes) -> tuple[str, bytes]: ...
@overload
def format_and_data(filename: str, data: Source) -> tuple[str, Source]: ...
def format_and_data(filename: str, data: Source) -> tuple[str, Source]:
    """The file's format by its name and its bytes (or its stream), unpacked first when gzipped (within
    the import limit; a stream's contents as they are read)."""
    try:
        if isinstance(data, bytes):
            filename, data = unpacked(filename, data, settings.EVALHUB_MAX_IMPORT_BYTES)
        else:
            filename, data = unpacked_stream(filename, data, settings.EVALHUB_MAX_IMPORT_BYTES)
        return detect_format(filename), data
    except ValueError as error:
        raise ImportRejected([RowError(None, str(error))]) from None


def size_of(data: Source) -> int:
    """A file's size in bytes, from its bytes or its (seekable) stream, which is left at its start."""
    if isinstance(data, bytes):
        return len(data)
    size = data.seek(0, io.SEEK_END)
    data.seek(0)
    return size


def digest_of(data: Source) -> str:
    """The SHA-256 of a file's bytes, a stream read again from its start a megabyte at a time."""
    if isinstance(data, bytes):
        return hashlib.sha256(data).hexdigest()
    data.seek(0)
    digest = hashlib.sha256()
    while block := data.read(1 << 20):
        digest.update(block)
    return digest.hexdigest()


def _too_large(size: int, limit: int) -> str:
    return (
        f"the file is {size / 1e6:.1f} MB, over the import limit of {limit / 1e6:.1f} MB "
        "(EVALHUB_MAX_IMPORT_BYTES); split it or raise the limit."
    )


def check_benchmark_slug(slug: str) -> None:
    if not is_slug(slug):
        raise ImportRejected([RowError(None, f"benchmark {slug!r} is not a slug (letters, digits, '-' and '_' only).")])


def do_record_import(benchmark: Benchmark, filename: str, data: Source, rows: int, counts: dict, user: Any) -> None:
    digest = digest_of(data)
    changed = any(value for key, value in counts.items() if not key.endswith("_unchanged"))
    # The audit trail records what changed data; the same file again is not news.
    if changed or not benchmark.imports.filter(sha256=digest).exists():
        DataImport.objects.create(
            benchmark=benchmark,
            filename=filename[:300],
            sha256=digest,
            rows=rows,
            counts=counts,
            imported_by=real_user(user),
        )


def real_user(user: Any) -> Any:
    return user if getattr(user, "is_authenticated", False) else None


def do_create_models(slugs: set[str], names: dict[str, str] | None = None, ids: Mapping[str, int] | None = None) -> int:
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
    if value == {}:  # most new prompts' and responses' metadata: json.dumps cost 6 % of a first import
        return "{}"
    return json.dumps(value)  # as Django's JSONField writes it; PostgreSQL reads the text as jsonb


def do_upsert_prompts(benchmark: Benchmark, parsed: ParsedFile, counts: dict[str, Any]) -> DiskMap[StoredPrompt]:
    """The file's prompts created or brought up to date, each by its id in the file. A slice of the
    file's prompts at a time is compared with what is stored (memory stays bounded however large the
    benchmark); new ones go in one RowWriter stream with keys reserved first, so nothing is read back
    (bulk_create spent half of a 200,000-prompt import building a model instance per prompt).

    Imports add; they never blank: a stored prompt takes only the fields the file carried
    (`PromptRecord.given`, and the privileged and metadata keys it names), so a labels file or another
    model's responses leave its reference answer, guidelines and metadata as they are. The fields that
    changed are named in `counts["prompt_fields_updated"]`. What each prompt became is returned on disk,
    by its id in the file (ten million of them in a dict cost gigabytes)."""
    stored_prompts = DiskMap(StoredPrompt)
    try:
        _upsert_prompts(benchmark, parsed, counts, stored_prompts)
    except BaseException:
        stored_prompts.close()  # now, not when a refused import's traceback lets it go
        raise
    return stored_prompts


def _upsert_prompts(
    benchmark: Benchmark, parsed: ParsedFile, counts: dict[str, Any], stored_prompts: DiskMap[StoredPrompt]
) -> None:
    """do_upsert_prompts's work: what each prompt became goes into `stored_prompts`."""
    changed, stale = 0, False
    fields: set[str] = set()
    untitled: list[RowError] = []
    held = benchmark.prompts.exists()  # a new benchmark's first file has nothing to compare with
    with RowWriter(Prompt, ("id", "external_id", *PROMPT_FIELDS), benchmark_id=benchmark.pk) as new:
        for part in parsed.prompts.batches(bounded_queries.PER_QUERY):  # read at call time: tests lower it
            new.pause()  # the queries below run between the stream's COPYs (PostgreSQL)
            compared = _Compared.of(part)
            category = compared.texts.index("category")
            existing = {
                row[0]: (row[1], row[2:])
                for row in (benchmark.prompts if held else Prompt.objects.none())
                .filter(external_id__in_texts=[record.external_id for record in part])
                .order_by()
                .values_list("external_id", "pk", *compared.texts, *(_AS_TEXT if compared.nested else ()))
            }
            as_stored = compared.reader()
            fresh = sum(record.external_id not in existing for record in part)
            spare = reserve_ids(Prompt, fresh)[::-1] if fresh else []
            edited, placed = [], []
            for record in part:
                stored = existing.get(record.external_id)
                if stored is None:
                    pk = spare.pop()
                    if "text" not in record.given:
                        untitled.append(_untitled(record, parsed.unit))
                        continue
                    values = [getattr(record, name) for name in PROMPT_TEXT_ATTRIBUTES]
                    new.write((pk, record.external_id, *values, _json(record.privileged), _json(record.metadata)))
                    placed.append((record.external_id, StoredPrompt(pk, record.category, created=True)))
                    continue
                if as_stored is not None and as_stored(record) == stored[1]:
                    placed.append((record.external_id, StoredPrompt(stored[0], stored[1][category])))
                    continue
                values, named = _merged_prompt(compared, stored[1], record)
                if named:
                    fields.update(named)
                    stale = stale or values[category] != stored[1][category]
                    edited.append(Prompt(pk=stored[0], **dict(zip(compared.fields, values, strict=True))))
                placed.append((record.external_id, StoredPrompt(stored[0], values[category])))
            stored_prompts.put_many(placed)
            new.pause()
            if edited:
                Prompt.objects.bulk_update(edited, compared.fields, batch_size=500)
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


def _merged_prompt(compared: _Compared, stored: list[Any], record: PromptRecord) -> tuple[list[Any], list[str]]:
    """A stored prompt's values (the `compared` fields) with what the file carried laid over them, and
    the names of the fields (`privileged.NAME`, `metadata.NAME` for keys) that this changes."""
    values = list(stored)
    named = []
    for index, name in enumerate(compared.texts):
        if name in record.given and values[index] != getattr(record, name):
            values[index] = getattr(record, name)
            named.append("prompt" if name == "text" else name)
    if not compared.nested:
        return values, named
    for index, prefix, given in ((-2, "privileged", record.privileged), (-1, "metadata", record.metadata)):
        cleared = [key.split(".", 1)[1] for key in record.cleared if key.startswith(f"{prefix}.")]
        if not given and not cleared:
            continue  # the row names none of its keys: as stored, still as text
        values[index] = before = _decoded(values[index])
        merged = {**before, **given}
        for key in cleared:
            merged.pop(key, None)
        if merged != before:
            keys = set(merged) | set(before)
            named += [f"{prefix}.{key}" for key in sorted(keys) if merged.get(key) != before.get(key)]
            values[index] = merged
    if named:  # written back whole: every field as the model holds it
        values[-2], values[-1] = _decoded(values[-2]), _decoded(values[-1])
    return values, named


def _decoded(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _untitled(record: PromptRecord, unit: str) -> RowError:
    return RowError(
        record.line, f"missing required field 'prompt' (first row of prompt_id {record.external_id!r}, new here).", unit
    )


def described_fields(counts: Mapping[str, Any]) -> str:
    """': category, reference_answer' after "N updated" when prompts were changed by name."""
    names = counts.get("prompt_fields_updated") or []
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return f" ({shown})" if shown else ""


def do_upsert_responses(
    prompts: DiskMap[StoredPrompt],
    parsed: ParsedFile,
    counts: dict[str, Any],
    reserved_for: Callable[[Collection[tuple[str, str, str]]], Mapping[tuple[str, str, str], int]] | None = None,
) -> None:
    """The file's responses created or brought up to date, a slice of them at a time as the prompts
    are; `reserved_for` gives the keys reserved for new ones (prompt id, model slug, variant) that rows already
    written point to (a labels file's), asked a slice at a time. New ones go in one RowWriter stream,
    each with a key: the one reserved, or one reserved here."""
    models = dict(LanguageModel.objects.values_list("slug", "id"))
    ids: Mapping[tuple[str, str, str], int] = {}

    def reserved(record: ResponseRecord) -> int | None:
        return ids.get((record.prompt_id, record.model, record.variant))

    changed = 0
    with RowWriter(Response, ("id", "prompt_id", "model_id", "variant", "text", "metadata")) as new:
        for part in in_slices(parsed.responses):
            new.pause()
            placed = prompts.get_many({record.prompt_id for record in part})
            if reserved_for is not None:
                ids = reserved_for({(record.prompt_id, record.model, record.variant) for record in part})
            keyed = [((placed[record.prompt_id].id, models[record.model], record.variant), record) for record in part]
            held = {placed[record.prompt_id].id for record in part if not placed[record.prompt_id].created}
            # The metadata as stored text, read only where a row of the slice gives some and decoded only
            # for such a response (decoding every stored response's was a sixth of a re-import); the
            # prompts as one parameter.
            keyed_metadata = any(record.metadata for record in part)
            existing = {
                (prompt_id, model_id, variant): (pk, text, *metadata)
                for pk, prompt_id, model_id, variant, text, *metadata in (
                    Response.objects if held else Response.objects.none()
                )
                .filter(parent__isnull=True, prompt_id__in_integers=sorted(held))
                .order_by()
                .values_list(
                    "pk",
                    "prompt_id",
                    "model_id",
                    "variant",
                    "text",
                    *([Cast("metadata", TextField())] if keyed_metadata else []),
                )
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
                    raise made_meanwhile(f"the response of {record.model!r} to prompt {record.prompt_id!r}")
                # An empty answer never blanks a stored one (imports add): it names the stored response.
                text = record.text if record.text else stored[1]
                if not record.metadata and stored[1] == text:
                    continue  # as stored
                decode = keyed_metadata and (record.metadata or stored[1] != text)  # else not written
                metadata = json.loads(stored[2]) if decode else {}
                if stored[1] != text or any(metadata.get(k) != v for k, v in record.metadata.items()):
                    # The file's metadata keys are set; others (a generation run's, say) stay as they are.
                    edited.append(Response(pk=stored[0], text=text, metadata={**metadata, **record.metadata}))
            new.pause()
            if edited:
                Response.objects.bulk_update(
                    edited, ["text", *(["metadata"] if keyed_metadata else [])], batch_size=500
                )
            changed += len(edited)
    if changed:
        note_change()  # an edited response keeps its row (no new id): the win rates read its length
    counts.update(
        responses_created=new.written,
        responses_updated=changed,
        responses_unchanged=len(parsed.responses) - new.written - changed,
    )


def held_responses(benchmark_slug: str | None) -> HeldResponses:
    """Which of some (prompt id, model slug, variant) the benchmark holds as original responses: what a
    labels or score file may name without repeating the text (none, for a benchmark not made yet)."""

    def held(keys: Collection[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
        if not benchmark_slug:
            return set()
        stored = Response.objects.filter(prompt__benchmark__slug=benchmark_slug, parent__isnull=True).values_list(
            "prompt__external_id", "model__slug", "variant"
        )
        return set(where_in(stored, "prompt__external_id", {key[0] for key in keys})) & set(keys)

    return held


def kind_clash(role: str, slug: str, is_human: bool, known: dict[str, bool]) -> str:
    """Why a judge or rater the file calls a person (or a model) cannot be one: evalhub holds it as the other."""
    known_human = known.get(slug)
    if known_human is None or known_human == is_human:
        return ""
    what = "a person" if known_human else "a model"
    return f"{role} {slug!r} is {what} in evalhub; {role}_kind says otherwise."


def do_create_judges(
    kinds: dict[str, bool], names: dict[str, str] | None = None, ids: Mapping[str, int] | None = None
) -> int:
    """The judges or raters (slug → is a person) evalhub does not hold yet, as models or human authors
    (with the key reserved for one in `ids`, as `do_create_models`)."""
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


RACED = (
    "A row of this file was written by another import or edit while this one ran; nothing of this file was kept: "
    "import it again."
)


@contextmanager
def import_transaction() -> Iterator[None]:
    """An import's transaction: the whole file or nothing. Where another import or an edit stored the same
    rows (or removed one they point to) while this one ran, the database refuses this one's as its writing
    ends (on PostgreSQL: SQLite runs one import at a time); the file is then refused with that reason, not
    a server error, and the transaction is rolled back."""
    try:
        with transaction.atomic():
            yield
    except IntegrityError as error:
        raise ImportRejected([RowError(None, RACED)]) from error


def made_meanwhile(what: str) -> ImportRejected:
    return ImportRejected(
        [RowError(None, f"{what} was added by someone else during this import; import the file again.")]
    )
