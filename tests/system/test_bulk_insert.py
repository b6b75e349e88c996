"""Rows inserted without a model instance each are the rows bulk_create would have written, in the
order given; an upsert adds to or replaces the rows already there; both on every configured database."""

from __future__ import annotations

import math
import random
import threading
from decimal import Decimal

import pytest
from django.conf import settings
from django.db import DatabaseError, IntegrityError, connections, models, transaction
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext, isolate_apps

from evalhub.catalog.models import Benchmark, Criterion, Judgment, LanguageModel, Prompt, Response
from evalhub.debates.verdict_counts import JUDGE_FIELDS  # the judges' tallies' columns after their key
from evalhub.system.bulk_insert import (
    UPSERT_ARRAY_ROWS,
    UPSERT_ROWS,
    RowWriter,
    _references,
    array,
    insert_new,
    insert_rows,
    reserve_ids,
    table,
    upsert,
    upserts_together,
)
from evalhub.tallies.models import BATTLE_COUNTS, BATTLE_KEY, JUDGE_KEY, BattleCount, JudgeTally
from tests.worker_threads import WorkerThreads

COLUMNS = ("criterion_id", "judge_model_id", "response_id", "response_2_id", "verdict", "probability")


@pytest.fixture(params=sorted(settings.DATABASES))
def alias(request):  # PostgreSQL and SQLite on CI: the embedded mode and production each run these
    return request.param


@pytest.fixture
def pair(alias):
    benchmark = Benchmark.objects.using(alias).create(slug="b", name="b")
    prompt = Prompt.objects.using(alias).create(benchmark=benchmark, external_id="q1", text="Is 221 prime?")
    a, b, judge = (
        LanguageModel.objects.using(alias).create(slug=slug, display_name=slug) for slug in ("a", "b", "judge")
    )
    first = Response.objects.using(alias).create(prompt=prompt, model=a, text="No.")
    second = Response.objects.using(alias).create(prompt=prompt, model=b, text="Yes.")
    criterion = Criterion.objects.using(alias).create(slug="overall", name="Overall", definition="d", levels={"1": "x"})
    return criterion, judge, first, second


@pytest.mark.django_db(databases="__all__")
def test_the_rows_equal_those_bulk_create_writes_in_every_column(alias, pair):
    criterion, judge, first, second = pair
    Judgment.objects.using(alias).bulk_create(
        [
            Judgment(
                criterion=criterion,
                judge_model=judge,
                response=first,
                response_2=second,
                verdict=1,
                probability=0.75,
                source="import",
            )
        ]
    )
    inserted = insert_rows(
        Judgment,
        COLUMNS,
        [(criterion.pk, judge.pk, second.pk, first.pk, 2, None)],
        batch=1,
        using=alias,
        source="import",
    )
    assert inserted == 1
    made, ours = Judgment.objects.using(alias).order_by("pk")
    expected = {**model_to_dict(made), "response": second.pk, "response_2": first.pk, "verdict": 2, "probability": None}
    assert {**model_to_dict(ours), "id": made.pk} == expected
    assert abs((ours.created_at - made.created_at).total_seconds()) < 60


@pytest.mark.django_db(databases="__all__")
def test_the_database_still_refuses_a_row_its_constraints_forbid_and_a_later_insert_still_works(alias, pair):
    criterion, judge, first, second = pair
    with pytest.raises(IntegrityError), transaction.atomic(using=alias):
        insert_rows(Judgment, COLUMNS, [(criterion.pk, judge.pk, first.pk, first.pk, 1, None)], using=alias)
    assert not Judgment.objects.using(alias).exists()
    assert insert_rows(Judgment, COLUMNS, [(criterion.pk, judge.pk, first.pk, second.pk, 1, None)], using=alias) == 1


