"""Inserting many rows of one model without a model instance per row.

`bulk_create` makes an instance per row and prepares every field of every row through the ORM:
for an import of 100,000 judgments that was two thirds of the time and most of the memory. Here
the columns that vary come as plain tuples of database-ready values (ids, numbers, text, None),
and every other column is prepared once, as the ORM would prepare it (its default, `auto_now_add`,
JSON), then shared by every row. The database still checks every constraint.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

from django.db import connections
from django.db.models import Model

BATCH_ROWS = 5000  # rows per executemany: bounded memory whatever the number of rows


def insert_rows(
    model: type[Model],
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    using: str = "default",
    batch: int = BATCH_ROWS,
    **constants: Any,
) -> int:
    """Insert `rows` (one value per name in `columns`, field attnames such as `judge_model_id`) with
    `constants` and the model's defaults for the other columns; the number of rows inserted.
    Call it inside the caller's transaction: a failing batch leaves nothing when that rolls back."""
    connection = connections[using]
    template = model(**constants)
    fields = [field for field in model._meta.concrete_fields if not field.primary_key]
    varying = set(columns)
    unknown = varying - {field.attname for field in fields}
    if unknown:
        raise ValueError(f"{model.__name__} has no column(s) {', '.join(sorted(unknown))}")
    fixed = [field for field in fields if field.attname not in varying]
    fixed_values = tuple(
        field.get_db_prep_save(field.pre_save(template, add=True), connection=connection) for field in fixed
    )
    names = [*columns, *(field.attname for field in fixed)]
    column_names = {field.attname: field.column for field in fields}
    quote = connection.ops.quote_name
    sql = (
        f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(column_names[name]) for name in names)}) "
        f"VALUES ({', '.join(['%s'] * len(names))})"
    )
    copy_sql = (
        f"COPY {quote(model._meta.db_table)} ({', '.join(quote(column_names[name]) for name in names)}) FROM STDIN"
    )
    inserted = 0
    iterator = iter(rows)
    with connection.cursor() as cursor:
        while part := [(*row, *fixed_values) for row in islice(iterator, batch)]:
            if connection.vendor == "postgresql":
                # COPY: one statement per batch; row-by-row INSERTs kept PostgreSQL busy 2× longer than the app.
                with connection.wrap_database_errors, cursor.cursor.copy(copy_sql) as copy:
                    for values in part:
                        copy.write_row(values)
            else:
                cursor.executemany(sql, part)
            inserted += len(part)
    return inserted
