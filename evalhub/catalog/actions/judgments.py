"""Importing pairwise judgments (people's labels and judges' verdicts: generic, MT-Bench, AlpacaEval,
Arena files), whole or not at all."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection
from django.db.models import BooleanField, ExpressionWrapper, Model, Q, QuerySet
from django.db.models.functions import Coalesce

from evalhub.catalog.actions.importing import (
    ImportRejected,
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
    made_meanwhile,
    real_user,
    size_of,
)
from evalhub.catalog.actions.judgment_import_state import (
    ARENA_WINNER,
    NewBattles,
    ResponseIds,
    StoredLabels,
    merge_staged_labels,
    value_hash,
)
from evalhub.catalog.label_counts import battle_key, do_count_imported, do_count_new_labels
from evalhub.catalog.models import (
    Benchmark,
    Criterion,
    Judgment,
    LanguageModel,
    Prompt,
    Response,
    TaskType,
    Verdict,
)
from evalhub.core.files.judgments import (
    AUTO,
    BOTH_BAD,
    DEFAULT_CRITERION,
    GENERIC,
    UNREADABLE,
    JudgmentRecord,
    ParsedJudgments,
    parse_judgment_file,
    parse_judgment_rows,
)
from evalhub.core.files.responses_seen import HeldResponses
from evalhub.core.files.rows import FileError, RowError, Source, unit_of
from evalhub.core.files.spool import Spool
from evalhub.core.files.study import UNIT as STUDY_UNIT
from evalhub.core.files.study import StudyRows
from evalhub.core.prompts.criteria_variants import ORIGINAL as ORIGINAL_PROMPT
from evalhub.system.bounded_queries import in_slices, where_in
from evalhub.system.bulk_insert import RowWriter, refresh_statistics, reserve_ids
from evalhub.tallies.actions import note_change

# --- pairwise judgments from files (human labels and judges' verdicts) ---------------------------

VERDICT_OF_WINNER: dict[str, int | None] = {
    "a": Verdict.FIRST,
    "b": Verdict.SECOND,
    "tie": Verdict.NEITHER,
    BOTH_BAD: Verdict.NEITHER,
    UNREADABLE: None,  # answered, unreadable: no battle, a miss in the judge lab
}


IMPORTED_JUDGMENT_SOURCE = "import"


BOTH_BAD_METADATA = {False: "{}", True: json.dumps({ARENA_WINNER: BOTH_BAD})}  # as the writer takes JSON


BOTH_BAD_LABEL = Q(**{f"metadata__{ARENA_WINNER}": BOTH_BAD})  # a label Arena called a tie where neither is good


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
            f"prompts {c['prompts_created']} new, {c['prompts_updated']} updated{described_fields(c)}; "
            f"responses {c['responses_created']} new; "
            f"{c['models_created']} new model(s), {c['judges_created']} new judge(s)."
        )


def check_judgment_file(
    filename: str,
    data: Source,
    *,
    layout: str = "auto",
    allow_new_models: bool = False,
    judges_are: str = AUTO,
    on_judgment: Callable[[JudgmentRecord], object] | None = None,
    benchmark_slug: str | None = None,
    held: HeldResponses | None = None,
) -> ParsedJudgments:
    """Check size, type and every row of a judgment file. Raises ImportRejected listing all problems.
    `on_judgment` gets each judgment as its row is read (`parse_judgment_file`); `judges_are` says
    whether judges the file does not classify are people or models; responses named without their text
    must be `benchmark_slug`'s (`held` answers which it holds, where the caller knows already)."""
    check_import_size(size_of(data))
    study = filename.lower().endswith(".zip")  # a study in its authors' files, with its study.json
    fmt, data = ("zip", data) if study else format_and_data(filename, data)
    models = dict(LanguageModel.objects.values_list("slug", "is_human"))
    # Read before the rows: `on_judgment` may be writing them to the database as they come.
    criteria = set(Criterion.objects.values_list("slug", flat=True)) | {DEFAULT_CRITERION}
    unit = STUDY_UNIT if study else unit_of(fmt)
    refused: list[RowError] = []

    def checked(record: JudgmentRecord) -> None:
        """A judgment passed on once what it names is known to be usable (none is kept: see ParsedJudgments)."""
        if record.criterion not in criteria:
            refused.append(RowError(record.line, f"unknown criterion {record.criterion!r}.", unit))
        elif clash := kind_clash("judge", record.judge, record.judge_is_human, models):
            refused.append(RowError(record.line, clash, unit))
        elif on_judgment is not None:
            on_judgment(record)

    reading: dict[str, Any] = {
        "known_models": models,
        "allow_new_models": allow_new_models,
        "judges_are": judges_are,
        "on_judgment": checked,
        "held": held or held_responses(benchmark_slug),
    }
    if study:
        parsed = _check_study(data, refused, reading)
    else:
        parsed = parse_judgment_file(data, fmt, layout=layout, **reading)
        parsed.errors.extend(refused)
    if not parsed.ok:
        parsed.close()
        raise ImportRejected(sorted(parsed.errors, key=lambda error: error.line or 0))
    return parsed