@pytest.mark.django_db(databases="__all__")
def test_many_rows_go_in_bounded_batches_in_the_order_given(alias, pair):
    criterion, judge, first, second = pair
    variants = [f"variant-{n}" for n in range(2_500)]
    random.Random(0).shuffle(variants)
    rows = ((criterion.pk, judge.pk, first.pk, second.pk, 1, None, variant) for variant in variants)
    with CaptureQueriesContext(connections[alias]) as queries:  # PostgreSQL's COPY goes unrecorded
        assert insert_rows(Judgment, (*COLUMNS, "prompt_variant"), rows, batch=1_000, using=alias) == 2_500
    assert list(Judgment.objects.using(alias).order_by("pk").values_list("prompt_variant", flat=True)) == variants
    into_judgments = [query for query in queries if query["sql"].startswith(f"INSERT INTO {table(Judgment, alias)}")]
    if connections[alias].vendor == "sqlite":
        # Staged, then one INSERT … SELECT into the indexed table whatever the number of rows.
        assert len(into_judgments) == 1 and len(queries) == 6  # create, three batches, insert, drop


@pytest.mark.django_db(databases="__all__")
def test_shared_values_keep_every_awkward_character_and_their_json(alias, pair):
    criterion, judge, first, second = pair
    awkward = "tab\there, line\nend, back\\slash \\N, é漢 and a quote '\""
    metadata = {"note": awkward, "nested": [1, None, {"x": "\\."}]}
    insert_rows(
        Judgment,
        COLUMNS,
        [(criterion.pk, judge.pk, first.pk, second.pk, 1, 0.5)],
        using=alias,
        rationale=awkward,
        metadata=metadata,
        privileged_sources=["reference_answer"],
    )
    stored = Judgment.objects.using(alias).get()
    assert (stored.rationale, stored.metadata, stored.privileged_sources) == (awkward, metadata, ["reference_answer"])


@pytest.mark.django_db(databases="__all__")
def test_the_shared_json_is_converted_once_not_once_a_row(alias, pair, monkeypatch):
    from psycopg.types import json as psycopg_json

    if connections[alias].vendor != "postgresql":
        pytest.skip("psycopg's COPY is PostgreSQL's; SQLite binds the shared values once in its INSERT … SELECT")
    criterion, judge, first, second = pair
    dumped = []
    original = psycopg_json._JsonDumper.dump
    monkeypatch.setattr(psycopg_json._JsonDumper, "dump", lambda self, obj: dumped.append(1) or original(self, obj))
    rows = [(criterion.pk, judge.pk, first.pk, second.pk, 1, None, f"variant-{n}") for n in range(300)]
    assert insert_rows(Judgment, (*COLUMNS, "prompt_variant"), rows, batch=100, using=alias) == 300
    assert len(dumped) <= 2  # the two JSON columns (metadata, privileged_sources), once each; old: 600


@pytest.mark.django_db(databases="__all__")
def test_an_unknown_column_is_refused_before_anything_is_written(alias):
    with pytest.raises(ValueError, match="no column"):
        insert_rows(Judgment, ("judge_id",), [(1,)], using=alias)


def key(n: int) -> tuple[str, ...]:
    return (f"model-{n}", "model-x", "consensus", "helpfulness", "math", "demo", "original")


def counts(alias: str) -> dict[tuple, tuple[int, int, int]]:
    return {
        tuple(row[: len(BATTLE_KEY)]): tuple(row[len(BATTLE_KEY) :])
        for row in BattleCount.objects.using(alias).values_list(*BATTLE_KEY, *BATTLE_COUNTS)
    }


@pytest.mark.django_db(databases="__all__")
def test_an_upsert_adding_creates_the_rows_not_there_and_adds_to_those_that_are(alias):
    BattleCount.objects.using(alias).create(**dict(zip(BATTLE_KEY, key(0), strict=True)), wins_a=5, wins_b=1, ties=2)
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, [(*key(0), 1, 0, -1), (*key(1), 0, 3, 0)], add=True, using=alias)
    assert counts(alias) == {key(0): (6, 1, 1), key(1): (0, 3, 0)}


