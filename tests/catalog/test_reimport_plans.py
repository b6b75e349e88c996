"""A re-import asks for the stored responses of each slice of its prompts. On SQLite, which plans without
statistics, an index of every response's parent (NULL for every original) looked best for `parent IS
NULL`: each slice then read every original response of the database, and a million-row benchmark file
imported again took 99 CPU-s against 49 for the first import (45 once the parent index holds only the
responses that have one)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.models import LanguageModel, Response

pytestmark = pytest.mark.django_db
sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's planner, which has no statistics")


def lookup_plan(queries: CaptureQueriesContext, select: str) -> str:
    """SQLite's plan of the one query that starts with `select` and asks about a list of ids."""
    (lookup,) = [query["sql"] for query in queries if query["sql"].startswith(select) and "json_each" in query["sql"]]
    with connection.cursor() as cursor:
        return " | ".join(row[3] for row in cursor.execute("EXPLAIN QUERY PLAN " + lookup).fetchall())


def benchmark_file() -> bytes:
    rows = ["prompt_id,prompt,model,response"] + [f"p{n},Question {n}?,m,Answer {n}" for n in range(20)]
    return ("\n".join(rows) + "\n").encode()


@sqlite_only
def test_a_reimport_reads_stored_responses_through_their_prompts_index():
    LanguageModel.objects.create(slug="m", display_name="M")
    do_import_benchmark(filename="b.csv", data=benchmark_file(), benchmark_slug="b")
    original = Response.objects.first()
    Response.objects.create(
        prompt=original.prompt, model=original.model, text="Answr 0", parent=original, perturbation="typo"
    )
    with CaptureQueriesContext(connection) as queries:
        again = do_import_benchmark(filename="b.csv", data=benchmark_file(), benchmark_slug="b")
    assert again.counts["responses_unchanged"] == 20
    plan = lookup_plan(queries, 'SELECT "catalog_response"."id"')
    assert "(prompt_id=?)" in plan and "parent" not in plan, plan


@sqlite_only
def test_a_score_reimport_reads_stored_scores_through_their_responses_index():
    """The same with scores: an index of every judgment's second response (NULL for every score) read
    every score of the database for each slice of responses; a million scores imported again took 27.6
    CPU-s against 24.0 for the first import (23.1 once that index holds only the pairs)."""
    from evalhub.catalog.actions.scores import check_score_file, do_import_scores

    rows = ["prompt_id,prompt,model,response,rater,criterion,score"]
    rows += [
        f"p{n},Question {n}?,m,Answer {n},rater-{r},coherence,{1 + (n + r) % 5}" for n in range(10) for r in range(3)
    ]
    data = ("\n".join(rows) + "\n").encode()
    for name in ("first.csv", "again.csv"):
        parsed = check_score_file(name, data, allow_new_models=True)
        with CaptureQueriesContext(connection) as queries:
            summary = do_import_scores(parsed=parsed, filename=name, data=data, benchmark_slug="s")
    assert summary.counts["scores_created"] == 0
    plan = lookup_plan(queries, 'SELECT "catalog_judgment"."id"')
    assert "response_2" not in plan, plan


@pytest.mark.parametrize(
    ("table", "column", "partial"),
    [
        ("catalog_response", "parent_id", "response_parent_where_set"),
        ("catalog_judgment", "response_2_id", "judgment_response_2_where_set"),
    ],
)
def test_a_column_null_on_nearly_every_row_is_indexed_only_where_set(table, column, partial):
    """The schema behind the plans above, on either database: the only index that leads with the column
    is the partial one."""
    assert indexes_leading_with(table, column) == [partial]


def indexes_leading_with(table: str, column: str) -> list[str]:
    """The table's non-unique indexes whose first column is `column` (Django's SQLite introspection cannot
    parse the judgments table's constraints: SQLite is asked directly)."""
    with connection.cursor() as cursor:
        if connection.vendor != "sqlite":
            found = connection.introspection.get_constraints(cursor, table)
            return sorted(
                n for n, i in found.items() if i["index"] and not i["unique"] and i["columns"][:1] == [column]
            )
        names = [row[1] for row in cursor.execute(f"PRAGMA index_list({table})").fetchall() if not row[2]]
        return sorted(n for n in names if cursor.execute(f"PRAGMA index_info({n})").fetchall()[0][2] == column)
