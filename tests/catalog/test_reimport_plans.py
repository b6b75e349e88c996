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

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's planner, which has no statistics"),
]


def benchmark_file() -> bytes:
    rows = ["prompt_id,prompt,model,response"] + [f"p{n},Question {n}?,m,Answer {n}" for n in range(20)]
    return ("\n".join(rows) + "\n").encode()


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
    (lookup,) = [
        q["sql"] for q in queries if q["sql"].startswith('SELECT "catalog_response"."id"') and "json_each" in q["sql"]
    ]
    with connection.cursor() as cursor:
        plan = " | ".join(row[3] for row in cursor.execute("EXPLAIN QUERY PLAN " + lookup).fetchall())
    assert "(prompt_id=?)" in plan and "parent" not in plan, plan