@pytest.mark.django_db(databases="__all__")
def test_an_upsert_replacing_overwrites_the_values_and_keeps_one_row_per_key(alias):
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, [(*key(0), 4, 4, 4)], add=False, using=alias)
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, [(*key(0), 1, 2, 3)], add=False, using=alias)
    assert counts(alias) == {key(0): (1, 2, 3)}


@pytest.mark.django_db(databases="__all__")
def test_an_upsert_of_more_rows_than_one_statement_holds_are_all_written(alias):
    per_statement = UPSERT_ARRAY_ROWS if connections[alias].vendor == "postgresql" else UPSERT_ROWS
    rows = [(*key(n), n, 1, 0) for n in range(2 * per_statement + 7)]
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, rows, add=True, using=alias)
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, rows, add=True, using=alias)
    assert counts(alias) == {tuple(row[:7]): (2 * row[7], 2, 0) for row in rows}


@pytest.mark.django_db(databases="__all__")
def test_an_upsert_keeps_text_that_array_literals_and_sql_quote_exactly(alias):
    # PostgreSQL gets the rows as one array per column: commas, braces, quotes, backslashes and the
    # word NULL inside an array literal must come back as the text they were.
    texts = ["a,b", "{x}", '"q"', "back\\slash", "it's", "NULL", "null", "", " sp ", "é漢"]
    rows = [
        (f"model-{n}", "model-x", "consensus", "helpfulness", text, "demo", "original", 1, 0, 0)
        for n, text in enumerate(texts)
    ]
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, rows, add=True, using=alias)
    assert sorted(BattleCount.objects.using(alias).values_list("model_a", "scenario")) == sorted(
        (f"model-{n}", text) for n, text in enumerate(texts)
    )


@pytest.mark.django_db(databases="__all__")
def test_an_array_in_its_text_form_comes_back_as_the_values_it_was(alias):
    if connections[alias].vendor != "postgresql":
        pytest.skip("arrays are PostgreSQL's; SQLite takes a VALUES list")
    values = {
        "double precision": [1.5, float("inf"), float("-inf"), None, 1e-05, 1e16, -0.0, 0.1 + 0.2],
        "varchar(100)": ["a,b", "{x}", '"q"', "back\\slash", "\\N", "it's", "NULL", "", " sp ", "é漢\n\t", None],
        "bigint": [1, -2, 2**62, None],
        "boolean": [True, False, None],
        "integer": [],
    }
    with connections[alias].cursor() as cursor:
        cursor.execute(
            "SELECT " + ", ".join(f"%s::{kind}[]" for kind in values), [array(column) for column in values.values()]
        )
        assert list(cursor.fetchone()) == list(values.values())
        cursor.execute("SELECT %s::double precision[]", [array([float("nan")])])
        assert math.isnan(cursor.fetchone()[0][0])
    assert isinstance(array([1, 2.5]), str)
    assert array([1, Decimal("2.5")]) == [1, Decimal("2.5")], "anything else is left for psycopg to adapt"


@pytest.mark.django_db(databases="__all__")
def test_an_upserts_columns_go_in_their_text_form_not_as_lists_psycopg_adapts(alias):
    if connections[alias].vendor != "postgresql":
        pytest.skip("arrays are PostgreSQL's; SQLite takes a VALUES list")
    # psycopg checks and converts a list element by element, and writes its own cast after it.
    with CaptureQueriesContext(connections[alias]) as queries:
        upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, [(*key(0), 1, 0, 0), (*key(1), 0, 2, 0)], add=True, using=alias)
    (statement,) = [query["sql"] for query in queries.captured_queries]
    assert "'{1,0}'::integer[]" in statement and "::int2[]" not in statement
    assert counts(alias) == {key(0): (1, 0, 0), key(1): (0, 2, 0)}


