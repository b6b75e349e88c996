"""How many rows a table holds, for overviews: PostgreSQL's own estimate for a large table (the planner's
`reltuples`, kept by autovacuum's ANALYZE), an exact COUNT for a small one or on SQLite. An exact COUNT
over ten million judgments took seconds of the home page on every view (issue 79); an overview reads
"about 9,758,000" just as well.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, models

# Under this many rows (by the estimate) a table is counted exactly: the count is cheap and exact.
EXACT_BELOW = 200_000


@dataclass(frozen=True)
class RowCount:
    rows: int
    estimated: bool


def row_count(model: type[models.Model]) -> RowCount:
    estimate = _estimate(model)
    if estimate is None or estimate < EXACT_BELOW:
        return RowCount(model._default_manager.count(), estimated=False)
    return RowCount(estimate, estimated=True)


def _estimate(model: type[models.Model]) -> int | None:
    """PostgreSQL's estimate of the table's rows; None where there is none (SQLite, a table never analysed)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [model._meta.db_table])
        row = cursor.fetchone()
    if row is None or row[0] is None or row[0] < 0:  # -1: never vacuumed or analysed
        return None
    return int(row[0])


def total(*counts: RowCount) -> RowCount:
    return RowCount(sum(c.rows for c in counts), estimated=any(c.estimated for c in counts))
