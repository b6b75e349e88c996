"""The home page's overview counts a large table by PostgreSQL's estimate, not a COUNT over every row
(seconds at ten million judgments, issue 79); a small table, or any on SQLite, exactly."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evalhub.catalog.models import Judgment
from evalhub.system import row_counts

pytestmark = pytest.mark.django_db


def test_a_small_table_is_counted_exactly():
    assert row_counts.row_count(Judgment) == row_counts.RowCount(0, estimated=False)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's estimate: DATABASE_URL=postgres://…")
def test_a_large_table_is_read_from_the_estimate_and_the_home_page_says_about(admin_user, login, monkeypatch):
    table = Judgment._meta.db_table
    with connection.cursor() as cursor:  # the estimate as ANALYZE leaves it for a table of 5 million rows
        cursor.execute("UPDATE pg_class SET reltuples = 5000000 WHERE oid = %s::regclass", [table])
    with CaptureQueriesContext(connection) as captured:
        page = login(admin_user).get("/")
    assert page.status_code == 200
    counted = [q["sql"] for q in captured.captured_queries if "COUNT(" in q["sql"] and f'FROM "{table}"' in q["sql"]]
    assert not counted, counted
    assert "about </span>5000000" in page.content.decode()