@pytest.mark.django_db(databases="__all__")
def test_insert_new_adds_the_rows_not_there_leaves_the_others_and_returns_the_new_keys(alias):
    kept = BattleCount.objects.using(alias).create(**dict(zip(BATTLE_KEY, key(0), strict=True)), wins_a=5, ties=2)
    per_statement = UPSERT_ARRAY_ROWS if connections[alias].vendor == "postgresql" else UPSERT_ROWS
    rows = [(*key(n), 9) for n in range(per_statement + 3)]  # key(0) is there; two statements' worth
    inserted = insert_new(BattleCount, BATTLE_KEY, (*BATTLE_KEY, "wins_a"), rows, using=alias, ties=7)
    assert set(inserted) == {key(n) for n in range(1, per_statement + 3)}
    columns = BattleCount.objects.using(alias).values_list(*BATTLE_KEY, "pk", *BATTLE_COUNTS)
    stored = {tuple(row[:7]): row[7:] for row in columns}
    assert stored[key(0)] == (kept.pk, 5, 0, 2)  # left as it was
    assert all(stored[k] == (pk, 9, 0, 7) for k, pk in inserted.items())  # given, default, constant


def tallies(alias: str) -> dict[tuple, tuple[int, int]]:
    return {
        (run, scenario): (judged, hits)
        for run, scenario, judged, hits in JudgeTally.objects.using(alias).values_list(*JUDGE_KEY, "judged", "hits")
    }


def tally(run: int, judged: int, hits: int) -> tuple:
    return (run, "math", judged, hits, *[0] * (len(JUDGE_FIELDS) - 2))


def add_battles(alias: str, rows: list[tuple]) -> None:
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, rows, add=True, using=alias)


def add_tallies(alias: str, rows: list[tuple]) -> None:
    upsert(JudgeTally, JUDGE_KEY, JUDGE_FIELDS, rows, add=True, using=alias)


@pytest.mark.django_db(databases="__all__")
def test_upserts_together_reach_postgresql_as_one_statement_when_the_block_ends(alias):
    """A judge run chunk's three upserts cost it a statement each (about half a millisecond of round
    trip and per-statement work each on PostgreSQL, for 0.1–0.3 ms of rows); they go as one."""
    BattleCount.objects.using(alias).create(**dict(zip(BATTLE_KEY, key(0), strict=True)), wins_a=5, wins_b=1, ties=2)
    JudgeTally.objects.using(alias).create(judge_run_id=7, scenario="math", judged=3, hits=2)
    with CaptureQueriesContext(connections[alias]) as queries, transaction.atomic(using=alias):
        with upserts_together(alias):
            before = len(queries.captured_queries)
            add_battles(alias, [(*key(0), 1, 0, -1), (*key(1), 0, 3, 0)])
            add_tallies(alias, [tally(7, 2, 1), tally(8, 1, 1)])
            inside = len(queries.captured_queries) - before
    written = [query["sql"] for query in queries.captured_queries if query["sql"].startswith(("INSERT", "WITH"))]
    if connections[alias].vendor == "postgresql":
        assert inside == 0 and len(written) == 1, written
    else:  # SQLite: each as asked
        assert inside == 2 and len(written) == 2
    assert counts(alias) == {key(0): (6, 1, 1), key(1): (0, 3, 0)}
    assert tallies(alias) == {(7, "math"): (5, 3), (8, "math"): (1, 1)}


