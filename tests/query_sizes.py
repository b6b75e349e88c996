"""What the bounded-query tests share: the value lists each statement names, and a fixture that holds
every bounded query to PER_QUERY values and SQLite to 999 variables (its limit before 3.32), so that a
test's data of a few thousand rows is "larger than the limit"."""

from __future__ import annotations

import re
import sqlite3

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evalhub.system import bounded_queries

PER_QUERY = 200


@pytest.fixture
def bounded(monkeypatch):
    """The test's queries, captured, with bounded queries of PER_QUERY values and SQLite's limit lowered."""
    monkeypatch.setattr(bounded_queries, "PER_QUERY", PER_QUERY)
    connection.ensure_connection()
    limited = connection.vendor == "sqlite"
    if limited:
        before = connection.connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
    with CaptureQueriesContext(connection) as queries:
        yield queries
    if limited:
        connection.connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, before)


def in_lists(sql: str) -> list[int]:
    """How many values each `IN (…)` list of a statement names."""
    return [len(values.split(",")) for values in re.findall(r"\bIN \(([^()]*)\)", sql)]


def value_lists(sql: str) -> list[int]:
    """How many values each list of a statement names: its `IN (…)` lists and its lists of integers or
    texts given as one parameter (`in_integers`, `in_texts`: SQLite's json_each of a JSON list,
    PostgreSQL's ANY of an array)."""
    arrays = re.findall(r"ANY\('\{([^}]*)\}'::(?:bigint|text)\[\]\)", sql)
    lists = re.findall(r"json_each\('\[([^\]]*)\]'\)", sql) + arrays
    return in_lists(sql) + [len(values.split(",")) for values in lists]


def longest_in_list(queries: CaptureQueriesContext) -> int:
    """The most values one `IN` list named (0 when none did: integers go as one parameter on PostgreSQL),
    the roles' own list (four group names per request) aside."""
    lists = (n for query in queries if '"auth_group"' not in query["sql"] for n in in_lists(query["sql"]))
    return max(lists, default=0)