def _check_study(data: Source, refused: list[RowError], reading: dict[str, Any]) -> ParsedJudgments:
    """A study's zip read through its study.json as generic rows (evalhub.core.files.study), every problem
    named by its own file and line."""
    try:
        study = StudyRows(data, limit=settings.EVALHUB_MAX_IMPORT_BYTES)
    except FileError as error:
        raise ImportRejected([RowError(None, str(error))]) from None
    with study:
        parsed = parse_judgment_rows(study, STUDY_UNIT, layout=GENERIC, **reading)
        found = [*parsed.errors, *refused]
        places = study.places_of(error.line for error in found if error.line and not error.place)
        # The file's own problems first (their lines are the files'), then the rows' by where each came from.
        parsed.errors = [replace(error, line=None) for error in study.errors] + [
            replace(error, place=places.get(error.line or 0, "")) if error.line else error for error in found
        ]
    return parsed


def do_import_judgments(
    *,
    filename: str,
    data: Source,
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
    check_benchmark_slug(benchmark_slug)
    # On PostgreSQL each judgment goes to the server as its row is read, in the import's transaction:
    # the server stores a million while the file is read (15 s each on the developer machine, side by
    # side rather than one after the other). SQLite is this process: there the file is read first, so
    # that the database's write lock is held only while writing, its judgments kept on disk meanwhile
    # (a file of ten million is not held in memory on either database).
    as_read = connection.vendor == "postgresql"
    checking: dict[str, Any] = {
        "layout": layout,
        "allow_new_models": allow_new_models,
        "judges_are": judges_are,
        "benchmark_slug": benchmark_slug,
    }
    with Spool(JudgmentRecord) as spooled, contextlib.ExitStack() as parsed_files:  # on disk until stored
        checked = None if as_read else check_judgment_file(filename, data, **checking, on_judgment=spooled.add)
        if checked is not None:
            parsed_files.callback(checked.close)
        with import_transaction():
            benchmark, _ = Benchmark.objects.get_or_create(
                slug=benchmark_slug,
                defaults={"name": benchmark_slug, "task_type": task_type, "created_by": real_user(user)},
            )
            with _JudgmentImport(benchmark) as judgments:
                if checked is None:
                    parsed = check_judgment_file(
                        filename, data, **checking, on_judgment=judgments.add, held=judgments.responses.held
                    )
                    parsed_files.callback(parsed.close)
                else:
                    parsed = checked
                    for record in spooled:
                        judgments.add(record)
                counts = judgments.store(parsed)
            do_record_import(benchmark, filename, data, parsed.rows, counts, user)
    return JudgmentImportSummary(benchmark=benchmark, layout=parsed.layout, rows=parsed.rows, counts=counts)


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
    COLUMNS = (*KEY, "verdict", "probability", "grade", "metadata", "blind_verdict", "aid", "rationale")
    VALUES = ("verdict", "probability", "grade", "metadata", "blind_verdict", "aid", "rationale")  # updated in place
    # Keys reserved at a time, each block as large as the keys given so far: at most about half unused.
    FIRST_RESPONSES_RESERVED, FIRST_JUDGES_RESERVED, MOST_RESERVED = 64, 8, 4096
    CHANGED_AT_A_TIME = 5000  # changed labels updated together, as the file is read
    SETTLED_AT_A_TIME = 4096  # labels looked up among the stored ones together
    ANALYZE_AFTER = 10_000  # new labels past which the tables' statistics are taken again

    def __init__(self, benchmark: Benchmark) -> None:
        self.benchmark = benchmark
        self.writer = RowWriter(Judgment, self.COLUMNS, source=IMPORTED_JUDGMENT_SOURCE)
        # On PostgreSQL, once the file names a judge with labels stored, every later label is staged and
        # merged with the stored ones by the server (`_merge_staged`): reading them back and comparing
        # them here cost an unchanged re-import 1.17x the first import's CPU. SQLite compares here.
        self.merges_on_server = connection.vendor == "postgresql"
        self.staged: RowWriter | None = None
        self.models = dict(LanguageModel.objects.values_list("slug", "id"))
        self.criteria = dict(Criterion.objects.values_list("slug", "id"))
        self.responses = ResponseIds(
            Response.objects.filter(prompt__benchmark=benchmark, parent__isnull=True)
            .values_list("id", "prompt__external_id", "model__slug", "variant")
            .iterator(chunk_size=5000)
        )
        self.stored = StoredLabels()
        self.judges_read: set[str] = set()
        # What this import creates with a key it reserved: models and judges, criteria, responses.
        self.new_models: dict[str, int] = {}
        self.new_criteria: dict[str, int] = {}
        self.spare_responses: list[int] = []  # keys reserved and not given yet
        self.spare_judges: list[int] = []
        self.new = NewBattles()
        self.changed: list[Judgment] = []
        self.replaced = 0
        self.unchanged = 0
        self.refused: IntegrityError | None = None
        self.pending: list[tuple[JudgmentRecord, tuple[int, int, int, int]]] = []  # read, not yet settled

    def __enter__(self) -> _JudgmentImport:
        self.writer.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: Any) -> None:
        try:
            if self.staged is not None:
                self.staged.__exit__(kind, error, trace)
        finally:
            self.responses.close()
            self.new.close()
            self.writer.__exit__(kind, error, trace)

    def _pause(self) -> None:
        """End the COPY running (PostgreSQL), so that other statements can run."""
        self.writer.pause()
        if self.staged is not None:
            self.staged.pause()

    def add(self, record: JudgmentRecord) -> None:
        """Write the label now (or note it as unchanged or changed). A label the database refuses as
        one it holds already (the file repeats a row, which the reading names once the file is read:
        on PostgreSQL the COPY refuses it first) stops the writing; the reading goes on, to name it."""
        if self.refused is not None:
            return  # the transaction is aborted: nothing more can be written or asked
        try:
            self._add(record)
        except IntegrityError as error:
            self.refused = error

    def _add(self, record: JudgmentRecord) -> None:
        if record.criterion not in self.criteria and record.criterion != DEFAULT_CRITERION:
            return  # an unknown criterion: the file is refused once read
        # A million labels name a few judges, criteria and thousands of responses: a dict lookup each, as a rule.
        responses = self.responses
        key = (
            self.criteria.get(record.criterion) or self._criterion(record.criterion),
            self.models[record.judge] if record.judge in self.judges_read else self._judge(record.judge),
            responses.get(record.prompt_id, record.model_a, record.variant_a)
            or self._response(record.prompt_id, record.model_a, record.variant_a),
            responses.get(record.prompt_id, record.model_b, record.variant_b)
            or self._response(record.prompt_id, record.model_b, record.variant_b),
        )
        if self.staged is not None:  # merged with the stored labels by the server, once the file is read
            self.staged.write(self._row(record, key))
            return
        if not self.stored.tables:  # nothing stored to compare with (a first import): written at once
            self._settle_one(record, key, None)
            return
        self.pending.append((record, key))
        if len(self.pending) >= self.SETTLED_AT_A_TIME:
            self._settle()

    def _settle(self) -> None:
        """The labels read since the last call, in the file's order: each written, or noted as changed
        or unchanged, their stored labels looked up together (one sorted search for the lot)."""
        pending, self.pending = self.pending, []
        for (record, key), stored in zip(pending, self.stored.find_all([key for _, key in pending]), strict=True):
            self._settle_one(record, key, stored)

    def _settle_one(
        self, record: JudgmentRecord, key: tuple[int, int, int, int], stored: tuple[int, int] | None
    ) -> None:
        verdict = VERDICT_OF_WINNER[record.winner]
        blind = None if record.blind_winner is None else VERDICT_OF_WINNER[record.blind_winner]
        both_bad = record.winner == BOTH_BAD
        if stored is None:
            self.writer.write(self._row(record, key))
            self.new.add(record, verdict)
        elif stored[1] != value_hash(
            verdict, record.probability_a, record.grade, both_bad, blind, record.aid, record.rationale
        ):
            # Updated in place: the row keeps its place among the judge's labels of the pair, so the
            # order it was first shown in (the earlier label) does not swap when one verdict is edited.
            self.changed.append(
                Judgment(
                    pk=stored[0],
                    verdict=verdict,
                    probability=record.probability_a,
                    grade=record.grade,
                    metadata=json.loads(BOTH_BAD_METADATA[both_bad]),
                    blind_verdict=blind,
                    aid=record.aid,
                    rationale=record.rationale,
                )
            )
            if len(self.changed) >= self.CHANGED_AT_A_TIME:
                self._replace_changed()
        else:
            self.unchanged += 1

    def _merge_staged(self) -> int:
        """The staged labels merged with the stored ones by the server (`merge_staged_labels`); how many
        were new."""
        if self.staged is None:
            return 0
        self.staged.pause()
        changed, created, staged = merge_staged_labels(self.staged.staged_table, do_count_imported)
        self.replaced += changed
        self.unchanged += staged - changed - created
        return created

    @staticmethod
    def _row(record: JudgmentRecord, key: tuple[int, int, int, int]) -> tuple[Any, ...]:
        """The label as the writer takes it (COLUMNS)."""
        blind = None if record.blind_winner is None else VERDICT_OF_WINNER[record.blind_winner]
        both_bad = BOTH_BAD_METADATA[record.winner == BOTH_BAD]
        return (
            *key,
            VERDICT_OF_WINNER[record.winner],
            record.probability_a,
            record.grade,
            both_bad,
            blind,
            record.aid,
            record.rationale,
        )

    def _replace_changed(self) -> None:
        """Update the changed labels so far in place, their counts taken away and added again."""
        if not self.changed:
            return
        self._pause()
        stale = [judgment.pk for judgment in self.changed]
        do_count_imported(stale, -1)
        Judgment.objects.bulk_update(self.changed, list(self.VALUES), batch_size=500)
        do_count_imported(stale, 1)
        self.replaced += len(stale)
        self.changed = []

    def _criterion(self, slug: str) -> int:
        if slug not in self.criteria:
            self._pause()
            self.criteria[slug] = self.new_criteria[slug] = reserve_ids(Criterion, 1)[0]
        return self.criteria[slug]

    def _judge(self, slug: str) -> int:
        if slug not in self.models:
            # Reserved in blocks, as responses are: one at a time, each new judge ended the COPY (Arena's
            # voters are judges: 50,000 of them took 100,000 votes from 24 to 57 CPU-s on PostgreSQL).
            pk = self._reserved(LanguageModel, self.spare_judges, len(self.new_models), self.FIRST_JUDGES_RESERVED)
            self.models[slug] = self.new_models[slug] = pk
        elif slug not in self.judges_read and slug not in self.new_models and self.merges_on_server:
            if self.staged is None:  # else every later label is staged already
                self._pause()  # a query while a COPY runs would wait for it forever
            if self.staged is None and self._stored_labels_of(self.models[slug]).exists():
                self.staged = RowWriter(Judgment, self.COLUMNS, source=IMPORTED_JUDGMENT_SOURCE, staged=True)
                self.staged.__enter__()
        elif slug not in self.judges_read and slug not in self.new_models:
            self._pause()
            rows = (
                self._stored_labels_of(self.models[slug])
                # Arena's both-bad as a boolean the database works out: a JSON value per row cost Django a
                # decoding each (8 % of an import of the same file again).
                .annotate(both_bad=Coalesce(ExpressionWrapper(BOTH_BAD_LABEL, BooleanField()), False))
                .values_list(
                    "criterion_id",
                    "response_id",
                    "response_2_id",
                    "pk",
                    "verdict",
                    "probability",
                    "grade",
                    "both_bad",
                    "blind_verdict",
                    "aid",
                    "rationale",
                )
                .iterator(chunk_size=5000)
            )
            self.stored.load(
                self.models[slug],
                (
                    (c, r1, r2, pk, value_hash(verdict, probability, grade, bool(both_bad), blind, aid, rationale))
                    for c, r1, r2, pk, verdict, probability, grade, both_bad, blind, aid, rationale in rows
                ),
            )
        self.judges_read.add(slug)
        return self.models[slug]

    def _stored_labels_of(self, judge: int) -> QuerySet[Judgment]:
        return Judgment.objects.filter(
            judge_model_id=judge,
            response_2__isnull=False,
            prompt_variant=ORIGINAL_PROMPT,
            response__prompt__benchmark=self.benchmark,
        )

    def _response(self, prompt: str, model: str, variant: str) -> int:
        """A key reserved for a response the file names and evalhub lacks (it has none yet)."""
        pk = self._reserved(Response, self.spare_responses, self.responses.created, self.FIRST_RESPONSES_RESERVED)
        self.responses.add_new(prompt, model, variant, pk)
        return pk

    def _reserved(self, model: type[Model], spare: list[int], given: int, first: int) -> int:
        """A key for a new row of `model`, from `spare`, filled in blocks as large as the keys given so far
        (from `first` up to MOST_RESERVED): at most about half go unused, and the COPY pauses rarely."""
        if not spare:
            self._pause()
            spare.extend(reserve_ids(model, min(self.MOST_RESERVED, max(first, given)))[::-1])
        return spare.pop()

    def store(self, parsed: ParsedJudgments) -> dict[str, int]:
        """Create what the labels point to, update the changed ones, count them all; the import's counts."""
        # Refused with no repeated row in the file, or at the COPY's end: another import stored the same
        # labels meanwhile, which the import's transaction names (import_transaction).
        if self.refused is not None:
            raise self.refused
        self._settle()
        self._pause()
        counts = {"models_created": do_create_models(parsed.benchmark.new_models, parsed.names, self.new_models)}
        counts["judges_created"] = do_create_judges(parsed.judges, parsed.names, self.new_models)
        for slug, id_ in where_in(LanguageModel.objects.values_list("slug", "id"), "slug", self.new_models):
            if id_ != self.new_models[slug]:  # its creation was skipped: another import made it first
                raise made_meanwhile(f"model {slug!r}")
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
                raise made_meanwhile(f"criterion {DEFAULT_CRITERION!r}")
        prompts = do_upsert_prompts(self.benchmark, parsed.benchmark, counts)
        do_upsert_responses(prompts, parsed.benchmark, counts, self.responses.new_ones)
        self._replace_changed()
        merged_new = self._merge_staged()
        if self.replaced:
            note_change()  # a probability alone changes no count, but the win rates and the judge lab read it
        # The new labels' battles come from what the import holds, not from reading a million rows back.
        do_count_new_labels(
            (battle_key(a, b, human, criterion, placed[prompt].category, self.benchmark.slug), verdict, many)
            for part in in_slices(self.new.counted())
            for placed in [prompts.get_many({key[0] for key, _ in part})]
            for (prompt, a, b, human, criterion, verdict), many in part
        )
        prompts.close()
        counts.update(
            judgments_created=self.new.labels + merged_new,
            judgments_replaced=self.replaced,
            judgments_unchanged=self.unchanged,
        )
        if self.new.labels + merged_new >= self.ANALYZE_AFTER:
            refresh_statistics(Judgment, Response, Prompt)
        return counts