@pytest.mark.django_db(databases="__all__")
def test_a_block_of_upserts_that_raises_writes_nothing_and_the_next_upsert_goes_at_once(alias):
    postgresql = connections[alias].vendor == "postgresql"

    def writes(queries: CaptureQueriesContext) -> int:
        return sum(query["sql"].startswith(("INSERT", "WITH")) for query in queries.captured_queries)

    with CaptureQueriesContext(connections[alias]) as queries:
        with pytest.raises(RuntimeError), transaction.atomic(using=alias), upserts_together(alias):
            add_battles(alias, [(*key(0), 1, 0, 0)])
            raise RuntimeError("the chunk failed")
    assert counts(alias) == {}
    assert writes(queries) == (0 if postgresql else 1)  # PostgreSQL: never sent; SQLite: rolled back
    with CaptureQueriesContext(connections[alias]) as queries, upserts_together(alias):
        with upserts_together(alias):  # a block inside a block is the outer one: it sends nothing itself
            add_battles(alias, [(*key(0), 1, 0, 0)])
        assert writes(queries) == (0 if postgresql else 1)
    assert writes(queries) == 1
    add_battles(alias, [(*key(1), 0, 1, 0)])
    assert counts(alias) == {key(0): (1, 0, 0), key(1): (0, 1, 0)}


@pytest.mark.django_db(databases="__all__", transaction=True)
@pytest.mark.parametrize("first", ["battles", "tallies"])
def test_upserts_together_lock_their_rows_in_the_order_they_were_asked(alias, first):
    """Writers that share rows must lock them in one order or they can wait on each other in a cycle.
    PostgreSQL leaves the order of a statement's WITH parts to itself; each part here waits for the one
    before to finish, so while the second waits for a row, the first's row is already held."""
    if connections[alias].vendor != "postgresql":
        pytest.skip("row locks are what is tested: DATABASE_URL=postgres://…")
    BattleCount.objects.using(alias).create(**dict(zip(BATTLE_KEY, key(0), strict=True)))
    JudgeTally.objects.using(alias).create(judge_run_id=7, scenario="math")
    second = JudgeTally if first == "battles" else BattleCount
    holding, release, waiting = threading.Event(), threading.Event(), threading.Event()

    def hold_the_second_row() -> None:
        with transaction.atomic(using=alias):
            list(second.objects.using(alias).select_for_update().all())
            holding.set()
            release.wait(20)

    writer: list[int] = []  # its backend's pid: the lock waits of other sessions say nothing of it

    def write_both() -> None:
        writes = [lambda: add_battles(alias, [(*key(0), 1, 0, 0)]), lambda: add_tallies(alias, [tally(7, 1, 1)])]
        connections[alias].ensure_connection()
        writer.append(connections[alias].connection.info.backend_pid)
        with transaction.atomic(using=alias), upserts_together(alias):
            for write in writes if first == "battles" else writes[::-1]:
                write()
            waiting.set()

    workers = WorkerThreads()
    workers.start(hold_the_second_row)
    assert holding.wait(20)
    writing = workers.start(write_both)
    waiting.wait(20)
    first_model = BattleCount if first == "battles" else JudgeTally
    held_first = False
    try:
        with connections[alias].cursor() as cursor:
            for _ in range(200):  # until the writer waits for the second row's lock
                waits = "SELECT count(*) FROM pg_stat_activity WHERE pid = %s AND wait_event_type = 'Lock'"
                cursor.execute(waits, [writer[0] if writer else 0])
                if cursor.fetchone()[0]:
                    break
                writing.join(0.05)
            # The first part's row is the writer's already: taking it now cannot wait.
            try:
                with transaction.atomic(using=alias):
                    list(first_model.objects.using(alias).select_for_update(nowait=True).all())
            except DatabaseError:
                held_first = True
    finally:
        release.set()
        workers.join(30)
    assert held_first
    assert counts(alias) == {key(0): (1, 0, 0)} and tallies(alias) == {(7, "math"): (1, 1)}


def postgresql_only(alias: str) -> None:
    if connections[alias].vendor != "postgresql":
        pytest.skip("PostgreSQL's triggers and row locks are what is tested: DATABASE_URL=postgres://…")


def replication_role(alias: str) -> str:
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT current_setting('session_replication_role')")
        return cursor.fetchone()[0]


