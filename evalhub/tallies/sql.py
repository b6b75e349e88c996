"""The few statements the counts are kept with, written out because the ORM has no form for them and
they are on the path of every verdict: an upsert that adds to a row or replaces it, and a select of
plain tuples. The same text runs on SQLite (3.24+) and PostgreSQL.

An ORM query spends about a quarter of a millisecond building itself; a judge run's chunk of 25
debates needs about six of them to keep its counts, which was most of the bookkeeping the scale issue
bounds to twice the verdicts' own write.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model

# Rows per statement: well under every database's limit on a statement's parameters.
ROWS_PER_STATEMENT = 500


def columns(model: type[Model], fields: Sequence[str], using: str = DEFAULT_DB_ALIAS) -> list[str]:
    """The quoted column names of these (concrete) fields, by name or attribute name."""
    return list(_columns(model, tuple(fields), using))


def table(model: type[Model], using: str = DEFAULT_DB_ALIAS) -> str:
    return connections[using].ops.quote_name(model._meta.db_table)


@functools.cache
def _columns(model: type[Model], fields: tuple[str, ...], using: str) -> tuple[str, ...]:
    by_name = {field.name: field.column for field in model._meta.concrete_fields}
    by_name |= {field.attname: field.column for field in model._meta.concrete_fields}
    return tuple(connections[using].ops.quote_name(by_name[name]) for name in fields)


@functools.cache
def _upsert_statement(
    model: type[Model], key_fields: tuple[str, ...], fields: tuple[str, ...], add: bool, rows: int, using: str
) -> str:
    name = table(model, using)
    names = _columns(model, (*key_fields, *fields), using)
    keys, values = names[: len(key_fields)], names[len(key_fields) :]
    if add:
        assignments = ", ".join(f"{column} = {name}.{column} + excluded.{column}" for column in values)
    else:
        assignments = ", ".join(f"{column} = excluded.{column}" for column in values)
    placeholder = "(" + ", ".join(["%s"] * len(names)) + ")"
    return (
        f"INSERT INTO {name} ({', '.join(names)}) VALUES {', '.join([placeholder] * rows)} "
        f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {assignments}"
    )


def upsert(
    model: type[Model],
    key_fields: Sequence[str],
    fields: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    add: bool,
    using: str = DEFAULT_DB_ALIAS,
) -> None:
    """Write rows of key values then field values: a row whose key is there is added to (add=True)
    or replaced, one that is not is inserted. With add, a concurrent writer's row is added to, never
    overwritten: the increment is in the statement. Rows go in the order given (callers sort them,
    so that two writers lock shared rows in one order)."""
    with connections[using].cursor() as cursor:
        for start in range(0, len(rows), ROWS_PER_STATEMENT):
            batch = rows[start : start + ROWS_PER_STATEMENT]
            statement = _upsert_statement(model, tuple(key_fields), tuple(fields), add, len(batch), using)
            cursor.execute(statement, [value for row in batch for value in row])


def select(sql: str, params: Iterable[Any], using: str = DEFAULT_DB_ALIAS) -> list[tuple]:
    with connections[using].cursor() as cursor:
        cursor.execute(sql, list(params))
        return cursor.fetchall()


def placeholders(values: Sequence[Any]) -> str:
    """ "%s, %s, …" for an IN list of these values."""
    return ", ".join(["%s"] * len(values))
