"""The row issues and stored rewrites changed app, not table: a database made before the move keeps
every row, read through the worklog app afterwards."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("scoring", "0002_response_variant_filters"), ("worklog", None)]


@pytest.mark.django_db(transaction=True)
def test_rows_written_before_the_move_are_read_after_it():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    executor.loader.build_graph()
    old = executor.loader.project_state(list(executor.loader.applied_migrations)).apps
    Job = old.get_model("jobs", "Job")
    job = Job.objects.create(kind="gem", title="before the move")
    old.get_model("scoring", "RowIssue").objects.create(job=job, stage="scoring", message="no references")
    old.get_model("scoring", "DerivedText").objects.create(
        purpose="gem:c1", provider="heuristic", prompt_version="v1", source_sha256="0" * 64, text="kept"
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from evalhub.worklog.models import DerivedText, RowIssue

    assert list(RowIssue.objects.filter(job_id=job.pk).values_list("stage", "message")) == [
        ("scoring", "no references")
    ]
    assert DerivedText.objects.get(purpose="gem:c1").text == "kept"
    assert {"scoring_rowissue", "scoring_derivedtext"} <= set(connection.introspection.table_names())