@pytest.mark.django_db(databases="__all__")
def test_a_row_pointing_at_no_row_is_refused_as_it_is_copied_and_the_triggers_are_on_again_after(alias, pair):
    """The keys are checked a set at a time as the rows go in (PostgreSQL's triggers checked them one
    row at a time at commit: two thirds of the server's time for a million judgments)."""
    postgresql_only(alias)
    criterion, judge, first, second = pair
    missing = second.pk + 1_000_000
    with pytest.raises(IntegrityError, match=rf"Key \(response_2_id\)=\({missing}\) is not present"):
        with transaction.atomic(using=alias):
            rows = [
                (criterion.pk, judge.pk, first.pk, second.pk, 1, None),
                (criterion.pk, judge.pk, first.pk, missing, 1, None),
            ]
            try:
                insert_rows(Judgment, COLUMNS, rows, batch=1, using=alias)
            finally:
                assert replication_role(alias) == "origin"  # the transaction's later writes are checked again
    with pytest.raises(IntegrityError), transaction.atomic(using=alias):
        insert_rows(Judgment, COLUMNS, [(criterion.pk, judge.pk, first.pk, second.pk, 1, None)], using=alias)
        assert replication_role(alias) == "origin"
        # …so a row written after, the ORM's way, is still checked by its trigger.
        Judgment.objects.using(alias).create(
            criterion=criterion, judge_model=judge, response=second, response_2_id=missing, verdict=1, source="x"
        )
        with connections[alias].cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the deferred triggers' checks, as at commit


@pytest.mark.django_db(databases="__all__")
@pytest.mark.parametrize("granted", [False, True])
def test_a_role_that_may_not_turn_triggers_off_has_its_rows_checked_by_them_and_one_granted_it_may(
    alias, pair, granted
):
    """Not every deployment connects as a superuser: PostgreSQL 15+ lets one grant SET on
    `session_replication_role`; without it the triggers check each row, as before."""
    postgresql_only(alias)
    criterion, judge, first, second = pair
    missing = second.pk + 1_000_000
    with connections[alias].cursor() as cursor:  # roles made here go with the test's transaction
        cursor.execute("CREATE ROLE evalhub_plain_importer NOSUPERUSER")
        cursor.execute("GRANT ALL ON ALL TABLES IN SCHEMA public TO evalhub_plain_importer")
        cursor.execute("GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO evalhub_plain_importer")
        if granted:
            cursor.execute("GRANT SET ON PARAMETER session_replication_role TO evalhub_plain_importer")
        cursor.execute("SET LOCAL ROLE evalhub_plain_importer")
    row = (criterion.pk, judge.pk, first.pk, missing, 1, None)
    if granted:
        with pytest.raises(IntegrityError, match="is not present"), transaction.atomic(using=alias):
            insert_rows(Judgment, COLUMNS, [row], using=alias)
        return
    with pytest.raises(IntegrityError), transaction.atomic(using=alias):
        assert insert_rows(Judgment, COLUMNS, [row], using=alias) == 1  # taken, to be checked at commit
        assert replication_role(alias) == "origin"
        with connections[alias].cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the trigger's check, as at commit


