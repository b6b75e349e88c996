"""The pages that read a prompt's judgments, or the graded ones, read them through an index at any size:
at ten million judgments in AlpacaEval's shape (every pair's first response a baseline's) PostgreSQL
read the whole table for a prompt's page (3.4 s) and for the graded page with no grade at all (1.0 s).
The plans are checked on a skewed table of a quarter million judgments, analysed as autovacuum would."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evalhub.catalog.models import Benchmark, Criterion, Judgment, LanguageModel, Prompt, Response
from evalhub.system.bulk_insert import insert_rows
from tests.conftest import make_user

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner and its statistics"),
]

PROMPTS, CANDIDATES, JUDGES = 120, 100, 20  # 240,000 judgments


@pytest.fixture
def alpaca_shaped(db):
    benchmark = Benchmark.objects.create(slug="scale", name="Scale")
    criterion = Criterion.objects.get_or_create(slug="overall", defaults={"name": "Overall", "levels": {}})[0]
    baseline, *candidates = LanguageModel.objects.bulk_create(
        LanguageModel(slug=f"model-{i}", display_name=f"Model {i}") for i in range(CANDIDATES + 1)
    )
    judges = LanguageModel.objects.bulk_create(
        LanguageModel(slug=f"judge-{i}", display_name=f"Judge {i}") for i in range(JUDGES)
    )
    prompts = Prompt.objects.bulk_create(
        Prompt(benchmark=benchmark, external_id=f"p{i}", text="q") for i in range(PROMPTS)
    )
    base = Response.objects.bulk_create(Response(prompt=p, model=baseline, text="b") for p in prompts)
    answers = Response.objects.bulk_create(Response(prompt=p, model=m, text="a") for p in prompts for m in candidates)
    first = {p.pk: r.pk for p, r in zip(prompts, base, strict=True)}
    rows = (
        (criterion.pk, judge.pk, first[answer.prompt_id], answer.pk, 1 + (answer.pk + judge.pk) % 2)
        for judge in judges
        for answer in answers
    )
    columns = ("criterion_id", "judge_model_id", "response_id", "response_2_id", "verdict")
    insert_rows(Judgment, columns, rows, source="import")
    analyse()
    yield prompts[0]
    # Statistics outlive the test's rolled-back transaction: left at a quarter million rows, they made a later
    # test on this database read the empty table's size as PostgreSQL's estimate (tests/system/test_row_counts).
    with connection.cursor() as cursor:  # in SQL: the ORM's delete reads every row for its cascades first
        cursor.execute("DELETE FROM catalog_judgment")
        cursor.execute("DELETE FROM catalog_response")
    analyse()


def analyse() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_judgment")
        cursor.execute("ANALYZE catalog_response")


def judgment_plans(queries: CaptureQueriesContext) -> list[str]:
    plans = []
    for query in queries.captured_queries:
        sql = query["sql"]
        if '"catalog_judgment"' in sql and "SELECT" in sql:
            with connection.cursor() as cursor:  # a server-side cursor's query is declared: its SELECT is planned
                cursor.execute("EXPLAIN " + sql[sql.index("SELECT") :])
                plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return plans


def test_a_prompts_page_reads_its_judgments_through_an_index(client, alpaca_shaped):
    client.force_login(make_user("vera", "viewer"))
    with CaptureQueriesContext(connection) as queries:
        page = client.get(f"/benchmarks/scale/prompts/{alpaca_shaped.pk}/")
    assert page.status_code == 200 and f"Pairwise judgments <small>({CANDIDATES * JUDGES}," in page.content.decode()
    plans = judgment_plans(queries)
    assert len(plans) >= 3, "the scores, the pairs and their count"
    assert not [plan for plan in plans if "Seq Scan on catalog_judgment" in plan], plans


def test_the_graded_page_with_no_grade_reads_no_judgment(client, alpaca_shaped):
    client.force_login(make_user("vera", "viewer"))
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/judges/graded/").status_code == 200
    plans = judgment_plans(queries)
    assert plans and not [plan for plan in plans if "Seq Scan on catalog_judgment" in plan], plans