@pytest.mark.django_db(databases="__all__")
@pytest.mark.parametrize("missing_in", ["response_id", "response_2_id"])
def test_the_keys_are_locked_a_bounded_number_a_statement_and_a_missing_one_is_named_by_its_column(
    alias, pair, monkeypatch, missing_in
):
    """One statement locked every key the rows pointed at (twenty million for ten million Arena votes);
    now LOCKED_AT_A_TIME keys a statement at most, and a key missing from a later statement is named
    by the column that holds it, though both columns' keys are checked together."""
    postgresql_only(alias)
    from evalhub.system import bulk_insert

    monkeypatch.setattr(bulk_insert, "LOCKED_AT_A_TIME", 3, raising=False)
    criterion, judge, first, _ = pair
    answers = [
        Response.objects.using(alias).create(prompt=first.prompt, model=judge, variant=f"v{n}", text=f"Answer {n}.")
        for n in range(8)
    ]
    rows = [(criterion.pk, judge.pk, answers[n].pk, answers[n + 1].pk, 1, None) for n in range(7)]
    with CaptureQueriesContext(connections[alias]) as queries, transaction.atomic(using=alias):
        insert_rows(Judgment, COLUMNS, rows, using=alias)
    locks = [query["sql"] for query in queries.captured_queries if "FOR KEY SHARE" in query["sql"]]
    assert len(locks) >= 3 + 1 + 1  # the 8 responses 3 at a time, the judge, the criterion
    assert Judgment.objects.using(alias).count() == 7
    missing = answers[-1].pk + 1_000
    pointing = (answers[0].pk, missing) if missing_in == "response_2_id" else (missing, answers[0].pk)
    broken = [(criterion.pk, judge.pk, answers[n + 1].pk, answers[n].pk, 2, None) for n in range(7)]
    broken.append((criterion.pk, judge.pk, *pointing, 2, None))
    with pytest.raises(IntegrityError, match=rf"Key \({missing_in}\)=\({missing}\) is not present"):
        with transaction.atomic(using=alias):
            insert_rows(Judgment, COLUMNS, broken, using=alias)


@pytest.mark.django_db(databases="__all__", transaction=True)
def test_the_rows_pointed_at_stay_locked_against_deletion_until_the_inserting_transaction_ends(alias, pair):
    """As the triggers would: a response a judgment points to cannot be deleted before that judgment
    is committed (it would then point at nothing)."""
    postgresql_only(alias)
    criterion, judge, first, second = pair
    inserted, release = threading.Event(), threading.Event()

    def insert_and_wait() -> None:
        with transaction.atomic(using=alias):
            insert_rows(Judgment, COLUMNS, [(criterion.pk, judge.pk, first.pk, second.pk, 1, None)], using=alias)
            inserted.set()
            release.wait(20)

    workers = WorkerThreads()
    workers.start(insert_and_wait)
    try:
        assert inserted.wait(20)
        for response in (first, second):
            with pytest.raises(DatabaseError, match="could not obtain lock"), transaction.atomic(using=alias):
                list(Response.objects.using(alias).select_for_update(nowait=True).filter(pk=response.pk))
    finally:
        release.set()
        workers.join(30)
    assert Judgment.objects.using(alias).get().response_2_id == second.pk
    with transaction.atomic(using=alias):  # committed: the locks went with the transaction
        assert len(Response.objects.using(alias).select_for_update(nowait=True).filter(pk=first.pk)) == 1


@pytest.mark.django_db(databases="__all__")
def test_a_row_pointed_at_by_a_value_every_row_shares_is_checked_once_too(alias, pair):
    postgresql_only(alias)
    criterion, judge, first, second = pair
    columns = ("judge_model_id", "response_id", "response_2_id", "verdict")
    row = (judge.pk, first.pk, second.pk, 1)
    assert insert_rows(Judgment, columns, [row], using=alias, criterion_id=criterion.pk) == 1
    with pytest.raises(IntegrityError, match=r"Key \(criterion_id\)"), transaction.atomic(using=alias):
        insert_rows(
            Judgment, columns, [(judge.pk, second.pk, first.pk, 2)], using=alias, criterion_id=criterion.pk + 99
        )
    assert Judgment.objects.using(alias).get().criterion_id == criterion.pk


@isolate_apps("evalhub.catalog")
def test_only_keys_the_database_constrains_are_checked_and_none_on_a_table_pointing_at_itself():
    class Loose(models.Model):  # noqa: DJ008
        criterion = models.ForeignKey(Criterion, on_delete=models.DO_NOTHING, db_constraint=False)
        judge = models.ForeignKey(LanguageModel, on_delete=models.DO_NOTHING)

        class Meta:
            app_label = "catalog"  # a model made for this test only (isolate_apps keeps it out of the registry)

    class Tree(models.Model):  # noqa: DJ008
        parent = models.ForeignKey("self", null=True, on_delete=models.CASCADE)
        judge = models.ForeignKey(LanguageModel, on_delete=models.DO_NOTHING)

        class Meta:
            app_label = "catalog"  # a model made for this test only (isolate_apps keeps it out of the registry)

    assert [each.column for each in _references(Loose, ("criterion_id", "judge_id"), "default")] == ["judge_id"]
    # A row may point at one copied in the same batch: PostgreSQL's triggers check those at commit.
    assert _references(Tree, ("parent_id", "judge_id"), "default") == ()


@pytest.mark.django_db(databases="__all__")
def test_reserved_keys_are_given_to_no_one_else_and_rows_may_point_at_one_before_it_is_written(alias, pair):
    """A judgment import writes its labels as it reads them, before the new responses they point to:
    their keys are reserved first, and the responses created with them once the file is read."""
    criterion, judge, first, second = pair
    other = LanguageModel.objects.using(alias).create(slug="c", display_name="c")
    with transaction.atomic(using=alias):
        reserved = reserve_ids(Response, 3, using=alias)
        assert len(set(reserved)) == 3 and min(reserved) > second.pk
        with RowWriter(Judgment, COLUMNS, using=alias) as writer:
            writer.write((criterion.pk, judge.pk, first.pk, reserved[1], 1, None))
            writer.pause()  # another statement may run; the next row starts another COPY
            Response.objects.using(alias).create(id=reserved[1], prompt=first.prompt, model=judge, text="Maybe.")
            writer.write((criterion.pk, judge.pk, reserved[1], first.pk, 2, 0.25))
        later = Response.objects.using(alias).create(prompt=first.prompt, model=other, text="Perhaps.")
    assert later.pk > max(reserved)
    assert sorted(Judgment.objects.using(alias).values_list("response_id", "response_2_id", "verdict")) == sorted(
        [(first.pk, reserved[1], 1), (reserved[1], first.pk, 2)]
    )
    assert reserve_ids(Response, 0, using=alias) == []


@pytest.mark.django_db(databases="__all__")
def test_a_row_pointing_at_a_reserved_key_never_written_is_refused_when_the_writer_ends(alias, pair):
    postgresql_only(alias)
    criterion, judge, first, _ = pair
    with pytest.raises(IntegrityError, match="is not present"), transaction.atomic(using=alias):
        reserved = reserve_ids(Response, 1, using=alias)[0]
        with RowWriter(Judgment, COLUMNS, using=alias) as writer:
            writer.write((criterion.pk, judge.pk, first.pk, reserved, 1, None))
    assert not Judgment.objects.using(alias).exists()


@pytest.mark.django_db(databases="__all__")
def test_rows_may_bring_their_reserved_keys_and_a_second_writer_may_run_while_the_first_is_paused(alias, pair):
    """An import writes its labels (one writer, paused) and then the responses they point to with the
    keys it reserved (a second writer): SQLite staged both in one temporary table's name, and a key
    given with the rows was refused as an unknown column."""
    criterion, judge, first, _ = pair
    with transaction.atomic(using=alias):
        reserved = reserve_ids(Response, 1, using=alias)[0]
        with RowWriter(Judgment, COLUMNS, using=alias) as labels:
            labels.write((criterion.pk, judge.pk, first.pk, reserved, 1, None))
            labels.pause()
            with RowWriter(Response, ("id", "prompt_id", "model_id", "text"), using=alias) as responses:
                responses.write((reserved, first.prompt_id, judge.pk, "Maybe."))
            labels.write((criterion.pk, judge.pk, reserved, first.pk, 2, None))
    stored = Response.objects.using(alias).get(pk=reserved)
    assert (stored.text, stored.model_id, stored.metadata) == ("Maybe.", judge.pk, {})
    assert Judgment.objects.using(alias).filter(response_2_id=reserved).count() == 1
    assert Judgment.objects.using(alias).count() == 2
